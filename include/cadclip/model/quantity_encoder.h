// The text tower's quantity branch: the numbers a caption states
// (text::extract_quantities) as one vector, for the text head to read beside
// the sentence encoder's pooled features. Each number becomes Fourier features
// of its log value (distinguishing 90 from 100, and 5 from 500), its kind
// (bare, length, angle) and its place among the caption's numbers; a shared
// two-layer MLP maps each to a vector, and a masked sum and max pool them
// (a DeepSets encoder: any count, permutation-aware only through the place).
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "cadclip/text/quantities.h"

namespace cadclip::model {

class QuantityEncoderImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kFrequencies = 10;  // sin/cos of pi * 2^k * log10(v) / 4, k < this
  static constexpr int64_t kPlaces = 8;        // places >= this share one one-hot slot
  static constexpr int64_t kFeatures = 1 + 2 * kFrequencies + text::kQuantityKinds + kPlaces;

  explicit QuantityEncoderImpl(int64_t width);

  // quantities on this module's device -> [B, 2 * width] fp32 (zeros for a
  // text without numbers, before the output LayerNorm).
  torch::Tensor forward(const text::QuantityBatch& quantities);
  // The per-number input features: [B, Q, kFeatures].
  static torch::Tensor features(const text::QuantityBatch& quantities);

  int64_t output_width() const { return 2 * width_; }

 private:
  int64_t width_;
  torch::nn::Linear in{nullptr};
  torch::nn::Linear hidden{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(QuantityEncoder);

}  // namespace cadclip::model
