// Reading the filter language: the query-string form of a Filter
// (cadclip/index/filter.h) into its conditions. Writing it back is in
// filter.cc, evaluating it against the parts in selection.cc.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/index/filter.h"
#include "filter_words.h"

namespace cadclip::index {
namespace {

using detail::KeyName;
using detail::lower;
using detail::proportions_of;
using detail::unit_factor;

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

// ---- clauses ---------------------------------------------------------------

// "score>=0.4": the minimum score.
double min_score_of(std::string_view clause, std::string_view op, std::string_view value) {
  const std::optional<double> s = take_number(value);
  if (!s || !value.empty() || (op != ">=" && op != ">"))
    bad_clause(clause, "write the minimum score as score>=0.4");
  return *s;
}

// The half-open range of "<", "<=", ">" or ">=" `bound`.
NumberRange beyond(std::string_view op, double bound) {
  NumberRange r;
  if (op[0] == '<') r.max = bound, r.max_open = op == "<";
  if (op[0] == '>') r.min = bound, r.min_open = op == ">";
  return r;
}

// "<100", ">=6 mm": a half-open range at a number, in millimetres when the
// key is a length.
NumberRange one_sided(std::string_view clause, std::string_view op, std::string_view& v,
                      bool length) {
  const std::optional<double> n = take_number(v);
  if (!n) bad_clause(clause, format("{} needs a number", op));
  return beyond(op, finite(*n * take_unit(v, clause, length), clause));
}

// A catalog field imported with `cadclip index --metadata`: text values,
// "~" for contains, or numbers compared as a range.
Condition field_condition(std::string_view field, std::string_view clause, std::string_view op,
                          const std::string& value, bool quoted) {
  Condition c;
  c.key = FilterKey::kField;
  c.field = normalised_field(field);
  if (c.field.empty()) bad_clause(clause, "the field name is missing");
  if (op == "~") {
    c.contains = true;
    c.values = values_of(value, clause);
  } else if (op == "=" || op == "!=") {
    // A quoted value is always text: material="v1..v2".
    const bool numeric = !quoted && (value.find("..") != std::string::npos ||
                                     value.find("\xC2\xB1") != std::string::npos ||
                                     value.find("+-") != std::string::npos);
    if (numeric) {
      std::string_view v = value;
      c.ranges.push_back(take_range(v, clause, /*length=*/false));
      if (!v.empty()) bad_clause(clause, format("'{}' is left over", v));
    } else {
      c.values = values_of(value, clause);
    }
    c.negate = op == "!=";
  } else {
    // A field's number carries no unit.
    std::string_view v = value;
    const std::optional<double> n = take_number(v);
    if (!n || !v.empty()) bad_clause(clause, format("{} needs a number", op));
    c.ranges.push_back(beyond(op, *n));
  }
  return c;
}

// "type=step,iges": file types by name or extension.
Condition file_type_condition(std::string_view clause, std::string_view op,
                              const std::string& value) {
  if (op != "=" && op != "!=") bad_clause(clause, "type takes = or !=");
  Condition c;
  c.key = FilterKey::kFileType;
  for (const std::string& v : values_of(value, clause)) {
    const std::string name = file_type_of_extension("." + lower(v));
    const bool named = std::find(file_type_names().begin(), file_type_names().end(), lower(v)) !=
                       file_type_names().end();
    if (name.empty() && !named)
      bad_clause(clause, format("'{}' is no file type; use {}", v, join(file_type_names(), ", ")));
    c.values.push_back(name.empty() ? lower(v) : name);
  }
  c.negate = op == "!=";
  return c;
}

// One shape of a dims clause: "100x50x20±1", "100x50", "10..12x5": AxBxC
// with one tolerance (or unit) at the end that applies to each.
std::vector<NumberRange> shape_ranges(std::string_view clause, const std::string& value) {
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
  std::vector<NumberRange> ranges;
  for (std::string& p : parts) {
    std::string text = p.find("..") == std::string::npos ? p + tail : p;
    std::string_view pv = text;
    ranges.push_back(take_range(pv, clause, /*length=*/true));
    if (!pv.empty()) bad_clause(clause, format("'{}' is left over", pv));
  }
  return ranges;
}

// "dims=100x50x20±1", or shapes of which any will do: "dims=15x8x7|23x8x7".
std::vector<NumberRange> dims_ranges(std::string_view clause, std::string_view op,
                                     const std::string& value) {
  if (op != "=") bad_clause(clause, "dims takes '=': dims=100x50x20±1");
  const std::vector<std::string> shapes = split_values(value);
  if (shapes.size() == 1) return shape_ranges(clause, value);
  if (shapes.size() > kMaxDimsShapes)
    bad_clause(clause, format("dims allows at most {} shapes", kMaxDimsShapes));
  std::vector<NumberRange> ranges;
  for (const std::string& shape : shapes) {
    const std::vector<NumberRange> one = shape_ranges(clause, shape);
    if (one.size() != 3)
      bad_clause(clause, format("'{}': each of several shapes gives all three extents, "
                                "dims=15x8x7|23x8x7",
                                shape));
    ranges.insert(ranges.end(), one.begin(), one.end());
  }
  return ranges;
}

// "hole=M8": a hole a thread of that size could be, from tapped (drill about
// 0.85 d) to coarse clearance (about 1.2 d).
NumberRange hole_for_thread(std::string_view clause, std::string_view op, std::string_view& v) {
  if (op != "=" && op != "!=") bad_clause(clause, "a thread size takes = or !=: hole=M8");
  v.remove_prefix(1);
  const std::optional<double> d = take_number(v);
  if (!d || !v.empty()) bad_clause(clause, "a thread size is M and a number: hole=M8");
  NumberRange r;
  r.min = 0.8 * *d;
  r.max = finite(1.25 * *d, clause);
  return r;
}

// A numeric key (sizes, counts, a hole's diameter): one range.
Condition number_condition(const KeyName& key, std::string_view clause, std::string_view op,
                           const std::string& value) {
  Condition c;
  c.key = key.key;
  std::string_view v = value;
  const bool thread_size = c.key == FilterKey::kHoleDiameter &&
                           (v.starts_with("M") || v.starts_with("m")) && v.size() > 1 &&
                           std::isdigit(static_cast<unsigned char>(v[1]));
  if (thread_size) {
    c.ranges.push_back(hole_for_thread(clause, op, v));
  } else if (op == "=" || op == "!=") {
    c.ranges.push_back(take_range(v, clause, key.length));
  } else {
    c.ranges.push_back(one_sided(clause, op, v, key.length));
  }
  c.negate = op == "!=";
  if (!v.empty()) bad_clause(clause, format("'{}' is left over", v));
  return c;
}

// A clause on one of the language's own keys.
Condition key_condition(const KeyName& key, std::string_view clause, std::string_view op,
                        const std::string& value) {
  if (key.key == FilterKey::kFileType) return file_type_condition(clause, op, value);
  if (op == "~") bad_clause(clause, "'~' (contains) is for catalog fields");
  Condition c;
  c.key = key.key;
  if (key.key == FilterKey::kDims) {
    c.ranges = dims_ranges(clause, op, value);
  } else if (key.key == FilterKey::kThread || key.key == FilterKey::kClearance) {
    if (op != "=") bad_clause(clause, format("{} takes '=': {}=M8", key.name, key.name));
    c.ranges = thread_ranges(value, clause, key.key == FilterKey::kThread);
  } else if (key.key == FilterKey::kProportions) {
    if (op != "=") bad_clause(clause, "proportions take '=': proportions=1:0.5:0.1");
    c.ranges = proportion_ranges(value, clause);
  } else {
    return number_condition(key, clause, op, value);
  }
  return c;
}

// One clause: KEY OP VALUE (the value unquoted already).
void add_clause(Filter& filter, std::string_view clause, std::string_view key_text,
                std::string_view op, const std::string& value, bool quoted) {
  const std::string key = lower(key_text);
  if (value.empty()) bad_clause(clause, "the value is missing");
  if (key == "score") {
    filter.min_score = min_score_of(clause, op, value);
    return;
  }
  if (key.starts_with("field.")) {
    filter.conditions.push_back(field_condition(key.substr(6), clause, op, value, quoted));
  } else if (const KeyName* known = detail::find_key(key)) {
    filter.conditions.push_back(key_condition(*known, clause, op, value));
  } else {
    filter.conditions.push_back(field_condition(key, clause, op, value, quoted));
  }
}

// ---- the clause list -------------------------------------------------------

// Walks the text of a filter clause by clause.
class ClauseReader {
 public:
  explicit ClauseReader(std::string_view text) : text_(text) {}

  // Reads the next clause into `filter`; false at the end of the text.
  bool read_next(Filter& filter) {
    skip_separators();
    if (i_ >= text_.size()) return false;
    const size_t start = i_;
    while (i_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i_])) ||
                                 text_[i_] == '_' || text_[i_] == '.' || text_[i_] == '-'))
      ++i_;
    const std::string_view key = text_.substr(start, i_ - start);
    const std::string_view op = take_operator();
    if (op.empty()) return skip_and_or_refuse(start, key);
    const bool quoted = i_ < text_.size() && text_[i_] == '"';
    const std::string value = quoted ? quoted_value(start) : plain_value(key);
    const std::string_view normal_op = op == "==" || op == ":" ? "=" : op;
    add_clause(filter, text_.substr(start, i_ - start), key, normal_op, value, quoted);
    return true;
  }

 private:
  bool at_separator(size_t k) const {
    return k >= text_.size() || std::isspace(static_cast<unsigned char>(text_[k])) ||
           text_[k] == ';';
  }

  void skip_separators() {
    while (i_ < text_.size() && (std::isspace(static_cast<unsigned char>(text_[i_])) ||
                                 text_[i_] == ';' || text_[i_] == ','))
      ++i_;
  }

  std::string_view take_operator() {
    for (const std::string_view candidate : {"!=", "<=", ">=", "==", "=", ":", "<", ">", "~"}) {
      if (text_.substr(i_).starts_with(candidate)) {
        i_ += candidate.size();
        return candidate;
      }
    }
    return {};
  }

  // A word without an operator: "and" between clauses is skipped, anything
  // else refused.
  bool skip_and_or_refuse(size_t start, std::string_view key) {
    size_t end = i_;
    while (!at_separator(end)) ++end;
    const std::string_view word = text_.substr(start, end - start);
    i_ = end;
    if (lower(word) == "and") return true;
    if (key.empty()) bad_clause(word, "a clause starts with a key such as size, faces or type");
    bad_clause(word, "it has no operator (=, !=, <, <=, >, >=, ~)");
  }

  // "..." with backslash escapes, from the opening quote at i_.
  std::string quoted_value(size_t start) {
    std::string value;
    ++i_;
    while (i_ < text_.size()) {
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) {
        value += text_[i_ + 1];
        i_ += 2;
        continue;
      }
      if (text_[i_] == '"') {
        ++i_;
        return value;
      }
      value += text_[i_++];
    }
    bad_clause(text_.substr(start, i_ - start), "the quote is not closed");
  }

  // Up to the next separator; "size<100 mm": a unit word on its own after a
  // number belongs to it.
  std::string plain_value(std::string_view key) {
    const size_t from = i_;
    while (!at_separator(i_)) ++i_;
    std::string value(text_.substr(from, i_ - from));
    while (!value.empty() && value.back() == ',') value.pop_back();
    size_t next = i_;
    while (next < text_.size() && text_[next] == ' ') ++next;
    size_t word_end = next;
    while (word_end < text_.size() && std::isalpha(static_cast<unsigned char>(text_[word_end])))
      ++word_end;
    if (word_end > next && at_separator(word_end) && !value.empty() &&
        std::isdigit(static_cast<unsigned char>(value.back())) &&
        unit_factor(text_.substr(next, word_end - next)) && lower(key) != "score") {
      value += std::string(text_.substr(next, word_end - next));
      i_ = word_end;
    }
    return value;
  }

  std::string_view text_;
  size_t i_ = 0;
};

}  // namespace

Filter parse_filter(std::string_view text) {
  Filter filter;
  ClauseReader reader(text);
  while (reader.read_next(filter)) {
  }
  return filter;
}

}  // namespace cadclip::index
