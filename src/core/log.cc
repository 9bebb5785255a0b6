#include "cadclip/core/log.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "cadclip/core/error.h"
#include "core/terminal.h"

namespace cadclip::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};

std::string clock_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  localtime_r(&t, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

const char* colour(Level at) {
  switch (at) {
    case Level::kWarn:
      return "\033[33m";
    case Level::kError:
      return "\033[31;1m";
    case Level::kTrace:
    case Level::kDebug:
      return "\033[2m";
    default:
      return "";
  }
}
}  // namespace

std::optional<Level> parse_level(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "trace") return Level::kTrace;
  if (lower == "debug") return Level::kDebug;
  if (lower == "info") return Level::kInfo;
  if (lower == "warn" || lower == "warning") return Level::kWarn;
  if (lower == "error") return Level::kError;
  if (lower == "off") return Level::kOff;
  return std::nullopt;
}

std::string_view level_name(Level at) {
  switch (at) {
    case Level::kTrace:
      return "trace";
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kOff:
      return "off";
  }
  return "?";
}

void set_level(Level at) { g_level.store(at); }
Level level() { return g_level.load(); }

void init_from_environment() {
  const char* value = std::getenv("CADCLIP_LOG_LEVEL");
  if (value == nullptr || *value == '\0') return;
  const auto parsed = parse_level(value);
  if (!parsed) {
    throw Error(
        format("CADCLIP_LOG_LEVEL='{}' is not a log level; use one of trace, debug, "
               "info, warn, error, off",
               value));
  }
  set_level(*parsed);
}

void write(Level at, std::string_view module, std::string_view message) {
  const bool tty = terminal::stderr_is_terminal();
  std::string line = clock_now();
  line += ' ';
  if (tty) line += colour(at);
  std::string name(level_name(at));
  name.resize(5, ' ');
  line += name;
  line += " [";
  line += module;
  line += "] ";
  line += message;
  if (tty && *colour(at) != '\0') line += "\033[0m";
  terminal::Lock().write_line(line);
}

}  // namespace cadclip::log
