// A frozen text tower (--text-lr 0, LiT-style) gives every caption the same
// pooled features at every step: they are computed once, before training,
// and each step reads its rows. With a cache file (--text-cache FILE) the
// features of an earlier run are read back when its key matches: the text
// weights and tokenizer files, pooling, length, precision, chunk size, and
// every caption's text in row order. What is read is bitwise what this run
// would compute, so a run with the file trains exactly like one without.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/data/captions.h"
#include "cadclip/model/model_config.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/train/step_inputs.h"

namespace cadclip::train {

struct TextCacheOptions {
  std::string file;     // "" = computed, not kept
  int64_t chunk = 128;  // captions per forward (in the key: it changes the bits)
  bool leader = true;   // this process writes the file and reports
};

class TextFeatureCache {
 public:
  // The pooled features of every caption of `set`, in text_precision cast to
  // fp32, through `embedder` (the text path of `built`'s model, which counts
  // the captions it cuts), on the model's device.
  static TextFeatureCache build(model::BuiltModel& built, const model::TextEmbedder& embedder,
                                const std::vector<data::Caption>& captions, const TrainingSet& set,
                                const TextCacheOptions& options);
  // The features of these caption indices: [n, text width] fp32 on the CPU.
  at::Tensor rows(const std::vector<int64_t>& captions) const;
  int64_t size() const { return features_.defined() ? features_.size(0) : 0; }

 private:
  at::Tensor features_;          // [captions used, text width]
  std::vector<int64_t> row_of_;  // caption index -> row of features_ (-1: not used)
};

// A tower trained only in its last layers (--text-train-layers N) gives every
// caption the same hidden states below them at every step: they are computed
// once, before training, with the frozen layers in eval mode (no dropout: a
// frozen feature extractor), and each step runs only the trained layers over
// its rows. In memory only: 1.5 KB a token for MiniLM's 384 floats, about
// 50 KB a caption of the release recipe.
class TextHiddenCache {
 public:
  // The hidden states entering layer `first` of the text tower for every
  // caption of `set` (fp32, unpadded), through `built`'s model.
  static TextHiddenCache build(model::BuiltModel& built, const model::TextEmbedder& embedder,
                               const std::vector<data::Caption>& captions, const TrainingSet& set,
                               int64_t first, const TextCacheOptions& options);
  struct Rows {
    at::Tensor hidden;  // [n, T, H] fp32 on the CPU, zeros after each caption's end
    at::Tensor mask;    // [n, T] int64, 1 on tokens
  };
  // These caption indices, padded to the longest of them.
  Rows rows(const std::vector<int64_t>& captions) const;
  int64_t first() const { return first_; }  // the first trained layer
  int64_t size() const { return static_cast<int64_t>(length_.size()); }

 private:
  at::Tensor tokens_;            // [tokens of every caption used, H]
  std::vector<int64_t> offset_;  // per row: its first token in tokens_
  std::vector<int64_t> length_;  // per row: its token count
  std::vector<int64_t> row_of_;  // caption index -> row (-1: not used)
  int64_t first_ = 0;
};

}  // namespace cadclip::train
