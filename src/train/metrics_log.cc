#include "cadclip/train/metrics_log.h"

#include <algorithm>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::train {

namespace fs = std::filesystem;

MetricsLog::MetricsLog(const fs::path& out, bool active, bool append) : active_(active) {
  if (!active) return;
  file_.open(out / "metrics.jsonl", append ? std::ios::app : std::ios::trunc);
  if (!file_) throw Error(format("cannot append to {}", (out / "metrics.jsonl").string()));
  board_ = std::make_unique<TensorBoardWriter>(out / "tensorboard");
}

void MetricsLog::write(const nlohmann::json& record, int64_t step) {
  if (!active_) return;
  file_ << record.dump() << "\n";
  file_.flush();
  for (const auto& [key, value] : record.items())
    if (value.is_number() && key != "step" && key != "epoch")
      board_->add_scalar(record.value("kind", "train") + "/" + key, value.get<double>(), step);
  board_->flush();
}

void keep_metrics_through(const fs::path& file, int64_t step) {
  if (!fs::exists(file)) return;
  const std::string text = read_text_file(file);
  std::string kept;
  int64_t dropped = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", int64_t{-1}) <= step) {
      kept += line + "\n";
    } else {
      ++dropped;
    }
  }
  if (dropped == 0) return;
  log::info("train", "{}: dropped {} records after step {}, which this run takes again",
            file.string(), dropped, step);
  write_text_atomic(file, kept);
}

}  // namespace cadclip::train
