// cadclip embed: sentence embeddings from a text model folder (Hugging Face
// BERT-family or DeBERTa-v2/v3, sentence-transformers layout understood),
// L2-normalised, or with --checkpoint a trained two-tower model's text
// embeddings (the space parts are searched in); prints the first values of
// each vector.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/text/text_model.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct EmbedOptions {
  std::vector<std::string> texts;  // sentences to embed
  std::string file;                // or a text file with one sentence per line ("-": stdin)
  std::string model;               // a pretrained text model folder; empty: a checkpoint's tower
  std::string checkpoint;          // a two-tower checkpoint: its text embeddings; empty (and no
                                   // model) = the released model
  std::string pooling = "auto";    // auto (the folder's pooling, else cls), cls or mean
  int64_t max_length = 0;          // tokens per text; 0: the folder's limit
  int64_t batch_size = 32;         // texts per forward pass
  int values = 6;                  // leading values of each vector to print
  int threads = 0;                 // LibTorch intra-op threads; 0: its default
  std::string output;              // also write all vectors [n, hidden] to this safetensors file
};

CADCLIP_OPTION_FIELDS(
    EmbedOptions, (texts, "Sentences to embed"), (file, "Sentences, one per line ('-': stdin)"),
    (model, "A pretrained text model folder: its sentence embeddings"),
    (checkpoint,
     "A trained model (checkpoint pointer, folder or run folder): print its text embeddings, "
     "the vectors parts are searched with. With neither this nor --model: the released model "
     "(models/default.json, or $CADCLIP_MODEL)"),
    (pooling, "auto, cls or mean"),
    (max_length, "Tokens per text with [CLS]/[SEP] (0: the model folder's limit)"),
    (batch_size, "Texts per forward pass"), (values, "Leading values of each vector to print"),
    (threads, "LibTorch threads (0: its default)"),
    (output, "Also write all vectors to a safetensors file"))

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) throw Error(format("{}: cannot read the sentence file", path));
    in = &file;
  }
  std::string line;
  while (std::getline(*in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// Prints each vector's leading values and, with --output, writes them all.
void print_vectors(const EmbedOptions& options, const std::vector<std::string>& texts,
                   const at::Tensor& vectors,
                   const std::vector<std::pair<std::string, std::string>>& metadata) {
  const auto rows = vectors.accessor<float, 2>();
  const int64_t shown = std::min<int64_t>(options.values, vectors.size(1));
  for (int64_t i = 0; i < vectors.size(0); ++i) {
    std::string line = "[";
    for (int64_t j = 0; j < shown; ++j) line += (j ? ", " : "") + fixed(rows[i][j], 5);
    if (shown < vectors.size(1)) line += ", ...";
    std::printf("%s]  \"%s\"\n", line.c_str(), texts[static_cast<size_t>(i)].c_str());
  }
  if (!options.output.empty()) {
    const at::Tensor data = vectors.contiguous();
    SafetensorsWriter writer;
    writer.add_f32(
        "embeddings", {data.size(0), data.size(1)},
        std::span<const float>(data.data_ptr<float>(), static_cast<size_t>(data.numel())));
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
    writer.write(options.output);
    std::printf("# wrote %lld vectors to %s\n", static_cast<long long>(data.size(0)),
                options.output.c_str());
  }
}

// --checkpoint: the model's text embeddings in batches of --batch-size texts
// (shortest first), as the Python module's Model.embed_text computes them.
int run_embed_checkpoint(const EmbedOptions& options, const std::vector<std::string>& texts) {
  if (!options.model.empty() || options.pooling != "auto" || options.max_length != 0)
    throw Error(
        "--checkpoint embeds with the checkpoint's own text tower, pooling and length limit; "
        "leave out --model, --pooling and --max-length");
  model::BuiltModel built = model::load_model_from_checkpoint(options.checkpoint);
  const at::Tensor vectors =
      model::embed_texts(built, texts, text::LengthGrouping{.max_rows = options.batch_size});
  const std::string folder = model::resolve_checkpoint(options.checkpoint).string();
  const int64_t unit = built.model->options().embed_dim;
  if (vectors.size(1) == unit)
    std::printf("# %s: two-tower text embeddings, %lld dimensions, L2-normalised\n", folder.c_str(),
                static_cast<long long>(unit));
  else  // docs/MODEL.md, "The size block"
    std::printf(
        "# %s: two-tower text embeddings, %lld dimensions: %lld L2-normalised, then the size "
        "block (zeros where a text states no number)\n",
        folder.c_str(), static_cast<long long>(vectors.size(1)), static_cast<long long>(unit));
  print_vectors(options, texts, vectors, {{"checkpoint", folder}});
  return kExitOk;
}

int run_embed(const EmbedOptions& options) {
  std::vector<std::string> texts = options.texts;
  if (!options.file.empty()) {
    const auto lines = read_lines(options.file);
    texts.insert(texts.end(), lines.begin(), lines.end());
  }
  if (texts.empty())
    throw Error("no sentences to embed: pass them as arguments or with --file (one per line)");
  if (options.threads > 0) at::set_num_threads(options.threads);
  if (!options.checkpoint.empty()) return run_embed_checkpoint(options, texts);
  if (options.model.empty()) {
    // Neither a checkpoint nor a text folder: the released model, what
    // `cadclip index` uses by default.
    EmbedOptions released = options;
    released.checkpoint = model::default_model().string();
    return run_embed_checkpoint(released, texts);
  }
  const std::string folder = options.model;
  text::TextModelOptions model_options;
  model_options.pooling = options.pooling;
  model_options.max_length = options.max_length;
  const text::TextModel model = text::load_text_model(folder, model_options);
  const at::Tensor vectors = model.embed(texts, /*normalize=*/true, options.batch_size);
  std::printf("# %s: %s encoder, %lld dimensions, %s pooling, at most %lld tokens, L2-normalised\n",
              model.folder.string().c_str(), std::string(model.encoder->architecture()).c_str(),
              static_cast<long long>(model.encoder->hidden_size()),
              std::string(text::pooling_name(model.pooling)).c_str(),
              static_cast<long long>(model.max_length));
  print_vectors(options, texts, vectors,
                {{"model", model.folder.string()},
                 {"pooling", std::string(text::pooling_name(model.pooling))}});
  return kExitOk;
}

}  // namespace

void define_embed(CLI::App& command, Runner& run) {
  auto options = std::make_shared<EmbedOptions>();
  const EmbedOptions& o = *options;
  const ConfigFlags config(command, options);
  add_field(command, "texts", o, options->texts);
  add_field(command, "--file", o, options->file);
  command.add_option(
      "--model", options->model,
      help(o, o.model, "--model") + " (e.g. " + text::default_text_model_folder().string() + ")");
  add_field(command, "--checkpoint", o, options->checkpoint);
  add_field(command, "--pooling", o, options->pooling)
      ->check(CLI::IsMember({"auto", "cls", "mean"}));
  add_field(command, "--max-length", o, options->max_length)->check(CLI::NonNegativeNumber);
  add_field(command, "--batch-size", o, options->batch_size)->check(CLI::PositiveNumber);
  add_field(command, "--values", o, options->values)->check(CLI::NonNegativeNumber);
  add_field(command, "--threads", o, options->threads)->check(CLI::NonNegativeNumber);
  add_field(command, "--output", o, options->output);
  run = config.or_print([options] { return run_embed(*options); });
}

}  // namespace cadclip::app
