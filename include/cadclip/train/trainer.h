// `cadclip train`: contrastive training of the two-tower model on a prepared
// dataset, with validation every epoch, checkpoints, metrics and resume.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/data/splits.h"
#include "cadclip/model/model_config.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss.h"

namespace cadclip::train {

// The model a run trains unless told otherwise: the model's own defaults,
// with captions cut at 128 tokens incl. [CLS]/[SEP] (text.max_length).
inline model::ModelConfig default_train_model() {
  model::ModelConfig config;
  config.text.max_length = 128;
  return config;
}

struct TrainOptions {
  // Prepared folders (cadclip prepare / merge), or dataset files listing
  // them, read as one dataset (data::open_prepared).
  // Each entry is a source of its own (named by its folder or file name, see
  // source_names), sampled by `shares` and validated apart.
  std::vector<std::string> data;
  // Sampling share of each source by name (normalised to sum to 1): an epoch
  // draws that share of its samples from the source, repeating a small source
  // and cutting a large one. Empty = every training model once per epoch.
  // When given, every source needs one.
  std::map<std::string, double> shares;
  // The source whose validation R@1 picks `best`; "mean" = the mean over sources.
  std::string select_by = "mean";
  // A checkpoint whose weights the model starts from (its shape options must
  // agree, as --resume checks them); "" = from scratch (the text tower pretrained).
  std::string init;
  // With init: the strength of the pull of every trainable tensor back toward
  // its --init value after each step (L2-SP, train/init_anchor.h); 0 = none.
  double init_anchor = 0;
  // With init: the text head may be shaped otherwise than the checkpoint's
  // (text_head_hidden, quantity_width); the tensors of the head and the
  // quantity branch that the checkpoint lacks or holds in another shape start
  // as in a new run, every other tensor comes from the checkpoint.
  bool init_new_text_head = false;
  std::string out;  // run folder: checkpoints/, metrics.jsonl, tensorboard/
  // The model to train (B-Rep tower, heads, text tower folder and precision).
  model::ModelConfig model = default_train_model();
  std::vector<std::string> levels;  // caption levels to sample; empty = all
  int64_t epochs = 10;              // passes over the training split
  int64_t batch_size = 64;          // pairs per process and step
  double lr = 5e-4;                 // peak learning rate of the new modules (B-Rep, heads)
  double text_lr = 3e-5;            // peak learning rate of the pretrained text tower
  int64_t text_train_layers = 0;    // with text_lr > 0: only the last N layers of the text
                                    // tower train (and their cost is paid); 0 = every layer
  bool text_hidden_cache = true;    // with text_train_layers: the frozen layers' outputs are
                                    // computed once (train/text_cache.h), not every step
  double weight_decay = 0.05;       // AdamW decoupled weight decay (not on norms and biases)
  double warmup = 0.05;             // share of all steps spent warming up linearly
  double grad_clip = 1.0;           // max global gradient norm; 0 = no clipping
  std::string device = "cpu";       // cpu or cuda[:n]
  int threads = 0;                  // intra-op threads; 0 = cores / processes
  uint64_t seed = 0;                // model init, shuffling, caption choice
  LossKind loss = LossKind::kInfoNce;
  bool mask_false_negatives = true;  // same facts/caption or geometry are not negatives
  int64_t queue = 0;                 // momentum queue rows per modality (MoCo); 0 = off
  double queue_momentum = 0.995;     // EMA factor of the momentum encoders (with queue > 0)
  int64_t max_nonfinite_steps = 5;   // stop after this many non-finite steps in a row
  int64_t checkpoint_every = 0;      // also write `last` every N steps (0 = per epoch only)
  int64_t stop_after_steps = 0;      // stop (with a `last` checkpoint) after N steps; 0 = never
  bool resume = false;               // continue from <out>/checkpoints/last.json
  std::string text_cache;  // frozen text tower: file of pooled caption features, reused by
                           // runs whose key (weights, captions, settings) matches; "" = none
  // The split evaluated after each epoch; none = no validation.
  std::optional<data::Split> validation_split = data::Split::kValidation;
  int64_t eval_batch_size = 128;     // models or captions per forward in validation
  int loader_threads = 1;            // threads making the next steps' inputs while one trains;
                                     // 0 = made inside the step (the inputs are the same)
  int64_t pairwise_cache_mb = 4096;  // memory per process for the pairwise attention inputs
                                     // kept after a model's first step; 0 = none kept
  bool deterministic = true;         // deterministic ATen algorithms
  int64_t debug_nan_at_step = -1;    // debug: poison the loss with NaN from this global step
  int64_t debug_nan_count = 1;       // ... for this many steps
};

// The JSON form: what <out>/options.json holds and `cadclip train --config`
// reads (the model as in a checkpoint's config.json, under "model"); and the
// help of the field at `field` (a member of `options`), its flag's.
void to_json(nlohmann::json& json, const TrainOptions& options);
void from_json(const nlohmann::json& json, TrainOptions& options);
std::string_view field_help(const TrainOptions& options, const void* field);
// `options` with the values of a JSON file such as a run's options.json (keys
// it lacks keep their value); throws cadclip::Error naming the file and the
// key that is unknown or has the wrong type.
TrainOptions read_train_options(const std::filesystem::path& file, TrainOptions options = {});

struct TrainSummary {
  int64_t steps = 0;            // optimizer steps taken in this run
  int64_t skipped = 0;          // steps skipped for a non-finite loss or gradient
  int64_t truncated = 0;        // captions cut to max_text_length
  double last_loss = 0;         // loss of the last step taken
  double best_validation = -1;  // best mean validation text->CAD R@1
  bool stopped_early = false;   // stop_after_steps reached
};

// The name of each source of `data`, in order: a folder's or dataset file's
// name (its last path component, extension dropped). Throws cadclip::Error
// when two sources would share a name.
std::vector<std::string> source_names(const std::vector<std::string>& data);

// Runs the whole job on this process (rank) of `communicator`; only rank 0
// writes checkpoints, metrics and progress. Throws cadclip::Error on bad
// options or data, and when the run stops for non-finite steps.
TrainSummary train(const TrainOptions& options, Communicator& communicator);

}  // namespace cadclip::train
