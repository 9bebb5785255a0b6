// Validation after each epoch: text->CAD retrieval on one split of the
// prepared dataset (cadclip eval's measure), whose mean R@1 over levels picks
// the `best` checkpoint. With a frozen text tower each validation caption is
// pooled once per run.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/text/tokenizer.h"

namespace cadclip::train {

struct ValidationResult {
  double mean_r1 = -1;    // mean text->CAD R@1 over levels, in [0, 1]
  nlohmann::json record;  // for metrics.jsonl: per level R@1 and MRR, the gallery
};

class Validator {
 public:
  // `ids` empty: no validation (run() is not to be called).
  Validator(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
            std::vector<std::string> ids, eval::EvalOptions options, bool frozen_text);
  Validator(const Validator&) = delete;  // options_ points into this object
  Validator& operator=(const Validator&) = delete;
  bool active() const { return !ids_.empty(); }
  // Evaluates `model` (which is left in eval mode) on the split.
  ValidationResult run(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                       int64_t max_text_length);

 private:
  const data::Dataset& dataset_;
  const std::vector<data::Caption>& captions_;
  std::vector<std::string> ids_;
  eval::EvalOptions options_;
  eval::PooledTextCache pooled_;  // used when the tower is frozen
};

}  // namespace cadclip::train
