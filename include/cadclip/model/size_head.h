// The size block: what a caption says about a part's size, matched against
// the part's bounding box (and, where the model has one, its central bore)
// in the same inner product as the embedding.
//
// The contrastive embedding keeps a part's kind but not its size (a standard
// part's group comes first almost always, its size seldom: docs/RESULTS.md,
// "A size block beside the embedding"). The size block appends to both
// embeddings, so one inner product (and a FAISS index) scores
//   cosine + weight * sum over the sides of p . q:
// - the part side q is fixed: each of the three sorted bounding-box sides
//   (log10 mm) split between its two nearest bins of 1/bins_per_decade
//   decade, each side's vector of unit length; with the bore, a fourth side:
//   the central bore (data::central_bore_mm) in the same bins, or one more
//   bin of its own when the part has none;
// - the text side p is learned: an MLP over the caption's embedding and the
//   numbers it states predicts, per side, a Gaussian over log10 mm (trained by
//   its negative log likelihood), read out as a probability over the same
//   bins; with the bore, also the probability that the part has one (trained
//   by its cross entropy), which scales the bore's bins and fills the "none"
//   bin. A regression, not a classifier over the bins: it interpolates
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
// With the bore, the head also reads each in-order number as a code: whether
// it is an integer of 3 or 4 digits with no unit, and the values of its last
// digit and of its last two digits. A deep groove ball bearing's number holds
// its bore that way (608: 8 mm; 6005: 5 x 05 = 25 mm), which no function of
// the number's size gives.
inline constexpr int64_t kSizeCodeFeatures = 1 + 2 * kSizeValueFeatures;
inline constexpr int64_t kSizeCodeInputs = kSizeNumbers * kSizeCodeFeatures;
// With the pointer (SizeHeadImpl), each side's mean is a mixture of the
// stated numbers' log10 sizes (the first kSizeNumbers in order, the
// kSizeLargest largest) and of 10 mm, plus an offset.
inline constexpr int64_t kSizePointerSlots = kSizeNumbers + kSizeLargest + 1;
// What the head reads of a caption's numbers, with or without the codes.
constexpr int64_t size_number_inputs(bool codes) {
  return kSizeNumberInputs + (codes ? kSizeCodeInputs : 0);
}

// Bins over [kSizeLogLow, kSizeLogHigh] at this many per decade (centres at
// both ends): 114 at 25 per decade.
int64_t size_bins(int64_t bins_per_decade);
// The block's width for `bins` per side: three sides, and with the bore a
// fourth and its "none" entry.
constexpr int64_t size_block_columns(int64_t bins, bool bore) {
  return 3 * bins + (bore ? bins + 1 : 0);
}
// The same for bins of 1/bins_per_decade decade.
int64_t size_block_width(int64_t bins_per_decade, bool bore);

// The numbers a caption states, as the head reads them -> [n,
// kSizeNumberInputs] fp32. Its sizes and counts (text::extract_quantities:
// digits, number words, lengths converted to millimetres; not its angles,
// and "3D" or "2-D" is no number). For each of the first kSizeNumbers in
// order: presence, log10 / 3, sin and cos of pi and 2 pi times log10, and
// whether a length unit followed; then the same but the unit for the
// kSizeLargest largest, largest first (a box's sides, in whatever order
// the sentence put them). Zeros where a text has fewer. With `codes`, then
// kSizeCodeFeatures for each of the first kSizeNumbers in order (above).
at::Tensor size_number_features(std::span<const std::string> texts, bool codes = false);
// Whether a caption states a number (the first feature above).
bool states_a_number(std::string_view text);

// The three sides of a part's bounding box, sorted, log10 mm (a side under a
// micrometre counts as one).
std::array<float, 3> log_box_sides(const data::BRepGraph& graph);
// log10 sides [n, 3] -> the part side of the block [n, 3 * bins], each side's
// bins of unit length.
at::Tensor size_bin_weights(const at::Tensor& log_sides, int64_t bins);
// A part's central bore for the block: [log10 mm, 1] when it has one (the
// smallest round hole on an axis through the box's centre), [0, 0] when not.
std::array<float, 2> log_bore(const data::BRepGraph& graph);
// Bores [n, 2] as log_bore gives them -> the bore side of the block [n, bins
// + 1]: a bore split between its two nearest bins (unit length), none in the
// last entry.
at::Tensor bore_bin_weights(const at::Tensor& bores, int64_t bins);
// The part side of the block for `graphs` -> [n, block width], fp32.
at::Tensor part_size_block(std::span<const data::BRepGraph* const> graphs, int64_t bins, bool bore);

class SizeHeadImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kHidden = 512;

  // embed_dim: the width of the text embedding it reads beside the numbers;
  // bore: a fourth side, the central bore (and the codes among the numbers);
  // pointer: each side's mean points at the stated numbers (below).
  SizeHeadImpl(int64_t embed_dim, int64_t bins_per_decade, bool bore = false, bool pointer = false);

  int64_t bins() const { return bins_; }
  bool bore() const { return bore_; }
  bool pointer() const { return pointer_; }
  int64_t sides() const { return bore_ ? 4 : 3; }
  int64_t block_width() const { return size_block_columns(bins_, bore_); }
  // The block's first columns, the three box sides; the bore's follow.
  int64_t box_width() const { return 3 * bins_; }
  // The width of the inputs it reads: embed_dim + size_number_inputs(bore()).
  int64_t input_width() const { return input_width_; }

  struct Prediction {
    at::Tensor mean, log_spread;  // [n, sides()]: per side a Gaussian over log10 mm
    at::Tensor bore_logit;        // [n]: the log odds that the part has a bore; undefined
                                  // without the bore side
  };
  // inputs [n, input_width()] (a text embedding and size_number_features).
  Prediction forward(const at::Tensor& inputs);
  // Mean negative log likelihood of the true log10 sides [n, 3] (summed over
  // sides) and, with the bore side, of bores [n, 2] as log_bore gives them
  // (the cross entropy of having one, and the bore's Gaussian where there is one).
  at::Tensor nll(const at::Tensor& inputs, const at::Tensor& log_sides,
                 const at::Tensor& bores = {});
  // -> [n, block_width()]: per side the Gaussian's probability over the bins
  // (a spread below half a bin counts as half a bin); the bore's scaled by
  // the probability of one, the rest in its "none" entry.
  at::Tensor probabilities(const at::Tensor& inputs);

  // Linear, GELU, Linear, GELU, Linear(-> 6, or 9 with the bore; with the
  // pointer, kSizePointerSlots more per side)
  torch::nn::Sequential net{nullptr};

 private:
  // Without the pointer a side's mean is the MLP's output (plus 1: 10 mm).
  // With it, the MLP also gives per side a softmax over kSizePointerSlots
  // (the numbers the caption states, and 10 mm), and the mean is that
  // mixture of their log10 sizes plus the MLP's output as an offset. Most
  // sides of a standard part are a stated number or a fixed ratio of one
  // ("10 mm dowel pin 95 mm long" is 10 x 10 x 95; an M8 bolt's head is
  // 13 across flats, 1.6 x 8), which the pointer carries over exactly to a
  // size the head never saw, where an MLP's output interpolates between the
  // sizes it was trained on and lands between two table rows.
  at::Tensor pointer_mean(const at::Tensor& inputs, const at::Tensor& out,
                          const at::Tensor& offset) const;

  int64_t bins_;
  bool bore_;
  bool pointer_;
  int64_t input_width_;
};
TORCH_MODULE(SizeHead);

}  // namespace cadclip::model
