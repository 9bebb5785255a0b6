#include "serve/access.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"

namespace cadclip::serve::detail {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::array<uint8_t, 32> digest_of(std::string_view key) { return Sha256().update(key).digest(); }

}  // namespace

ApiKeys ApiKeys::read(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    throw Error(
        format("--api-key-file {}: no such file; write one key per line (at least 16 "
               "characters each, e.g. `openssl rand -hex 32 > {}`)",
               file.string(), file.string()));
  if ((info.st_mode & 077) != 0)
    log::warn("serve", "{} can be read by other users of this machine; chmod 600 it",
              file.string());
  ApiKeys keys;
  const std::string text = read_text_file(file);
  size_t start = 0, line = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++line;
    const std::string_view key = trim(std::string_view(text).substr(start, end - start));
    start = end + 1;
    if (key.empty() || key.front() == '#') continue;
    if (key.size() < 16)
      throw Error(
          format("--api-key-file {} line {}: a key of {} characters is too easy to "
                 "guess; use at least 16 (e.g. `openssl rand -hex 32`)",
                 file.string(), line, key.size()));
    keys.digests_.push_back(digest_of(key));
  }
  if (keys.digests_.empty())
    throw Error(format("--api-key-file {} holds no key; write one key per line", file.string()));
  return keys;
}

std::optional<std::string> ApiKeys::check(std::string_view key) const {
  // Comparing digests makes the time independent of the key's length too.
  const std::array<uint8_t, 32> presented = digest_of(key);
  int found = -1;
  for (size_t k = 0; k < digests_.size(); ++k) {
    uint8_t difference = 0;
    for (size_t i = 0; i < presented.size(); ++i) difference |= presented[i] ^ digests_[k][i];
    // Branch-free: found becomes k when the difference is 0, else stays.
    const int equal = static_cast<int>((static_cast<unsigned>(difference) - 1u) >> 8) & 1;
    found = equal * static_cast<int>(k) + (1 - equal) * found;
  }
  if (key.empty() || found < 0) return std::nullopt;
  return sha256_hex(key).substr(0, 8);
}

std::string presented_key(std::string_view authorization, std::string_view api_key_header) {
  const std::string_view auth = trim(authorization);
  if (auth.size() > 7) {
    std::string scheme(auth.substr(0, 7));
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme == "bearer ") return std::string(trim(auth.substr(7)));
  }
  return std::string(trim(api_key_header));
}

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

RateLimiter::RateLimiter(double rate, double burst) : rate_(rate), burst_(std::max(1.0, burst)) {}

bool RateLimiter::allow(const std::string& client, double& retry_after_s) {
  if (rate_ <= 0) return true;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  // Clients that have been quiet long enough to hold a full bucket again
  // are forgotten, so that the table stays small.
  if (buckets_.size() > 10000) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      const double idle = std::chrono::duration<double>(now - it->second.last).count();
      it = it->second.tokens + idle * rate_ >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!fresh) {
    const double idle = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(burst_, b.tokens + idle * rate_);
    b.last = now;
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  retry_after_s = (1 - b.tokens) / rate_;
  return false;
}

}  // namespace cadclip::serve::detail
