// Which training samples an epoch draws when a run weights its sources
// (TrainOptions::shares): each source fills its share of the epoch, a small
// source repeated and a large one cut, drawn afresh each epoch from the seed.
#pragma once

#include <cstdint>
#include <vector>

namespace cadclip::train {

class SourceMix {
 public:
  // source_of_sample: [N] the source (0 .. shares.size() - 1) of each training
  // sample; shares: one per source, positive, normalised here. An epoch holds
  // N draws, round(N * share) from each source (at least one). Throws
  // cadclip::Error when a source with a share has no training sample.
  SourceMix(std::vector<int> source_of_sample, std::vector<double> shares, uint64_t seed);

  int64_t samples_per_epoch() const { return total_; }
  // Draws per epoch of each source.
  const std::vector<int64_t>& draws() const { return draws_; }
  // The training sample at each position of `epoch`: [samples_per_epoch],
  // source after source. Each source's draws are whole passes over its
  // samples in a fresh order, the last one cut. Stateless: the same for the
  // same (seed, epoch) in every process and after a resume.
  std::vector<int64_t> epoch_samples(int64_t epoch) const;

 private:
  std::vector<std::vector<int64_t>> members_;  // training samples of each source
  std::vector<int64_t> draws_;
  int64_t total_ = 0;
  uint64_t seed_;
};

}  // namespace cadclip::train
