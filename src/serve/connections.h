// How `cadclip serve` holds its connections (private to the serve layer): a
// reception thread keeps every open connection until a whole request head
// (and a small body) has arrived and only then hands it to a worker thread,
// so slow or idle clients hold sockets, never threads. Head, body and idle
// waits are bounded in time, connections in number (in all and per client
// address), and a request refused before it reaches a handler still gets a
// JSON error with its request id.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "serve/http_text.h"

namespace cadclip::serve::detail {

struct ConnectionOptions {
  int threads = 8;                    // worker threads answering requests whose head has arrived
  double header_timeout_s = 10;       // a request's line and headers must arrive within this
  double body_timeout_s = 60;         // its body within this once the headers are in
  double idle_timeout_s = 5;          // a kept-alive connection may wait this long for a request
  double write_timeout_s = 30;        // an answer that cannot be sent for this long is dropped
  int max_connections = 512;          // open connections, all clients together
  int max_client_connections = 64;    // open connections from one client address
  int max_refusing = 256;             // connections beyond those limits held at once only to be
                                      // answered 503 (their request read first); beyond these,
                                      // accepting pauses and the kernel queues new ones
  int listen_backlog = 1024;          // connections the kernel holds before they are accepted
                                      // (capped by net.core.somaxconn)
  int64_t max_body_bytes = 20 << 20;  // a larger Content-Length is refused with 413
  int max_large_bodies = 2;           // bodies over kBufferedBody read by workers at once
  int keep_alive_max = 1000;          // requests answered on one connection
  std::string access_log;  // one JSON line per request (answered or refused) to this file,
                           // appended; "-" = stderr; "" = none
};

// Bodies up to this size are read by the reception thread with the head, so
// the worker that answers never waits for the client.
inline constexpr int64_t kBufferedBody = 64 * 1024;

// The id of the request the calling thread is answering; "" outside one.
const std::string& current_request_id();
// Closes the connection after the current response (its body was not read).
void close_after_response();
// Remembers the error message of the current response for the log line.
void note_error(std::string_view message);
// Remembers who asks, for the access log: the client's address (as the
// server trusts it) and the id of the API key it showed ("" = none).
void note_client(std::string_view address, std::string_view key_id);

// Where a connection is: receiving a request head or a small body, idle
// between requests, or reading and dropping what a refused client still sends.
enum class ConnectionPhase { kHead, kBody, kIdle, kDrain };

class HttpServer : public httplib::Server {
 public:
  struct Connection;  // one client connection (connections.cc)

  explicit HttpServer(const ConnectionOptions& options);
  ~HttpServer() override;

  // Connections open right now (waiting in reception or being answered),
  // not counting those held only to be refused.
  int open_connections() const;
  // Call after bind_to_port (or bind_to_any_port): httplib listens with a
  // backlog of 5, and a connection that finds the backlog full is left
  // half-open, or reset, before this server has seen it.
  void widen_listen_backlog();

 private:
  class InlineQueue;
  using Clock = std::chrono::steady_clock;

  // Called by httplib's accept loop for every new socket; hands it to reception.
  bool process_and_close_socket(socket_t sock) override;

  void admit(int fd);
  void run_reception();
  void run_worker();
  // Reads what `c` has sent; true when it was dispatched to a worker or closed.
  bool on_readable(const std::shared_ptr<Connection>& c);
  // Looks at `c`'s buffer: dispatches a complete request, refuses a bad one.
  bool examine(const std::shared_ptr<Connection>& c);
  void on_deadline(const std::shared_ptr<Connection>& c);
  // Answers `c` with an error and closes it, or reads and drops what the
  // client still sends for a while first; true when `c` is closed.
  bool refuse(const std::shared_ptr<Connection>& c, int status, const std::string& message,
              const std::string& extra_headers = "");
  void answer(const std::shared_ptr<Connection>& c);
  void close_connection(Connection& c);
  // Gives `c` back to the reception thread in `phase`, waiting at most
  // `seconds_left` for what comes next.
  void back_to_reception(const std::shared_ptr<Connection>& c, ConnectionPhase phase,
                         double seconds_left);
  void shutdown_all();
  // One access-log line (nothing without --access-log).
  void log_access(const std::string& id, const std::string& client, const std::string& key,
                  const std::string& method, const std::string& target, int status, double ms,
                  size_t bytes);

  ConnectionOptions o_;
  std::FILE* access_log_ = nullptr;
  std::mutex access_mutex_;
  int wake_[2] = {-1, -1};  // a byte here wakes the reception thread

  mutable std::mutex mutex_;  // guards everything below
  bool stopping_ = false;
  bool shut_down_ = false;
  std::vector<std::shared_ptr<Connection>> incoming_;  // to be watched by reception
  std::deque<std::shared_ptr<Connection>> ready_;      // requests waiting for a worker
  std::condition_variable work_;
  std::condition_variable slot_;           // a connection closed: admit() may take the next
  std::map<std::string, int> per_client_;  // open connections by client address
  int open_ = 0;
  int refusing_ = 0;      // connections held only to be answered 503
  int large_bodies_ = 0;  // large bodies being read or answered

  std::thread reception_;
  std::vector<std::thread> workers_;
};

}  // namespace cadclip::serve::detail
