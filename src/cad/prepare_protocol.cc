#include "cad/prepare_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
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
#include "cadclip/core/json_fields.h"

extern char** environ;

namespace cadclip::cad {

// IngestOptions' JSON form (declared in cad/ingest.h) is defined here, beside
// the worker protocol that carries it, so that the protocol's fuzz target,
// built without Open CASCADE, links it too.
void to_json(nlohmann::json& json, const IngestOptions& options) {
  json = {{"assume_unit", options.assume_unit},
          {"max_faces", options.limits.max_faces},
          {"max_edges", options.limits.max_edges},
          {"deepcad_symmetric_full", options.deepcad_symmetric_full}};
}

void from_json(const nlohmann::json& json, IngestOptions& options) {
  read_json_field(json, "assume_unit", options.assume_unit);
  read_json_field(json, "max_faces", options.limits.max_faces);
  read_json_field(json, "max_edges", options.limits.max_edges);
  read_json_field(json, "deepcad_symmetric_full", options.deepcad_symmetric_full);
}

}  // namespace cadclip::cad

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

}  // namespace

std::string options_payload(const IngestOptions& ingest, int size_px, double stroke_px,
                            double margin_px) {
  nlohmann::json options = ingest;
  options["thumbnail"] = {{"size_px", size_px}, {"stroke_px", stroke_px}, {"margin_px", margin_px}};
  return options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

}  // namespace cadclip::cad::prepare_detail
