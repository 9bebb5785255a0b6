#include "serve/connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::serve::detail {
namespace {

// A request head (request line and headers) longer than this is refused.
constexpr size_t kMaxHead = 32 * 1024;
// A refused request's body is read and dropped for this long at most, so that
// the client, still sending, gets to read the answer.
constexpr double kDrainSeconds = 5;
constexpr int64_t kMaxDrain = 64 << 20;
// A connection over the limits is held this long at most for its request
// head, and then for the client to read its 503 and close: a refusal costs a
// socket for about two seconds, never a thread.
constexpr double kRefusalSeconds = 1;

// What the worker answering a request knows about it, for the handlers and the log.
struct RequestContext {
  std::string id;
  std::string client, key;  // who asked (note_client), for the access log
  std::string error;        // the message of an error answer
  bool close = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};
thread_local RequestContext* tl_context = nullptr;

// "<6 hex digits of this server>-<n>": unique across restarts in one log.
std::string new_request_id() {
  static const std::string prefix = [] {
    char text[16];
    std::snprintf(text, sizeof text, "%06x",
                  static_cast<unsigned>(std::random_device()() & 0xffffff));
    return std::string(text);
  }();
  static std::atomic<uint64_t> counter{0};
  return prefix + "-" + std::to_string(counter.fetch_add(1) + 1);
}

// Sends what fits without waiting: the answers written here are small and go
// to a socket that has sent us a request, not read anything yet.
void send_now(int fd, const std::string& bytes) {
  [[maybe_unused]] const ssize_t n =
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

int milliseconds_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 24 * 3600 * 1000));
}

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// The address and port of a socket's peer (or its own end): "127.0.0.1", "::1".
void socket_address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* any = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, any, &length) : ::getsockname(fd, any, &length)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {0};
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    port = ntohs(in->sin6_port);
  }
  ip = text;
}

}  // namespace

const std::string& current_request_id() {
  static const std::string kNone;
  return tl_context ? tl_context->id : kNone;
}

void close_after_response() {
  if (tl_context) tl_context->close = true;
}

void note_error(std::string_view message) {
  if (tl_context) tl_context->error = std::string(message);
}

void note_client(std::string_view address, std::string_view key_id) {
  if (!tl_context) return;
  tl_context->client = std::string(address);
  tl_context->key = std::string(key_id);
}

// ---- one connection ---------------------------------------------------------

struct HttpServer::Connection {
  using Phase = ConnectionPhase;
  int fd = -1;
  std::string peer;  // client address
  int peer_port = 0;
  std::string buffer;  // bytes read and not yet consumed by a request, from `pos` on
  size_t pos = 0;
  Phase phase = Phase::kHead;
  Clock::time_point deadline;
  bool eof = false;          // the client has closed its side
  size_t head_length = 0;    // of the request being received; 0 = not complete yet
  size_t request_bytes = 0;  // head and body of the request being received
  bool large = false;        // its body is read by the worker
  bool holds_large = false;  // counted in large_bodies_
  int requests = 0;          // answered on this connection
  std::string refusal;       // over the limits: answered 503 with this once its request is in
  int64_t drained = 0, drain_limit = 0;

  size_t buffered() const { return buffer.size() - pos; }
  void compact() {
    buffer.erase(0, pos);
    pos = 0;
  }
};

namespace {

// The stream a worker answers one request through: the connection's buffered
// bytes first, then the socket, never past the request's deadline.
class RequestStream : public httplib::Stream {
 public:
  RequestStream(HttpServer::Connection& c, std::chrono::steady_clock::time_point read_deadline,
                double write_timeout_s)
      : c_(c), read_deadline_(read_deadline), write_timeout_ms_(write_timeout_s * 1000) {}

  bool is_readable() const override {
    return c_.buffered() > 0 || wait(POLLIN, milliseconds_until(read_deadline_));
  }
  bool is_writable() const override { return wait(POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (c_.buffered() > 0) {
      const size_t n = std::min(size, c_.buffered());
      std::copy_n(c_.buffer.data() + c_.pos, n, ptr);
      c_.pos += n;
      consumed_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      if (!wait(POLLIN, milliseconds_until(read_deadline_))) {
        failed_ = true;
        return -1;
      }
      const ssize_t n = ::recv(c_.fd, ptr, size, MSG_DONTWAIT);
      if (n > 0) {
        consumed_ += static_cast<size_t>(n);
        return n;
      }
      if (n == 0) {
        c_.eof = true;
        return 0;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        failed_ = true;
        return -1;
      }
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      if (!wait(POLLOUT, write_timeout_ms_)) {
        failed_ = true;
        return -1;
      }
      const ssize_t n = ::send(c_.fd, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        failed_ = true;
        return -1;
      }
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.peer;
    port = c_.peer_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    socket_address(c_.fd, /*peer=*/false, ip, port);
  }
  socket_t socket() const override { return c_.fd; }

  size_t consumed() const { return consumed_; }
  bool failed() const { return failed_; }

 private:
  bool wait(short events, int timeout_ms) const {
    pollfd p{c_.fd, events, 0};
    for (;;) {
      const int r = ::poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      return r > 0;
    }
  }

  HttpServer::Connection& c_;
  std::chrono::steady_clock::time_point read_deadline_;
  int write_timeout_ms_;
  size_t consumed_ = 0;
  bool failed_ = false;
};

}  // namespace

// httplib's accept loop hands every socket to this queue: admitting it to
// reception takes no time, so the loop never waits for a worker.
class HttpServer::InlineQueue : public httplib::TaskQueue {
 public:
  explicit InlineQueue(HttpServer& server) : server_(server) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { server_.shutdown_all(); }

 private:
  HttpServer& server_;
};

HttpServer::HttpServer(const ConnectionOptions& options) : o_(options) {
  if (o_.threads < 1 || o_.max_connections < 1 || o_.max_client_connections < 1 ||
      o_.max_large_bodies < 1 || o_.keep_alive_max < 1 || !(o_.header_timeout_s > 0) ||
      !(o_.body_timeout_s > 0) || !(o_.idle_timeout_s > 0))
    throw Error(
        "serve: threads, connection limits and timeouts must be positive (--threads, "
        "--max-connections, --max-client-connections, --header-timeout, --body-timeout)");
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(format("serve: cannot make a pipe: {}", std::strerror(errno)));
  new_task_queue = [this] { return new InlineQueue(*this); };
  if (o_.access_log == "-") {
    access_log_ = stderr;
  } else if (!o_.access_log.empty()) {
    access_log_ = std::fopen(o_.access_log.c_str(), "ae");
    if (!access_log_)
      throw Error(format("--access-log {}: cannot open it for appending: {}", o_.access_log,
                         std::strerror(errno)));
  }
  // One log line per answer; errors name their request id and message.
  set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    if (!tl_context) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                tl_context->started)
                          .count();
    log_access(tl_context->id, tl_context->client.empty() ? req.remote_addr : tl_context->client,
               tl_context->key, req.method, req.target, res.status, ms, res.body.size());
    const std::string line =
        format("{} {} {} -> {} ({} ms){}", tl_context->id, req.method, printable(req.path, 300),
               res.status, fixed(ms, 1), tl_context->error.empty() ? "" : ": " + tl_context->error);
    if (res.status >= 500) {
      log::error("serve", "{}", line);
    } else if (res.status >= 400) {
      log::info("serve", "{}", line);
    } else {
      log::debug("serve", "{}", line);
    }
  });
  reception_ = std::thread([this] { run_reception(); });
  for (int i = 0; i < o_.threads; ++i) workers_.emplace_back([this] { run_worker(); });
}

HttpServer::~HttpServer() {
  shutdown_all();
  ::close(wake_[0]);
  ::close(wake_[1]);
  if (access_log_ && access_log_ != stderr) std::fclose(access_log_);
}

void HttpServer::log_access(const std::string& id, const std::string& client,
                            const std::string& key, const std::string& method,
                            const std::string& target, int status, double ms, size_t bytes) {
  if (!access_log_) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char time[40];
  std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &utc);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%s.%03lldZ", time, static_cast<long long>(millis));
  const nlohmann::json line = {{"time", stamp},
                               {"id", id},
                               {"client", client},
                               {"key", key},
                               {"method", printable(method, 20)},
                               {"target", printable(target, 2000)},
                               {"status", status},
                               {"ms", std::round(ms * 100) / 100},
                               {"bytes", bytes}};
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(access_mutex_);
  std::fwrite(text.data(), 1, text.size(), access_log_);
  std::fflush(access_log_);
}

int HttpServer::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void HttpServer::widen_listen_backlog() {
  if (::listen(svr_sock_, o_.listen_backlog) != 0)
    log::warn("serve", "cannot widen the listen backlog to {}: {}", o_.listen_backlog,
              std::strerror(errno));
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  admit(sock);
  return true;
}

void HttpServer::admit(int fd) {
  std::string peer = "?";
  int port = 0;
  socket_address(fd, /*peer=*/true, peer, port);
  std::string refusal;
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (stopping_) {
        ::close(fd);
        return;
      }
      const int from_client = per_client_.contains(peer) ? per_client_[peer] : 0;
      if (open_ < o_.max_connections && from_client < o_.max_client_connections) {
        ++open_;
        ++per_client_[peer];
        break;
      }
      // Refused, but answered: closing a socket whose request is unread
      // resets it, and the client cannot tell that from a crash. So the
      // connection is held until its request is in and its 503 is read.
      if (refusing_ < o_.max_refusing) {
        ++refusing_;
        refusal = open_ >= o_.max_connections
                      ? format(
                            "the server has {} connections open, as many as it holds "
                            "(--max-connections); try again shortly",
                            open_)
                      : format(
                            "{} connections from {} are open, as many as one client may hold "
                            "(--max-client-connections); close some and try again",
                            from_client, peer);
        break;
      }
      // Even the refusals are at their bound: accept no more until one
      // ends; meanwhile the kernel's listen backlog holds new connections.
      // A server told to stop (httplib's stop() drops the listening socket)
      // waits no longer.
      if (svr_sock_ == INVALID_SOCKET) {
        ::close(fd);
        return;
      }
      slot_.wait_for(lock, std::chrono::milliseconds(100));
    }
  }
  auto c = std::make_shared<Connection>();
  c->fd = fd;
  c->peer = peer;
  c->peer_port = port;
  c->refusal = std::move(refusal);
  c->deadline = Clock::now() + seconds(c->refusal.empty() ? o_.header_timeout_s : kRefusalSeconds);
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(c));
  }
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
}

void HttpServer::run_reception() {
  std::vector<std::shared_ptr<Connection>> watched;
  std::vector<pollfd> fds;
  for (;;) {
    std::vector<std::shared_ptr<Connection>> arrived;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      arrived.swap(incoming_);
    }
    // A connection back from a worker may already hold its next request.
    for (auto& c : arrived) {
      if (c->buffered() > 0 && examine(c)) continue;
      watched.push_back(std::move(c));
    }
    fds.assign(1, pollfd{wake_[0], POLLIN, 0});
    Clock::time_point next = Clock::now() + std::chrono::hours(1);
    for (const auto& c : watched) {
      fds.push_back(pollfd{c->fd, POLLIN, 0});
      next = std::min(next, c->deadline);
    }
    const int r = ::poll(fds.data(), fds.size(), milliseconds_until(next));
    if (r < 0 && errno != EINTR) {
      log::error("serve", "poll failed: {}", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fds[0].revents != 0) {
      char bytes[64];
      while (::read(wake_[0], bytes, sizeof bytes) > 0) {
      }
    }
    std::vector<std::shared_ptr<Connection>> kept;
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < watched.size(); ++i) {
      const std::shared_ptr<Connection>& c = watched[i];
      if (fds[i + 1].revents != 0 && on_readable(c)) continue;
      if (c->deadline <= now) {
        on_deadline(c);
        continue;
      }
      kept.push_back(c);
    }
    watched.swap(kept);
  }
  for (auto& c : watched) close_connection(*c);
}

bool HttpServer::on_readable(const std::shared_ptr<Connection>& c) {
  char chunk[16384];
  const ssize_t n = ::recv(c->fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    close_connection(*c);
    return true;
  }
  if (c->phase == Connection::Phase::kDrain) {
    c->drained += n;
    if (n == 0 || c->drained >= c->drain_limit) {
      close_connection(*c);
      return true;
    }
    return false;
  }
  if (n == 0) {
    c->eof = true;
    if (c->buffered() == 0) {  // closed between requests: nothing to answer
      close_connection(*c);
      return true;
    }
  } else {
    c->buffer.append(chunk, static_cast<size_t>(n));
  }
  return examine(c);
}

bool HttpServer::examine(const std::shared_ptr<Connection>& c) {
  const Clock::time_point now = Clock::now();
  if (c->phase == Connection::Phase::kIdle) {
    c->phase = Connection::Phase::kHead;
    c->deadline = now + seconds(o_.header_timeout_s);
  }
  if (!c->refusal.empty()) {
    const bool head_in = head_end(c->buffer, c->pos) != std::string::npos;
    if (!head_in && !c->eof && c->buffered() <= kMaxHead) return false;
    return refuse(c, 503, c->refusal, "Retry-After: 1\r\n");
  }
  if (c->head_length == 0) {
    const size_t end = head_end(c->buffer, c->pos);
    if (end == std::string::npos) {
      if (c->buffered() > kMaxHead) {
        return refuse(
            c, 431, format("the request line and headers are longer than {} KiB", kMaxHead / 1024));
      }
      if (c->eof) {
        return refuse(c, 400,
                      "the connection ended before the request line and headers were complete");
      }
      return false;
    }
    const Head head = parse_head(std::string_view(c->buffer).substr(c->pos, end - c->pos));
    if (head.transfer_encoding) {
      return refuse(c, 411,
                    "request bodies sent with Transfer-Encoding (chunked) are not accepted; send "
                    "the body with a Content-Length");
    }
    int64_t body = 0;
    for (const std::string& text : head.content_lengths) {
      const std::optional<int64_t> value = parse_length(text);
      if (!value || (body != 0 && *value != body)) {
        return refuse(
            c, 400, format("Content-Length '{}' is not one number of bytes", printable(text, 40)));
      }
      body = *value;
    }
    if (body > o_.max_body_bytes) {
      return refuse(c, 413,
                    format("the request body ({} bytes) is larger than {} MiB, the most this "
                           "server accepts (--max-upload-mb)",
                           body, fixed(static_cast<double>(o_.max_body_bytes) / (1 << 20), 1)));
    }
    c->head_length = end - c->pos;
    c->request_bytes = c->head_length + static_cast<size_t>(body);
    c->large = body > kBufferedBody || (body > 0 && head.expect_continue);
    c->phase = Connection::Phase::kBody;
    c->deadline = now + seconds(o_.body_timeout_s);
  }
  if (c->large) {
    {
      std::lock_guard lock(mutex_);
      if (large_bodies_ < o_.max_large_bodies) {
        ++large_bodies_;
        c->holds_large = true;
      }
    }
    if (!c->holds_large) {
      return refuse(c, 503,
                    format("the server is busy ({} large request bodies being received); try "
                           "again shortly",
                           o_.max_large_bodies),
                    "Retry-After: 1\r\n");
    }
  } else if (c->buffered() < c->request_bytes) {
    if (c->eof) {
      return refuse(c, 400,
                    format("the connection ended before the request body was complete ({} of {} "
                           "bytes)",
                           c->buffered() - c->head_length, c->request_bytes - c->head_length));
    }
    return false;
  }
  {
    std::lock_guard lock(mutex_);
    ready_.push_back(c);
  }
  work_.notify_one();
  return true;
}

// A client too slow to send its request gets a 408 and is not waited for again.
void HttpServer::on_deadline(const std::shared_ptr<Connection>& c) {
  if (!c->refusal.empty() && c->phase == Connection::Phase::kHead) {
    refuse(c, 503, c->refusal, "Retry-After: 1\r\n");
  } else if (c->phase == Connection::Phase::kHead) {
    refuse(c, 408,
           format("the request line and headers did not arrive within {} s (--header-timeout)",
                  o_.header_timeout_s));
  } else if (c->phase == Connection::Phase::kBody) {
    refuse(
        c, 408,
        format("the request body did not arrive within {} s (--body-timeout)", o_.body_timeout_s));
  } else {
    close_connection(*c);
  }
}

bool HttpServer::refuse(const std::shared_ptr<Connection>& c, int status,
                        const std::string& message, const std::string& extra_headers) {
  const std::string id = new_request_id();
  log::info("serve", "{} request from {} refused -> {}: {}", id, c->peer, status, message);
  {
    const Head head = c->head_length > 0 || head_end(c->buffer, c->pos) != std::string::npos
                          ? parse_head(std::string_view(c->buffer).substr(c->pos))
                          : Head{};
    log_access(id, c->peer, "", head.method, head.target, status, 0, 0);
  }
  send_now(c->fd, http_error_response(status, message, id, extra_headers));
  if (c->eof || status == 408) {
    close_connection(*c);
    return true;
  }
  // The client may still be sending its body: read and drop it for a while
  // so that it reads the answer instead of a reset connection.
  ::shutdown(c->fd, SHUT_WR);
  c->phase = Connection::Phase::kDrain;
  c->drain_limit = kMaxDrain;
  c->deadline = Clock::now() + seconds(c->refusal.empty() ? kDrainSeconds : kRefusalSeconds);
  return false;
}

void HttpServer::run_worker() {
  for (;;) {
    std::shared_ptr<Connection> c;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;
      c = std::move(ready_.front());
      ready_.pop_front();
    }
    answer(c);
  }
}

void HttpServer::answer(const std::shared_ptr<Connection>& c) {
  RequestStream stream(*c, Clock::now() + seconds(o_.body_timeout_s), o_.write_timeout_s);
  RequestContext context;
  context.id = new_request_id();
  tl_context = &context;
  ++c->requests;
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
  }
  const bool last = c->requests >= o_.keep_alive_max || c->eof || stopping;
  bool closed = false, ok = false;
  try {
    // Answers are whole: a Range header is ignored (RFC 9110 lets a server),
    // since a slice of a JSON answer is no JSON.
    ok = process_request(stream, last, closed, [](httplib::Request& req) { req.ranges.clear(); });
  } catch (const std::exception& e) {
    log::error("serve", "{} failed: {}", context.id, printable(e.what()));
  }
  tl_context = nullptr;
  if (c->holds_large) {
    std::lock_guard lock(mutex_);
    --large_bodies_;
    c->holds_large = false;
  }
  const bool whole = stream.consumed() >= c->request_bytes;
  c->compact();
  c->head_length = 0;
  c->request_bytes = 0;
  c->large = false;
  if (!ok || closed || last || !whole || context.close || stream.failed()) {
    if (c->eof || stream.failed()) {
      close_connection(*c);
      return;
    }
    // A lingering close: closing a socket that still has unread bytes (a body
    // the answer did not need) sends a reset, which can cost the client the
    // answer it has not read yet. Reception reads and drops what still comes.
    ::shutdown(c->fd, SHUT_WR);
    c->drain_limit = kMaxDrain;
    back_to_reception(c, Connection::Phase::kDrain, kDrainSeconds);
    return;
  }
  back_to_reception(c, Connection::Phase::kIdle, o_.idle_timeout_s);
}

void HttpServer::back_to_reception(const std::shared_ptr<Connection>& c, ConnectionPhase phase,
                                   double seconds_left) {
  c->phase = phase;
  c->drained = 0;
  c->deadline = Clock::now() + seconds(seconds_left);
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
    if (!stopping) incoming_.push_back(c);
  }
  if (stopping) {
    close_connection(*c);
    return;
  }
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
}

void HttpServer::close_connection(Connection& c) {
  if (c.fd < 0) return;
  {
    std::lock_guard lock(mutex_);
    if (!c.refusal.empty()) {
      --refusing_;
    } else {
      --open_;
      if (--per_client_[c.peer] <= 0) per_client_.erase(c.peer);
    }
  }
  ::close(c.fd);
  c.fd = -1;
  slot_.notify_one();
}

void HttpServer::shutdown_all() {
  {
    std::lock_guard lock(mutex_);
    if (shut_down_) return;
    shut_down_ = stopping_ = true;
  }
  work_.notify_all();
  slot_.notify_all();
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
  if (reception_.joinable()) reception_.join();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
  std::vector<std::shared_ptr<Connection>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(incoming_);
    for (auto& c : ready_) left.push_back(c);
    ready_.clear();
  }
  for (auto& c : left) close_connection(*c);
}

}  // namespace cadclip::serve::detail
