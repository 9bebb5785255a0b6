#include "cadclip/train/source_mix.h"

#include <cmath>
#include <numeric>
#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/train/sampler.h"

namespace cadclip::train {

SourceMix::SourceMix(std::vector<int> source_of_sample, std::vector<double> shares, uint64_t seed)
    : members_(shares.size()), draws_(shares.size(), 0), seed_(seed) {
  double sum = 0;
  for (size_t s = 0; s < shares.size(); ++s) {
    if (!(shares[s] > 0))
      throw Error(format("the share of source {} is {}; shares must be positive", s, shares[s]));
    sum += shares[s];
  }
  for (size_t i = 0; i < source_of_sample.size(); ++i) {
    const int s = source_of_sample[i];
    CADCLIP_CHECK(s >= 0 && static_cast<size_t>(s) < shares.size(), "sample {} of source {}", i, s);
    members_[static_cast<size_t>(s)].push_back(static_cast<int64_t>(i));
  }
  const auto n = static_cast<double>(source_of_sample.size());
  for (size_t s = 0; s < shares.size(); ++s) {
    if (members_[s].empty())
      throw Error(format("source {} has a sampling share but no training sample", s));
    draws_[s] = std::max<int64_t>(1, std::llround(n * shares[s] / sum));
    total_ += draws_[s];
  }
}

std::vector<int64_t> SourceMix::epoch_samples(int64_t epoch) const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(total_));
  for (size_t s = 0; s < members_.size(); ++s) {
    const std::vector<int64_t>& members = members_[s];
    const auto size = static_cast<int64_t>(members.size());
    std::vector<int64_t> pass(members.size());
    for (int64_t drawn = 0, round = 0; drawn < draws_[s]; ++round) {
      std::iota(pass.begin(), pass.end(), 0);
      for (int64_t i = size - 1; i > 0; --i) {
        const uint64_t r = mix_hash(seed_ ^ 0x5eedc0de, static_cast<uint64_t>(epoch),
                                    (static_cast<uint64_t>(s) << 32) | static_cast<uint64_t>(round),
                                    static_cast<uint64_t>(i));
        std::swap(pass[static_cast<size_t>(i)], pass[r % static_cast<uint64_t>(i + 1)]);
      }
      for (int64_t i = 0; i < size && drawn < draws_[s]; ++i, ++drawn)
        out.push_back(members[static_cast<size_t>(pass[static_cast<size_t>(i)])]);
    }
  }
  return out;
}

}  // namespace cadclip::train
