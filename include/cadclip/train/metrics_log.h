// A run's records: one JSON object a line in <run>/metrics.jsonl (kind
// "train" per step, "validation" per epoch) and the same numbers as
// TensorBoard scalars in <run>/tensorboard/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cadclip/train/tensorboard.h"

namespace cadclip::train {

class MetricsLog {
 public:
  // `active` false: writes nothing (ranks other than 0). `append`: go on
  // with the records there (a resumed run); else start anew.
  MetricsLog(const std::filesystem::path& run_folder, bool active, bool append);
  // Writes `record` and its numbers (but step and epoch) as scalars "<kind>/<key>".
  void write(const nlohmann::json& record, int64_t step);

 private:
  bool active_;
  std::ofstream file_;
  std::unique_ptr<TensorBoardWriter> board_;
};

// Keeps the records of `file` up to `step` (what the checkpoint being resumed
// had seen), so that the steps run again are not listed twice; a line cut
// short by a crash goes too.
void keep_metrics_through(const std::filesystem::path& file, int64_t step);

}  // namespace cadclip::train
