// cadclip serve INDEX: the index over HTTP, with the JSON API of
// docs/HTTP_API.md and the web page; Ctrl-C (SIGINT) or SIGTERM stops it.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/serve/server.h"
#include "command.h"
#include "ingest_flags.h"

namespace cadclip::app {
namespace {

// SIGINT/SIGTERM write a byte here; a plain thread reads it and stops the
// server. A handler (not a blocked mask and sigwait) because threads that
// exist before run_serve (LibTorch's, started at load) do not block the
// signals, and one of them taking SIGTERM ended the process uncleanly.
int g_stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
}

int run_serve(const serve::ServeOptions& o) {
  // main() makes glibc keep freed heap (up to 1 GiB per arena) for the
  // training jobs' speed. A server would then stay at the resident size of
  // its busiest moment on each of its threads' arenas: give memory back.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 32 << 20);
  mallopt(M_TOP_PAD, 1 << 20);
  // Each thread that allocates while others do gets a glibc arena of its own,
  // and each arena keeps its own fragments of the sizes it has seen: with
  // eight request threads, every uploaded part of a new size grew the server
  // until each thread had met each size (docs/ROBUSTNESS.md, the soak). Two
  // arenas hold the same work at the size of one pass.
  mallopt(M_ARENA_MAX, 2);
  if (::pipe2(g_stop_pipe, O_CLOEXEC) != 0)
    throw Error(format("serve: cannot make a pipe: {}", std::strerror(errno)));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  std::thread waiter([] {
    char byte = 0;
    while (::read(g_stop_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    serve::stop();
  });
  auto finish = [&waiter] {
    on_stop_signal(0);  // wakes the waiter when no signal came
    waiter.join();
  };
  try {
    serve::serve(o, [&o](int port) {
      std::printf("serving %s on http://%s:%d/\n", o.index.c_str(), o.host.c_str(), port);
      std::fflush(stdout);
    });
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return kExitOk;
}

}  // namespace

void define_serve(CLI::App& command, Runner& run) {
  auto o = std::make_shared<serve::ServeOptions>();
  command.add_option("index", o->index, "Index folder made by cadclip index")
      ->required()
      ->check(CLI::ExistingDirectory);
  command.add_option("--host", o->host, "Address to bind (0.0.0.0 = every interface)")
      ->capture_default_str();
  command.add_option("--port", o->port, "TCP port; 0 = any free one")->capture_default_str();
  command.add_option("--checkpoint", o->checkpoint,
                     "Checkpoint to search with; it must hold the index's weights");
  command
      .add_option("--threads", o->threads,
                  "Threads answering requests (a connection waiting for its request holds none)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--header-timeout", o->header_timeout_s,
                  "Seconds a client may take to send a request line and headers (then 408)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--body-timeout", o->body_timeout_s,
                  "Seconds a client may take to send a request body after its headers (then 408)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--max-connections", o->max_connections,
                  "Open connections in all; more are refused with 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--max-client-connections", o->max_client_connections,
                  "Open connections from one client address; more are refused with 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--max-in-flight", o->max_in_flight,
                  "Searches running or waiting at once; more get HTTP 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--max-uploads", o->max_uploads, "Part uploads read at once; more get HTTP 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--torch-threads", o->torch_threads, "Intra-op threads per encoder")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.add_option("--encoders", o->encoders, "Threads encoding text queries, a batch each")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--max-batch", o->max_batch, "Text queries per forward pass")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--batch-window-ms", o->batch_window_ms,
                  "How long an idle encoder waits for more queries to batch")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.add_option("--max-query-bytes", o->max_query_chars, "Longest text query in bytes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--max-k", o->max_k, "Largest k a request may ask for")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--max-upload-mb", o->max_upload_mb, "Largest request body, MiB")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--web-root", o->web_root,
                  "Serve the page from this folder instead of the copy in the binary")
      ->check(CLI::ExistingDirectory);
  command
      .add_option("--api-key-file", o->api_key_file,
                  "File of API keys, one per line; requests to /api/ and thumbnails must show "
                  "one (Authorization: Bearer KEY). Needed to bind beyond 127.0.0.1")
      ->check(CLI::ExistingFile);
  command.add_option("--rate-limit", o->rate_limit,
                     "Requests per second per client (its key, else its address); more get 429. "
                     "0 = no limit; default: 20 beyond loopback, none on it");
  command
      .add_option("--rate-burst", o->rate_burst,
                  "Requests a client may make at once; 0 = twice the rate")
      ->check(CLI::NonNegativeNumber);
  command.add_flag("--trust-proxy", o->trust_proxy,
                   "Take the client's address from X-Forwarded-For (behind a reverse proxy)");
  command.add_option("--access-log", o->access_log,
                     "Append one JSON line per request (time, id, client, key id, target, status, "
                     "ms) to this file; - = stderr");
  command
      .add_option("--reload-interval", o->reload_interval_s,
                  "Seconds between looks for a new index version, swapped in without dropping "
                  "requests; 0 = never")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_ingest_limit_flags(command, o->limits, "each uploaded part");
  command.footer("Prints 'serving INDEX on http://HOST:PORT/' once it listens.");
  run = [o] { return run_serve(*o); };
}

}  // namespace cadclip::app
