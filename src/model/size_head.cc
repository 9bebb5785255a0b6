#include "cadclip/model/size_head.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/part_facts.h"
#include "cadclip/text/quantities.h"

namespace cadclip::model {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "3D", "2d", "3-D" as a word: a dimensionality, not a size.
bool dimensionality_at(std::string_view t, size_t i) {
  if (i > 0 && word_char(t[i - 1])) return false;
  size_t j = i + 1;
  if (j < t.size() && t[j] == '-') ++j;
  if (j >= t.size() || (t[j] != 'd' && t[j] != 'D')) return false;
  return j + 1 >= t.size() || !word_char(t[j + 1]);
}

// The text with its dimensionality words ("3D", "2-D") blanked.
std::string without_dimensionality(std::string_view t) {
  std::string out(t);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!digit(out[i]) || !dimensionality_at(out, i)) continue;
    const size_t end = out[i + 1] == '-' ? i + 3 : i + 2;
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(i),
              out.begin() + static_cast<std::ptrdiff_t>(end), ' ');
  }
  return out;
}

// The numbers a text states that may be sizes, in order: its quantities
// (text::extract_quantities: digits, number words, lengths in millimetres)
// but its angles and its counts in words. People write sizes in digits and
// counts in words ("two holes", "one face"): of the 945 real descriptions of
// cadfusion-val, 605 state no digit but a number word, and a size guessed
// from a count only moves their part down the list.
std::vector<text::Quantity> stated_numbers(std::string_view t) {
  std::vector<text::Quantity> out = text::extract_quantities(without_dimensionality(t), 64);
  std::erase_if(out, [](const text::Quantity& q) {
    return q.kind == text::QuantityKind::kAngle ||
           (q.spelled && q.kind == text::QuantityKind::kBare);
  });
  return out;
}

// Presence, log10 / 3, and sin and cos of pi and 2 pi times log10 of `value`.
void put_value(double value, float* f) {
  const double v = std::log10(std::max(value, 1e-3));
  f[0] = 1.0f;
  f[1] = static_cast<float>(v / 3);
  f[2] = static_cast<float>(std::sin(M_PI * v));
  f[3] = static_cast<float>(std::cos(M_PI * v));
  f[4] = static_cast<float>(std::sin(2 * M_PI * v));
  f[5] = static_cast<float>(std::cos(2 * M_PI * v));
}

// A number as a code (see kSizeCodeFeatures): an integer of 3 or 4 digits
// written in digits without a unit -> its last digit and last two digits.
void put_code(const text::Quantity& q, float* f) {
  const double v = q.value;
  if (q.spelled || q.kind != text::QuantityKind::kBare || v < 100 || v >= 10000 ||
      v != std::floor(v))
    return;
  const auto code = static_cast<int64_t>(v);
  f[0] = 1.0f;
  put_value(static_cast<double>(code % 10), f + 1);
  put_value(static_cast<double>(code % 100), f + 1 + kSizeValueFeatures);
}

// log10 sizes [n, k] -> [n, k, bins]: each split between its two nearest
// bins, unit length (a size beyond the ends sits in the end bin).
at::Tensor unit_bins(const at::Tensor& log_sizes, int64_t bins) {
  const at::Tensor x = ((log_sizes.to(at::kFloat) - kSizeLogLow) / (kSizeLogHigh - kSizeLogLow) *
                        static_cast<double>(bins - 1))
                           .clamp(0, static_cast<double>(bins - 1));
  const at::Tensor low = x.floor().to(at::kLong).clamp_max(bins - 2);
  const at::Tensor high_share = x - low.to(at::kFloat);
  at::Tensor w = at::zeros({x.size(0), x.size(1), bins}, x.options());
  w.scatter_(-1, low.unsqueeze(-1), (1 - high_share).unsqueeze(-1));
  w.scatter_add_(-1, (low + 1).unsqueeze(-1), high_share.unsqueeze(-1));
  return w / w.norm(2, -1, /*keepdim=*/true);
}

}  // namespace

int64_t size_bins(int64_t bins_per_decade) {
  if (bins_per_decade <= 0) {
    throw Error(format("size bins per decade = {} is invalid: it must be positive (25 is usual)",
                       bins_per_decade));
  }
  return static_cast<int64_t>(std::lround((kSizeLogHigh - kSizeLogLow) * bins_per_decade)) + 1;
}

int64_t size_block_width(int64_t bins_per_decade, bool bore) {
  return size_block_columns(size_bins(bins_per_decade), bore);
}

at::Tensor size_number_features(std::span<const std::string> texts, bool codes) {
  const auto n = static_cast<int64_t>(texts.size());
  const int64_t width = size_number_inputs(codes);
  at::Tensor out = at::zeros({n, width}, at::kFloat);
  float* row = out.data_ptr<float>();
  for (const std::string& text : texts) {
    std::vector<text::Quantity> numbers = stated_numbers(text);
    for (size_t k = 0; k < numbers.size() && k < kSizeNumbers; ++k) {
      float* f = row + k * kSizeInOrderFeatures;
      put_value(numbers[k].value, f);
      f[6] = numbers[k].kind == text::QuantityKind::kLength ? 1.0f : 0.0f;
      if (codes) put_code(numbers[k], row + kSizeNumberInputs + k * kSizeCodeFeatures);
    }
    // The largest first, wherever the sentence put them: a box's sides.
    std::sort(numbers.begin(), numbers.end(),
              [](const text::Quantity& a, const text::Quantity& b) { return a.value > b.value; });
    for (size_t k = 0; k < numbers.size() && k < kSizeLargest; ++k)
      put_value(numbers[k].value,
                row + kSizeNumbers * kSizeInOrderFeatures + k * kSizeValueFeatures);
    row += width;
  }
  return out;
}

bool states_a_number(std::string_view text) { return !stated_numbers(text).empty(); }

std::array<float, 3> log_box_sides(const data::BRepGraph& graph) {
  std::array<float, 3> sides{};
  for (int i = 0; i < 3; ++i) sides[i] = graph.bbox_mm[3 + i] - graph.bbox_mm[i];
  std::sort(sides.begin(), sides.end());
  for (float& s : sides) s = static_cast<float>(std::log10(std::max(s, 1e-3f)));
  return sides;
}

at::Tensor size_bin_weights(const at::Tensor& log_sides, int64_t bins) {
  CADCLIP_CHECK(log_sides.dim() == 2 && log_sides.size(1) == 3, "size_bin_weights: [n, 3] sides");
  return unit_bins(log_sides, bins).reshape({log_sides.size(0), 3 * bins});
}

std::array<float, 2> log_bore(const data::BRepGraph& graph) {
  const std::optional<double> bore = data::central_bore_mm(graph);
  if (!bore) return {0.0f, 0.0f};
  return {static_cast<float>(std::log10(std::max(*bore, 1e-3))), 1.0f};
}

at::Tensor bore_bin_weights(const at::Tensor& bores, int64_t bins) {
  CADCLIP_CHECK(bores.dim() == 2 && bores.size(1) == 2, "bore_bin_weights: [n, 2] bores");
  const at::Tensor has = bores.select(1, 1).to(at::kFloat).unsqueeze(1);
  const at::Tensor sized = unit_bins(bores.narrow(1, 0, 1), bins).select(1, 0);
  return at::cat({sized * has, 1 - has}, 1);
}

at::Tensor part_size_block(std::span<const data::BRepGraph* const> graphs, int64_t bins,
                           bool bore) {
  const auto n = static_cast<int64_t>(graphs.size());
  at::Tensor sides = at::empty({n, 3}, at::kFloat);
  at::Tensor bores = at::zeros({n, 2}, at::kFloat);
  for (int64_t i = 0; i < n; ++i) {
    const data::BRepGraph& g = *graphs[static_cast<size_t>(i)];
    const std::array<float, 3> s = log_box_sides(g);
    for (int64_t k = 0; k < 3; ++k) sides[i][k] = s[k];
    if (bore) {
      const std::array<float, 2> b = log_bore(g);
      bores[i][0] = b[0];
      bores[i][1] = b[1];
    }
  }
  const at::Tensor block = size_bin_weights(sides, bins);
  return bore ? at::cat({block, bore_bin_weights(bores, bins)}, 1) : block;
}

SizeHeadImpl::SizeHeadImpl(int64_t embed_dim, int64_t bins_per_decade, bool bore, bool pointer)
    : bins_(size_bins(bins_per_decade)),
      bore_(bore),
      pointer_(pointer),
      input_width_(embed_dim + size_number_inputs(bore)) {
  namespace nn = torch::nn;
  const int64_t outputs =
      2 * sides() + (bore ? 1 : 0) + (pointer ? sides() * kSizePointerSlots : 0);
  net = register_module("net", nn::Sequential(nn::Linear(input_width_, kHidden), nn::GELU(),
                                              nn::Linear(kHidden, kHidden), nn::GELU(),
                                              nn::Linear(kHidden, outputs)));
}

at::Tensor SizeHeadImpl::pointer_mean(const at::Tensor& inputs, const at::Tensor& out,
                                      const at::Tensor& offset) const {
  // The slots' log10 sizes and presence, read back from size_number_features'
  // columns: in order, presence and log10 / 3 lead each kSizeInOrderFeatures;
  // the largest, each kSizeValueFeatures; 10 mm last, always present.
  const int64_t base = input_width_ - size_number_inputs(bore_);
  const int64_t n = inputs.size(0);
  const at::Tensor in_order =
      inputs.narrow(1, base, kSizeNumbers * kSizeInOrderFeatures).view({n, kSizeNumbers, -1});
  const at::Tensor largest =
      inputs
          .narrow(1, base + kSizeNumbers * kSizeInOrderFeatures, kSizeLargest * kSizeValueFeatures)
          .view({n, kSizeLargest, -1});
  const at::Tensor ten_mm = at::ones({n, 1}, inputs.options());
  const at::Tensor present =
      at::cat({in_order.select(2, 0), largest.select(2, 0), ten_mm}, 1).gt(0.5);  // [n, slots]
  const at::Tensor values =
      at::cat({in_order.select(2, 1) * 3, largest.select(2, 1) * 3, ten_mm}, 1);
  const at::Tensor logits =
      out.narrow(1, out.size(1) - sides() * kSizePointerSlots, sides() * kSizePointerSlots)
          .view({n, sides(), kSizePointerSlots})
          .masked_fill(present.logical_not().unsqueeze(1), -1e9);
  return (logits.softmax(-1) * values.unsqueeze(1)).sum(-1) + offset;
}

SizeHeadImpl::Prediction SizeHeadImpl::forward(const at::Tensor& inputs) {
  CADCLIP_CHECK(inputs.dim() == 2 && inputs.size(1) == input_width_,
                "SizeHead: inputs of input_width()");
  const at::Tensor out = net->forward(inputs);
  const at::Tensor pairs = out.narrow(1, 0, 2 * sides()).view({-1, sides(), 2});
  // Centred on 10 mm at the start (or on the stated numbers, with the
  // pointer); the spread between a micrometre and 100 decades.
  const at::Tensor mean =
      pointer_ ? pointer_mean(inputs, out, pairs.select(-1, 0)) : pairs.select(-1, 0) + 1.0;
  Prediction p{mean, pairs.select(-1, 1).clamp(-6, 2), {}};
  if (bore_) p.bore_logit = out.select(1, 2 * sides());
  return p;
}

at::Tensor SizeHeadImpl::nll(const at::Tensor& inputs, const at::Tensor& log_sides,
                             const at::Tensor& bores) {
  CADCLIP_CHECK(bores.defined() == bore_, "SizeHead::nll: bores exactly when the head has a bore");
  const Prediction p = forward(inputs);
  auto gaussian = [](const at::Tensor& x, const at::Tensor& mean, const at::Tensor& log_spread) {
    return log_spread + 0.5 * ((x - mean) / log_spread.exp()).pow(2);
  };
  at::Tensor loss =
      gaussian(log_sides, p.mean.narrow(1, 0, 3), p.log_spread.narrow(1, 0, 3)).sum(-1);
  if (bore_) {
    const at::Tensor has = bores.select(1, 1).to(at::kFloat);
    loss = loss +
           at::binary_cross_entropy_with_logits(p.bore_logit, has, {}, {}, at::Reduction::None) +
           has * gaussian(bores.select(1, 0), p.mean.select(1, 3), p.log_spread.select(1, 3));
  }
  return loss.mean();
}

at::Tensor SizeHeadImpl::probabilities(const at::Tensor& inputs) {
  const Prediction p = forward(inputs);
  const double half_bin = 0.5 * (kSizeLogHigh - kSizeLogLow) / static_cast<double>(bins_ - 1);
  const at::Tensor centres =
      at::linspace(kSizeLogLow, kSizeLogHigh, bins_, inputs.options()).view({1, 1, -1});
  const at::Tensor spread = p.log_spread.exp().clamp_min(half_bin);
  const at::Tensor z = (centres - p.mean.unsqueeze(-1)) / spread.unsqueeze(-1);
  const at::Tensor each = (-0.5 * z * z).softmax(-1);  // [n, sides, bins]
  const at::Tensor box = each.narrow(1, 0, 3).reshape({inputs.size(0), box_width()});
  if (!bore_) return box;
  const at::Tensor has = p.bore_logit.sigmoid().unsqueeze(1);
  return at::cat({box, each.select(1, 3) * has, 1 - has}, 1);
}

}  // namespace cadclip::model
