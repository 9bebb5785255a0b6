#include "cad/prepare_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"

namespace cadclip::cad::prepare_detail {
namespace {

constexpr uint32_t kRecordMagic = 0x31524a43;  // "CJR1" as little-endian bytes
constexpr size_t kRecordHead = 16;             // magic, header length, payload length
constexpr size_t kChecksumBytes = 8;

std::string checksum(std::string_view header, std::string_view payload) {
  Sha256 sha;
  sha.update(header).update(payload);
  const auto digest = sha.digest();
  return std::string(reinterpret_cast<const char*>(digest.data()), kChecksumBytes);
}

bool pread_all(int fd, char* data, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// A record's header as written (the names of docs/FORMATS.md's failure kinds):
// "kind" is "" for prepared models, "thumbnail" is "", "ok" or the kind of
// drawing failure.
std::string header_json(const JournalEntry& e) {
  const auto name = [](const std::optional<data::IngestFailure>& f) {
    return f ? std::string(data::failure_kind_name(f->kind)) : std::string();
  };
  const nlohmann::json h = {{"path", e.path},
                            {"id", e.id},
                            {"size", e.size},
                            {"mtime_ns", e.mtime_ns},
                            {"ok", !e.failure},
                            {"kind", name(e.failure)},
                            {"reason", e.failure ? e.failure->reason : ""},
                            {"warnings", e.warnings},
                            {"seconds", e.seconds},
                            {"faces", e.faces},
                            {"edges", e.edges},
                            {"thumbnail", e.drawn ? "ok" : name(e.no_drawing)},
                            {"thumbnail_reason", e.no_drawing ? e.no_drawing->reason : ""},
                            {"svg_size", e.svg_size}};
  return h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// nullopt for a header that is no record of this format (read as a torn end).
std::optional<JournalEntry> parse_header(const std::string& text) {
  const nlohmann::json h = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!h.is_object()) return std::nullopt;
  JournalEntry e;
  e.path = h.value("path", "");
  e.id = h.value("id", "");
  e.size = h.value("size", uint64_t{0});
  e.mtime_ns = h.value("mtime_ns", int64_t{0});
  if (!h.value("ok", false)) {
    const std::optional<data::FailureKind> kind = data::failure_kind_from_name(h.value("kind", ""));
    if (!kind) return std::nullopt;
    e.failure = data::IngestFailure{*kind, h.value("reason", "")};
  }
  e.warnings = h.value("warnings", std::vector<std::string>{});
  e.seconds = h.value("seconds", 0.0);
  e.faces = h.value("faces", int64_t{0});
  e.edges = h.value("edges", int64_t{0});
  const std::string thumbnail = h.value("thumbnail", "");
  e.drawn = thumbnail == "ok";
  if (!thumbnail.empty() && !e.drawn) {
    const std::optional<data::FailureKind> kind = data::failure_kind_from_name(thumbnail);
    if (!kind) return std::nullopt;
    e.no_drawing = data::IngestFailure{*kind, h.value("thumbnail_reason", "")};
  }
  e.svg_size = h.value("svg_size", uint64_t{0});
  return e;
}

}  // namespace

Journal::Journal(const std::filesystem::path& file) : file_(file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(
        format("cannot open the prepare journal {}: {}; check that the output folder is "
               "writable",
               file.string(), std::strerror(errno)));
  struct stat st {};
  ::fstat(fd_, &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t at = 0;
  while (at + kRecordHead <= size) {
    char head[kRecordHead];
    if (!pread_all(fd_, head, kRecordHead, at)) break;
    uint32_t magic, header_size;
    uint64_t payload_size;
    std::memcpy(&magic, head, 4);
    std::memcpy(&header_size, head + 4, 4);
    std::memcpy(&payload_size, head + 8, 8);
    if (magic != kRecordMagic) break;
    const uint64_t record = kRecordHead + header_size + payload_size + kChecksumBytes;
    if (payload_size > size || record > size - at) break;
    std::string header(header_size, '\0'), payload(payload_size, '\0'), sum(kChecksumBytes, '\0');
    if (!pread_all(fd_, header.data(), header_size, at + kRecordHead) ||
        !pread_all(fd_, payload.data(), payload_size, at + kRecordHead + header_size) ||
        !pread_all(fd_, sum.data(), kChecksumBytes, at + kRecordHead + header_size + payload_size))
      break;
    if (sum != checksum(header, payload)) break;
    std::optional<JournalEntry> e = parse_header(header);
    if (!e || e->svg_size > payload_size) break;
    e->payload_offset = at + kRecordHead + header_size;
    e->payload_size = payload_size;
    entries_.push_back(std::move(*e));
    at += record;
  }
  end_ = at;
  if (at < size) {
    dropped_bytes_ = static_cast<int64_t>(size - at);
    if (::ftruncate(fd_, static_cast<off_t>(at)) != 0)
      throw Error(format("cannot cut the torn end off the prepare journal {}: {}", file.string(),
                         std::strerror(errno)));
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(JournalEntry e, std::string_view payload) {
  const std::string header = header_json(e);
  std::string record(kRecordHead, '\0');
  const uint32_t magic = kRecordMagic, header_size = static_cast<uint32_t>(header.size());
  const uint64_t payload_size = payload.size();
  std::memcpy(record.data(), &magic, 4);
  std::memcpy(record.data() + 4, &header_size, 4);
  std::memcpy(record.data() + 8, &payload_size, 8);
  record += header;
  record += payload;
  record += checksum(header, payload);
  const char* data = record.data();
  size_t left = record.size();
  uint64_t at = end_;
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, data, left, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(format("writing the prepare journal {} failed: {}; check free disk space",
                         file_.string(), std::strerror(errno)));
    data += n;
    left -= static_cast<size_t>(n);
    at += static_cast<uint64_t>(n);
  }
  e.payload_offset = end_ + kRecordHead + header.size();
  e.payload_size = payload_size;
  end_ = at;
  entries_.push_back(std::move(e));
}

std::string Journal::payload(const JournalEntry& e) const {
  std::string bytes(e.payload_size, '\0');
  if (!pread_all(fd_, bytes.data(), bytes.size(), e.payload_offset))
    throw Error(format("cannot read a record of the prepare journal {}: {}", file_.string(),
                       std::strerror(errno)));
  return bytes;
}

void Journal::sync() { ::fdatasync(fd_); }

}  // namespace cadclip::cad::prepare_detail
