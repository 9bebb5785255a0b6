#include "cadclip/train/sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "cadclip/train/tensorboard.h"

namespace cadclip::train {
namespace {

TEST(EpochSamplerTest, EveryRankTakesTheSameStepsAndEverySampleComesOnce) {
  for (int world : {1, 2, 3}) {
    for (int64_t samples : {1, 7, 12, 13, 64}) {
      std::multiset<int64_t> seen;
      int64_t steps = -1, dropped = -1;
      for (int rank = 0; rank < world; ++rank) {
        const EpochSampler sampler(samples, /*seed=*/5, rank, world, /*batch_size=*/4);
        if (steps < 0) steps = sampler.steps_per_epoch(), dropped = sampler.dropped_per_epoch();
        EXPECT_EQ(sampler.steps_per_epoch(), steps);
        for (int64_t step = 0; step < sampler.steps_per_epoch(); ++step) {
          const auto batch = sampler.batch(/*epoch=*/3, step);
          EXPECT_FALSE(batch.empty()) << "rank " << rank << " would sit out a collective";
          seen.insert(batch.begin(), batch.end());
        }
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()) + dropped, samples)
          << "world " << world << " samples " << samples;
      EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size()) << "no repeats";
      EXPECT_LT(dropped, world);
    }
  }
}

TEST(EpochSamplerTest, EpochsShuffleDifferentlyAndDeterministically) {
  const EpochSampler a(100, 1, 0, 1, 10), b(100, 1, 0, 1, 10);
  EXPECT_EQ(a.permutation(0), b.permutation(0));
  EXPECT_NE(a.permutation(0), a.permutation(1));
}

TEST(TensorBoardTest, Crc32cKnownValue) {
  // The CRC-32C check value of "123456789".
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
}

}  // namespace
}  // namespace cadclip::train
