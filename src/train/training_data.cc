#include "train/training_data.h"

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/prepared.h"

namespace cadclip::train {

TrainingData read_training_data(const TrainOptions& o, bool leader) {
  data::PreparedData prepared = data::open_prepared(data::dataset_folders(o.data));
  TrainingData d{std::move(prepared.dataset), std::move(prepared.captions),
                 std::move(prepared.splits),  {},
                 source_names(o.data),        {}};
  // The dataset numbers models folder after folder, so each source is a range.
  int64_t end = 0;
  for (const std::string& entry : o.data) {
    end += data::Dataset::open(data::dataset_folders({entry})).size();
    d.source_end.push_back(end);
  }
  CADCLIP_CHECK(end == d.dataset.size(), "sources hold {} models, the dataset {}", end,
                d.dataset.size());
  d.set = training_set(d.dataset, d.captions.captions, d.splits.train, o.levels);
  if (d.set.models.empty())
    throw Error(format("{}: the train split has no model with a caption of the chosen levels",
                       join(o.data)));
  if (leader)
    log::info("train",
              "{} training models ({} without a caption of the chosen levels, {} not "
              "prepared), {} captions",
              with_commas(static_cast<int64_t>(d.set.models.size())), d.set.without_caption,
              d.set.missing, with_commas(static_cast<int64_t>(d.captions.captions.size())));
  return d;
}

std::optional<SourceMix> make_source_mix(const TrainOptions& o, const TrainingData& d,
                                         bool leader) {
  if (o.shares.empty()) return std::nullopt;
  std::vector<double> shares;
  for (const std::string& name : d.source_names) {
    const auto it = o.shares.find(name);
    if (it == o.shares.end())
      throw Error(
          format("--share names {} of the sources {}, not '{}': give every source a "
                 "share (--share {}=0.5), or none",
                 o.shares.size(), join(d.source_names), name, name));
    shares.push_back(it->second);
  }
  for (const auto& [name, share] : o.shares)
    if (std::find(d.source_names.begin(), d.source_names.end(), name) == d.source_names.end())
      throw Error(format("--share {}={}: no source is named '{}'; the sources are {}", name, share,
                         name, join(d.source_names)));
  std::vector<int> source_of_sample;
  std::vector<int64_t> models(d.source_names.size(), 0);
  for (const int64_t model : d.set.models) {
    source_of_sample.push_back(d.source_of(model));
    ++models[static_cast<size_t>(source_of_sample.back())];
  }
  SourceMix mix(std::move(source_of_sample), shares, o.seed);
  if (leader)
    for (size_t s = 0; s < shares.size(); ++s)
      log::info(
          "train", "source {}: {} training models, {} draws per epoch (share {})",
          d.source_names[s], with_commas(models[s]), with_commas(mix.draws()[s]),
          fixed(static_cast<double>(mix.draws()[s]) / static_cast<double>(mix.samples_per_epoch()),
                3));
  return mix;
}

std::vector<std::pair<std::string, std::vector<std::string>>> validation_sources(
    const TrainOptions& o, const TrainingData& d) {
  const std::vector<std::string> ids =
      o.validation_split ? d.splits.of(*o.validation_split) : std::vector<std::string>{};
  std::vector<std::pair<std::string, std::vector<std::string>>> sources;
  for (const std::string& name : d.source_names) sources.push_back({name, {}});
  if (sources.size() == 1) {
    sources[0].second = ids;
    return sources;
  }
  // Each source apart, so that a checkpoint can be chosen by one source (a
  // real fold) rather than by the largest gallery.
  for (const std::string& id : ids)
    if (const std::optional<int64_t> model = d.dataset.find(id))
      sources[static_cast<size_t>(d.source_of(*model))].second.push_back(id);
  return sources;
}

}  // namespace cadclip::train
