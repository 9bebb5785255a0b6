#include "cadclip/core/tensor_health.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace cadclip {
namespace {

TEST(TensorHealthTest, NamesTheSickTensorsAndCountsNanAndInf) {
  SafetensorsWriter writer;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> good = {1, 2, 3};
  const std::vector<float> sick = {nan, 1, -inf, nan};
  const std::vector<uint16_t> half_inf = {f32_to_f16(1.0f), 0x7c00};
  const std::vector<int64_t> ints = {1, 2};
  writer.add_f32("encoder.ok", {3}, good);
  writer.add_f32("encoder.sick", {4}, sick);
  writer.add("head.half", DType::kF16, {2}, std::as_bytes(std::span(half_inf)));
  writer.add_i64("steps", {2}, ints);
  const auto path = std::filesystem::temp_directory_path() /
                    ("cadclip_health_" + std::to_string(::getpid()) + ".safetensors");
  writer.write(path);

  const HealthReport report = scan_health(SafetensorsReader::open(path));
  EXPECT_FALSE(report.healthy());
  EXPECT_EQ(report.sick_summary(), "encoder.sick (2 NaN, 1 Inf), head.half (1 Inf)");
  for (const auto& t : report.tensors) {
    if (t.name == "encoder.sick") {
      EXPECT_EQ(t.nan, 2);
      EXPECT_EQ(t.inf, 1);
    }
    if (t.name == "encoder.ok" || t.name == "steps") EXPECT_TRUE(t.healthy());
  }
}

}  // namespace
}  // namespace cadclip
