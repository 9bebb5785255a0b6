// Cells of the CSV files the index layer writes (result exports, duplicate
// clusters): RFC 4180 quoting and numbers with fixed decimals.
#pragma once

#include <cstdio>
#include <string>

namespace cadclip::index::detail {

// `text` as one CSV cell: quoted (with doubled quotes) when it holds a comma,
// a quote or a line break.
inline std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// `v` with `digits` decimals ("12.500"), never in exponent notation.
inline std::string fixed_number(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace cadclip::index::detail
