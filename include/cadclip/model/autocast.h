// Scoped autocast state: LibTorch has no RAII guard for autocast (it is a
// thread-local flag, a dtype and a nesting count), so these restore the
// previous state on every exit path, exceptions included.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace cadclip::model {

// Sets autocast for one device type to `enabled` (with `dtype` when enabled)
// until the guard dies, then restores the previous flag and dtype. Entering an
// enabled region counts one nesting level; leaving the outermost one clears
// autocast's cast cache, as torch.autocast does.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype = c10::kBFloat16);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  c10::ScalarType was_dtype_;
  bool nested_;
};

// Autocast off on CPU and CUDA: the B-Rep tower and the heads run in fp32
// even when the caller is inside a mixed-precision region.
class NoAutocast {
 public:
  NoAutocast() : cpu_(c10::DeviceType::CPU, false), cuda_(c10::DeviceType::CUDA, false) {}

 private:
  AutocastGuard cpu_;
  AutocastGuard cuda_;
};

}  // namespace cadclip::model
