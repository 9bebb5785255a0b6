// TrainOptions as JSON: <out>/options.json and `cadclip train --config`.
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/train/trainer.h"

namespace cadclip::train {

CADCLIP_JSON_FIELDS(TrainOptions, data, shares, select_by, init, out, model, levels, epochs,
                    batch_size, lr, text_lr, text_train_layers, weight_decay, warmup, grad_clip,
                    device, threads, seed, loss, mask_false_negatives, queue, queue_momentum,
                    max_nonfinite_steps, checkpoint_every, stop_after_steps, resume, text_cache,
                    validation_split, eval_batch_size, loader_threads, pairwise_cache_mb,
                    deterministic, debug_nan_at_step, debug_nan_count)

TrainOptions read_train_options(const std::filesystem::path& file, TrainOptions options) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_text_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("--config {} is not valid JSON: {}", file.string(), e.what()));
  }
  // Runs made before a dataset could be several folders wrote one folder.
  if (json.is_object() && json.contains("data") && json["data"].is_string())
    json["data"] = nlohmann::json::array({json["data"]});
  // A misspelt key would silently leave its default: refuse it.
  const std::vector<std::string> unknown = unknown_keys(json, nlohmann::json(TrainOptions{}));
  if (!unknown.empty()) {
    throw Error(
        format("--config {}: unknown option(s) {}; the file takes the keys a run's "
               "options.json has",
               file.string(), join(unknown)));
  }
  try {
    from_json(json, options);
  } catch (const Error& e) {
    throw Error(format("--config {}: {}", file.string(), e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("--config {}: {}", file.string(), e.what()));
  }
  return options;
}

}  // namespace cadclip::train
