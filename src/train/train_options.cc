// TrainOptions as JSON (<out>/options.json and `cadclip train --config`) and
// the help of their flags.
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/core/json_fields.h"
#include "cadclip/train/trainer.h"

namespace cadclip::train {

CADCLIP_OPTION_FIELDS(
    TrainOptions,
    (data,
     "Prepared dataset folder (required); repeat it for several folders read as one (the parts "
     "of a sharded prepare), or name a dataset file listing folders"),
    (shares,
     "Sampling share of a source, SOURCE=FRACTION (repeat it; every source then needs one; "
     "shares are normalised): an epoch draws that share of its samples from the source, "
     "repeating a small one. Default: every training model once per epoch"),
    (select_by,
     "The source whose validation R@1 picks the best checkpoint, or mean (the mean over "
     "sources); each source is validated and reported apart"),
    (init,
     "Checkpoint to start from (the released model, a run's best.json) instead of from "
     "scratch; its shape options must match these"),
    (init_new_text_head,
     "With --init: the text head may differ from the checkpoint's (--text-head-hidden, "
     "--quantity-width); its tensors of another shape start fresh (in the residual space, "
     "at no correction), the B-Rep tower, the text tower and the rest come from the "
     "checkpoint"),
    (init_anchor,
     "With --init: after each step every trainable tensor moves back toward its --init value "
     "by lr x this strength (L2-SP), so a fine-tune keeps what the starting model knew; a "
     "tensor drifts about 1/strength at most (0 = off)"),
    (out, "Run folder (checkpoints, metrics, options) (required)"),
    (model, "The model to train: B-Rep tower, heads, text tower folder and precision"),
    (levels, "Caption levels to sample (default: all)"), (epochs, "Passes over the training split"),
    (batch_size, "Pairs per process and step"), (lr, "Peak learning rate of the new modules"),
    (text_lr, "Peak learning rate of the text tower"),
    (text_train_layers,
     "With --text-lr > 0: only the last N layers of the text tower train; 0 = all"),
    (text_hidden_cache,
     "With --text-train-layers: the hidden states below the trained layers are computed once, "
     "the frozen layers without dropout (1.5 KB a token in memory: about 50 KB a caption); "
     "--no-text-hidden-cache runs the whole tower every step"),
    (weight_decay, "AdamW weight decay"), (warmup, "Share of steps for linear warm-up"),
    (grad_clip, "Max gradient norm (0 = off)"),
    (device, "cpu or cuda[:n] (--backend nccl: cuda:LOCAL_RANK)"),
    (threads, "Intra-op threads (0 = cores / processes)"),
    (seed, "Seed of init, shuffling and caption choice"), (loss, "Contrastive loss"),
    (mask_false_negatives,
     "Treat captions stating the same facts (or text) and equal geometry as negatives too "
     "(--no-false-negative-mask; by default they are not)"),
    (queue,
     "MoCo-style momentum queue: rows of extra negatives per modality; --queue alone = 4096, "
     "absent or 0 = off (one process only)"),
    (queue_momentum, "EMA factor of the momentum encoders that fill the queue"),
    (max_nonfinite_steps, "Stop after this many non-finite steps in a row"),
    (checkpoint_every, "Also write `last` every N steps (0 = per epoch)"),
    (stop_after_steps, "Stop after N steps with a `last` checkpoint (0 = never)"),
    (resume, "Continue from <out>/checkpoints/last.json"),
    (text_cache,
     "With --text-lr 0: safetensors file of the frozen text features, reused when it was made "
     "for the same captions and text model, else (re)written"),
    (validation_split,
     "Split evaluated after each epoch: train, validation or test (empty = none)"),
    (eval_batch_size, "Batch size of validation"),
    (loader_threads,
     "Threads that make the next steps' inputs (shard reads, tokens, pairwise inputs, "
     "collation) while a step trains; 0 = inside the step"),
    (pairwise_cache_mb,
     "Memory per process for the models' pairwise attention inputs, kept after their first "
     "use (about 12 F^2 bytes for F faces); 0 = recompute every step"),
    (deterministic, "Deterministic ATen algorithms (--nondeterministic allows the others)"),
    (debug_nan_at_step, "Debug: poison the loss with NaN from this step"),
    (debug_nan_count, "Debug: ... for this many steps"))

TrainOptions read_train_options(const std::filesystem::path& file, TrainOptions options) {
  nlohmann::json json = read_json_file(file);
  // Runs made before a dataset could be several folders wrote one folder.
  if (json.is_object() && json.contains("data") && json["data"].is_string())
    json["data"] = nlohmann::json::array({json["data"]});
  apply_options_json(json, file, options);
  return options;
}

}  // namespace cadclip::train
