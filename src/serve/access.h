// Who may ask `cadclip serve`, and how often (private to the serve layer):
// API keys read from a file and compared in constant time, and a token
// bucket per client (its key, or its address without one).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::serve::detail {

class ApiKeys {
 public:
  // One key per line; blank lines and lines starting with '#' are skipped.
  // Throws cadclip::Error for a missing or empty file, or a key shorter than
  // 16 characters. Warns when others may read the file.
  static ApiKeys read(const std::filesystem::path& file);
  ApiKeys() = default;

  bool empty() const { return digests_.empty(); }
  // The key's id (first 8 hex digits of its sha256, for logs) when `key` is
  // one of the keys; nullopt otherwise. Every stored key is compared, in time
  // that depends neither on where the keys differ nor on which one matches.
  std::optional<std::string> check(std::string_view key) const;

 private:
  std::vector<std::array<uint8_t, 32>> digests_;
};

// The key a request carries: "Authorization: Bearer KEY" or "X-API-Key: KEY".
std::string presented_key(std::string_view authorization, std::string_view api_key_header);

// True for an address that only this machine can reach (127.0.0.0/8, ::1,
// "localhost").
bool is_loopback(std::string_view host);

class RateLimiter {
 public:
  // `rate` requests per second per client on average, `burst` at once; a
  // rate of 0 lets everything through.
  RateLimiter(double rate, double burst);
  // True when `client` may make a request now; else `retry_after_s` says
  // when it may.
  bool allow(const std::string& client, double& retry_after_s);

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  double rate_, burst_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace cadclip::serve::detail
