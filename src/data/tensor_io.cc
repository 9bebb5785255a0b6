#include "cadclip/data/tensor_io.h"

#include <ATen/ATen.h>

#include "cadclip/core/error.h"

namespace cadclip::data {
namespace {

struct Pair {
  at::ScalarType torch;
  DType stored;
};
constexpr Pair kPairs[] = {
    {at::kFloat, DType::kF32},     {at::kDouble, DType::kF64}, {at::kHalf, DType::kF16},
    {at::kBFloat16, DType::kBF16}, {at::kLong, DType::kI64},   {at::kInt, DType::kI32},
    {at::kShort, DType::kI16},     {at::kChar, DType::kI8},    {at::kByte, DType::kU8},
    {at::kBool, DType::kBool},
};

}  // namespace

DType safetensors_dtype(const at::Tensor& tensor) {
  for (const Pair& p : kPairs)
    if (p.torch == tensor.scalar_type()) return p.stored;
  throw Error(format("a tensor of type {} cannot be stored in safetensors by cadclip",
                     c10::toString(tensor.scalar_type())));
}

void add_tensor(SafetensorsWriter& writer, const std::string& name, const at::Tensor& tensor) {
  const at::Tensor cpu = tensor.detach().to(at::kCPU).contiguous();
  const auto* bytes = static_cast<const std::byte*>(cpu.data_ptr());
  writer.add(name, safetensors_dtype(cpu), cpu.sizes().vec(),
             std::span(bytes, static_cast<size_t>(cpu.nbytes())));
}

at::Tensor read_tensor(const SafetensorsReader& file, const TensorInfo& info) {
  for (const Pair& p : kPairs) {
    if (p.stored != info.dtype) continue;
    at::Tensor out = at::empty(info.shape, at::TensorOptions().dtype(p.torch));
    const auto bytes = file.bytes(info);
    CADCLIP_CHECK(bytes.size() == static_cast<size_t>(out.nbytes()), "size of '{}'", info.name);
    if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
    return out;
  }
  throw Error(format("{}: tensor '{}' has dtype {}, which cadclip cannot load as a tensor",
                     file.path().string(), info.name, dtype_name(info.dtype)));
}

}  // namespace cadclip::data
