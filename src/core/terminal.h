// Shared by the log front end and the progress display: one lock over stderr
// and the live progress line, so that a log line never tears the bar.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace cadclip::terminal {

bool stderr_is_terminal();

// Holds the stderr lock for the lifetime of the object.
class Lock {
 public:
  Lock();
  // Writes a whole line (a newline is added), clearing and then redrawing the
  // live line if one is shown.
  void write_line(std::string_view line);
  // Replaces the live line (empty hides it).
  void set_live_line(std::string line);

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace cadclip::terminal
