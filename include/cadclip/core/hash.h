// Content hashing for ids and duplicate detection: SHA-256 over bytes or a
// file, as lowercase hex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace cadclip {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::span<const std::byte> bytes);
  Sha256& update(std::string_view text);
  // Adds a value's bytes (integers little-endian, as stored in memory here).
  template <class T>
  Sha256& update_value(const T& value) {
    return update(std::as_bytes(std::span(&value, 1)));
  }
  std::array<uint8_t, 32> digest();  // finishes; the object is spent afterwards
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

std::string sha256_hex(std::span<const std::byte> bytes);
std::string sha256_hex(std::string_view text);
// Throws cadclip::Error naming the file when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace cadclip
