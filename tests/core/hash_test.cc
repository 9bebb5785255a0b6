#include "cadclip/core/hash.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace cadclip {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(sha256_hex(std::string_view("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string_view("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  const std::string text = "The quick brown fox jumps over the lazy dog, 130 times.";
  for (size_t split = 0; split <= text.size(); split += 7) {
    Sha256 hash;
    hash.update(std::string_view(text).substr(0, split));
    hash.update(std::string_view(text).substr(split));
    EXPECT_EQ(hash.hex_digest(), sha256_hex(text)) << "split at " << split;
  }
}

TEST(Sha256Test, FileHashEqualsContentHash) {
  const auto path = std::filesystem::temp_directory_path() / "cadclip_hash_test.bin";
  std::string content(200000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 % 251);
  std::ofstream(path, std::ios::binary) << content;
  EXPECT_EQ(sha256_file_hex(path), sha256_hex(content));
}

}  // namespace
}  // namespace cadclip
