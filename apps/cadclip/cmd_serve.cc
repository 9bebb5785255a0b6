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
#include "option_flags.h"

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

// The connections and the work the server takes on, and their bounds.
void add_load_flags(CLI::App& command, serve::ServeOptions& o) {
  add_field(command, "--threads", o, o.threads)->capture_default_str()->check(CLI::PositiveNumber);
  add_field(command, "--header-timeout", o, o.header_timeout_s)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--body-timeout", o, o.body_timeout_s)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-connections", o, o.max_connections)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-client-connections", o, o.max_client_connections)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-in-flight", o, o.max_in_flight)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-uploads", o, o.max_uploads)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--torch-threads", o, o.torch_threads)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_field(command, "--text-matmul", o, o.text_matmul)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}));
  add_field(command, "--encoders", o, o.encoders)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-batch", o, o.max_batch)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--batch-window-ms", o, o.batch_window_ms)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_field(command, "--max-query-bytes", o, o.max_query_chars)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-k", o, o.max_k)->capture_default_str()->check(CLI::PositiveNumber);
  add_field(command, "--max-upload-mb", o, o.max_upload_mb)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

// Who may ask, how often, and what is logged.
void add_access_flags(CLI::App& command, serve::ServeOptions& o) {
  add_field(command, "--api-key-file", o, o.api_key_file)->check(CLI::ExistingFile);
  add_field(command, "--rate-limit", o, o.rate_limit);
  add_field(command, "--rate-burst", o, o.rate_burst)->check(CLI::NonNegativeNumber);
  add_switch(command, "--trust-proxy", o, o.trust_proxy);
  add_field(command, "--access-log", o, o.access_log);
}

}  // namespace

void define_serve(CLI::App& command, Runner& run) {
  auto o = std::make_shared<serve::ServeOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "index", *o, o->index)->required()->check(CLI::ExistingDirectory);
  add_field(command, "--host", *o, o->host)->capture_default_str();
  add_field(command, "--port", *o, o->port)->capture_default_str();
  add_field(command, "--checkpoint", *o, o->checkpoint);
  add_load_flags(command, *o);
  add_field(command, "--web-root", *o, o->web_root)->check(CLI::ExistingDirectory);
  add_access_flags(command, *o);
  add_field(command, "--reload-interval", *o, o->reload_interval_s)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_ingest_limit_flags(command, o->limits, "each uploaded part");
  command.footer("Prints 'serving INDEX on http://HOST:PORT/' once it listens.");
  run = config.or_print([o] { return run_serve(*o); });
}

}  // namespace cadclip::app
