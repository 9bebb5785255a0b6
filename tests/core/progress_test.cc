#include "cadclip/core/progress.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace cadclip {
namespace {

ProgressOptions plain(int64_t total) {
  ProgressOptions options;
  options.total = total;
  options.unit = "files";
  options.force_plain = true;
  options.plain_interval_s = 1e9;  // only the final line
  return options;
}

TEST(ProgressTest, RendersCountShareRateAndEta) {
  Progress progress("ingest", plain(200));
  progress.advance(50);
  const std::string line = progress.render();
  EXPECT_NE(line.find("[ingest] 50/200 25.0%"), std::string::npos) << line;
  EXPECT_NE(line.find("files/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA"), std::string::npos) << line;
  progress.finish();
}

TEST(ProgressTest, FieldsAreTheLatestOnesNeverStale) {
  Progress progress("train", plain(10));
  progress.advance(1, {{"loss", "2.31"}});
  progress.advance(1, {{"loss", "1.87"}});
  const std::string line = progress.render();
  EXPECT_NE(line.find("loss=1.87"), std::string::npos) << line;
  EXPECT_EQ(line.find("loss=2.31"), std::string::npos) << line;
}

TEST(ProgressTest, UnknownTotalHasNoEta) {
  Progress progress("scan", plain(0));
  progress.advance(3);
  EXPECT_EQ(progress.render().find("ETA"), std::string::npos);
}

TEST(ProgressTest, CountsFromSeveralThreads) {
  Progress progress("workers", plain(4000));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) progress.advance();
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(progress.done(), 4000);
}

TEST(ProgressTest, PlainModeWritesPeriodicLines) {
  ProgressOptions options = plain(3);
  options.plain_interval_s = 0;  // a line on every advance
  testing::internal::CaptureStderr();
  {
    Progress progress("steps", options);
    progress.advance(1, {{"loss", "0.5"}});
    progress.advance(1, {{"loss", "0.4"}});
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("[steps] 1/3"), std::string::npos) << out;
  EXPECT_NE(out.find("[steps] 2/3 66.7%"), std::string::npos) << out;
  EXPECT_NE(out.find("loss=0.4"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no carriage returns when not a terminal";
}

}  // namespace
}  // namespace cadclip
