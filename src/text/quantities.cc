#include "cadclip/text/quantities.h"

#include "cadclip/text/number_words.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <ATen/ATen.h>

namespace cadclip::text {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

struct Unit {
  std::string_view word;
  QuantityKind kind;
  double to_mm;
};

// Lower-case unit words; a word matches only as a whole word.
constexpr std::array kUnits = {
    Unit{"mm", QuantityKind::kLength, 1.0},
    Unit{"millimetre", QuantityKind::kLength, 1.0},
    Unit{"millimetres", QuantityKind::kLength, 1.0},
    Unit{"millimeter", QuantityKind::kLength, 1.0},
    Unit{"millimeters", QuantityKind::kLength, 1.0},
    Unit{"cm", QuantityKind::kLength, 10.0},
    Unit{"centimetre", QuantityKind::kLength, 10.0},
    Unit{"centimetres", QuantityKind::kLength, 10.0},
    Unit{"centimeter", QuantityKind::kLength, 10.0},
    Unit{"centimeters", QuantityKind::kLength, 10.0},
    Unit{"m", QuantityKind::kLength, 1000.0},
    Unit{"metre", QuantityKind::kLength, 1000.0},
    Unit{"metres", QuantityKind::kLength, 1000.0},
    Unit{"meter", QuantityKind::kLength, 1000.0},
    Unit{"meters", QuantityKind::kLength, 1000.0},
    Unit{"um", QuantityKind::kLength, 0.001},
    Unit{"micron", QuantityKind::kLength, 0.001},
    Unit{"microns", QuantityKind::kLength, 0.001},
    Unit{"inch", QuantityKind::kLength, 25.4},
    Unit{"inches", QuantityKind::kLength, 25.4},
    Unit{"ft", QuantityKind::kLength, 304.8},
    Unit{"foot", QuantityKind::kLength, 304.8},
    Unit{"feet", QuantityKind::kLength, 304.8},
    Unit{"deg", QuantityKind::kAngle, 1.0},
    Unit{"degree", QuantityKind::kAngle, 1.0},
    Unit{"degrees", QuantityKind::kAngle, 1.0},
};

bool equals_lower(std::string_view word, std::string_view lower_word) {
  if (word.size() != lower_word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (lower(word[i]) != lower_word[i]) return false;
  return true;
}

// The unit right after a number that ends at `pos`, if any: the kind and the
// factor to millimetres. Spaces, or one hyphen ("5-mm"), may come between.
std::pair<QuantityKind, double> unit_after(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i == pos && i < text.size() && text[i] == '-') ++i;
  if (i >= text.size()) return {QuantityKind::kBare, 1.0};
  const std::string_view rest = text.substr(i);
  if (rest.starts_with("\xC2\xB0")) return {QuantityKind::kAngle, 1.0};  // °
  if (rest.starts_with("\""))
    return i == pos ? std::pair{QuantityKind::kLength, 25.4} : std::pair{QuantityKind::kBare, 1.0};
  size_t start = i;
  // µm: "µ" is U+00B5 (C2 B5) or U+03BC (CE BC).
  const bool micro = rest.starts_with("\xC2\xB5") || rest.starts_with("\xCE\xBC");
  if (micro) start = i + 2;
  size_t end = start;
  while (end < text.size() && is_letter(text[end])) ++end;
  // A word that runs into digits is a designation, not a unit: "DIN 912 M8"
  // is no 912 metres.
  if (end < text.size() && is_digit(text[end])) return {QuantityKind::kBare, 1.0};
  const std::string_view word = text.substr(start, end - start);
  if (micro) {
    return equals_lower(word, "m") ? std::pair{QuantityKind::kLength, 0.001}
                                   : std::pair{QuantityKind::kBare, 1.0};
  }
  for (const Unit& unit : kUnits)
    if (equals_lower(word, unit.word)) return {unit.kind, unit.to_mm};
  return {QuantityKind::kBare, 1.0};
}

// Digits starting at `i` as an integer (no sign); advances `i`.
double read_digits(std::string_view text, size_t& i) {
  double value = 0;
  while (i < text.size() && is_digit(text[i])) value = value * 10 + (text[i++] - '0');
  return value;
}

}  // namespace

std::vector<Quantity> extract_quantities(std::string_view text, size_t max_count) {
  std::vector<Quantity> out;
  size_t i = 0;
  while (i < text.size() && out.size() < max_count) {
    const char c = text[i];
    const bool starts_number =
        is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]) &&
                        (i == 0 || !is_digit(text[i - 1])));
    if (starts_number) {
      const size_t start = i;
      double value = read_digits(text, i);
      const size_t integer_digits = i - start;
      // "1,200": a group of exactly three digits after a comma is a thousands
      // group; "150, 90" and "3,5" are two numbers.
      while (integer_digits <= 3 && i + 3 < text.size() && text[i] == ',' &&
             is_digit(text[i + 1]) && is_digit(text[i + 2]) && is_digit(text[i + 3]) &&
             (i + 4 >= text.size() || !is_digit(text[i + 4]))) {
        ++i;
        value = value * 1000 + read_digits(text, i);
      }
      if (i + 1 < text.size() && text[i] == '.' && is_digit(text[i + 1])) {
        ++i;
        double scale = 0.1;
        while (i < text.size() && is_digit(text[i])) {
          value += scale * (text[i++] - '0');
          scale /= 10;
        }
      } else if (i + 1 < text.size() && text[i] == '/' && is_digit(text[i + 1])) {
        size_t j = i + 1;
        const double denominator = read_digits(text, j);
        if (denominator > 0 && (j >= text.size() || text[j] != '.')) {
          value /= denominator;
          i = j;
        }
      }
      const auto [kind, to_mm] = unit_after(text, i);
      out.push_back({value * to_mm, kind, false});
      continue;
    }
    if (is_letter(c) && (i == 0 || !is_letter(text[i - 1]))) {
      size_t end = i;
      while (end < text.size() && is_letter(text[end])) ++end;
      const std::string_view word = text.substr(i, end - i);
      if (const auto value = number_word(word)) {
        const auto [kind, to_mm] = unit_after(text, end);
        out.push_back({*value * to_mm, kind, true});
      }
      i = end;
      continue;
    }
    ++i;
  }
  return out;
}

QuantityBatch QuantityBatch::index_select(const torch::Tensor& rows) const {
  QuantityBatch out;
  const at::Tensor mask_rows = mask.index_select(0, rows);
  const int64_t width =
      std::max<int64_t>(1, mask_rows.numel() ? mask_rows.sum(1).max().item<int64_t>() : 0);
  // Quantities fill each row from the left, so the widest row bounds them all.
  out.values = values.index_select(0, rows).narrow(1, 0, width).contiguous();
  out.kinds = kinds.index_select(0, rows).narrow(1, 0, width).contiguous();
  out.mask = mask_rows.narrow(1, 0, width).contiguous();
  return out;
}

QuantityBatch QuantityBatch::to(const torch::Device& device) const {
  return {values.to(device), kinds.to(device), mask.to(device)};
}

QuantityBatch quantity_batch(std::span<const std::vector<Quantity>> rows) {
  size_t width = 1;
  for (const auto& row : rows) width = std::max(width, row.size());
  const auto b = static_cast<int64_t>(rows.size());
  const auto q = static_cast<int64_t>(width);
  QuantityBatch out;
  out.values = at::zeros({b, q}, at::kFloat);
  out.kinds = at::zeros({b, q}, at::kLong);
  out.mask = at::zeros({b, q}, at::kBool);
  auto values = out.values.accessor<float, 2>();
  auto kinds = out.kinds.accessor<int64_t, 2>();
  auto mask = out.mask.accessor<bool, 2>();
  for (int64_t r = 0; r < b; ++r) {
    const auto& row = rows[static_cast<size_t>(r)];
    for (size_t k = 0; k < row.size(); ++k) {
      const auto j = static_cast<int64_t>(k);
      values[r][j] = static_cast<float>(row[k].value);
      kinds[r][j] = static_cast<int64_t>(row[k].kind);
      mask[r][j] = true;
    }
  }
  return out;
}

QuantityBatch quantity_batch(std::span<const std::string> texts, size_t max_count) {
  std::vector<std::vector<Quantity>> rows;
  rows.reserve(texts.size());
  for (const std::string& text : texts) rows.push_back(extract_quantities(text, max_count));
  return quantity_batch(rows);
}

}  // namespace cadclip::text
