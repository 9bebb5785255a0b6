#include "command.h"

namespace cadclip::app {

void define_check(CLI::App& command, Runner& run);
void define_embed(CLI::App& command, Runner& run);
void define_eval(CLI::App& command, Runner& run);
void define_export(CLI::App& command, Runner& run);
void define_fit_sizes(CLI::App& command, Runner& run);
void define_train(CLI::App& command, Runner& run);
void define_index(CLI::App& command, Runner& run);
void define_merge(CLI::App& command, Runner& run);
void define_search(CLI::App& command, Runner& run);
void define_serve(CLI::App& command, Runner& run);
void define_duplicates(CLI::App& command, Runner& run);
#ifdef CADCLIP_WITH_OCCT
void define_synth(CLI::App& command, Runner& run);
void define_prepare(CLI::App& command, Runner& run);
void define_prepare_worker(CLI::App& command, Runner& run);
#endif

std::span<const Command> commands() {
  static const Command kCommands[] = {
      {"check", "Health report of a safetensors file: dtypes, shapes, NaN/Inf per tensor",
       define_check},
      {"embed", "Text embeddings of the released model, a checkpoint or a text model folder",
       define_embed},
      {"eval", "Retrieval metrics of a checkpoint on a split: text<->CAD, CAD->CAD, diagnostics",
       define_eval},
      {"export", "A checkpoint as a released model: what training changed, text tower by checksum",
       define_export},
      {"fit-sizes",
       "Fit a trained model's size block: the sizes captions state, matched to part boxes",
       define_fit_sizes},
      {"merge", "One prepared folder over many (the parts of a sharded prepare), shards not copied",
       define_merge},
      {"train", "Contrastive training of the two-tower model on a prepared dataset", define_train},
      {"index", "Embed a part library (CAD folder or prepared) into a searchable index",
       define_index},
      {"search", "Search an index by text or by an example part: top-k with scores", define_search},
      {"serve", "HTTP API and web page over an index (127.0.0.1 unless told)", define_serve},
      {"duplicates", "Exact, mirrored and near-duplicate parts of an index, as clusters",
       define_duplicates},
#ifdef CADCLIP_WITH_OCCT
      {"synth", "Make the built-in synthetic dataset: parametric parts as STEP with captions",
       define_synth},
      {"prepare",
       "CAD files and captions to a prepared dataset (shards, captions, splits, manifest)",
       define_prepare},
      {"prepare-worker", "Internal: the worker process of prepare", define_prepare_worker},
#endif
  };
  return kCommands;
}

}  // namespace cadclip::app
