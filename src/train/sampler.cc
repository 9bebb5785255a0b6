#include "cadclip/train/sampler.h"

#include <algorithm>
#include <numeric>

#include "cadclip/core/error.h"

namespace cadclip::train {

uint64_t mix_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {a, b, c, d}) {
    x ^= v + 0x9e3779b97f4a7c15ull + (x << 6) + (x >> 2);
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
  }
  return x;
}

EpochSampler::EpochSampler(int64_t samples, uint64_t seed, int rank, int world, int64_t batch_size)
    : samples_(samples), seed_(seed), rank_(rank), world_(world), batch_size_(batch_size) {
  if (batch_size < 1) throw Error(format("batch size {} must be at least 1", batch_size));
  CADCLIP_CHECK(world >= 1 && rank >= 0 && rank < world, "rank {} of world {}", rank, world);
  const int64_t global = batch_size * world;
  steps_ = samples / global;
  const int64_t rest = samples % global;
  if (rest >= world) {
    ++steps_;
  } else {
    dropped_ = rest;
  }
}

std::vector<int64_t> EpochSampler::permutation(int64_t epoch) const {
  std::vector<int64_t> order(static_cast<size_t>(samples_));
  std::iota(order.begin(), order.end(), 0);
  // Fisher-Yates with our own hash, so the order is the same on every platform.
  for (int64_t i = samples_ - 1; i > 0; --i) {
    const uint64_t r = mix_hash(seed_, static_cast<uint64_t>(epoch), static_cast<uint64_t>(i));
    std::swap(order[static_cast<size_t>(i)], order[r % static_cast<uint64_t>(i + 1)]);
  }
  return order;
}

std::vector<int64_t> EpochSampler::batch(int64_t epoch, int64_t step) const {
  CADCLIP_CHECK(step >= 0 && step < steps_, "step {} of {} steps", step, steps_);
  const std::vector<int64_t> order = permutation(epoch);
  const int64_t global = batch_size_ * world_;
  const int64_t begin = step * global;
  const int64_t end = std::min(begin + global, samples_);
  std::vector<int64_t> mine;
  for (int64_t i = begin + rank_; i < end; i += world_)
    mine.push_back(order[static_cast<size_t>(i)]);
  return mine;
}

}  // namespace cadclip::train
