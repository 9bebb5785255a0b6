// What one training step reads: the training set (which models, which of
// their captions), the caption drawn for each sample, its tokens (a tower
// being fine-tuned) or its row in the text-feature cache (a frozen tower), the
// numbers it states, and the keys that tell false negatives apart.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/data/batch.h"
#include "cadclip/data/brep_graph.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/text/quantities.h"

namespace cadclip::train {

// The training split: dataset indices with at least one caption of a chosen level.
struct TrainingSet {
  std::vector<int64_t> models;                 // dataset index per sample
  std::vector<std::vector<int64_t>> captions;  // caption indices per sample
  int64_t without_caption = 0;                 // split models with no usable caption
  int64_t missing = 0;                         // split ids not in the dataset
};

// The models of `ids` in `dataset` with their captions of `levels` (empty: all).
TrainingSet training_set(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                         const std::vector<std::string>& ids,
                         const std::vector<std::string>& levels);

// One step's inputs for the samples of a batch.
struct StepInputs {
  std::vector<data::BRepGraph> graphs;       // [B]
  data::GroupedBatch brep;                   // the graphs collated in size groups (on the CPU)
  std::vector<int64_t> captions;             // caption index per sample
  std::vector<std::vector<int64_t>> tokens;  // per sample, cut (tokenized batches only)
  text::QuantityBatch quantities;            // on the device (model reads quantities)
  at::Tensor caption_keys, geometry_keys;    // [B] int64 on the device
};

struct StepInputOptions {
  uint64_t seed = 0;       // the caption choice: a function of (seed, epoch, sample)
  bool tokenize = true;    // false: a frozen tower reads cached features instead
  bool quantities = true;  // the model reads the numbers of its captions
  c10::Device device = at::kCPU;
  bool collate = false;                     // also fill StepInputs::brep
  data::PairwiseCache* pairwise = nullptr;  // collation's pairwise inputs; null = computed
  // Reads in shuffled order: the shards are advised so (Dataset::Access::kRandom,
  // from construction on) and each batch's models are prefetched together.
  bool shuffled_reads = true;
};

class StepInputMaker {
 public:
  StepInputMaker(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                 const TrainingSet& set, const model::TextEmbedder& text, StepInputOptions options);
  // Inputs of `samples` (indices into the training set) in `epoch`. The caption
  // drawn is stateless: the same whether or not the run was interrupted. Safe
  // to call from several threads at once.
  StepInputs make(int64_t epoch, const std::vector<int64_t>& samples) const;

 private:
  const data::Dataset& dataset_;
  const std::vector<data::Caption>& captions_;
  const TrainingSet& set_;
  const model::TextEmbedder& text_;  // tokenizes the captions, counting the ones it cuts
  StepInputOptions options_;
};

}  // namespace cadclip::train
