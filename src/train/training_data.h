// What a run trains on: the prepared folders of --data read as one dataset,
// with their captions, splits and training set, the source (one --data
// entry) each model comes from, and the weighted draw over the sources
// (--share). Private to the trainer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"
#include "cadclip/train/source_mix.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/trainer.h"

namespace cadclip::train {

// The prepared dataset and its captions and splits, and the source (one
// --data entry) each model comes from.
struct TrainingData {
  data::Dataset dataset;
  data::CaptionFile captions;
  data::Splits splits;
  TrainingSet set;
  std::vector<std::string> source_names;  // one per --data entry
  std::vector<int64_t> source_end;        // dataset index one past each source's last model

  int source_of(int64_t model) const {
    return static_cast<int>(std::upper_bound(source_end.begin(), source_end.end(), model) -
                            source_end.begin());
  }
};

// Reads every --data entry as one dataset; the leader logs the training set.
TrainingData read_training_data(const TrainOptions& o, bool leader);

// The weighted draw of each epoch's samples (--share), or none.
std::optional<SourceMix> make_source_mix(const TrainOptions& o, const TrainingData& d, bool leader);

// The ids of the validation split (none without one) of each source, in
// source order, named by source.
std::vector<std::pair<std::string, std::vector<std::string>>> validation_sources(
    const TrainOptions& o, const TrainingData& d);

}  // namespace cadclip::train
