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

using detail::lower;
using detail::proportions_of;
using detail::unit_factor;

// The shortest text that reads back as the same double, without an exponent
// (the reader takes digits and a point: "1e+20" would not read).
std::string number_text(double v) {
  char buffer[1200];  // the longest fixed double: a subnormal's ~1,080 characters
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

// ---- keys ------------------------------------------------------------------

struct KeyName {
  std::string_view name;
  FilterKey key;
  bool length;  // a length in millimetres (units allowed); else a count
};

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

// ---- values ----------------------------------------------------------------

[[noreturn]] void bad_clause(std::string_view clause, std::string_view why) {
  throw Error(
      format("filter clause '{}' cannot be read: {}. Write clauses as KEY OP VALUE: size<100, "
             "x=20..40, dims=100x50x20±1, faces>=6, holes=4, hole=M8, type=step, material=steel, "
             "score>=0.4 (docs/HTTP_API.md, \"Filters\")",
             clause, why));
}

// A bound computed from the clause's numbers (units, tolerances applied);
// one past the range of a double is refused rather than left unbounded.
double finite(double value, std::string_view clause) {
  if (!std::isfinite(value)) bad_clause(clause, "a number is too large");
  return value;
}

// A plain number at the front of `text`; advances past it.
std::optional<double> take_number(std::string_view& text) {
  size_t n = 0;
  if (n < text.size() && (text[n] == '-' || text[n] == '+')) ++n;
  const size_t digits_from = n;
  // "20..40": the second number starts after the "..".
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) ||
                             (text[n] == '.' && text.substr(n, 2) != "..")))
    ++n;
  if (n == digits_from) return std::nullopt;
  double value = 0;
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, text.data() + n, value);
  if (ec != std::errc() || end != text.data() + n || !std::isfinite(value)) return std::nullopt;
  text.remove_prefix(n);
  return value;
}

// A unit word at the front of `text` (for lengths), as a factor to mm;
// 1 when none. Advances past it.
double take_unit(std::string_view& text, std::string_view clause, bool length) {
  size_t n = 0;
  while (n < text.size() && (std::isalpha(static_cast<unsigned char>(text[n])) || text[n] == '"'))
    ++n;
  if (n == 0) return 1;
  const std::string_view word = text.substr(0, n);
  const std::optional<double> factor = unit_factor(word);
  if (!factor) bad_clause(clause, format("'{}' is no unit (mm, cm, m, in, ft)", word));
  if (!length) bad_clause(clause, "a count takes no unit");
  text.remove_prefix(n);
  return *factor;
}

// "M8" (a point at 8) and, where `length` is allowed, "M8x40" (a point at 8,
// then 40 within the thread-length tolerance).
std::vector<NumberRange> thread_ranges(std::string_view v, std::string_view clause, bool length) {
  if (!(v.starts_with("M") || v.starts_with("m")))
    bad_clause(clause, length ? "a thread is M, its diameter and maybe its length: thread=M8x40"
                              : "a thread size is M and a number: clearance=M8");
  v.remove_prefix(1);
  const std::optional<double> d = take_number(v);
  if (!d || !(*d > 0)) bad_clause(clause, "the thread's diameter is missing: M8");
  std::vector<NumberRange> ranges = {{*d, *d, false, false}};
  if (length && (v.starts_with("x") || v.starts_with("X"))) {
    v.remove_prefix(1);
    const std::optional<double> l = take_number(v);
    if (!l || !(*l > 0)) bad_clause(clause, "the length after 'x' is missing: M8x40");
    ranges.push_back({finite(*l, clause), *l, false, false});
  }
  if (!v.empty()) bad_clause(clause, format("'{}' is left over", v));
  return ranges;
}

// "1:0.5:0.1" (any scale; kept as the ratios to the largest, largest first).
std::vector<NumberRange> proportion_ranges(std::string_view v, std::string_view clause) {
  std::vector<double> values;
  while (true) {
    const std::optional<double> n = take_number(v);
    if (!n || !(*n > 0)) bad_clause(clause, "proportions are positive numbers: 1:0.5:0.1");
    values.push_back(finite(*n, clause));
    if (v.empty()) break;
    if (v.front() != ':') bad_clause(clause, format("'{}' is left over", v));
    v.remove_prefix(1);
  }
  if (values.size() < 2 || values.size() > 3)
    bad_clause(clause, "proportions compare two or three extents: proportions=1:0.5:0.1");
  return proportions_of(values);
}

// "V", "V unit", "V±T", "V±T%", "V+-T", "A..B", "..B", "A..": a range. `exact`
// is the tolerance of a bare V: none for counts, a rounding one for lengths.
NumberRange take_range(std::string_view& text, std::string_view clause, bool length) {
  NumberRange r;
  if (text.starts_with("..")) {
    text.remove_prefix(2);
    const std::optional<double> b = take_number(text);
    if (!b) bad_clause(clause, "'..' needs a number after it");
    r.max = finite(*b * take_unit(text, clause, length), clause);
    return r;
  }
  const std::optional<double> v = take_number(text);
  if (!v) bad_clause(clause, "expected a number");
  const double unit = take_unit(text, clause, length);
  if (text.starts_with("..")) {
    text.remove_prefix(2);
    r.min = finite(*v * unit, clause);
    if (text.empty() || text[0] == 'x' || text[0] == 'X') return r;
    const std::optional<double> b = take_number(text);
    if (!b) bad_clause(clause, "'..' needs a number after it, or nothing");
    r.max = finite(*b * take_unit(text, clause, length), clause);
    if (r.max < r.min) bad_clause(clause, "the range ends below where it starts");
    return r;
  }
  const std::string_view pm = "\xC2\xB1";  // ±
  if (text.starts_with(pm) || text.starts_with("+-")) {
    text.remove_prefix(text.starts_with(pm) ? pm.size() : 2);
    const std::optional<double> t = take_number(text);
    if (!t || *t < 0) bad_clause(clause, "'±' needs a tolerance that is not negative");
    double value = *v * unit, tolerance = *t;
    if (text.starts_with("%")) {
      text.remove_prefix(1);
      tolerance = std::abs(value) * *t / 100;
    } else {
      // "100mm±5": the tolerance in the value's unit; "10±1cm": both in the tolerance's.
      const bool own =
          !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '"');
      const double tolerance_unit = take_unit(text, clause, length);
      if (own && unit == 1) value = *v * tolerance_unit;
      tolerance *= own ? tolerance_unit : unit;
    }
    r.min = finite(value - tolerance, clause);
    r.max = finite(value + tolerance, clause);
    return r;
  }
  r.min = r.max = finite(*v * unit, clause);
  if (length) {  // a bare length matches to its rounding: 0.5 %, at least 0.1 mm
    const double tolerance = std::max(0.1, 0.005 * std::abs(*v * unit));
    r.min = finite(r.min - tolerance, clause);
    r.max = finite(r.max + tolerance, clause);
  }
  return r;
}

std::vector<std::string> split_values(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find_first_of(",|", at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// A list's values; one with none (`material=","`) is refused.
std::vector<std::string> values_of(std::string_view text, std::string_view clause) {
  std::vector<std::string> values = split_values(text);
  if (values.empty()) bad_clause(clause, "the list has no values");
  return values;
}

std::string normalised_field(std::string_view name) {
  std::string out = lower(name);
  for (char& c : out)
    if (c == ' ' || c == '-') c = '_';
  return out;
}

// One clause: KEY OP VALUE (the value unquoted already).
void add_clause(Filter& filter, std::string_view clause, std::string_view key_text,
                std::string_view op, std::string value, bool quoted) {
  std::string key = lower(key_text);
  if (value.empty()) bad_clause(clause, "the value is missing");
  if (key == "score") {
    std::string_view v = value;
    const std::optional<double> s = take_number(v);
    if (!s || !v.empty() || (op != ">=" && op != ">"))
      bad_clause(clause, "write the minimum score as score>=0.4");
    filter.min_score = *s;
    return;
  }
  Condition c;
  const KeyName* known = nullptr;
  if (key.starts_with("field.")) {
    key = key.substr(6);
  } else {
    for (const KeyName& k : kKeys)
      if (k.name == key) known = &k;
  }
  if (!known) {
    c.key = FilterKey::kField;
    c.field = normalised_field(key);
    if (c.field.empty()) bad_clause(clause, "the field name is missing");
    if (op == "~") {
      c.contains = true;
      c.values = values_of(value, clause);
    } else if (op == "=" || op == "!=") {
      std::string_view v = value;
      // A quoted value is always text: material="v1..v2".
      const bool numeric = !quoted && (value.find("..") != std::string::npos ||
                                       value.find("\xC2\xB1") != std::string::npos ||
                                       value.find("+-") != std::string::npos);
      if (numeric) {
        c.ranges.push_back(take_range(v, clause, /*length=*/false));
        if (!v.empty()) bad_clause(clause, format("'{}' is left over", v));
      } else {
        c.values = values_of(value, clause);
      }
      c.negate = op == "!=";
    } else {
      std::string_view v = value;
      const std::optional<double> n = take_number(v);
      if (!n || !v.empty()) bad_clause(clause, format("{} needs a number", op));
      NumberRange r;
      if (op[0] == '<') r.max = *n, r.max_open = op == "<";
      if (op[0] == '>') r.min = *n, r.min_open = op == ">";
      c.ranges.push_back(r);
    }
    filter.conditions.push_back(std::move(c));
    return;
  }
  c.key = known->key;
  if (c.key == FilterKey::kFileType) {
    if (op != "=" && op != "!=") bad_clause(clause, "type takes = or !=");
    for (const std::string& v : values_of(value, clause)) {
      const std::string name = file_type_of_extension("." + lower(v));
      const bool named = std::find(file_type_names().begin(), file_type_names().end(), lower(v)) !=
                         file_type_names().end();
      if (name.empty() && !named)
        bad_clause(clause,
                   format("'{}' is no file type; use {}", v, join(file_type_names(), ", ")));
      c.values.push_back(name.empty() ? lower(v) : name);
    }
    c.negate = op == "!=";
    filter.conditions.push_back(std::move(c));
    return;
  }
  if (op == "~") bad_clause(clause, "'~' (contains) is for catalog fields");
  std::string_view v = value;
  if (c.key == FilterKey::kDims) {
    if (op != "=") bad_clause(clause, "dims takes '=': dims=100x50x20±1");
    // AxBxC with one tolerance (or unit) at the end that applies to each.
    std::vector<std::string> parts;
    size_t at = 0;
    for (size_t i = 0; i <= value.size(); ++i) {
      if (i == value.size() || value[i] == 'x' || value[i] == 'X' || value[i] == '*') {
        parts.push_back(value.substr(at, i - at));
        at = i + 1;
      }
    }
    if (parts.size() > 3) bad_clause(clause, "a part has three extents");
    std::string tail;  // "±1", "±2%", "mm"
    std::string& last = parts.back();
    const size_t cut = last.find_first_not_of("0123456789.");
    if (cut != std::string::npos && last.find("..") == std::string::npos) {
      tail = last.substr(cut);
      last.resize(cut);
    }
    for (std::string& p : parts) {
      std::string text = p.find("..") == std::string::npos ? p + tail : p;
      std::string_view pv = text;
      c.ranges.push_back(take_range(pv, clause, /*length=*/true));
      if (!pv.empty()) bad_clause(clause, format("'{}' is left over", pv));
    }
    filter.conditions.push_back(std::move(c));
    return;
  }
  if (c.key == FilterKey::kThread || c.key == FilterKey::kClearance) {
    if (op != "=") bad_clause(clause, format("{} takes '=': {}=M8", key, key));
    c.ranges = thread_ranges(v, clause, c.key == FilterKey::kThread);
    filter.conditions.push_back(std::move(c));
    return;
  }
  if (c.key == FilterKey::kProportions) {
    if (op != "=") bad_clause(clause, "proportions take '=': proportions=1:0.5:0.1");
    c.ranges = proportion_ranges(v, clause);
    filter.conditions.push_back(std::move(c));
    return;
  }
  NumberRange r;
  if (c.key == FilterKey::kHoleDiameter && (v.starts_with("M") || v.starts_with("m")) &&
      v.size() > 1 && std::isdigit(static_cast<unsigned char>(v[1]))) {
    if (op != "=" && op != "!=") bad_clause(clause, "a thread size takes = or !=: hole=M8");
    v.remove_prefix(1);
    const std::optional<double> d = take_number(v);
    if (!d || !v.empty()) bad_clause(clause, "a thread size is M and a number: hole=M8");
    r.min = 0.8 * *d;  // tapped (drill about 0.85 d) to coarse clearance (about 1.2 d)
    r.max = finite(1.25 * *d, clause);
    c.negate = op == "!=";
  } else if (op == "=" || op == "!=") {
    r = take_range(v, clause, known->length);
    c.negate = op == "!=";
  } else {
    const std::optional<double> n = take_number(v);
    if (!n) bad_clause(clause, format("{} needs a number", op));
    const double value_mm = finite(*n * take_unit(v, clause, known->length), clause);
    if (op[0] == '<') r.max = value_mm, r.max_open = op == "<";
    if (op[0] == '>') r.min = value_mm, r.min_open = op == ">";
  }
  if (!v.empty()) bad_clause(clause, format("'{}' is left over", v));
  c.ranges.push_back(r);
  filter.conditions.push_back(std::move(c));
}

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
    std::vector<std::string> parts;
    for (const NumberRange& r : ranges) {
      const std::string text = range_text(r, false, /*exact_point=*/false);
      // "=a..b" -> "a..b", "=v" -> "v", "<=v" -> "..v", ">=v" -> "v.."
      if (text.starts_with("="))
        parts.push_back(text.substr(1));
      else if (text.starts_with("<="))
        parts.push_back(".." + text.substr(2));
      else if (text.starts_with(">="))
        parts.push_back(text.substr(2) + "..");
      else
        parts.push_back(text);
    }
    return key_text + "=" + join(parts, "x");
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

Filter parse_filter(std::string_view text) {
  Filter filter;
  size_t i = 0;
  auto at_separator = [&](size_t k) {
    return k >= text.size() || std::isspace(static_cast<unsigned char>(text[k])) || text[k] == ';';
  };
  std::string last_numeric_clause;
  while (i < text.size()) {
    while (i < text.size() &&
           (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ';' || text[i] == ','))
      ++i;
    if (i >= text.size()) break;
    const size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                               text[i] == '_' || text[i] == '.' || text[i] == '-'))
      ++i;
    const std::string_view key = text.substr(start, i - start);
    std::string_view op;
    for (const std::string_view candidate : {"!=", "<=", ">=", "==", "=", ":", "<", ">", "~"}) {
      if (text.substr(i).starts_with(candidate)) {
        op = candidate;
        break;
      }
    }
    if (op.empty()) {
      size_t end = i;
      while (!at_separator(end)) ++end;
      const std::string_view word = text.substr(start, end - start);
      i = end;
      if (lower(word) == "and") continue;
      if (key.empty()) bad_clause(word, "a clause starts with a key such as size, faces or type");
      bad_clause(word, "it has no operator (=, !=, <, <=, >, >=, ~)");
    }
    i += op.size();
    std::string value;
    const bool quoted = i < text.size() && text[i] == '"';
    if (quoted) {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          value += text[i + 1];
          i += 2;
          continue;
        }
        if (text[i] == '"') {
          closed = true;
          ++i;
          break;
        }
        value += text[i++];
      }
      if (!closed) bad_clause(text.substr(start, i - start), "the quote is not closed");
    } else {
      const size_t from = i;
      while (!at_separator(i)) ++i;
      value = std::string(text.substr(from, i - from));
      while (!value.empty() && value.back() == ',') value.pop_back();
      // "size<100 mm": a unit word on its own after a number belongs to it.
      size_t next = i;
      while (next < text.size() && text[next] == ' ') ++next;
      size_t word_end = next;
      while (word_end < text.size() && std::isalpha(static_cast<unsigned char>(text[word_end])))
        ++word_end;
      if (word_end > next && at_separator(word_end) && !value.empty() &&
          std::isdigit(static_cast<unsigned char>(value.back())) &&
          unit_factor(text.substr(next, word_end - next)) && lower(key) != "score") {
        value += std::string(text.substr(next, word_end - next));
        i = word_end;
      }
    }
    const std::string_view normal_op = op == "==" || op == ":" ? "=" : op;
    add_clause(filter, text.substr(start, i - start), key, normal_op, std::move(value), quoted);
  }
  return filter;
}

}  // namespace cadclip::index
