#include "cadclip/core/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cadclip/core/error.h"

namespace cadclip {
namespace {

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("cadclip_st_" + std::to_string(::getpid()) + "_" + name);
}

// A file made of an 8-byte length, `header` and `data`, exactly as given.
std::filesystem::path raw_file(const std::string& name, const std::string& header,
                               const std::string& data, std::optional<uint64_t> length = {}) {
  const auto path = temp_path(name);
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = length.value_or(header.size());
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
  return path;
}

// Opening must fail with a cadclip::Error whose message names the file and
// contains `expected`.
void expect_invalid(const std::filesystem::path& path, const std::string& expected) {
  try {
    SafetensorsReader::open(path);
    FAIL() << path << ": expected an error containing '" << expected << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(SafetensorsTest, RoundTripEveryDtypeBitExactly) {
  SafetensorsWriter writer;
  const std::vector<DType> dtypes = {
      DType::kBool, DType::kU8,  DType::kI8,  DType::kI16, DType::kU16, DType::kF16, DType::kBF16,
      DType::kI32,  DType::kU32, DType::kF32, DType::kF64, DType::kI64, DType::kU64};
  std::map<std::string, std::vector<std::byte>> expected;
  for (DType dtype : dtypes) {
    const std::vector<int64_t> shape = {2, 3};
    std::vector<std::byte> bytes(6 * dtype_size(dtype));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 37 + 11);
    if (dtype == DType::kBool)
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i % 2);
    const std::string name = "t_" + std::string(dtype_name(dtype));
    writer.add(name, dtype, shape, bytes);
    expected[name] = bytes;
  }
  writer.add("empty", DType::kF32, {0, 4}, {});
  writer.set_metadata("format", "pt");
  writer.set_metadata("schema", "cadclip-test/1");
  const auto path = temp_path("roundtrip.safetensors");
  writer.write(path);

  const auto file = SafetensorsReader::open(path);
  EXPECT_EQ(file.tensors().size(), dtypes.size() + 1);
  EXPECT_EQ(file.metadata().at("schema"), "cadclip-test/1");
  for (const auto& [name, bytes] : expected) {
    const TensorInfo& info = file.at(name);
    EXPECT_EQ(info.shape, (std::vector<int64_t>{2, 3}));
    const auto stored = file.bytes(info);
    ASSERT_EQ(stored.size(), bytes.size());
    EXPECT_EQ(std::memcmp(stored.data(), bytes.data(), bytes.size()), 0) << name;
    // Largest-element-first layout keeps every tensor aligned in the file.
    EXPECT_EQ(info.begin % dtype_size(info.dtype), 0u) << name;
  }
  EXPECT_EQ(file.at("empty").numel(), 0);
}

TEST(SafetensorsTest, ConvertsToF32) {
  SafetensorsWriter writer;
  const std::vector<uint16_t> half = {f32_to_f16(1.5f), f32_to_f16(-0.25f), f32_to_f16(65504.f)};
  const std::vector<uint16_t> brain = {f32_to_bf16(1.5f), f32_to_bf16(-3.0f), f32_to_bf16(1e30f)};
  const std::vector<int8_t> small = {-128, 0, 127};
  const std::vector<double> wide = {0.1, -2.5, 1e10};
  writer.add("h", DType::kF16, {3}, std::as_bytes(std::span(half)));
  writer.add("b", DType::kBF16, {3}, std::as_bytes(std::span(brain)));
  writer.add("i", DType::kI8, {3}, std::as_bytes(std::span(small)));
  writer.add("d", DType::kF64, {3}, std::as_bytes(std::span(wide)));
  const auto path = temp_path("convert.safetensors");
  writer.write(path);
  const auto file = SafetensorsReader::open(path);
  EXPECT_EQ(file.to_f32(file.at("h")), (std::vector<float>{1.5f, -0.25f, 65504.f}));
  const auto b = file.to_f32(file.at("b"));
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[1], -3.0f);
  EXPECT_NEAR(b[2], 1e30f, 1e28f);
  EXPECT_EQ(file.to_f32(file.at("i")), (std::vector<float>{-128.f, 0.f, 127.f}));
  EXPECT_EQ(file.to_f32(file.at("d")), (std::vector<float>{0.1f, -2.5f, 1e10f}));
}

TEST(HalfPrecisionTest, F16RoundTripsEveryHalfValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = f16_to_f32(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f))));
      continue;
    }
    EXPECT_EQ(f32_to_f16(f), h) << "half bits " << bits;
  }
}

TEST(HalfPrecisionTest, F16RoundsToNearestEvenAndSaturatesToInfinity) {
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), f32_to_f16(1.0f));  // tie goes to even
  EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);            // tie goes up to even
  EXPECT_EQ(f32_to_f16(70000.f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-70000.f), 0xfc00);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_bf16(1.0f + 1.0f / 256), f32_to_bf16(1.0f));  // bf16 tie to even
}

TEST(SafetensorsTest, WriterRejectsSizeMismatchAndDuplicates) {
  SafetensorsWriter writer;
  const std::vector<float> three = {1, 2, 3};
  EXPECT_THROW(writer.add_f32("x", {2, 2}, three), Error);
  writer.add_f32("x", {3}, three);
  EXPECT_THROW(writer.add_f32("x", {3}, three), Error);
  EXPECT_THROW(writer.add_f32("__metadata__", {3}, three), Error);
}

// --- Malformed files: each gives its own clear error -------------------------

const std::string kGoodHeader = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
const std::string kGoodData(8, '\0');

TEST(SafetensorsMalformedTest, GoodFileOpens) {
  EXPECT_NO_THROW(SafetensorsReader::open(raw_file("good", kGoodHeader, kGoodData)));
}

TEST(SafetensorsMalformedTest, EmptyAndTruncatedFiles) {
  const auto empty = temp_path("empty");
  std::ofstream(empty).close();
  expect_invalid(empty, "truncated: 0 bytes");
  const auto short_file = temp_path("short");
  std::ofstream(short_file) << "abc";
  expect_invalid(short_file, "truncated: 3 bytes");
  // A good file cut in the middle of its data.
  expect_invalid(raw_file("cut", kGoodHeader, kGoodData.substr(0, 5)), "beyond the data buffer");
}

TEST(SafetensorsMalformedTest, HeaderLengthBeyondTheFile) {
  expect_invalid(raw_file("hlen", kGoodHeader, kGoodData, 1000),
                 "reaches past the end of the file");
  expect_invalid(raw_file("hhuge", kGoodHeader, kGoodData, uint64_t{1} << 40), "100 MB limit");
}

TEST(SafetensorsMalformedTest, BadJson) {
  expect_invalid(raw_file("json", R"({"a":{"dtype":"F32",)", ""), "not valid JSON");
  expect_invalid(raw_file("array", "[1, 2]  ", ""), "not an object");
}

TEST(SafetensorsMalformedTest, UnknownDtype) {
  expect_invalid(
      raw_file("dtype", R"({"a":{"dtype":"F24","shape":[2],"data_offsets":[0,8]}})", kGoodData),
      "unknown dtype 'F24'");
}

TEST(SafetensorsMalformedTest, OffsetsOutOfRange) {
  expect_invalid(
      raw_file("range", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", kGoodData),
      "beyond the data buffer of 8 bytes");
  expect_invalid(
      raw_file("reversed", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", kGoodData),
      "end before they begin");
  expect_invalid(
      raw_file("negative", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", kGoodData),
      "needs data_offsets");
}

TEST(SafetensorsMalformedTest, OverlappingOffsets) {
  expect_invalid(raw_file("overlap",
                          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                          kGoodData),
                 "overlap");
}

TEST(SafetensorsMalformedTest, GappedOffsets) {
  expect_invalid(
      raw_file("gap", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", kGoodData),
      "4 bytes of the data buffer before tensor 'a' belong to no tensor");
  expect_invalid(
      raw_file("tail", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", kGoodData),
      "the last 4 bytes of the data buffer belong to no tensor");
}

TEST(SafetensorsMalformedTest, ShapeSizeMismatch) {
  expect_invalid(
      raw_file("shape", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kGoodData),
      "needs 12 bytes but its offsets span 8");
  expect_invalid(
      raw_file("negdim", R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", kGoodData),
      "not a size");
  expect_invalid(
      raw_file("overflow",
               R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
               kGoodData),
      "too many");
}

TEST(SafetensorsMalformedTest, BadMetadata) {
  expect_invalid(raw_file("meta", R"({"__metadata__":{"a":1}})", ""), "is not a string");
  expect_invalid(raw_file("meta2", R"({"__metadata__":[1]})", ""), "not an object of strings");
}

TEST(SafetensorsMalformedTest, MissingTensorIsNamed) {
  const auto file = SafetensorsReader::open(raw_file("good2", kGoodHeader, kGoodData));
  try {
    file.at("encoder.layer.0.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor named 'encoder.layer.0.weight'"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace cadclip
