#include "core/terminal.h"

#include <unistd.h>

#include <cstdio>

namespace cadclip::terminal {
namespace {
std::mutex& stderr_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& live_line() {
  static std::string line;
  return line;
}
constexpr const char* kClearLine = "\r\033[2K";
}  // namespace

bool stderr_is_terminal() {
  static const bool is_terminal = isatty(STDERR_FILENO) == 1;
  return is_terminal;
}

Lock::Lock() : lock_(stderr_mutex()) {}

void Lock::write_line(std::string_view line) {
  const std::string& live = live_line();
  if (!live.empty()) std::fputs(kClearLine, stderr);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  if (!live.empty()) std::fputs(live.c_str(), stderr);
  std::fflush(stderr);
}

void Lock::set_live_line(std::string line) {
  std::fputs(kClearLine, stderr);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  live_line() = std::move(line);
}

}  // namespace cadclip::terminal
