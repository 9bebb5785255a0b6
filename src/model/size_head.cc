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

}  // namespace

int64_t size_bins(int64_t bins_per_decade) {
  if (bins_per_decade <= 0) {
    throw Error(format("size bins per decade = {} is invalid: it must be positive (25 is usual)",
                       bins_per_decade));
  }
  return static_cast<int64_t>(std::lround((kSizeLogHigh - kSizeLogLow) * bins_per_decade)) + 1;
}

at::Tensor size_number_features(std::span<const std::string> texts) {
  const auto n = static_cast<int64_t>(texts.size());
  at::Tensor out = at::zeros({n, kSizeNumberInputs}, at::kFloat);
  float* row = out.data_ptr<float>();
  for (const std::string& text : texts) {
    std::vector<text::Quantity> numbers = stated_numbers(text);
    for (size_t k = 0; k < numbers.size() && k < kSizeNumbers; ++k) {
      float* f = row + k * kSizeInOrderFeatures;
      put_value(numbers[k].value, f);
      f[6] = numbers[k].kind == text::QuantityKind::kLength ? 1.0f : 0.0f;
    }
    // The largest first, wherever the sentence put them: a box's sides.
    std::sort(numbers.begin(), numbers.end(),
              [](const text::Quantity& a, const text::Quantity& b) { return a.value > b.value; });
    for (size_t k = 0; k < numbers.size() && k < kSizeLargest; ++k)
      put_value(numbers[k].value,
                row + kSizeNumbers * kSizeInOrderFeatures + k * kSizeValueFeatures);
    row += kSizeNumberInputs;
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
  const at::Tensor x = ((log_sides.to(at::kFloat) - kSizeLogLow) / (kSizeLogHigh - kSizeLogLow) *
                        static_cast<double>(bins - 1))
                           .clamp(0, static_cast<double>(bins - 1));
  const at::Tensor low = x.floor().to(at::kLong).clamp_max(bins - 2);
  const at::Tensor high_share = x - low.to(at::kFloat);
  at::Tensor w = at::zeros({x.size(0), 3, bins}, x.options());
  w.scatter_(-1, low.unsqueeze(-1), (1 - high_share).unsqueeze(-1));
  w.scatter_add_(-1, (low + 1).unsqueeze(-1), high_share.unsqueeze(-1));
  return (w / w.norm(2, -1, /*keepdim=*/true)).reshape({x.size(0), 3 * bins});
}

SizeHeadImpl::SizeHeadImpl(int64_t embed_dim, int64_t bins_per_decade)
    : bins_(size_bins(bins_per_decade)) {
  namespace nn = torch::nn;
  net = register_module(
      "net", nn::Sequential(nn::Linear(embed_dim + kSizeNumberInputs, kHidden), nn::GELU(),
                            nn::Linear(kHidden, kHidden), nn::GELU(), nn::Linear(kHidden, 6)));
}

std::pair<at::Tensor, at::Tensor> SizeHeadImpl::forward(const at::Tensor& inputs) {
  const at::Tensor out = net->forward(inputs).view({-1, 3, 2});
  // Centred on 10 mm at the start; the spread between a micrometre and 100 decades.
  return {out.select(-1, 0) + 1.0, out.select(-1, 1).clamp(-6, 2)};
}

at::Tensor SizeHeadImpl::nll(const at::Tensor& inputs, const at::Tensor& log_sides) {
  const auto [mean, log_spread] = forward(inputs);
  return (log_spread + 0.5 * ((log_sides - mean) / log_spread.exp()).pow(2)).sum(-1).mean();
}

at::Tensor SizeHeadImpl::probabilities(const at::Tensor& inputs) {
  const auto [mean, log_spread] = forward(inputs);
  const double half_bin = 0.5 * (kSizeLogHigh - kSizeLogLow) / static_cast<double>(bins_ - 1);
  const at::Tensor centres =
      at::linspace(kSizeLogLow, kSizeLogHigh, bins_, inputs.options()).view({1, 1, -1});
  const at::Tensor spread = log_spread.exp().clamp_min(half_bin);
  const at::Tensor z = (centres - mean.unsqueeze(-1)) / spread.unsqueeze(-1);
  return (-0.5 * z * z).softmax(-1).reshape({inputs.size(0), 3 * bins_});
}

}  // namespace cadclip::model
