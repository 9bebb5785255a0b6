#include "cadclip/train/step_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "cadclip/train/loss.h"
#include "cadclip/train/sampler.h"

namespace cadclip::train {

TrainingSet training_set(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                         const std::vector<std::string>& ids,
                         const std::vector<std::string>& levels) {
  std::map<std::string, std::vector<int64_t>> by_id;
  for (size_t i = 0; i < captions.size(); ++i) {
    const auto& c = captions[i];
    if (!levels.empty() && std::find(levels.begin(), levels.end(), c.level) == levels.end())
      continue;
    by_id[c.id].push_back(static_cast<int64_t>(i));
  }
  TrainingSet set;
  for (const auto& id : ids) {
    const auto index = dataset.find(id);
    if (!index) {
      ++set.missing;
      continue;
    }
    const auto it = by_id.find(id);
    if (it == by_id.end()) {
      ++set.without_caption;
      continue;
    }
    set.models.push_back(*index);
    set.captions.push_back(it->second);
  }
  return set;
}

StepInputMaker::StepInputMaker(const data::Dataset& dataset,
                               const std::vector<data::Caption>& captions, const TrainingSet& set,
                               const model::TextEmbedder& text, StepInputOptions options)
    : dataset_(dataset), captions_(captions), set_(set), text_(text), options_(options) {
  if (options_.shuffled_reads) dataset_.advise(data::Dataset::Access::kRandom);
}

StepInputs StepInputMaker::make(int64_t epoch, const std::vector<int64_t>& samples) const {
  StepInputs in;
  std::vector<int64_t> caption_keys, geometry_keys;
  std::vector<std::vector<text::Quantity>> quantity_rows;
  // The kernel reads the whole batch at once (in the background) rather than
  // one page fault after another.
  if (options_.shuffled_reads)
    for (const int64_t sample : samples)
      dataset_.prefetch(set_.models[static_cast<size_t>(sample)]);
  for (const int64_t sample : samples) {
    in.graphs.push_back(dataset_.graph(set_.models[static_cast<size_t>(sample)]));
    const auto& choices = set_.captions[static_cast<size_t>(sample)];
    const uint64_t pick =
        mix_hash(options_.seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(sample), 0xca9);
    const int64_t chosen = choices[pick % choices.size()];
    const data::Caption& caption = captions_[static_cast<size_t>(chosen)];
    in.captions.push_back(chosen);
    if (options_.tokenize) in.tokens.push_back(text_.tokenize(caption.text));
    if (options_.quantities) quantity_rows.push_back(text::extract_quantities(caption.text));
    caption_keys.push_back(caption_key(caption.text, caption.facts));
    geometry_keys.push_back(geometry_key(in.graphs.back().geometry_hash, -1 - sample));
  }
  if (options_.collate) {
    std::vector<const data::BRepGraph*> graphs;
    std::vector<std::shared_ptr<const data::PairwiseInputs>> kept;
    std::vector<const data::PairwiseInputs*> pairwise;
    for (size_t i = 0; i < samples.size(); ++i) {
      graphs.push_back(&in.graphs[i]);
      if (options_.pairwise == nullptr) continue;
      kept.push_back(
          options_.pairwise->get(set_.models[static_cast<size_t>(samples[i])], in.graphs[i]));
      pairwise.push_back(kept.back().get());
    }
    in.brep = data::collate_groups(graphs, pairwise);
  }
  if (options_.quantities) in.quantities = text::quantity_batch(quantity_rows).to(options_.device);
  in.caption_keys = at::tensor(caption_keys).to(options_.device);
  in.geometry_keys = at::tensor(geometry_keys).to(options_.device);
  return in;
}

}  // namespace cadclip::train
