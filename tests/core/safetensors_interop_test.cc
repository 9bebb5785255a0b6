// safetensors interop with Python's reference implementation, both ways:
// files written by safetensors.torch are read bit-exactly, and files written
// by cadclip load in Python with identical values and metadata.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cadclip/core/file.h"
#include "cadclip/core/safetensors.h"

namespace cadclip {
namespace {

const std::string kScript = std::string(CADCLIP_SOURCE_DIR) + "/tests/core/safetensors_interop.py";

int run_python(const std::string& args) {
  const std::string command = std::string(CADCLIP_PYTHON_EXE) + " " + kScript + " " + args;
  return std::system(command.c_str());
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("cadclip_interop_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_bytes(const std::filesystem::path& path) { return read_text_file(path); }

TEST(SafetensorsInteropTest, ReadsPythonFilesBitExactly) {
  const auto dir = fresh_dir("from_python");
  const auto file = dir / "python.safetensors";
  ASSERT_EQ(run_python("write " + file.string() + " " + (dir / "expected").string()), 0);

  const auto expected = nlohmann::json::parse(read_text_file(dir / "expected" / "expected.json"));
  const auto reader = SafetensorsReader::open(file);
  EXPECT_EQ(reader.metadata().at("producer"), "python-safetensors");
  EXPECT_EQ(reader.tensors().size(), expected["tensors"].size());
  for (const auto& [name, want] : expected["tensors"].items()) {
    SCOPED_TRACE(name);
    const TensorInfo& info = reader.at(name);
    EXPECT_EQ(dtype_name(info.dtype), want["dtype"].get<std::string>());
    EXPECT_EQ(info.shape, want["shape"].get<std::vector<int64_t>>());
    const std::string bytes = read_bytes(dir / "expected" / (name + ".bin"));
    const auto stored = reader.bytes(info);
    ASSERT_EQ(stored.size(), bytes.size());
    EXPECT_EQ(std::memcmp(stored.data(), bytes.data(), bytes.size()), 0);
  }
  // Conversion to F32 on request, for the half types Hugging Face checkpoints use.
  const auto half = reader.to_f32(reader.at("layer.f16"));
  const auto brain = reader.to_f32(reader.at("layer.bf16"));
  EXPECT_EQ(half[2], 1.0f);
  EXPECT_EQ(brain[3], -2.5f);
  EXPECT_TRUE(std::isinf(half[4]) && half[4] > 0);
  EXPECT_TRUE(std::isnan(brain[6]));
}

TEST(SafetensorsInteropTest, PythonReadsCadclipFilesIdentically) {
  const auto dir = fresh_dir("to_python");
  nlohmann::json expected;
  expected["metadata"] = {{"schema", "cadclip/1"}, {"ids", "part-1,part-2"}};
  SafetensorsWriter writer;
  for (const auto& [key, value] : expected["metadata"].items())
    writer.set_metadata(key, value.get<std::string>());
  const std::vector<std::pair<DType, std::vector<int64_t>>> specs = {
      {DType::kBool, {4}}, {DType::kU8, {3, 2}},     {DType::kI8, {5}},      {DType::kI16, {2, 2}},
      {DType::kU16, {3}},  {DType::kF16, {2, 3}},    {DType::kBF16, {3, 2}}, {DType::kI32, {1, 4}},
      {DType::kU32, {2}},  {DType::kF32, {2, 2, 2}}, {DType::kF64, {3}},     {DType::kI64, {2}},
      {DType::kU64, {2}},  {DType::kF32, {0}}};
  int index = 0;
  for (const auto& [dtype, shape] : specs) {
    const std::string name = "t" + std::to_string(index++) + "." + std::string(dtype_name(dtype));
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    std::string bytes(static_cast<size_t>(numel) * dtype_size(dtype), '\0');
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(dtype == DType::kBool ? (i % 3 == 0) : (i * 53 + 7) % 256);
    if (dtype == DType::kF16 || dtype == DType::kBF16) {
      // Keep away from NaN payloads, which torch may canonicalise on load.
      for (size_t i = 1; i < bytes.size(); i += 2) bytes[i] = static_cast<char>(bytes[i] & 0x3f);
    }
    if (dtype == DType::kF32 || dtype == DType::kF64) {
      for (size_t i = dtype_size(dtype) - 1; i < bytes.size(); i += dtype_size(dtype))
        bytes[i] = static_cast<char>(bytes[i] & 0x3f);
    }
    writer.add(name, dtype, shape, std::as_bytes(std::span(bytes.data(), bytes.size())));
    std::ofstream(dir / (name + ".bin"), std::ios::binary) << bytes;
    expected["tensors"][name] = {{"dtype", dtype_name(dtype)}, {"shape", shape}};
  }
  std::ofstream(dir / "expected.json") << expected.dump();
  const auto file = dir / "cadclip.safetensors";
  writer.write(file);
  EXPECT_EQ(run_python("verify " + file.string() + " " + dir.string()), 0);
}

}  // namespace
}  // namespace cadclip
