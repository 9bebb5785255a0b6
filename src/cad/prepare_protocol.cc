#include "cad/prepare_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"

extern char** environ;

namespace cadclip::cad::prepare_detail {
namespace {

bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Moves a descriptor to 10 or above, so that placing the worker's end on
// descriptor 3 never meets a descriptor that is already 3.
int high_fd(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return format("killed by signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return format("exited with status {}", WEXITSTATUS(status));
  return "stopped for an unknown reason";
}

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

}  // namespace

bool send_frame(int fd, FrameKind kind, std::string_view payload) {
  char head[9];
  head[0] = static_cast<char>(kind);
  const uint64_t size = payload.size();
  std::memcpy(head + 1, &size, sizeof size);
  return send_all(fd, head, sizeof head) && send_all(fd, payload.data(), payload.size());
}

std::string join_payload(std::string_view header_json, std::string_view body) {
  const uint64_t size = header_json.size();
  std::string payload(reinterpret_cast<const char*>(&size), sizeof size);
  payload += header_json;
  payload += body;
  return payload;
}

bool split_payload(std::string_view payload, std::string_view& header_json,
                   std::string_view& body) {
  uint64_t size;
  if (payload.size() < sizeof size) return false;
  std::memcpy(&size, payload.data(), sizeof size);
  payload.remove_prefix(sizeof size);
  if (size > payload.size()) return false;
  header_json = payload.substr(0, size);
  body = payload.substr(size);
  return true;
}

std::optional<Frame> recv_frame(int fd) {
  char head[9];
  if (!recv_all(fd, head, sizeof head)) return std::nullopt;
  uint64_t size;
  std::memcpy(&size, head + 1, sizeof size);
  if (size > kMaxFramePayload) return std::nullopt;  // garbled
  // Grown as the bytes arrive: a garbled size costs no more memory than what
  // the peer really sent.
  Frame frame{static_cast<FrameKind>(head[0]), std::string()};
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  while (frame.payload.size() < size) {
    const size_t have = frame.payload.size();
    const size_t take = static_cast<size_t>(std::min(kChunk, size - have));
    frame.payload.resize(have + take);
    if (!recv_all(fd, frame.payload.data() + have, take)) return std::nullopt;
  }
  return frame;
}

std::optional<ResultHeader> parse_result_header(std::string_view json) {
  const nlohmann::json header = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) return std::nullopt;
  ResultHeader out;
  auto field = [&](const char* key, auto& value, bool (nlohmann::json::*is)() const) {
    const auto it = header.find(key);
    if (it == header.end()) return true;
    if (!((*it).*is)()) return false;
    value = it->get<std::decay_t<decltype(value)>>();
    return true;
  };
  if (!field("ok", out.ok, &nlohmann::json::is_boolean) ||
      !field("reason", out.reason, &nlohmann::json::is_string) ||
      !field("seconds", out.seconds, &nlohmann::json::is_number) ||
      !field("faces", out.faces, &nlohmann::json::is_number_integer) ||
      !field("edges", out.edges, &nlohmann::json::is_number_integer) ||
      !field("thumbnail_follows", out.thumbnail_follows, &nlohmann::json::is_boolean))
    return std::nullopt;
  if (const auto it = header.find("warnings"); it != header.end()) {
    if (!it->is_array()) return std::nullopt;
    for (const auto& warning : *it) {
      if (!warning.is_string()) return std::nullopt;
      out.warnings.push_back(warning.get<std::string>());
    }
  }
  return out;
}

WorkerProcess WorkerProcess::start(const std::string& binary) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(format("cannot create a socket for a prepare worker: {}", std::strerror(errno)));
  const int mine = high_fd(sv[0]);
  const int theirs = high_fd(sv[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs, kWorkerFd);
  // Open CASCADE writes progress chatter to stdout; the job's stdout is not its to use.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const std::string parent = std::to_string(::getpid());
  std::vector<std::string> args = {binary, "prepare-worker", "--parent", parent};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(theirs);
  if (rc != 0) {
    ::close(mine);
    throw Error(
        format("cannot start the prepare worker {}: {}; pass the cadclip executable as the "
               "worker binary",
               binary, std::strerror(rc)));
  }
  WorkerProcess worker;
  worker.pid_ = pid;
  worker.fd_ = mine;
  return worker;
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), fd_(std::exchange(other.fd_, -1)) {}

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& other) noexcept {
  if (this != &other) {
    if (running()) kill_now();
    close_fd();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WorkerProcess::~WorkerProcess() {
  if (running()) kill_now();
  close_fd();
}

void WorkerProcess::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void WorkerProcess::kill_now() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  close_fd();
}

std::string WorkerProcess::reap() {
  std::string how = "gone";
  if (pid_ > 0) {
    int status = 0;
    // The socket closed first; give the kernel a moment to finish the exit.
    for (int i = 0; i < 200; ++i) {
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        how = describe_status(status);
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      how = "closed its socket and did not exit";
      kill_now();
    }
  }
  close_fd();
  return how;
}

void WorkerProcess::finish() {
  close_fd();
  if (pid_ > 0) reap();
}

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
    const nlohmann::json h = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
    if (!h.is_object()) break;
    JournalEntry e;
    e.path = h.value("path", "");
    e.id = h.value("id", "");
    e.size = h.value("size", uint64_t{0});
    e.mtime_ns = h.value("mtime_ns", int64_t{0});
    e.ok = h.value("ok", false);
    e.kind = h.value("kind", "");
    e.reason = h.value("reason", "");
    e.warnings = h.value("warnings", std::vector<std::string>{});
    e.seconds = h.value("seconds", 0.0);
    e.faces = h.value("faces", int64_t{0});
    e.edges = h.value("edges", int64_t{0});
    e.thumbnail = h.value("thumbnail", "");
    e.thumbnail_reason = h.value("thumbnail_reason", "");
    e.svg_size = h.value("svg_size", uint64_t{0});
    if (e.svg_size > payload_size) break;
    e.payload_offset = at + kRecordHead + header_size;
    e.payload_size = payload_size;
    entries_.push_back(std::move(e));
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
  const nlohmann::json h = {{"path", e.path},
                            {"id", e.id},
                            {"size", e.size},
                            {"mtime_ns", e.mtime_ns},
                            {"ok", e.ok},
                            {"kind", e.kind},
                            {"reason", e.reason},
                            {"warnings", e.warnings},
                            {"seconds", e.seconds},
                            {"faces", e.faces},
                            {"edges", e.edges},
                            {"thumbnail", e.thumbnail},
                            {"thumbnail_reason", e.thumbnail_reason},
                            {"svg_size", e.svg_size}};
  const std::string header = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
