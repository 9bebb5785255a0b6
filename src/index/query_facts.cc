// The facts a text query states, read as filter conditions: what ranks
// the parts that meet them first (index/searcher.h), and what
// `--strict-numbers` makes hard conditions. Private to the index layer; the
// reading rules are in docs/HTTP_API.md, "Facts a query states".
#include "cadclip/index/query_facts.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "cadclip/core/format.h"
#include "filter_words.h"
#include "thread_sizes.h"
#ifdef CADCLIP_WITH_OCCT
#include "cadclip/cad/standards.h"
#endif

namespace cadclip::index {
namespace {

using detail::lower;
using detail::unit_factor;

struct Token {
  std::string text;  // as written
  std::string low;   // lower case
  size_t begin = 0, end = 0;
  bool number = false;
  double value = 0;
  bool glued_to_next = false;  // no space before the next token ("M8", "100mm")
};

constexpr std::array<std::pair<std::string_view, int>, 27> kNumberWords = {{
    {"one", 1},      {"two", 2},        {"three", 3},     {"four", 4},      {"five", 5},
    {"six", 6},      {"seven", 7},      {"eight", 8},     {"nine", 9},      {"ten", 10},
    {"eleven", 11},  {"twelve", 12},    {"thirteen", 13}, {"fourteen", 14}, {"fifteen", 15},
    {"sixteen", 16}, {"seventeen", 17}, {"eighteen", 18}, {"nineteen", 19}, {"twenty", 20},
    {"thirty", 30},  {"forty", 40},     {"fifty", 50},    {"sixty", 60},    {"seventy", 70},
    {"eighty", 80},  {"ninety", 90},
}};

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t start = i;
    Token t;
    if (std::isdigit(c) || (c == '.' && i + 1 < text.size() && std::isdigit(text[i + 1]))) {
      while (i < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[i])) ||
              (text[i] == '.' && i + 1 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[i + 1]))) ||
              (text[i] == ',' && i + 3 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isdigit(static_cast<unsigned char>(text[i + 2])) &&
               std::isdigit(static_cast<unsigned char>(text[i + 3])) &&
               (i + 4 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i + 4]))))))
        ++i;
      std::string digits;
      for (size_t k = start; k < i; ++k)
        if (text[k] != ',') digits += text[k];
      t.value = std::strtod(digits.c_str(), nullptr);
      // A size past a billion millimetres is no part's: not read as a number.
      t.number = std::isfinite(t.value) && t.value < 1e9;
    } else if (std::isalpha(c)) {
      while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    } else if (text.substr(i).starts_with("\xC3\x97")) {  // ×
      i += 2;
      t.low = "x";
    } else if (text.substr(i).starts_with("\xE2\x89\xA4") ||  // ≤
               text.substr(i).starts_with("\xE2\x89\xA5")) {  // ≥
      t.low = text[i + 2] == '\xA4' ? "<=" : ">=";
      i += 3;
    } else if (c == '<' || c == '>') {
      ++i;
      if (i < text.size() && text[i] == '=') ++i;
    } else if (c == '"' || c == '*') {
      ++i;
      if (c == '*') t.low = "x";
    } else {
      ++i;
      continue;  // punctuation and spaces separate tokens
    }
    t.text = std::string(text.substr(start, i - start));
    if (t.low.empty()) t.low = lower(t.text);
    t.begin = start;
    t.end = i;
    if (!out.empty()) out.back().glued_to_next = out.back().end == start;
    out.push_back(std::move(t));
  }
  for (Token& t : out) {
    for (const auto& [word, n] : kNumberWords) {
      if (t.low == word) {
        t.number = true;
        t.value = n;
      }
    }
  }
  // "twenty-four", "sixty one": one number.
  std::vector<Token> merged;
  for (size_t i = 0; i < out.size(); ++i) {
    merged.push_back(out[i]);
    Token& tens = merged.back();
    const bool is_tens = tens.number && !std::isdigit(static_cast<unsigned char>(tens.text[0])) &&
                         tens.value >= 20 && static_cast<int>(tens.value) % 10 == 0;
    if (!is_tens || i + 1 >= out.size()) continue;
    const Token& unit = out[i + 1];
    if (!unit.number || std::isdigit(static_cast<unsigned char>(unit.text[0])) || unit.value < 1 ||
        unit.value > 9)
      continue;
    tens.value += unit.value;
    tens.end = unit.end;
    tens.text = std::string(text.substr(tens.begin, tens.end - tens.begin));
    tens.low = lower(tens.text);
    tens.glued_to_next = unit.glued_to_next;
    ++i;
  }
  return merged;
}

struct Phrase {
  std::vector<std::string_view> words;
  char op;  // '<', 'l' (<=), '>', 'g' (>=)
};

const std::vector<Phrase>& comparatives() {
  static const std::vector<Phrase> kPhrases = {
      {{"under"}, '<'},
      {{"below"}, '<'},
      {{"less", "than"}, '<'},
      {{"smaller", "than"}, '<'},
      {{"shorter", "than"}, '<'},
      {{"narrower", "than"}, '<'},
      {{"at", "most"}, 'l'},
      {{"up", "to"}, 'l'},
      {{"no", "more", "than"}, 'l'},
      {{"no", "larger", "than"}, 'l'},
      {{"no", "bigger", "than"}, 'l'},
      {{"not", "more", "than"}, 'l'},
      {{"max"}, 'l'},
      {{"maximum"}, 'l'},
      {{"within"}, 'l'},
      {{"<"}, '<'},
      {{"<="}, 'l'},
      {{"over"}, '>'},
      {{"above"}, '>'},
      {{"more", "than"}, '>'},
      {{"larger", "than"}, '>'},
      {{"bigger", "than"}, '>'},
      {{"longer", "than"}, '>'},
      {{"wider", "than"}, '>'},
      {{"greater", "than"}, '>'},
      {{"at", "least"}, 'g'},
      {{"min"}, 'g'},
      {{"minimum"}, 'g'},
      {{"no", "less", "than"}, 'g'},
      {{"no", "smaller", "than"}, 'g'},
      {{">"}, '>'},
      {{">="}, 'g'},
  };
  return kPhrases;
}

bool one_of(const std::string& word, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return w == word; });
}

bool is_hole_word(const std::string& w) {
  return one_of(w, {"hole", "holes", "bore", "bores", "opening", "openings", "perforations"});
}

// Lengths next to these name no extent of the part.
bool is_non_extent_word(const std::string& w) {
  return one_of(w, {"apart",  "pitch",  "spacing", "spaced",   "centres", "centers",  "center",
                    "centre", "fillet", "fillets", "filleted", "chamfer", "chamfers", "chamfered",
                    "radius", "radii",  "thread",  "threads",  "pcd",     "circle",   "offset",
                    "step",   "steps",  "deg",     "degree",   "degrees"});
}

// A length at token i: the number and its unit token; nullopt without a unit.
std::optional<std::pair<double, size_t>> length_at(const std::vector<Token>& t, size_t i) {
  if (i >= t.size() || !t[i].number || i + 1 >= t.size()) return std::nullopt;
  // "in" after a number is read as inches only when glued ("4in") or quoted.
  if (t[i + 1].low == "in" && !t[i].glued_to_next) return std::nullopt;
  // "DIN 912 M6": an upper-case M before a number is a thread, not metres.
  if (t[i + 1].text == "M" && t[i + 1].glued_to_next && i + 2 < t.size() && t[i + 2].number)
    return std::nullopt;
  const std::optional<double> factor = unit_factor(t[i + 1].low);
  if (!factor) return std::nullopt;
  return std::pair{t[i].value * *factor, i + 2};
}

std::string words_between(std::string_view text, const std::vector<Token>& t, size_t from,
                          size_t to) {
  return std::string(text.substr(t[from].begin, t[to - 1].end - t[from].begin));
}

Condition stated(FilterKey key, NumberRange range, std::string because) {
  Condition c;
  c.key = key;
  c.ranges.push_back(range);
  c.origin = FilterOrigin::kQueryText;
  c.because = std::move(because);
  return c;
}

NumberRange around(double value, double relative, double at_least) {
  const double tolerance = std::max(at_least, relative * value);
  return {value - tolerance, value + tolerance, false, false};
}

// Words that make a hole count a set of equal holes ("six bolt holes").
// Features a rotational pattern repeats (data::PartFacts::repeats).
bool is_repeated_feature_word(const std::string& w) {
  return one_of(w, {"tooth", "teeth", "spoke", "spokes", "slot", "slots", "lobe", "lobes", "arm",
                    "arms", "blade", "blades", "notch", "notches", "flute", "flutes"});
}

// The pieces of a stepped shaft: "three steps", "four diameter sections".
bool is_step_word(const std::string& w) { return one_of(w, {"step", "steps"}); }

bool is_equal_set_word(const std::string& w) {
  return one_of(w, {"bolt", "mounting", "screw", "fixing", "equal", "identical", "clearance",
                    "tapped", "threaded", "countersunk", "counterbored"});
}

// Words after "about" widen a length's tolerance to ±10%.
bool is_approximate_word(const std::string& w) {
  return one_of(w,
                {"about", "approximately", "approx", "roughly", "around", "circa", "ca", "nearly"});
}

// Words of the parts whose designations carry a thread ("M8 nut").
bool is_washer_word(const std::string& w) { return one_of(w, {"washer", "washers"}); }
bool is_bearing_word(const std::string& w) { return one_of(w, {"bearing", "bearings"}); }
bool is_fastener_word(const std::string& w) {
  return one_of(w, {"nut", "nuts", "bolt", "bolts", "screw", "screws", "stud", "studs", "rod",
                    "insert", "standoff", "standoffs", "spacer", "spacers", "nyloc", "locknut",
                    "capscrew", "setscrew"});
}
bool is_length_word(const std::string& w) { return one_of(w, {"long", "length", "l"}); }
bool is_inner_word(const std::string& w) {
  return one_of(w, {"inside", "inner", "internal", "id", "bore", "hole", "holes"});
}
bool is_dimension_word(const std::string& w) {
  return is_inner_word(w) || one_of(w, {"outside", "outer", "od", "diameter", "dia", "long", "wide",
                                        "high", "tall", "thick", "deep"});
}

// A dimension word of a unitless "N units" statement: 'l', 'w', 'h', 't' or 0.
char size_word(const std::string& w) {
  if (one_of(w, {"long", "length"})) return 'l';
  if (one_of(w, {"wide", "width"})) return 'w';
  if (one_of(w, {"high", "height", "tall"})) return 'h';
  if (one_of(w, {"thick", "thickness", "deep", "depth"})) return 't';
  return 0;
}

bool query_has(const std::vector<Token>& t, bool (*word)(const std::string&)) {
  return std::any_of(t.begin(), t.end(), [&](const Token& k) { return word(k.low); });
}

Condition stated_thread(FilterKey key, double d, std::optional<double> length,
                        std::string because) {
  Condition c = stated(key, {d, d, false, false}, std::move(because));
  if (length) c.ranges.push_back({*length, *length, false, false});
  return c;
}

// A ball bearing's sizes as facts: the bore (±1%, at least 0.05 mm) and the
// extents D x D x B (±1%, at least 0.1 mm).
void add_bearing(std::vector<Condition>& out, double bore, double outside, double width,
                 const std::string& because) {
  out.push_back(stated(FilterKey::kHoleDiameter, around(bore, 0.01, 0.05), because));
  Condition dims = stated(FilterKey::kDims, around(outside, 0.01, 0.1), because);
  dims.ranges.push_back(around(outside, 0.01, 0.1));
  dims.ranges.push_back(around(width, 0.01, 0.1));
  out.push_back(std::move(dims));
}

// A deep groove ball bearing's number ("608", "6204") with its suffix
// ("ZZ", "2RS") read off the tokens from i; the tokens it spans.
std::optional<std::pair<std::string, size_t>> bearing_number(const std::vector<Token>& t, size_t i,
                                                             bool bearing_named) {
  if (!t[i].number || t[i].text.find('.') != std::string::npos) return std::nullopt;
  const std::string& n = t[i].text;
  // 6xx miniature (623, 608, ...) and 60xx, 62xx, 63xx; the table decides.
  const bool shaped = (n.size() == 3 || n.size() == 4) && n[0] == '6';
  if (!shaped) return std::nullopt;
  size_t end = i + 1;
  bool suffix = false;
  // "608ZZ", "608 ZZ", "6204-2RS", "6204 2RS", "6204-RS", "608-2Z".
  if (end < t.size() && one_of(t[end].low, {"zz", "z", "rs", "rz", "rsh"})) {
    suffix = true;
    ++end;
  } else if (end + 1 < t.size() && t[end].number && t[end].value == 2 && t[end].glued_to_next &&
             one_of(t[end + 1].low, {"rs", "z", "rz", "rsh"})) {
    suffix = true;
    end += 2;
  }
  if (!suffix && !bearing_named) return std::nullopt;
  return std::pair{n, end};
}

// One reading of a query: its tokens, the facts read so far, and the tokens
// those used, so that each later pass reads only what the earlier ones left.
// The passes run in the order conditions_stated_in calls them.
struct QueryReading {
  explicit QueryReading(std::string_view query)
      : text(query),
        t(tokenize(query)),
        used(t.size(), false),
        washer(query_has(t, is_washer_word)),
        bearing(query_has(t, is_bearing_word)),
        fastener(query_has(t, is_fastener_word)) {}

  void mark(size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) used[k] = true;
  }
  bool is_units(size_t at) const {
    return at < t.size() && one_of(t[at].low, {"unit", "units", "u"});
  }

  void read_bearing_numbers();
#ifdef CADCLIP_WITH_OCCT
  void read_steel_sections();
  void read_gears();
#endif
  void read_bearing_sizes();
  void read_threads();
  void read_thread_length();
  void read_comparatives();
  void read_sizes();
  void read_sizes_in_units();
  void read_hole_counts();
  void read_feature_counts();
  void read_other_lengths();

  std::string_view text;
  std::vector<Token> t;
  std::vector<bool> used;
  const bool washer, bearing, fastener;  // the query names such a part
  std::vector<Condition> out;
};

// Deep groove ball bearings by number: the bore and the outside of the table.
void QueryReading::read_bearing_numbers() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    const auto number = bearing_number(t, i, bearing);
    if (!number) continue;
    const std::string because = words_between(text, t, i, number->second);
#ifdef CADCLIP_WITH_OCCT
    const std::optional<cad::BearingSize> size = cad::ball_bearing_size(number->first);
    if (!size) continue;
    add_bearing(out, size->d, size->outside, size->width, because);
    mark(i, number->second);
#else
    (void)because;
#endif
  }
}

#ifdef CADCLIP_WITH_OCCT  // the tables live in the cad layer
// Steel sections by designation: "IPE 200", "HEB 160", "UPN 100", "L 50x5"
// (EN 10365, EN 10056-1): cut to a length longer than the section, the
// part's middle and smallest extents are the section's sides, ±1%.
void QueryReading::read_steel_sections() {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i] || !t[i + 1].number) continue;
    const std::string series = t[i].low;
    if (!one_of(series, {"ipe", "hea", "heb", "upn", "l"})) continue;
    std::string size = t[i + 1].text;
    size_t end = i + 2;
    if (series == "l") {  // "L 50x5": legs x thickness
      if (end + 1 >= t.size() || t[end].low != "x" || !t[end + 1].number) continue;
      size += "x" + t[end + 1].text;
      end += 2;
    }
    const std::optional<cad::SteelProfileSize> section = cad::steel_profile_size(series, size);
    if (!section) continue;
    const std::string because = words_between(text, t, i, end);
    out.push_back(
        stated(FilterKey::kMiddle, around(std::max(section->h, section->b), 0.01, 0.1), because));
    out.push_back(
        stated(FilterKey::kSmallest, around(std::min(section->h, section->b), 0.01, 0.1), because));
    mark(i, end);
  }
}

// Spur gears by module and teeth: "module 2, 24 teeth", "24 teeth of module
// 1.5": the tip diameter m (z + 2) is the part's largest extent, ±1% (the
// count itself is read below).
void QueryReading::read_gears() {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i] || !one_of(t[i].low, {"module", "mod"}) || !t[i + 1].number) continue;
    std::optional<double> teeth;
    for (size_t k = 0; k + 1 < t.size(); ++k)
      if (t[k].number && one_of(t[k + 1].low, {"teeth", "tooth"})) teeth = t[k].value;
    if (!teeth) continue;
    const std::optional<cad::GearSize> gear =
        cad::spur_gear_size(t[i + 1].value, static_cast<int>(*teeth));
    if (!gear) continue;
    out.push_back(stated(FilterKey::kLargest, around(gear->tip, 0.01, 0.1),
                         words_between(text, t, i, i + 2)));
    mark(i, i + 2);
  }
}
#endif

// "bearing 8x22x7": bore x outside x width, in mm.
void QueryReading::read_bearing_sizes() {
  if (!bearing) return;
  for (size_t i = 0; i + 4 < t.size(); ++i) {
    if (used[i] || !t[i].number || t[i + 1].low != "x" || !t[i + 2].number || t[i + 3].low != "x" ||
        !t[i + 4].number)
      continue;
    const double d = t[i].value, outside = t[i + 2].value, width = t[i + 4].value;
    if (!(outside > d)) continue;
    const size_t end = i + 5 < t.size() && unit_factor(t[i + 5].low) ? i + 6 : i + 5;
    const double to_mm = end == i + 6 ? *unit_factor(t[i + 5].low) : 1.0;
    const std::string because = words_between(text, t, i, end);
    add_bearing(out, d * to_mm, outside * to_mm, width * to_mm, because);
    mark(i, end);
  }
}

// Thread sizes: "M8", "M 8" (an upper-case M right before a number), with
// a length "M8x40", "M8 x 40".
void QueryReading::read_threads() {
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (used[i] || t[i].text != "M" || !t[i + 1].number) continue;
    if (!t[i].glued_to_next && i + 2 < t.size() && unit_factor(t[i + 2].low)) continue;  // "M 8 mm"
    const double d = t[i + 1].value;
    size_t end = i + 2;
    std::optional<double> length;
    if (end + 1 < t.size() && t[end].low == "x" && t[end + 1].number) {
      length = t[end + 1].value;
      end += 2;
      if (end < t.size() && t[end].low == "mm") ++end;
    }
    // "M8 holes", "an M8 bracket": holes for the thread, tapped to clearance;
    // "M8 nut", "M8 bolt": the thread of the part itself.
    bool holes = false;
    for (size_t k = end; k < t.size() && k < end + 2; ++k)
      holes = holes || is_hole_word(t[k].low) || one_of(t[k].low, {"tapped", "threaded"});
    const std::string because = words_between(text, t, i, end);
    if ((holes || !fastener) && !washer && !length) {
      out.push_back(stated(FilterKey::kHoleDiameter, {0.8 * d, 1.25 * d, false, false}, because));
    } else if (washer && !length) {
      out.push_back(stated_thread(FilterKey::kClearance, d, std::nullopt, because));
    } else {
      out.push_back(stated_thread(FilterKey::kThread, d, length, because));
    }
    mark(i, end);
  }
}

// A thread's length said apart: "M8 bolt 40 mm long", "M8 screw, length 40 mm".
void QueryReading::read_thread_length() {
  const auto thread = std::find_if(out.begin(), out.end(), [](const Condition& c) {
    return c.key == FilterKey::kThread && c.ranges.size() == 1;
  });
  if (thread != out.end() && std::count_if(out.begin(), out.end(), [](const Condition& c) {
                               return c.key == FilterKey::kThread;
                             }) == 1) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (used[i]) continue;
      const auto length = length_at(t, i);
      if (!length) continue;
      const bool after = length->second < t.size() && is_length_word(t[length->second].low);
      const bool before = i > 0 && is_length_word(t[i - 1].low);
      if (!after && !before) continue;
      const size_t from = before ? i - 1 : i, to = after ? length->second + 1 : length->second;
      thread->ranges.push_back({length->first, length->first, false, false});
      thread->because += ", " + words_between(text, t, from, to);
      mark(from, to);
      break;
    }
  }
}

// Comparatives: "under 100 mm", "at least 2 in".
void QueryReading::read_comparatives() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    for (const Phrase& p : comparatives()) {
      size_t k = i;
      bool match = true;
      for (const std::string_view w : p.words) {
        if (k >= t.size() || t[k].low != w) {
          match = false;
          break;
        }
        ++k;
      }
      if (!match) continue;
      const auto length = length_at(t, k);
      if (!length) continue;
      NumberRange r;
      if (p.op == '<' || p.op == 'l') r.max = length->first, r.max_open = p.op == '<';
      if (p.op == '>' || p.op == 'g') r.min = length->first, r.min_open = p.op == '>';
      out.push_back(stated(FilterKey::kLargest, r, words_between(text, t, i, length->second)));
      mark(i, length->second);
      break;
    }
  }
}

// Sizes: "100 x 50 x 20 mm", "100 by 50 mm"; in "units" (Text2CAD's
// unitless sizes), the proportions.
void QueryReading::read_sizes() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i] || !t[i].number) continue;
    // Each number's unit factor to mm; 0 where no unit follows it, -1 for "units".
    auto factor_at = [&](size_t at) {
      if (is_units(at + 1)) return -1.0;
      return length_at(t, at) ? *unit_factor(t[at + 1].low) : 0.0;
    };
    std::vector<double> values = {t[i].value};
    std::vector<double> factors = {factor_at(i)};
    size_t k = factors.back() != 0 ? i + 2 : i + 1;
    while (values.size() < 3 && k + 1 < t.size() &&
           (t[k].low == "x" || t[k].low == "by" || t[k].low == "times") && t[k + 1].number &&
           !used[k + 1]) {
      values.push_back(t[k + 1].value);
      factors.push_back(factor_at(k + 1));
      k += factors.back() != 0 ? 3 : 2;
    }
    if (values.size() < 2 || factors.back() == 0) continue;
    Condition c;
    c.origin = FilterOrigin::kQueryText;
    c.because = words_between(text, t, i, k);
    if (factors.back() < 0) {
      if (std::any_of(values.begin(), values.end(), [](double v) { return !(v > 0); })) continue;
      c.key = FilterKey::kProportions;
      c.ranges = detail::proportions_of(values);
    } else {
      std::vector<double> mm;
      for (size_t v = 0; v < values.size(); ++v)
        mm.push_back(values[v] * (factors[v] > 0 ? factors[v] : factors.back()));
      std::sort(mm.rbegin(), mm.rend());
      c.key = FilterKey::kDims;
      for (const double v : mm) c.ranges.push_back(around(v, 0.02, 0.5));
    }
    out.push_back(std::move(c));
    mark(i, k);
    i = k - 1;
  }
}

// "0.75 units long, 0.47 wide and 0.03 thick", "a length of 0.75 units":
// the proportions of the sizes named.
void QueryReading::read_sizes_in_units() {
  std::array<std::optional<double>, 4> named;  // l, w, h, t
  std::vector<size_t> spans;
  const std::string order = "lwht";
  bool in_units = false;
  for (size_t i = 0; i < t.size(); ++i) in_units = in_units || is_units(i);
  for (size_t i = 0; in_units && i < t.size(); ++i) {
    if (used[i] || !t[i].number || unit_factor(i + 1 < t.size() ? t[i + 1].low : "")) continue;
    const size_t after = is_units(i + 1) ? i + 2 : i + 1;
    char word = after < t.size() ? size_word(t[after].low) : 0;
    // "a length of (about) 0.75 units": the word two or three tokens before.
    for (size_t back = 1; !word && back <= 4 && back <= i; ++back) {
      if (t[i - back].number) break;
      word = size_word(t[i - back].low);
    }
    if (!word) continue;
    std::optional<double>& slot = named[order.find(word)];
    if (!slot && t[i].value > 0) {
      slot = t[i].value;
      spans.push_back(i);
    }
  }
  std::vector<double> values;
  for (int s : {0, 1, 2}) {
    if (named[s]) values.push_back(*named[s]);
  }
  if (!named[2] && named[3]) values.push_back(*named[3]);
  if (values.size() >= 2) {
    Condition c;
    c.key = FilterKey::kProportions;
    c.ranges = detail::proportions_of(values);
    c.origin = FilterOrigin::kQueryText;
    c.because = words_between(text, t, spans.front(), spans.back() + 1);
    if (spans.size() > 1) {
      std::vector<std::string> pieces;
      for (const size_t s : spans) pieces.push_back(t[s].text);
      c.because = join(pieces, " : ") + " units";
    }
    for (const size_t s : spans) used[s] = true;
    out.push_back(std::move(c));
  }
}

// Hole counts: "six holes", "4 bolt holes", "two through bores", "a pair
// of holes": a set of that many equal holes (a bolt circle's centre bore
// aside), and without a word such as "bolt", or that many in all.
void QueryReading::read_hole_counts() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    const bool pair = t[i].low == "pair" && i + 1 < t.size() && t[i + 1].low == "of";
    if (!pair && (!t[i].number || length_at(t, i))) continue;
    const double count = pair ? 2 : t[i].value;
    for (size_t k = i + (pair ? 2 : 1); k < t.size() && k <= i + 4; ++k) {
      if (t[k].number || unit_factor(t[k].low)) break;
      if (is_hole_word(t[k].low)) {
        // "six bolt holes": six of one diameter; "six holes": that, or six in all.
        bool equal = false;
        for (size_t w = i + 1; w < k; ++w) equal = equal || is_equal_set_word(t[w].low);
        if (count >= 1 && count == std::floor(count)) {
          out.push_back(stated(equal ? FilterKey::kEqualHoles : FilterKey::kHoleCount,
                               {count, count, false, false}, words_between(text, t, i, k + 1)));
          mark(i, k + 1);
        }
        break;
      }
    }
  }
}

// Counts of other features: "24 teeth", "five spokes", "three T-slots" (3
// or more: a set of that many congruent faces about the centre), "three
// steps", "four diameter sections" (the round pieces of one shaft axis).
void QueryReading::read_feature_counts() {
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i] || !t[i].number || length_at(t, i)) continue;
    const double count = t[i].value;
    if (count < 2 || count != std::floor(count)) continue;
    for (size_t k = i + 1; k < t.size() && k <= i + 3; ++k) {
      if (used[k] || t[k].number || unit_factor(t[k].low)) break;
      const bool sections = one_of(t[k].low, {"section", "sections"}) && k > i + 1 &&
                            one_of(t[k - 1].low, {"diameter", "cylindrical"});
      if (is_repeated_feature_word(t[k].low) && count >= 3) {
        out.push_back(stated(FilterKey::kRepeats, {count, count, false, false},
                             words_between(text, t, i, k + 1)));
      } else if (is_step_word(t[k].low) || sections) {
        out.push_back(stated(FilterKey::kSteps, {count, count, false, false},
                             words_between(text, t, i, k + 1)));
      } else {
        continue;
      }
      mark(i, k + 1);
      break;
    }
  }
}

// A unitless number right before a dimension word takes the unit of the
// query's other lengths: "40 mm outside, 30 inside".
void QueryReading::read_other_lengths() {
  std::optional<double> query_unit;
  for (size_t i = 0; i < t.size() && !query_unit; ++i)
    if (const auto l = length_at(t, i); l && t[i].value > 0) query_unit = l->first / t[i].value;
  // Other lengths: a hole's diameter next to a hole word, else some extent.
  for (size_t i = 0; i < t.size(); ++i) {
    if (used[i]) continue;
    std::optional<std::pair<double, size_t>> length = length_at(t, i);
    if (!length && query_unit && t[i].number && i + 1 < t.size() &&
        is_dimension_word(t[i + 1].low) && t[i].value > 0)
      length = std::pair{t[i].value * *query_unit, i + 1};
    if (!length) continue;
    bool hole = false, skip = false;
    for (size_t k = length->second; k < t.size() && k < length->second + 2; ++k) {
      hole = hole || is_inner_word(t[k].low);
      skip = skip || is_non_extent_word(t[k].low);
    }
    for (size_t k = i >= 3 ? i - 3 : 0; k < i; ++k) {
      hole = hole || is_inner_word(t[k].low);
      if (k + 2 >= i) skip = skip || is_non_extent_word(t[k].low);
    }
    const bool approximate = (i >= 1 && is_approximate_word(t[i - 1].low)) ||
                             (i >= 2 && t[i - 2].low == "close" && t[i - 1].low == "to");
    mark(i, length->second);
    if (skip) continue;
    const std::string because = words_between(text, t, i, length->second);
    const double relative = approximate ? 0.1 : 0.02;
    if (hole) {
      out.push_back(
          stated(FilterKey::kHoleDiameter, around(length->first, relative, 0.1), because));
    } else {
      out.push_back(stated(FilterKey::kAnyExtent, around(length->first, relative, 0.5), because));
    }
  }
}

}  // namespace

std::vector<Condition> conditions_stated_in(std::string_view text) {
  QueryReading q(text);
  q.read_bearing_numbers();
#ifdef CADCLIP_WITH_OCCT
  q.read_steel_sections();
  q.read_gears();
#endif
  q.read_bearing_sizes();
  q.read_threads();
  q.read_thread_length();
  q.read_comparatives();
  q.read_sizes();
  q.read_sizes_in_units();
  q.read_hole_counts();
  q.read_feature_counts();
  q.read_other_lengths();
  return std::move(q.out);
}

}  // namespace cadclip::index
