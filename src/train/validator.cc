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

Validation::Validation(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                       std::vector<std::pair<std::string, std::vector<std::string>>> sources,
                       const eval::EvalOptions& options, bool frozen_text, std::string select_by)
    : select_by_(std::move(select_by)) {
  std::vector<std::string> names;
  for (auto& [name, ids] : sources) {
    names.push_back(name);
    if (ids.empty() && sources.size() > 1) continue;
    if (name == select_by_) selected_ = static_cast<int>(validators_.size());
    validators_.emplace_back(
        name, std::make_unique<Validator>(dataset, captions, std::move(ids), options, frozen_text));
  }
  if (select_by_ != "mean" && selected_ < 0)
    throw Error(
        format("--select-by {}: no source of that name has validation models; the "
               "sources are {} (or use --select-by mean)",
               select_by_, join(names)));
}

ValidationReport Validation::run(model::TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                                 int64_t max_text_length) {
  ValidationReport report;
  if (validators_.size() == 1) {
    const ValidationResult result = validators_[0].second->run(model, tokenizer, max_text_length);
    report.r1 = result.mean_r1;
    report.record = result.record;
    report.summary = format("{}% (gallery {})", fixed(100 * result.mean_r1, 2),
                            result.record["gallery"].get<int64_t>());
    return report;
  }
  report.record = {{"select_by", select_by_}};
  double sum = 0, selected = 0;
  int64_t gallery = 0;
  std::string line;
  for (size_t v = 0; v < validators_.size(); ++v) {
    const auto& [name, validator] = validators_[v];
    const ValidationResult result = validator->run(model, tokenizer, max_text_length);
    report.record["sources"][name] = result.record;
    report.record[name + "_text_to_cad_r1"] = result.mean_r1;  // a TensorBoard curve per source
    sum += result.mean_r1;
    gallery += result.record["gallery"].get<int64_t>();
    if (static_cast<int>(v) == selected_) selected = result.mean_r1;
    line += format("{}{} {}% (gallery {})", line.empty() ? "" : ", ", name,
                   fixed(100 * result.mean_r1, 2), result.record["gallery"].get<int64_t>());
  }
  const double mean = sum / static_cast<double>(validators_.size());
  report.r1 = selected_ >= 0 ? selected : mean;
  report.record["text_to_cad_r1"] = report.r1;
  report.record["gallery"] = gallery;
  report.summary = format("{}; {} {}%", line, select_by_, fixed(100 * report.r1, 2));
  return report;
}

}  // namespace cadclip::train
