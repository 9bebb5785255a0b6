// The numbers a caption states ("250 by 200 by 5 mm", "eight holes", "a 45°
// bend"), read from its text with their units, for the text tower's quantity
// branch (model/quantity_encoder.h). A pretrained sentence encoder's pooled
// vector keeps a caption's topic but little of its numbers (docs/MODEL.md), and
// telling the parts of one family apart is a matter of numbers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <torch/types.h>

namespace cadclip::text {

enum class QuantityKind : int64_t {
  kBare = 0,    // no unit follows: a count, or a size whose unit comes later
  kLength = 1,  // a length unit followed; the value is in millimetres
  kAngle = 2,   // degrees
};
inline constexpr int64_t kQuantityKinds = 3;

struct Quantity {
  double value = 0;  // >= 0; lengths converted to millimetres
  QuantityKind kind = QuantityKind::kBare;
  bool spelled = false;  // written as a word ("two"), not in digits
};

// The numbers of `text` in the order they appear, at most `max_count` (the
// first ones). Digits with an optional decimal part (".5", "3.5"), thousands
// groups ("1,200"), simple fractions ("1/4"), and the number words zero to
// twenty and the tens. A unit after the number (spaces or one hyphen between)
// gives its kind: mm, cm, m, µm, inch, ft and their spelled-out forms are
// lengths, converted to millimetres; deg, degree(s) and ° are angles. "in" is
// not read as inches ("4 in the base"). Signs are dropped: sizes are magnitudes.
std::vector<Quantity> extract_quantities(std::string_view text, size_t max_count = 32);

// The quantities of a batch of texts, padded to the text with the most (at
// least one column, so that a batch without numbers still has a shape).
struct QuantityBatch {
  torch::Tensor values;  // [B, Q] fp32, 0 on padding
  torch::Tensor kinds;   // [B, Q] int64 (QuantityKind), 0 on padding
  torch::Tensor mask;    // [B, Q] bool, true on a quantity

  bool defined() const { return values.defined(); }
  int64_t size() const { return values.defined() ? values.size(0) : 0; }
  // The rows `rows` ([n] int64), trimmed to their own widest row.
  QuantityBatch index_select(const torch::Tensor& rows) const;
  QuantityBatch to(const torch::Device& device) const;
};

QuantityBatch quantity_batch(std::span<const std::vector<Quantity>> rows);
QuantityBatch quantity_batch(std::span<const std::string> texts, size_t max_count = 32);

}  // namespace cadclip::text
