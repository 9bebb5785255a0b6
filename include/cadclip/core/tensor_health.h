// NaN/Inf scan of every tensor in a safetensors file: the check that keeps a
// sick checkpoint from being written or loaded (`cadclip check` prints it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cadclip/core/safetensors.h"

namespace cadclip {

struct TensorHealth {
  std::string name;
  int64_t numel = 0;
  int64_t nan = 0;  // NaN elements (floating-point dtypes only)
  int64_t inf = 0;  // +/-Inf elements
  bool healthy() const { return nan == 0 && inf == 0; }
};

struct HealthReport {
  std::vector<TensorHealth> tensors;  // every tensor, in file order
  bool healthy() const;
  // Names of the sick tensors with their counts, e.g. "w (3 NaN), b (1 Inf)".
  std::string sick_summary(size_t max_names = 10) const;
};

HealthReport scan_health(const SafetensorsReader& file);

}  // namespace cadclip
