#include "cadclip/text/matmul_precision.h"

#include <ATen/Context.h>
#include <ATen/cpu/Utils.h>

#include <string>

#include "cadclip/core/error.h"
#include "layers.h"

namespace cadclip::text {

namespace {

thread_local MatmulPrecision current = MatmulPrecision::kFloat32;

bool capability(const std::unordered_map<std::string, c10::IValue>& found, const std::string& key) {
  const auto it = found.find(key);
  return it != found.end() && it->second.isBool() && it->second.toBool();
}

}  // namespace

bool cpu_has_fast_bf16() {
  static const bool fast = [] {
    if (!at::hasMKLDNN() || !detail::onednn_linear_available()) return false;
    const auto found = at::cpu::get_cpu_capabilities();
    // AMX needs the kernel's permission once per process before its first use.
    if (capability(found, "amx_bf16") && at::cpu::init_amx()) return true;
    return capability(found, "avx512_bf16");
  }();
  return fast;
}

MatmulPrecision parse_matmul_precision(std::string_view name, std::string_view source) {
  if (name == "fp32") return MatmulPrecision::kFloat32;
  if (name == "auto")
    return cpu_has_fast_bf16() ? MatmulPrecision::kBFloat16 : MatmulPrecision::kFloat32;
  if (name == "bf16") {
    if (!cpu_has_fast_bf16())
      throw Error(
          format("{}: bf16 text matmuls need a CPU with AMX or AVX512-BF16 and a LibTorch with "
                 "oneDNN, which this machine lacks (bf16 would be emulated, slower than fp32); "
                 "use fp32 or auto",
                 source));
    return MatmulPrecision::kBFloat16;
  }
  throw Error(format("{}: text matmul precision '{}' is not one of auto, fp32, bf16", source,
                     std::string(name)));
}

std::string_view matmul_precision_name(MatmulPrecision precision) {
  return precision == MatmulPrecision::kBFloat16 ? "bf16" : "fp32";
}

TextMatmulScope::TextMatmulScope(MatmulPrecision precision) : previous_(current) {
  current = precision;
}

TextMatmulScope::~TextMatmulScope() { current = previous_; }

MatmulPrecision current_matmul_precision() { return current; }

}  // namespace cadclip::text
