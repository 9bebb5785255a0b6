// Validation after each epoch: text->CAD retrieval on one split of the
// prepared dataset (cadclip eval's measure), for each --data source apart,
// whose R@1 (one source's, or their mean) picks the `best` checkpoint. With
// a frozen text tower each validation caption is pooled once per run.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
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

// One validation of every source.
struct ValidationReport {
  double r1 = -1;         // the R@1 that picks `best`: --select-by's source's, or the mean
  nlohmann::json record;  // for metrics.jsonl (without kind, step and epoch)
  std::string summary;    // for the log, e.g. "41.20% (gallery 250)"
};

// The validators of every source with validation models.
class Validation {
 public:
  // `sources`: each source's name and validation ids, in source order. With
  // one source it is validated even without ids (then inactive); with several,
  // the sources without ids are left out. `select_by`: a source's name or
  // "mean"; throws cadclip::Error when no validated source has that name.
  Validation(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
             std::vector<std::pair<std::string, std::vector<std::string>>> sources,
             const eval::EvalOptions& options, bool frozen_text, std::string select_by);
  bool active() const { return !validators_.empty() && validators_.front().second->active(); }
  // Evaluates `model` on every source (it is left in eval mode).
  ValidationReport run(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                       int64_t max_text_length);

 private:
  std::vector<std::pair<std::string, std::unique_ptr<Validator>>> validators_;
  std::string select_by_;
  int selected_ = -1;  // the validator whose R@1 picks `best`; -1: the mean
};

}  // namespace cadclip::train
