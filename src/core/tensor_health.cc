#include "cadclip/core/tensor_health.h"

#include <cmath>
#include <cstring>

#include "cadclip/core/format.h"

namespace cadclip {
namespace {
template <class Bits, class Decode>
void count(std::span<const std::byte> bytes, TensorHealth& health, Decode decode) {
  const size_t n = bytes.size() / sizeof(Bits);
  for (size_t i = 0; i < n; ++i) {
    Bits bits;
    std::memcpy(&bits, bytes.data() + i * sizeof(Bits), sizeof(Bits));
    const double value = decode(bits);
    if (std::isnan(value))
      ++health.nan;
    else if (std::isinf(value))
      ++health.inf;
  }
}
}  // namespace

HealthReport scan_health(const SafetensorsReader& file) {
  HealthReport report;
  for (const TensorInfo& tensor : file.tensors()) {
    TensorHealth health{tensor.name, tensor.numel(), 0, 0};
    const auto bytes = file.bytes(tensor);
    switch (tensor.dtype) {
      case DType::kF32:
        count<float>(bytes, health, [](float v) { return v; });
        break;
      case DType::kF64:
        count<double>(bytes, health, [](double v) { return v; });
        break;
      case DType::kF16:
        count<uint16_t>(bytes, health, f16_to_f32);
        break;
      case DType::kBF16:
        count<uint16_t>(bytes, health, bf16_to_f32);
        break;
      default:
        break;  // integers and booleans cannot be NaN
    }
    report.tensors.push_back(std::move(health));
  }
  return report;
}

bool HealthReport::healthy() const {
  for (const auto& t : tensors)
    if (!t.healthy()) return false;
  return true;
}

std::string HealthReport::sick_summary(size_t max_names) const {
  std::string text;
  size_t sick = 0;
  for (const auto& t : tensors) {
    if (t.healthy()) continue;
    if (sick++ >= max_names) continue;
    if (!text.empty()) text += ", ";
    text += t.name + " (";
    if (t.nan > 0) text += with_commas(t.nan) + " NaN";
    if (t.nan > 0 && t.inf > 0) text += ", ";
    if (t.inf > 0) text += with_commas(t.inf) + " Inf";
    text += ")";
  }
  if (sick > max_names) text += format(" and {} more", sick - max_names);
  return text;
}

}  // namespace cadclip
