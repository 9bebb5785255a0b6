#include "cadclip/core/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; cadclip reads it in place");

namespace cadclip {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the limit of the reference implementation

struct DTypeEntry {
  DType dtype;
  std::string_view name;
  size_t size;
};
constexpr std::array<DTypeEntry, 15> kDTypes = {{
    {DType::kBool, "BOOL", 1},
    {DType::kU8, "U8", 1},
    {DType::kI8, "I8", 1},
    {DType::kI16, "I16", 2},
    {DType::kU16, "U16", 2},
    {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2},
    {DType::kI32, "I32", 4},
    {DType::kU32, "U32", 4},
    {DType::kF32, "F32", 4},
    {DType::kF64, "F64", 8},
    {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
    {DType::kF8E5M2, "F8_E5M2", 1},
    {DType::kF8E4M3, "F8_E4M3", 1},
}};

const DTypeEntry& entry(DType dtype) {
  for (const auto& e : kDTypes)
    if (e.dtype == dtype) return e;
  CADCLIP_CHECK(false, "unknown DType value {}", static_cast<int>(dtype));
  return kDTypes[0];
}

// numel * element size, or nullopt on overflow or a negative dimension.
std::optional<uint64_t> byte_size(const std::vector<int64_t>& shape, size_t element_size) {
  uint64_t total = element_size;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && total > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
      return std::nullopt;
    total *= static_cast<uint64_t>(dim);
  }
  return total;
}

template <class T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

std::string_view dtype_name(DType dtype) { return entry(dtype).name; }
size_t dtype_size(DType dtype) { return entry(dtype).size; }
std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kDTypes)
    if (e.name == name) return e.dtype;
  return std::nullopt;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise it, since every half subnormal is a normal float.
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ff;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;   // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds to beyond 65504: inf
  if (abs < 0x33000001) return sign;            // below half the smallest subnormal
  const int exponent = static_cast<int>(abs >> 23);
  uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
  if (exponent < 113) {
    // Subnormal half: shift the full mantissa, round to nearest even.
    const int shift = 126 - exponent;
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t result = mantissa >> shift;
    if (rest > half || (rest == half && (result & 1))) ++result;
    return sign | static_cast<uint16_t>(result);
  }
  uint32_t result = ((static_cast<uint32_t>(exponent - 112)) << 10) | ((abs >> 13) & 0x3ff);
  const uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (result & 1))) ++result;  // may carry into exponent
  return sign | static_cast<uint16_t>(result);
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ---------------------------------------------------------------------------
// Reader

struct SafetensorsReader::Mapping {
  std::filesystem::path path;
  const std::byte* base = nullptr;
  size_t size = 0;
  const std::byte* data = nullptr;  // start of the data buffer
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;

  ~Mapping() {
    if (base != nullptr) ::munmap(const_cast<std::byte*>(base), size);
  }
};

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
  throw Error(format("{} is not a valid safetensors file: {}", path.string(), problem));
}

std::vector<int64_t> parse_shape(const std::filesystem::path& path, const std::string& name,
                                 const nlohmann::json& shape) {
  if (!shape.is_array()) fail(path, format("tensor '{}' has no shape array", name));
  std::vector<int64_t> dims;
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      fail(path, format("tensor '{}' has a shape entry {} that is not a size", name, d.dump()));
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

// A whole file mapped read-only.
struct MappedFile {
  const std::byte* base = nullptr;
  uint64_t size = 0;
};

// One header entry: a tensor whose bytes lie within the buffer of buffer_size bytes.
TensorInfo parse_tensor(const std::filesystem::path& path, const std::string& name,
                        const nlohmann::ordered_json& value, uint64_t buffer_size) {
  if (!value.is_object()) fail(path, format("entry '{}' is not an object", name));
  TensorInfo tensor;
  tensor.name = name;
  const auto dtype_it = value.find("dtype");
  if (dtype_it == value.end() || !dtype_it->is_string())
    fail(path, format("tensor '{}' has no dtype", name));
  const auto dtype = parse_dtype(dtype_it->get<std::string>());
  if (!dtype)
    fail(path, format("tensor '{}' has unknown dtype '{}'", name, dtype_it->get<std::string>()));
  tensor.dtype = *dtype;
  const auto shape_it = value.find("shape");
  if (shape_it == value.end()) fail(path, format("tensor '{}' has no shape", name));
  tensor.shape = parse_shape(path, name, *shape_it);
  const auto offsets_it = value.find("data_offsets");
  if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned())
    fail(path, format("tensor '{}' needs data_offsets [begin, end] of two sizes", name));
  tensor.begin = (*offsets_it)[0].get<uint64_t>();
  tensor.end = (*offsets_it)[1].get<uint64_t>();
  if (tensor.end < tensor.begin)
    fail(path, format("tensor '{}' has data_offsets [{}, {}] that end before they begin", name,
                      tensor.begin, tensor.end));
  if (tensor.end > buffer_size)
    fail(path, format("tensor '{}' has data_offsets [{}, {}] beyond the data buffer of {} "
                      "bytes: the file is truncated or corrupt",
                      name, tensor.begin, tensor.end, buffer_size));
  const auto expected = byte_size(tensor.shape, dtype_size(tensor.dtype));
  if (!expected || *expected != tensor.end - tensor.begin)
    fail(path, format("tensor '{}' of dtype {} and shape {} needs {} bytes but its offsets "
                      "span {}",
                      name, dtype_name(tensor.dtype), shape_it->dump(),
                      expected ? std::to_string(*expected) : std::string("too many"),
                      tensor.end - tensor.begin));
  return tensor;
}

// The buffer must be covered exactly: no gaps, no overlaps.
void check_coverage(const std::filesystem::path& path, const std::vector<TensorInfo>& tensors,
                    uint64_t buffer_size) {
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->begin < covered)
      fail(path,
           format("tensors '{}' and '{}' overlap in the data buffer", previous->name, t->name));
    if (t->begin > covered)
      fail(path, format("{} bytes of the data buffer before tensor '{}' belong to no tensor",
                        t->begin - covered, t->name));
    covered = t->end;
    previous = t;
  }
  if (covered != buffer_size)
    fail(path,
         format("the last {} bytes of the data buffer belong to no tensor", buffer_size - covered));
}

MappedFile map_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(format("cannot open {}: {}", path.string(), std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(format("{} is not a regular file", path.string()));
  }
  const auto file_size = static_cast<uint64_t>(info.st_size);
  if (file_size < 8) {
    ::close(fd);
    fail(path, format("truncated: {} bytes, but the file must start with an 8-byte header length",
                      file_size));
  }
  void* base = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    throw Error(format("cannot memory-map {}: {}", path.string(), std::strerror(errno)));
  }
  return {static_cast<const std::byte*>(base), file_size};
}

// The header's JSON object; `header_size` receives its length in bytes.
nlohmann::ordered_json read_header(const std::filesystem::path& path, const MappedFile& file,
                                   uint64_t& header_size) {
  const uint64_t file_size = file.size;
  header_size = load<uint64_t>(file.base);
  if (header_size > kMaxHeaderBytes)
    fail(path, format("header length {} is over the 100 MB limit", header_size));
  if (header_size > file_size - 8)
    fail(path, format("header length {} reaches past the end of the file ({} bytes): the file is "
                      "truncated or not safetensors",
                      header_size, file_size));
  const auto* header_begin = reinterpret_cast<const char*>(file.base + 8);
  nlohmann::ordered_json header;
  try {
    header = nlohmann::ordered_json::parse(std::string_view(header_begin, header_size));
  } catch (const nlohmann::json::exception& e) {
    fail(path, format("the header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) fail(path, "the header is JSON but not an object");
  return header;
}

}  // namespace

SafetensorsReader SafetensorsReader::open(const std::filesystem::path& path) {
  auto mapping = std::make_shared<Mapping>();
  mapping->path = path;
  const MappedFile file = map_file(path);
  mapping->base = file.base;  // unmapped by the mapping's destructor, also when a check fails
  mapping->size = file.size;
  uint64_t header_size = 0;
  const nlohmann::ordered_json header = read_header(path, file, header_size);
  mapping->data = file.base + 8 + header_size;
  const uint64_t buffer_size = file.size - 8 - header_size;
  for (const auto& [name, value] : header.items()) {
    if (name != "__metadata__") {
      mapping->tensors.push_back(parse_tensor(path, name, value, buffer_size));
      continue;
    }
    if (!value.is_object()) fail(path, "__metadata__ is not an object of strings");
    for (const auto& [key, text] : value.items()) {
      if (!text.is_string()) fail(path, format("__metadata__ value of '{}' is not a string", key));
      mapping->metadata[key] = text.get<std::string>();
    }
  }
  check_coverage(path, mapping->tensors, buffer_size);
  SafetensorsReader reader;
  reader.mapping_ = std::move(mapping);
  return reader;
}

const std::filesystem::path& SafetensorsReader::path() const { return mapping_->path; }
const std::vector<TensorInfo>& SafetensorsReader::tensors() const { return mapping_->tensors; }
const std::map<std::string, std::string>& SafetensorsReader::metadata() const {
  return mapping_->metadata;
}

const TensorInfo* SafetensorsReader::find(std::string_view name) const {
  for (const auto& t : mapping_->tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo& SafetensorsReader::at(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (t == nullptr)
    throw Error(format("{} has no tensor named '{}'", mapping_->path.string(), name));
  return *t;
}

std::span<const std::byte> SafetensorsReader::bytes(const TensorInfo& tensor) const {
  CADCLIP_CHECK(tensor.end <= mapping_->size, "tensor '{}' is not from this file", tensor.name);
  return {mapping_->data + tensor.begin, tensor.end - tensor.begin};
}

std::vector<float> SafetensorsReader::to_f32(const TensorInfo& tensor) const {
  const auto raw = bytes(tensor);
  const size_t n = static_cast<size_t>(tensor.numel());
  const std::byte* p = raw.data();
  std::vector<float> out(n);
  const size_t step = dtype_size(tensor.dtype);
  for (size_t i = 0; i < n; ++i, p += step) {
    switch (tensor.dtype) {
      case DType::kBool:
        out[i] = load<uint8_t>(p) != 0 ? 1.0f : 0.0f;
        break;
      case DType::kU8:
        out[i] = static_cast<float>(load<uint8_t>(p));
        break;
      case DType::kI8:
        out[i] = static_cast<float>(load<int8_t>(p));
        break;
      case DType::kI16:
        out[i] = static_cast<float>(load<int16_t>(p));
        break;
      case DType::kU16:
        out[i] = static_cast<float>(load<uint16_t>(p));
        break;
      case DType::kF16:
        out[i] = f16_to_f32(load<uint16_t>(p));
        break;
      case DType::kBF16:
        out[i] = bf16_to_f32(load<uint16_t>(p));
        break;
      case DType::kI32:
        out[i] = static_cast<float>(load<int32_t>(p));
        break;
      case DType::kU32:
        out[i] = static_cast<float>(load<uint32_t>(p));
        break;
      case DType::kF32:
        out[i] = load<float>(p);
        break;
      case DType::kF64:
        out[i] = static_cast<float>(load<double>(p));
        break;
      case DType::kI64:
        out[i] = static_cast<float>(load<int64_t>(p));
        break;
      case DType::kU64:
        out[i] = static_cast<float>(load<uint64_t>(p));
        break;
      case DType::kF8E5M2:
      case DType::kF8E4M3:
        throw Error(format("{}: tensor '{}' is {}, which cadclip does not convert to F32",
                           mapping_->path.string(), tensor.name, dtype_name(tensor.dtype)));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Writer

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<int64_t> shape,
                            std::span<const std::byte> data) {
  if (name == "__metadata__") throw Error("'__metadata__' is reserved and cannot name a tensor");
  for (const auto& p : tensors_)
    if (p.info.name == name) throw Error(format("tensor '{}' was added twice", name));
  const auto expected = byte_size(shape, dtype_size(dtype));
  if (!expected || *expected != data.size())
    throw Error(format("tensor '{}': {} bytes given, but dtype {} and that shape need {}", name,
                       data.size(), dtype_name(dtype),
                       expected ? std::to_string(*expected) : std::string("an invalid size")));
  Pending pending;
  pending.info.name = std::move(name);
  pending.info.dtype = dtype;
  pending.info.shape = std::move(shape);
  pending.data.assign(data.begin(), data.end());
  tensors_.push_back(std::move(pending));
}

void SafetensorsWriter::add_f32(std::string name, std::vector<int64_t> shape,
                                std::span<const float> values) {
  add(std::move(name), DType::kF32, std::move(shape), std::as_bytes(values));
}

void SafetensorsWriter::add_i64(std::string name, std::vector<int64_t> shape,
                                std::span<const int64_t> values) {
  add(std::move(name), DType::kI64, std::move(shape), std::as_bytes(values));
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  metadata_[std::move(key)] = std::move(value);
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  std::vector<const Pending*> order;
  for (const auto& p : tensors_) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const Pending* a, const Pending* b) {
    const size_t sa = dtype_size(a->info.dtype), sb = dtype_size(b->info.dtype);
    return sa != sb ? sa > sb : a->info.name < b->info.name;
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  uint64_t offset = 0;
  for (const Pending* p : order) {
    header[p->info.name] = {{"dtype", dtype_name(p->info.dtype)},
                            {"shape", p->info.shape},
                            {"data_offsets", {offset, offset + p->data.size()}}};
    offset += p->data.size();
  }
  std::string text = header.dump();
  // Pad with spaces so that the data buffer starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t length = text.size();

  write_file_atomic(path, [&](std::FILE* out) {
    bool ok = std::fwrite(&length, sizeof length, 1, out) == 1 &&
              std::fwrite(text.data(), 1, text.size(), out) == text.size();
    for (const Pending* p : order) {
      if (!ok) break;
      ok = p->data.empty() || std::fwrite(p->data.data(), 1, p->data.size(), out) == p->data.size();
    }
    if (!ok) throw Error(format("writing {} failed; check free disk space", path.string()));
  });
}

}  // namespace cadclip
