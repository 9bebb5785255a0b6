// Small text formatting for messages: "{}" markers filled through
// operator<<, plus number helpers. (GCC 12 has no std::format, and LibTorch
// bundles its own fmt, so cadclip's headers use neither.)
#pragma once

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <string_view>

namespace cadclip {

namespace detail {
inline void format_next(std::ostringstream& out, std::string_view& rest) {
  // Copies text up to the next "{}" (with "{{" and "}}" as literal braces) and
  // consumes the marker; returns with `rest` after it.
  while (!rest.empty()) {
    if (rest.starts_with("{{") || rest.starts_with("}}")) {
      out << rest[0];
      rest.remove_prefix(2);
    } else if (rest.starts_with("{}")) {
      rest.remove_prefix(2);
      return;
    } else {
      out << rest[0];
      rest.remove_prefix(1);
    }
  }
}
}  // namespace detail

// format("{} of {} files", 3, 10) == "3 of 10 files". Extra arguments are
// appended after a space; missing ones leave the rest of the text as it is.
template <class... Args>
std::string format(std::string_view pattern, const Args&... args) {
  std::ostringstream out;
  std::string_view rest = pattern;
  ((detail::format_next(out, rest), out << args), ...);
  while (!rest.empty()) detail::format_next(out, rest);
  return out.str();
}

// 1234567 -> "1,234,567"
std::string with_commas(int64_t value);
// Fixed-point with `digits` decimals: fixed(0.12345, 3) == "0.123".
std::string fixed(double value, int digits);
// Seconds as "42s", "3m07s", "2h05m".
std::string human_duration(double seconds);
// Bytes as "512 B", "1.5 KiB", "3.2 GiB".
std::string human_bytes(uint64_t bytes);
// {"a", "b", "c"} -> "a, b, c": lists in messages.
std::string join(std::span<const std::string> items, std::string_view separator = ", ");

}  // namespace cadclip
