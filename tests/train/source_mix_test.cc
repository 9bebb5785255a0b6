#include "cadclip/train/source_mix.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "cadclip/core/error.h"

namespace cadclip::train {
namespace {

TEST(SourceMixTest, EachSourceFillsItsShareAndASmallOneIsRepeatedWholePasses) {
  // 90 synthetic samples (source 0) and 10 real ones (source 1), half and half.
  std::vector<int> source(100, 0);
  for (int i = 90; i < 100; ++i) source[i] = 1;
  const SourceMix mix(source, {1.0, 1.0}, /*seed=*/3);
  ASSERT_EQ(mix.samples_per_epoch(), 100);
  EXPECT_EQ(mix.draws(), (std::vector<int64_t>{50, 50}));
  const std::vector<int64_t> drawn = mix.epoch_samples(0);
  ASSERT_EQ(drawn.size(), 100u);
  std::map<int64_t, int> count;
  for (const int64_t s : drawn) ++count[s];
  for (int i = 90; i < 100; ++i) EXPECT_EQ(count[i], 5) << "real sample " << i;
  int synthetic = 0;
  for (int i = 0; i < 90; ++i) {
    EXPECT_LE(count[i], 1) << "a cut source draws a sample at most once";
    synthetic += count[i];
  }
  EXPECT_EQ(synthetic, 50);
}

TEST(SourceMixTest, EpochsDrawAfreshAndTheSameSeedDrawsTheSame) {
  std::vector<int> source(40, 0);
  for (int i = 30; i < 40; ++i) source[i] = 1;
  const SourceMix a(source, {0.8, 0.2}, 7), b(source, {0.8, 0.2}, 7);
  EXPECT_EQ(a.epoch_samples(2), b.epoch_samples(2));
  EXPECT_NE(a.epoch_samples(0), a.epoch_samples(1));
  const std::vector<int64_t> e = a.epoch_samples(0);
  EXPECT_EQ(std::set<int64_t>(e.begin(), e.begin() + 32).size(), 30u)
      << "32 draws of 30 samples: one whole pass, then two more";
}

TEST(SourceMixTest, RefusesASourceWithoutSamplesOrABadShare) {
  EXPECT_THROW(SourceMix({0, 0, 0}, {0.5, 0.5}, 1), Error);
  EXPECT_THROW(SourceMix({0, 1}, {1.0, 0.0}, 1), Error);
}

}  // namespace
}  // namespace cadclip::train
