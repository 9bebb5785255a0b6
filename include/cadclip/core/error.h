// The three error tiers of docs/STYLE.md:
//   CADCLIP_CHECK  aborts with file and line when an internal invariant breaks;
//   cadclip::Error is thrown for bad input at an API boundary (caught in main
//                  and at the HTTP boundary only);
//   Status/Result  carry a per-item failure with its reason in batch jobs.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cadclip/core/format.h"

namespace cadclip {

// Bad input at an API boundary. The message says what failed, on which input,
// and what to do about it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void invariant_failed(const char* expression, const char* file, int line,
                                   const std::string& message);
}  // namespace detail

// Aborts (never throws) when `condition` is false: for states that only a
// bug in cadclip can produce. The message arguments use cadclip::format.
#define CADCLIP_CHECK(condition, ...)                                      \
  do {                                                                     \
    if (!(condition)) [[unlikely]]                                         \
      ::cadclip::detail::invariant_failed(#condition, __FILE__, __LINE__,  \
                                          ::cadclip::format(__VA_ARGS__)); \
  } while (false)

// The outcome of one item of a batch job: ok, or failed with a reason.
class Status {
 public:
  static Status ok() { return Status(); }
  static Status failure(std::string reason) { return Status(std::move(reason)); }

  bool is_ok() const { return !reason_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  // The reason of a failure; empty for ok.
  const std::string& reason() const {
    static const std::string kNone;
    return reason_ ? *reason_ : kNone;
  }

 private:
  Status() = default;
  explicit Status(std::string reason) : reason_(std::move(reason)) {}
  std::optional<std::string> reason_;
};

// A value, or the Status that explains why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)), status_(Status::ok()) {}  // NOLINT: implicit
  Result(Status failure) : status_(std::move(failure)) {                // NOLINT: implicit
    CADCLIP_CHECK(!status_.is_ok(), "a Result made from a Status must hold a failure");
  }

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    CADCLIP_CHECK(is_ok(), "value() of a failed Result: {}", status_.reason());
    return *value_;
  }
  const T& value() const& {
    CADCLIP_CHECK(is_ok(), "value() of a failed Result: {}", status_.reason());
    return *value_;
  }
  T&& value() && {
    CADCLIP_CHECK(is_ok(), "value() of a failed Result: {}", status_.reason());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace cadclip
