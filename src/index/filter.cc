// The filter language's words (keys, units, file types) and its writing:
// a Filter back to the query-string form that filter_parse.cc reads.
#include "cadclip/index/filter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "filter_words.h"

namespace cadclip::index {
namespace {

using detail::KeyName;
using detail::lower;

// The shortest text that reads back as the same double, without an exponent
// (the reader takes digits and a point: "1e+20" would not read).
std::string number_text(double v) {
  char buffer[1200];  // the longest fixed double: a subnormal's ~1,080 characters
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

// ---- keys ------------------------------------------------------------------

// The first name of each key is the one to_string() writes.
constexpr std::array kKeys = {
    KeyName{"x", FilterKey::kSizeX, true},
    KeyName{"y", FilterKey::kSizeY, true},
    KeyName{"z", FilterKey::kSizeZ, true},
    KeyName{"size", FilterKey::kLargest, true},
    KeyName{"largest", FilterKey::kLargest, true},
    KeyName{"middle", FilterKey::kMiddle, true},
    KeyName{"smallest", FilterKey::kSmallest, true},
    KeyName{"extent", FilterKey::kAnyExtent, true},
    KeyName{"dims", FilterKey::kDims, true},
    KeyName{"extents", FilterKey::kDims, true},
    KeyName{"faces", FilterKey::kFaces, false},
    KeyName{"holes", FilterKey::kHoles, false},
    KeyName{"hole", FilterKey::kHoleDiameter, true},
    KeyName{"type", FilterKey::kFileType, false},
    KeyName{"format", FilterKey::kFileType, false},
    KeyName{"equal_holes", FilterKey::kEqualHoles, false},
    KeyName{"hole_count", FilterKey::kHoleCount, false},
    KeyName{"thread", FilterKey::kThread, true},
    KeyName{"clearance", FilterKey::kClearance, true},
    KeyName{"proportions", FilterKey::kProportions, false},
    KeyName{"repeats", FilterKey::kRepeats, false},
    KeyName{"steps", FilterKey::kSteps, false},
};

std::string_view key_name(FilterKey key) {
  for (const KeyName& k : kKeys)
    if (k.key == key) return k.name;
  return "field";
}

bool is_reserved(std::string_view name) {
  if (name == "score" || name == "field") return true;
  return std::any_of(kKeys.begin(), kKeys.end(), [&](const KeyName& k) { return k.name == name; });
}

// ---- units -----------------------------------------------------------------

struct LengthUnit {
  std::string_view word;
  double to_mm;
};

constexpr std::array kLengthUnits = {
    LengthUnit{"mm", 1},           LengthUnit{"millimetre", 1},   LengthUnit{"millimetres", 1},
    LengthUnit{"millimeter", 1},   LengthUnit{"millimeters", 1},  LengthUnit{"cm", 10},
    LengthUnit{"centimetre", 10},  LengthUnit{"centimetres", 10}, LengthUnit{"centimeter", 10},
    LengthUnit{"centimeters", 10}, LengthUnit{"m", 1000},         LengthUnit{"metre", 1000},
    LengthUnit{"metres", 1000},    LengthUnit{"meter", 1000},     LengthUnit{"meters", 1000},
    LengthUnit{"in", 25.4},        LengthUnit{"inch", 25.4},      LengthUnit{"inches", 25.4},
    LengthUnit{"\"", 25.4},        LengthUnit{"ft", 304.8},       LengthUnit{"foot", 304.8},
    LengthUnit{"feet", 304.8},
};

std::string quoted_if_needed(const std::string& value) {
  // Separators end an unquoted value; commas and bars are list separators
  // and stay as they are.
  const bool plain = std::none_of(value.begin(), value.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == ';' || c == '"';
  });
  // Text that would read as a range is quoted too.
  const bool rangy = value.find("..") != std::string::npos ||
                     value.find("\xC2\xB1") != std::string::npos ||
                     value.find("+-") != std::string::npos;
  // And so is text that starts like an operator ("==x" would read as "=" "x").
  const bool operator_like =
      !value.empty() && std::string_view("=<>!~:").find(value[0]) != std::string_view::npos;
  if (plain && !rangy && !operator_like && !value.empty()) return value;
  std::string out = "\"";
  for (const char ch : value) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// "<100", ">=6", "=20..40", "=6", "!=..10". `exact_point`: a single value
// may be written bare (counts); a bare length would read back widened to its
// rounding, so lengths write "v..v".
std::string range_text(const NumberRange& r, bool negate, bool exact_point) {
  const std::string eq = negate ? "!=" : "=";
  const bool low = std::isfinite(r.min), high = std::isfinite(r.max);
  if (!negate && low && !high) return (r.min_open ? ">" : ">=") + number_text(r.min);
  if (!negate && high && !low) return (r.max_open ? "<" : "<=") + number_text(r.max);
  if (low && high && r.min == r.max && exact_point) return eq + number_text(r.min);
  return eq + (low ? number_text(r.min) : "") + ".." + (high ? number_text(r.max) : "");
}

}  // namespace

namespace detail {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> unit_factor(std::string_view word) {
  const std::string w = lower(word);
  for (const LengthUnit& u : kLengthUnits)
    if (u.word == w) return u.to_mm;
  return std::nullopt;
}

const KeyName* find_key(std::string_view name) {
  for (const KeyName& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<NumberRange> proportions_of(std::vector<double> extents) {
  std::sort(extents.rbegin(), extents.rend());
  std::vector<NumberRange> out;
  for (const double e : extents) {
    const double ratio = e / extents.front();
    out.push_back({ratio, ratio, false, false});
  }
  return out;
}

}  // namespace detail

const std::vector<std::string>& file_type_names() {
  static const std::vector<std::string> kNames = {"step", "iges", "brep", "deepcad"};
  return kNames;
}

std::string file_type_of_extension(std::string_view extension) {
  const std::string e = lower(extension);
  if (e == ".step" || e == ".stp") return "step";
  if (e == ".iges" || e == ".igs") return "iges";
  if (e == ".brep") return "brep";
  if (e == ".json") return "deepcad";
  return "";
}

std::string Condition::to_string() const {
  // A field named like a key, or "field.x" itself, is written with the prefix.
  const bool prefixed = is_reserved(field) || field.starts_with("field.");
  std::string key_text =
      key == FilterKey::kField ? (prefixed ? "field." + field : field) : std::string(key_name(key));
  if (key == FilterKey::kFileType || (key == FilterKey::kField && ranges.empty())) {
    // One quoted string for the whole list when any value needs quotes: the
    // reader unquotes first, then splits at the commas.
    const char* op = contains ? "~" : negate ? "!=" : "=";
    return key_text + op + quoted_if_needed(join(values, ","));
  }
  if (key == FilterKey::kDims) {
    // Several shapes, three extents each, are written "AxBxC|DxExF".
    std::string text = key_text + "=";
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (i > 0) text += ranges.size() > 3 && i % 3 == 0 ? "|" : "x";
      const std::string range = range_text(ranges[i], false, /*exact_point=*/false);
      // "=a..b" -> "a..b", "=v" -> "v", "<=v" -> "..v", ">=v" -> "v.."
      if (range.starts_with("="))
        text += range.substr(1);
      else if (range.starts_with("<="))
        text += ".." + range.substr(2);
      else if (range.starts_with(">="))
        text += range.substr(2) + "..";
      else
        text += range;
    }
    return text;
  }
  if (ranges.empty()) return key_text;
  if (key == FilterKey::kThread || key == FilterKey::kClearance) {
    std::string text = key_text + "=M" + number_text(ranges[0].min);
    if (ranges.size() > 1) text += "x" + number_text(ranges[1].min);
    return text;
  }
  if (key == FilterKey::kProportions) {
    std::vector<std::string> parts;
    for (const NumberRange& p : ranges) parts.push_back(number_text(p.min));
    return key_text + "=" + join(parts, ":");
  }
  const NumberRange& r = ranges.front();
  if (!negate && std::isfinite(r.min) && std::isfinite(r.max) && (r.min_open || r.max_open))
    return key_text + (r.min_open ? ">" : ">=") + number_text(r.min) + " " + key_text +
           (r.max_open ? "<" : "<=") + number_text(r.max);
  // Counts are exact; a field's bare "=5" would read back as the text 5.
  const bool count = key == FilterKey::kFaces || key == FilterKey::kHoles ||
                     key == FilterKey::kEqualHoles || key == FilterKey::kHoleCount ||
                     key == FilterKey::kRepeats || key == FilterKey::kSteps;
  return key_text + range_text(r, negate, count);
}

std::string Filter::to_string() const {
  std::vector<std::string> clauses;
  for (const Condition& c : conditions) clauses.push_back(c.to_string());
  if (min_score) clauses.push_back("score>=" + number_text(*min_score));
  return join(clauses, " ");
}

}  // namespace cadclip::index
