// Which models each process trains on at each step: a deterministic shuffle
// per epoch that covers every sample exactly once across ranks, with the same
// number of steps on every rank.
#pragma once

#include <cstdint>
#include <vector>

namespace cadclip::train {

// The epoch's permutation is cut into global batches of world * batch_size;
// rank r takes every world-th element of a global batch starting at r, so the
// last, shorter global batch is split as evenly as it can be (sizes differ by
// at most one; the loss pads and masks them). A last global batch with fewer
// than `world` samples would leave a rank empty and is dropped on every rank
// alike (dropped_per_epoch says how many samples that is).
class EpochSampler {
 public:
  EpochSampler(int64_t samples, uint64_t seed, int rank, int world, int64_t batch_size);

  int64_t steps_per_epoch() const { return steps_; }
  int64_t dropped_per_epoch() const { return dropped_; }
  // This rank's sample indices at `step` of `epoch`: [batch_size] or fewer at the end.
  std::vector<int64_t> batch(int64_t epoch, int64_t step) const;
  // The whole epoch's order (every rank computes the same).
  std::vector<int64_t> permutation(int64_t epoch) const;

 private:
  int64_t samples_;
  uint64_t seed_;
  int rank_, world_;
  int64_t batch_size_;
  int64_t steps_ = 0;
  int64_t dropped_ = 0;
};

// A well-mixed 64-bit hash of its arguments (SplitMix64 steps): stateless
// randomness for choices that must not depend on how a run was interrupted.
uint64_t mix_hash(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

}  // namespace cadclip::train
