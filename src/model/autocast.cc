#include "cadclip/model/autocast.h"

#include <ATen/autocast_mode.h>

namespace cadclip::model {

AutocastGuard::AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype)
    : device_(device),
      was_enabled_(at::autocast::is_autocast_enabled(device)),
      was_dtype_(at::autocast::get_autocast_dtype(device)),
      nested_(enabled) {
  at::autocast::set_autocast_enabled(device_, enabled);
  if (enabled) {
    at::autocast::set_autocast_dtype(device_, dtype);
    at::autocast::increment_nesting();
  }
}

AutocastGuard::~AutocastGuard() {
  if (nested_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, was_enabled_);
  at::autocast::set_autocast_dtype(device_, was_dtype_);
}

}  // namespace cadclip::model
