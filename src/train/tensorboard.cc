#include "cadclip/train/tensorboard.h"

#include <array>
#include <chrono>
#include <cstring>

#include "cadclip/core/error.h"

namespace cadclip::train {
namespace {

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82f63b78u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

uint32_t masked_crc(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// Protobuf wire format, only what an Event with scalars needs.
void varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}
void key(std::string& out, int field, int wire_type) { varint(out, (field << 3) | wire_type); }
void fixed64(std::string& out, int field, double value) {
  key(out, field, 1);
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  out.append(bytes, 8);
}
void fixed32(std::string& out, int field, float value) {
  key(out, field, 5);
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  out.append(bytes, 4);
}
void bytes_field(std::string& out, int field, const std::string& value) {
  key(out, field, 2);
  varint(out, value.size());
  out += value;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = make_table();
  uint32_t crc = 0xffffffffu;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  const auto seconds = static_cast<int64_t>(now_seconds());
  path_ = folder / ("events.out.tfevents." + std::to_string(seconds) + ".cadclip");
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) throw Error(format("cannot create {}", path_.string()));
  std::string event;  // Event{wall_time = 1, file_version = 3}
  fixed64(event, 1, now_seconds());
  bytes_field(event, 3, "brain.Event:2");
  write_record(event);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  std::string scalar;  // Summary.Value{tag = 1, simple_value = 2}
  bytes_field(scalar, 1, tag);
  fixed32(scalar, 2, static_cast<float>(value));
  std::string summary;  // Summary{value = 1}
  bytes_field(summary, 1, scalar);
  std::string event;  // Event{wall_time = 1, step = 2, summary = 5}
  fixed64(event, 1, now_seconds());
  key(event, 2, 0);
  varint(event, static_cast<uint64_t>(step));
  bytes_field(event, 5, summary);
  write_record(event);
}

void TensorBoardWriter::flush() { std::fflush(file_); }

void TensorBoardWriter::write_record(const std::string& event) {
  const uint64_t length = event.size();
  const uint32_t length_crc = masked_crc(&length, sizeof length);
  const uint32_t data_crc = masked_crc(event.data(), event.size());
  std::fwrite(&length, sizeof length, 1, file_);
  std::fwrite(&length_crc, sizeof length_crc, 1, file_);
  std::fwrite(event.data(), 1, event.size(), file_);
  std::fwrite(&data_crc, sizeof data_crc, 1, file_);
}

}  // namespace cadclip::train
