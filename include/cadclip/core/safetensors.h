// safetensors files (Hugging Face's tensor container): a memory-mapped reader
// with strict validation, and an atomic writer. Layout: 8-byte little-endian
// header length N, N bytes of JSON, then the data buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip {

enum class DType {
  kBool,
  kU8,
  kI8,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
  kF8E5M2,
  kF8E4M3,
};

std::string_view dtype_name(DType dtype);                 // "F32", "BF16", ...
std::optional<DType> parse_dtype(std::string_view name);  // inverse of dtype_name
size_t dtype_size(DType dtype);                           // bytes per element

// Half-precision conversions (round to nearest even on the way down).
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
uint16_t f32_to_bf16(float value);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offset of the first element in the data buffer
  uint64_t end = 0;    // one past the last byte

  int64_t numel() const;
};

// A read-only view of one file, memory-mapped: opening costs the header only,
// and tensor bytes are paged in when touched. Copies share the mapping.
class SafetensorsReader {
 public:
  // Throws cadclip::Error naming the file and the problem when the file is
  // not a valid safetensors file.
  static SafetensorsReader open(const std::filesystem::path& path);

  const std::filesystem::path& path() const;
  // Tensors in the order of the header.
  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find(std::string_view name) const;
  // Like find, but throws cadclip::Error naming the file and the tensor.
  const TensorInfo& at(std::string_view name) const;
  // The `__metadata__` map (empty when absent).
  const std::map<std::string, std::string>& metadata() const;

  // The raw little-endian bytes of a tensor, straight from the mapping.
  std::span<const std::byte> bytes(const TensorInfo& tensor) const;
  // The values converted to float32 (every dtype but the F8 kinds; BOOL as
  // 0/1). Integer values beyond 2^24 lose precision, as in any F32 cast.
  std::vector<float> to_f32(const TensorInfo& tensor) const;

 private:
  struct Mapping;
  std::shared_ptr<const Mapping> mapping_;
};

// Collects tensors and writes them in one go, atomically.
class SafetensorsWriter {
 public:
  // Copies `data`, which must hold numel(shape) * dtype_size(dtype) bytes in
  // little-endian C order. Throws cadclip::Error on a size mismatch or a name
  // used twice.
  void add(std::string name, DType dtype, std::vector<int64_t> shape,
           std::span<const std::byte> data);
  void add_f32(std::string name, std::vector<int64_t> shape, std::span<const float> values);
  void add_i64(std::string name, std::vector<int64_t> shape, std::span<const int64_t> values);
  void set_metadata(std::string key, std::string value);

  // Tensors are laid out largest element size first, so every tensor starts
  // aligned to its element size (as Python's safetensors does).
  void write(const std::filesystem::path& path) const;

 private:
  struct Pending {
    TensorInfo info;
    std::vector<std::byte> data;
  };
  std::vector<Pending> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace cadclip
