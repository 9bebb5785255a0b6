#include "cadclip/text/number_words.h"

#include <array>
#include <utility>

namespace cadclip::text {
namespace {

constexpr std::array<std::pair<std::string_view, int>, 28> kNumberWords = {{
    {"zero", 0},     {"one", 1},      {"two", 2},        {"three", 3},     {"four", 4},
    {"five", 5},     {"six", 6},      {"seven", 7},      {"eight", 8},     {"nine", 9},
    {"ten", 10},     {"eleven", 11},  {"twelve", 12},    {"thirteen", 13}, {"fourteen", 14},
    {"fifteen", 15}, {"sixteen", 16}, {"seventeen", 17}, {"eighteen", 18}, {"nineteen", 19},
    {"twenty", 20},  {"thirty", 30},  {"forty", 40},     {"fifty", 50},    {"sixty", 60},
    {"seventy", 70}, {"eighty", 80},  {"ninety", 90},
}};

}  // namespace

std::optional<int> number_word(std::string_view word) {
  for (const auto& [name, value] : kNumberWords) {
    if (word.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < word.size() && same; ++i) {
      const char c = word[i];
      same = (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == name[i];
    }
    if (same) return value;
  }
  return std::nullopt;
}

}  // namespace cadclip::text
