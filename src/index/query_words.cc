// The words and small helpers the passes of a query's reading share
// (query_reading.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "cadclip/text/number_words.h"
#include "filter_words.h"
#include "query_reading.h"

namespace cadclip::index::detail {

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
    // "zero" is no count a query states ("zero backlash").
    const auto n = t.number ? std::nullopt : text::number_word(t.low);
    if (n && *n > 0) {
      t.number = true;
      t.value = *n;
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
                    "step",   "steps",  "deg",     "degree",   "degrees", "belt",     "belts"});
}

// A length at token i: the number and its unit token; nullopt without a unit.
std::optional<std::pair<double, size_t>> length_at(const std::vector<Token>& t, size_t i) {
  if (i >= t.size() || !t[i].number || i + 1 >= t.size()) return std::nullopt;
  // "in" after a number is read as inches only when glued ("4in") or quoted.
  if (t[i + 1].low == "in" && !t[i].glued_to_next) return std::nullopt;
  // "DIN 912 M6": an upper-case M before a number is a thread, not metres;
  // "10 m6" a fit (ISO 286), not metres either.
  if (t[i + 1].low == "m" && t[i + 1].glued_to_next && i + 2 < t.size() && t[i + 2].number)
    return std::nullopt;
  const std::optional<double> factor = unit_factor(t[i + 1].low);
  if (!factor) return std::nullopt;
  return std::pair{t[i].value * *factor, i + 2};
}

bool is_fit_class(const std::vector<Token>& t, size_t i) {
  return i + 1 < t.size() && one_of(t[i].text, {"f", "g", "h", "j", "k", "m", "n", "p"}) &&
         t[i].glued_to_next && t[i + 1].number && t[i + 1].value >= 1 && t[i + 1].value <= 18 &&
         t[i + 1].text.find('.') == std::string::npos;
}

std::string words_between(std::string_view text, const std::vector<Token>& t, size_t from,
                          size_t to) {
  return std::string(text.substr(t[from].begin, t[to - 1].end - t[from].begin));
}

bool punctuation_between(std::string_view text, const std::vector<Token>& t, size_t a, size_t b) {
  if (a >= b || b >= t.size()) return false;
  return text.substr(t[a].end, t[b].begin - t[a].end).find_first_of(",;:") !=
         std::string_view::npos;
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
std::string standard_number(const std::vector<Token>& t, size_t i) {
  if (i == 0 || !t[i].number || !one_of(t[i - 1].low, {"iso", "din", "en"})) return "";
  return t[i].text;
}
bool is_washer_standard(const std::string& number) {
  return one_of(number, {"7089", "7090", "7093", "125", "9021", "127"});
}
namespace {
bool is_fastener_standard(const std::string& number) {
  return one_of(number, {"4014", "4017", "931", "933", "4762", "912", "4032", "4035", "7040", "934",
                         "439", "982", "985", "10642", "7991"});
}
// "ISO 4032 M8", "DIN 125 M10": a fastener's or washer's standard names the part.
bool names_standard(const std::vector<Token>& t, bool (*is_one)(const std::string&)) {
  for (size_t i = 1; i < t.size(); ++i)
    if (is_one(standard_number(t, i))) return true;
  return false;
}
}  // namespace
bool names_fastener_standard(const std::vector<Token>& t) {
  return names_standard(t, is_fastener_standard);
}
bool names_washer_standard(const std::vector<Token>& t) {
  return names_standard(t, is_washer_standard);
}
bool is_length_word(const std::string& w) { return one_of(w, {"long", "length", "l"}); }
// Dowels and pins (ISO 8734, DIN 6325) are named by diameter x length: "10x24 dowel".
bool is_pin_word(const std::string& w) {
  return one_of(w, {"dowel", "dowels", "pin", "pins", "8734", "6325"});
}
// T-slot profiles are named by their section: "2020 profile", "30x30 T-slot".
bool is_profile_word(const std::string& w) {
  return one_of(w, {"profile", "profiles", "extrusion", "extrusions", "tslot", "strut"});
}
// A countersunk screw's nominal length is its whole length, the head's
// included (ISO 10642, ISO 7991): unlike other screws'.
bool is_countersunk_word(const std::string& w) {
  return one_of(w, {"countersunk", "csk", "10642", "7991"});
}
bool names_flat_head(const std::vector<Token>& t) {
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if (t[i].low == "flat" && t[i + 1].low == "head") return true;
  return false;
}
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

}  // namespace cadclip::index::detail
