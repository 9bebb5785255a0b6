// The facts a text query states, read as filter conditions: what ranks
// the parts that meet them first (index/searcher.h), and what
// `--strict-numbers` makes hard conditions. Private to the index layer; the
// reading rules are in docs/HTTP_API.md, "Facts a query states".
#include "cadclip/index/query_facts.h"

#include <algorithm>
#include <cmath>

#include "cadclip/core/format.h"
#include "filter_words.h"
#include "query_reading.h"
#include "thread_sizes.h"

namespace cadclip::index {
namespace detail {

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
      // "30 teeth, bore 5 mm": a count is of the first thing named after it.
      if (t[k].number || unit_factor(t[k].low) || is_repeated_feature_word(t[k].low)) break;
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
    // Past a thousand a number names a size ("3030 profile"), not a count.
    if (count < 2 || count >= 1000 || count != std::floor(count)) continue;
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

// "a ring about 20 mm across", "a cover 320 mm across": the part's
// largest extent, unless the query states a larger length ("20 mm across
// and 300 mm long"); not a hexagon's "across the flats" nor a gear's
// "across the teeth", read as any extent.
bool QueryReading::across_the_part(size_t i, std::pair<double, size_t> length) const {
  const size_t at = length.second;
  if (at >= t.size() || t[at].low != "across" || punctuation_between(text, t, at - 1, at))
    return false;
  if (at + 1 < t.size() && !punctuation_between(text, t, at, at + 1) &&
      one_of(t[at + 1].low, {"the", "flats", "flat", "corners", "at", "its"}))
    return false;
  for (size_t k = 0; k < t.size(); ++k) {
    if (k == i) continue;
    const auto other = length_at(t, k);
    if (other && other->first > length.first) return false;
  }
  return true;
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
    // The words next to the length say what it measures; a comma ends
    // their reach ("a bolt without a thread, 65 mm tall").
    bool hole = false, skip = false;
    for (size_t k = length->second; k < t.size() && k < length->second + 2; ++k) {
      if (punctuation_between(text, t, k - 1, k)) break;
      hole = hole || is_inner_word(t[k].low);
      skip = skip || is_non_extent_word(t[k].low);
    }
    // A dimension word after the length decides ("25 mm bore, 52 mm
    // outside"); without one, the words before it do ("bore 12 mm").
    const bool named_after = length->second < t.size() && is_dimension_word(t[length->second].low);
    for (size_t k = i >= 3 ? i - 3 : 0; k < i; ++k) {
      if (punctuation_between(text, t, k, i)) continue;
      hole = hole || (!named_after && is_inner_word(t[k].low));
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
    } else if (across_the_part(i, *length)) {
      out.push_back(stated(FilterKey::kLargest, around(length->first, relative, 0.5),
                           words_between(text, t, i, length->second + 1)));
    } else {
      out.push_back(stated(FilterKey::kAnyExtent, around(length->first, relative, 0.5), because));
    }
  }
}

}  // namespace detail

std::vector<Condition> conditions_stated_in(std::string_view text) {
  detail::QueryReading q(text);
  q.read_bearing_numbers();
#ifdef CADCLIP_WITH_OCCT
  q.read_steel_sections();
  q.read_gears();
  q.read_tslot_profiles();
  q.read_retaining_rings();
#endif
  q.read_bearing_sizes();
  q.read_threads();
  q.read_threads_in_words();
  q.read_shaft_bores();
  q.read_collar_sizes();
  q.read_thread_length();
  q.read_countersunk_length();
#ifdef CADCLIP_WITH_OCCT
  q.read_washer_designations();
  q.read_fastener_shapes();
#endif
  q.read_pin_sizes();
  q.read_comparatives();
  q.read_sizes();
  q.read_sizes_in_units();
  q.read_hole_counts();
  q.read_feature_counts();
  q.read_other_lengths();
  return std::move(q.out);
}

}  // namespace cadclip::index
