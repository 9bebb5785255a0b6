#include "cadclip/core/progress.h"

#include <algorithm>

#include "cadclip/core/format.h"
#include "core/terminal.h"

namespace cadclip {
namespace {
double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
}  // namespace

Progress::Progress(std::string module, ProgressOptions options)
    : module_(std::move(module)),
      options_(std::move(options)),
      live_(terminal::stderr_is_terminal() && !options_.force_plain),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(int64_t units, ProgressFields fields) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (finished_) return;
  done_ += units;
  if (!fields.empty()) fields_ = std::move(fields);
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = seconds_between(last_draw_, now);
  const double interval = live_ ? options_.redraw_interval_s : options_.plain_interval_s;
  if (since_draw < interval) return;
  last_draw_ = now;
  terminal::Lock lock;
  if (live_) {
    lock.set_live_line(render_locked(now));
  } else {
    lock.write_line(render_locked(now));
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (finished_) return;
  finished_ = true;
  terminal::Lock lock;
  const std::string line = render_locked(std::chrono::steady_clock::now());
  if (live_) lock.set_live_line("");
  lock.write_line(line);
}

int64_t Progress::done() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return done_;
}

std::string Progress::render() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return render_locked(std::chrono::steady_clock::now());
}

std::string Progress::render_locked(std::chrono::steady_clock::time_point now) const {
  const double elapsed = std::max(seconds_between(start_, now), 1e-9);
  const double rate = static_cast<double>(done_) / elapsed;
  std::string line = "[" + module_ + "] " + with_commas(done_);
  if (options_.total > 0) {
    line += "/" + with_commas(options_.total);
    const double share = 100.0 * static_cast<double>(done_) / static_cast<double>(options_.total);
    line += " " + fixed(share, 1) + "%";
  }
  line += "  " + fixed(rate, rate < 10 ? 2 : 1) + " " + options_.unit + "/s";
  line += "  elapsed " + human_duration(elapsed);
  if (options_.total > 0 && done_ > 0 && done_ < options_.total) {
    const double remaining = static_cast<double>(options_.total - done_) / rate;
    line += "  ETA " + human_duration(remaining);
  }
  for (const auto& [key, value] : fields_) line += "  " + key + "=" + value;
  return line;
}

}  // namespace cadclip
