// Test-only: the message of the cadclip::Error that a piece of work throws,
// for tests that check what an error says.
#pragma once

#include <functional>
#include <string>

#include "cadclip/core/error.h"

namespace cadclip::testing {

// "" when `work` throws nothing.
inline std::string error_of(const std::function<void()>& work) {
  try {
    work();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace cadclip::testing
