// The size block: what a caption says about a part's size, matched against
// the part's bounding box in the same inner product as the embedding.
//
// The contrastive embedding keeps a part's kind but not its size (a standard
// part's group comes first almost always, its size seldom: docs/RESULTS.md,
// "A size block beside the embedding"). The size block appends to both
// embeddings, so one inner product (and a FAISS index) scores
//   cosine + weight * sum over the three box sides of p . q:
// - the part side q is fixed: each of the three sorted bounding-box sides
//   (log10 mm) split between its two nearest bins of 1/bins_per_decade
//   decade, each side's vector of unit length;
// - the text side p is learned: an MLP over the caption's embedding and the
//   numbers it states predicts, per side, a Gaussian over log10 mm (trained by
//   its negative log likelihood), read out as a probability over the same
//   bins. A regression, not a classifier over the bins: it interpolates
//   between the sizes it saw, where a classifier gives a bin it was never
//   trained towards no mass (held-out table rows fell below the embedding
//   alone).
// A caption that states no number gets no block (zeros): the sentence alone
// seldom pins a size, and a guess would outweigh the cosine.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include "cadclip/data/brep_graph.h"

namespace cadclip::model {

// The bins span 0.3 mm to 10 m of log10 size; sides beyond sit in the end bins.
inline constexpr double kSizeLogLow = -0.5228787452803376;  // log10(0.3)
inline constexpr double kSizeLogHigh = 4.0;                 // log10(10000)
// What the head reads of a caption's numbers: the first kSizeNumbers in
// order (kSizeInOrderFeatures each) and the kSizeLargest largest
// (kSizeValueFeatures each).
inline constexpr int64_t kSizeNumbers = 8;
inline constexpr int64_t kSizeLargest = 3;
inline constexpr int64_t kSizeValueFeatures = 6;
inline constexpr int64_t kSizeInOrderFeatures = kSizeValueFeatures + 1;
inline constexpr int64_t kSizeNumberInputs =
    kSizeNumbers * kSizeInOrderFeatures + kSizeLargest * kSizeValueFeatures;

// Bins over [kSizeLogLow, kSizeLogHigh] at this many per decade (centres at
// both ends): 114 at 25 per decade.
int64_t size_bins(int64_t bins_per_decade);

// The numbers a caption states, as the head reads them -> [n,
// kSizeNumberInputs] fp32. Its sizes and counts (text::extract_quantities:
// digits, number words, lengths converted to millimetres; not its angles,
// and "3D" or "2-D" is no number). For each of the first kSizeNumbers in
// order: presence, log10 / 3, sin and cos of pi and 2 pi times log10, and
// whether a length unit followed; then the same but the unit for the
// kSizeLargest largest, largest first (a box's sides, in whatever order
// the sentence put them). Zeros where a text has fewer.
at::Tensor size_number_features(std::span<const std::string> texts);
// Whether a caption states a number (the first feature above).
bool states_a_number(std::string_view text);

// The three sides of a part's bounding box, sorted, log10 mm (a side under a
// micrometre counts as one).
std::array<float, 3> log_box_sides(const data::BRepGraph& graph);
// log10 sides [n, 3] -> the part side of the block [n, 3 * bins], each side's
// bins of unit length.
at::Tensor size_bin_weights(const at::Tensor& log_sides, int64_t bins);

class SizeHeadImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kHidden = 512;

  // embed_dim: the width of the text embedding it reads beside the numbers.
  SizeHeadImpl(int64_t embed_dim, int64_t bins_per_decade);

  int64_t bins() const { return bins_; }
  int64_t block_width() const { return 3 * bins_; }

  // inputs [n, embed_dim + kSizeNumberInputs] (a text embedding and size_number_features)
  // -> per side the Gaussian's mean and log spread, each [n, 3], log10 mm.
  std::pair<at::Tensor, at::Tensor> forward(const at::Tensor& inputs);
  // Mean negative log likelihood of the true log10 sides [n, 3] (sum over sides).
  at::Tensor nll(const at::Tensor& inputs, const at::Tensor& log_sides);
  // -> [n, 3 * bins]: per side the Gaussian's probability over the bins (a
  // spread below half a bin counts as half a bin).
  at::Tensor probabilities(const at::Tensor& inputs);

  torch::nn::Sequential net{nullptr};  // Linear, GELU, Linear, GELU, Linear(-> 6)

 private:
  int64_t bins_;
};
TORCH_MODULE(SizeHead);

}  // namespace cadclip::model
