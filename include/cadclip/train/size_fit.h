// Fits a trained model's size block (model/size_head.h): `cadclip fit-sizes`.
//
// The towers stay as they are; the size head learns, from the train split's
// captions of each prepared folder, where each caption puts its part's three
// box sides and, with the bore, whether and where its central bore is (by
// their likelihood, on the captions' fixed embeddings), and the block's
// weights beside the cosine are chosen on the folders' validation splits
// (the mean of their text->CAD R@1 over every caption), as is the epoch
// whose head is kept. A caption that states no number gets no block, so
// whatever the weights, a gallery searched without numbers ranks as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cadclip/model/model_config.h"

namespace cadclip::train {

struct SizeFitOptions {
  std::vector<std::string> data;  // prepared folders: train splits fit, validation splits choose
  int64_t bins_per_decade = 25;
  bool bore = false;  // the block's fourth side, the central bore (model/size_head.h)
  // The head's means point at the stated numbers (model/size_head.h): the
  // held-out table rows and the family parts find their sizes far more often
  // (docs/RESULTS.md, "The pointer and the bore").
  bool pointer = true;
  // Candidate weights of the block beside the cosine; the best on validation is kept.
  std::vector<double> weights = {0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0};
  int64_t epochs = 60;       // passes over the training captions
  int64_t batch_size = 128;  // captions per step
  double lr = 1e-3;          // AdamW
  double weight_decay = 0.01;
  // Every this many epochs (and after the last) the validation splits score
  // the head; the best epoch's head is kept. 0: only after the last.
  int64_t select_every = 10;
  // Dropout on the caption embedding's columns of the head's inputs while it
  // learns (the numbers it reads stay whole), to make the head read sizes
  // from the numbers rather than recall captions. Measured, 0.5 scored the
  // held-out table rows lower (docs/RESULTS.md), hence 0.
  double embedding_dropout = 0.0;
  uint64_t seed = 1;
  int64_t text_batch = 64;  // captions per text tower pass

  // Throws cadclip::Error naming the option when a value is out of range.
  void validate() const;
};

// R@1 of the validation splits at one weight (and bore weight).
struct SizeWeightScore {
  double weight = 0;
  double bore_weight = 0;  // with the bore side; 0 without
  std::vector<double> r1;  // per --data folder, text->CAD R@1 over all its captions
  double mean = 0;
};

// The validation splits' best mean R@1 (over the weights) after one epoch.
struct SizeFitRound {
  int64_t epoch = 0;
  double mean = 0;
};

struct SizeFitReport {
  int64_t captions = 0;                 // training captions
  int64_t captions_with_numbers = 0;    // of them, those stating a number
  std::vector<double> nll;              // mean negative log likelihood after each epoch
  double alone_mean = 0;                // validation R@1 without the block (weight 0)
  std::vector<SizeFitRound> rounds;     // each time the validation splits scored the head
  int64_t epoch = 0;                    // the epoch whose head was kept
  std::vector<SizeWeightScore> scores;  // per candidate weight, at that epoch
  double validation_mean = 0;           // the mean R@1 at that epoch and the chosen weight
  double weight = 0;                    // the one chosen
  double bore_weight = 0;               // the bore side's, chosen with it (= weight without)
  double seconds = 0;
};
void to_json(nlohmann::json& json, const SizeFitReport& report);

// Gives `built` a size head fitted on options.data and the chosen weight
// (built.config records both); `built` must have none yet. Throws
// cadclip::Error naming the folder when one has no captioned train or
// validation parts.
SizeFitReport fit_size_head(model::BuiltModel& built, const SizeFitOptions& options);

}  // namespace cadclip::train
