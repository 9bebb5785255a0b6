// Progress display for long jobs on stderr: count, rate, ETA and the job's own
// fields. On a terminal one live line is redrawn; otherwise (CI, a log file)
// plain lines are written every `plain_interval_s` and at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cadclip {

// Job-specific values shown after the count, e.g. {{"loss", "0.532"}}.
using ProgressFields = std::vector<std::pair<std::string, std::string>>;

struct ProgressOptions {
  int64_t total = 0;               // units of work expected; 0 = unknown (no ETA)
  std::string unit = "it";         // what a unit is called in the rate ("files", "samples")
  double plain_interval_s = 10;    // seconds between lines when stderr is no terminal
  double redraw_interval_s = 0.1;  // seconds between redraws of the live line
  bool force_plain = false;        // plain lines even on a terminal (tests)
};

class Progress {
 public:
  Progress(std::string module, ProgressOptions options);
  ~Progress();  // finishes if finish() was not called
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Records `units` more finished units. `fields` describe the work just done
  // and replace the previous fields, so the display never shows a stale value.
  // Safe from several threads.
  void advance(int64_t units = 1, ProgressFields fields = {});
  // Writes the final line once.
  void finish();

  int64_t done() const;
  // The line as it would be drawn now (tests, and the plain mode).
  std::string render() const;

 private:
  std::string render_locked(std::chrono::steady_clock::time_point now) const;

  std::string module_;
  ProgressOptions options_;
  bool live_;
  bool finished_ = false;
  int64_t done_ = 0;
  ProgressFields fields_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  mutable std::mutex mutex_;
};

}  // namespace cadclip
