// Scalars as TensorBoard event files (TFRecord of Event protobufs, written by
// hand: no TensorFlow or protobuf dependency). `tensorboard --logdir` reads them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace cadclip::train {

class TensorBoardWriter {
 public:
  // Creates <folder>/events.out.tfevents.<seconds>.cadclip. Throws cadclip::Error.
  explicit TensorBoardWriter(const std::filesystem::path& folder);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void add_scalar(const std::string& tag, double value, int64_t step);
  void flush();
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_record(const std::string& event);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// CRC-32C (Castagnoli), as TFRecord uses it; exposed for tests.
uint32_t crc32c(const void* data, size_t size);

}  // namespace cadclip::train
