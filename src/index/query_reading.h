// The reading of a text query into facts (index/query_facts.h), as passes
// over its tokens: the words and helpers they share, and the reading itself.
// Private to the index layer.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cadclip/index/filter.h"

namespace cadclip::index::detail {

struct Token {
  std::string text;  // as written
  std::string low;   // lower case
  size_t begin = 0, end = 0;
  bool number = false;
  double value = 0;
  bool glued_to_next = false;  // no space before the next token ("M8", "100mm")
};

std::vector<Token> tokenize(std::string_view text);

// A comparative phrase ("under", "at least") and its operator.
struct Phrase {
  std::vector<std::string_view> words;
  char op;  // '<', 'l' (<=), '>', 'g' (>=)
};
const std::vector<Phrase>& comparatives();

bool one_of(const std::string& word, std::initializer_list<std::string_view> words);
bool query_has(const std::vector<Token>& t, bool (*word)(const std::string&));

// Words of the query (query_words.cc says what each one covers).
bool is_hole_word(const std::string& w);
bool is_non_extent_word(const std::string& w);
bool is_repeated_feature_word(const std::string& w);
bool is_step_word(const std::string& w);
bool is_equal_set_word(const std::string& w);
bool is_approximate_word(const std::string& w);
bool is_washer_word(const std::string& w);
bool is_bearing_word(const std::string& w);
bool is_fastener_word(const std::string& w);
bool is_length_word(const std::string& w);
// The standard's number at token i, after "ISO", "DIN" or "EN", as written
// ("4017"); "" otherwise.
std::string standard_number(const std::vector<Token>& t, size_t i);
// A plain or spring washer's standard: ISO 7089, 7090, 7093; DIN 125, 9021, 127.
bool is_washer_standard(const std::string& number);
// The query names a fastener's (washer's) standard by its number: "ISO 4032", "DIN 125".
bool names_fastener_standard(const std::vector<Token>& t);
bool names_washer_standard(const std::vector<Token>& t);
bool is_pin_word(const std::string& w);
bool is_profile_word(const std::string& w);
bool is_countersunk_word(const std::string& w);
bool names_flat_head(const std::vector<Token>& t);
bool is_inner_word(const std::string& w);
bool is_dimension_word(const std::string& w);
// A dimension word of a unitless "N units" statement: 'l', 'w', 'h', 't' or 0.
char size_word(const std::string& w);

// A length at token i: the number and its unit token; nullopt without a unit.
std::optional<std::pair<double, size_t>> length_at(const std::vector<Token>& t, size_t i);
// A fit's tolerance class at token i, as a shaft's is written: "m6", "h8"
// (a lower-case letter glued to a grade of 1 to 18, ISO 286); two tokens.
bool is_fit_class(const std::vector<Token>& t, size_t i);
// The query's text from token `from` to the end of token `to - 1`.
std::string words_between(std::string_view text, const std::vector<Token>& t, size_t from,
                          size_t to);

// A comma, semicolon or colon between tokens a and b (a < b): the end of a
// phrase, which the words before it do not reach past ("a bolt without a
// thread, 65 mm tall").
bool punctuation_between(std::string_view text, const std::vector<Token>& t, size_t a, size_t b);

// A condition the query states, with the words it came from.
Condition stated(FilterKey key, NumberRange range, std::string because);
// value ± max(relative * value, at_least).
NumberRange around(double value, double relative, double at_least);
Condition stated_thread(FilterKey key, double d, std::optional<double> length, std::string because);
// A ball bearing's sizes as facts: the bore (±1%, at least 0.05 mm) and the
// extents D x D x B (±1%, at least 0.1 mm).
void add_bearing(std::vector<Condition>& out, double bore, double outside, double width,
                 const std::string& because);
// A deep groove ball bearing's number ("608", "6204") with its suffix
// ("ZZ", "2RS") read off the tokens from i; the tokens it spans.
std::optional<std::pair<std::string, size_t>> bearing_number(const std::vector<Token>& t, size_t i,
                                                             bool bearing_named);

// One reading of a query: its tokens, the facts read so far, and the tokens
// those used, so that each later pass reads only what the earlier ones left.
// The passes run in the order conditions_stated_in calls them.
struct QueryReading {
  explicit QueryReading(std::string_view query)
      : text(query),
        t(tokenize(query)),
        used(t.size(), false),
        washer(query_has(t, is_washer_word) || names_washer_standard(t)),
        bearing(query_has(t, is_bearing_word)),
        fastener(query_has(t, is_fastener_word) || names_fastener_standard(t)),
        pin(query_has(t, is_pin_word)),
        profile(query_has(t, is_profile_word)),
        countersunk(query_has(t, is_countersunk_word) || names_flat_head(t)) {}

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
  void read_tslot_profiles();
  void read_cut_length(size_t at, double section);
  void read_fastener_shapes();
  void read_countersunk_head();
  void read_washer_designations();
  void read_retaining_rings();
#endif
  void read_bearing_sizes();
  struct BoreOutsideWidth {
    double bore, outside, width;  // mm
    size_t end;                   // past the last token read
  };
  std::optional<BoreOutsideWidth> bore_outside_width_at(size_t i) const;
  void read_threads();
  void read_threads_in_words();
  void read_shaft_bores();
  void read_collar_sizes();
  void read_thread_length();
  void read_countersunk_length();
  void read_pin_sizes();
  void read_comparatives();
  void read_sizes();
  void read_sizes_in_units();
  void read_hole_counts();
  void read_feature_counts();
  void read_other_lengths();
  bool across_the_part(size_t i, std::pair<double, size_t> length) const;

  std::string_view text;
  std::vector<Token> t;
  std::vector<bool> used;
  // The query names such a part: a washer, a bearing, a threaded part, a
  // dowel or pin, a T-slot profile, a countersunk screw.
  const bool washer, bearing, fastener, pin, profile, countersunk;
  std::vector<Condition> out;
};

}  // namespace cadclip::index::detail
