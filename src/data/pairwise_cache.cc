#include "cadclip/data/pairwise_cache.h"

#include <algorithm>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::data {

PairwiseCache::PairwiseCache(int64_t models, int64_t max_bytes)
    : kept_(static_cast<size_t>(std::max<int64_t>(models, 0))), max_bytes_(max_bytes) {
  if (models < 0 || max_bytes < 0)
    throw Error(format("PairwiseCache: {} models and a budget of {} bytes; both must be >= 0",
                       models, max_bytes));
}

int64_t PairwiseCache::bytes_of(const PairwiseInputs& p) {
  return static_cast<int64_t>(sizeof(PairwiseInputs) + p.hops.capacity() * sizeof(int32_t) +
                              p.normal_angle.capacity() * sizeof(float) +
                              p.normal_defined.capacity() * sizeof(uint8_t) +
                              p.centroid_distance.capacity() * sizeof(float));
}

std::shared_ptr<const PairwiseInputs> PairwiseCache::get(int64_t index, const BRepGraph& graph) {
  if (index < 0 || index >= static_cast<int64_t>(kept_.size()))
    throw Error(format("PairwiseCache: model {} is out of range: the cache is for {} models", index,
                       kept_.size()));
  {
    std::lock_guard lock(mutex_);
    if (const auto& p = kept_[static_cast<size_t>(index)]) return p;
  }
  // Computed outside the lock, so that loader threads work side by side; two
  // threads may compute one model at once, and the first to finish keeps it.
  auto computed = std::make_shared<const PairwiseInputs>(pairwise_inputs(graph));
  const int64_t bytes = bytes_of(*computed);
  std::lock_guard lock(mutex_);
  ++stats_.computed;
  auto& slot = kept_[static_cast<size_t>(index)];
  if (slot) return slot;
  if (stats_.bytes + bytes > max_bytes_) {
    ++stats_.not_kept;
    return computed;
  }
  slot = computed;
  ++stats_.kept;
  stats_.bytes += bytes;
  return slot;
}

PairwiseCache::Stats PairwiseCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace cadclip::data
