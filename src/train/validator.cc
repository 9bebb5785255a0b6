#include "cadclip/train/validator.h"

#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::train {

Validator::Validator(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                     std::vector<std::string> ids, eval::EvalOptions options, bool frozen_text)
    : dataset_(dataset), captions_(captions), ids_(std::move(ids)), options_(std::move(options)) {
  if (frozen_text) options_.pooled_text_cache = &pooled_;
}

ValidationResult Validator::run(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                                int64_t max_text_length) {
  const eval::EvalReport report =
      eval::evaluate(model, tokenizer, max_text_length, dataset_, captions_, ids_, options_);
  ValidationResult result;
  result.mean_r1 = eval::mean_text_to_cad_r1(report);
  result.record = {{"text_to_cad_r1", result.mean_r1}, {"gallery", report.gallery}};
  for (const auto& level : report.levels) {
    result.record[level.level + "_text_to_cad_r1"] = level.text_to_cad.r1;
    result.record[level.level + "_text_to_cad_mrr"] = level.text_to_cad.mrr;
  }
  return result;
}

}  // namespace cadclip::train
