// Logging front end: levels and module tags, to stderr.
//   log::info("ingest", "{} files, {} failed", n, failed);
//   -> 12:04:31 info  [ingest] 1204 files, 3 failed
// The level comes from --log-level or CADCLIP_LOG_LEVEL (default info).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cadclip/core/format.h"

namespace cadclip::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// "trace", "debug", "info", "warn" (or "warning"), "error", "off".
std::optional<Level> parse_level(std::string_view name);
std::string_view level_name(Level level);

void set_level(Level level);
Level level();
inline bool enabled(Level at) { return at >= level() && at != Level::kOff; }

// Reads CADCLIP_LOG_LEVEL; throws cadclip::Error naming the bad value.
void init_from_environment();

// Writes one line; safe from any thread; keeps a live progress line intact.
void write(Level at, std::string_view module, std::string_view message);

template <class... Args>
void trace(std::string_view module, std::string_view pattern, const Args&... args) {
  if (enabled(Level::kTrace)) write(Level::kTrace, module, format(pattern, args...));
}
template <class... Args>
void debug(std::string_view module, std::string_view pattern, const Args&... args) {
  if (enabled(Level::kDebug)) write(Level::kDebug, module, format(pattern, args...));
}
template <class... Args>
void info(std::string_view module, std::string_view pattern, const Args&... args) {
  if (enabled(Level::kInfo)) write(Level::kInfo, module, format(pattern, args...));
}
template <class... Args>
void warn(std::string_view module, std::string_view pattern, const Args&... args) {
  if (enabled(Level::kWarn)) write(Level::kWarn, module, format(pattern, args...));
}
template <class... Args>
void error(std::string_view module, std::string_view pattern, const Args&... args) {
  if (enabled(Level::kError)) write(Level::kError, module, format(pattern, args...));
}

}  // namespace cadclip::log
