// serve(): the HTTP server of `cadclip serve` put together from its routes
// (routes.h) and its connection handling (connections.h), and stop().
#include "cadclip/serve/server.h"

#include <ATen/Parallel.h>
#include <httplib.h>

#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "cadclip/index/searcher.h"
#include "serve/access.h"
#include "serve/connections.h"
#include "serve/routes.h"

namespace cadclip::serve {

CADCLIP_OPTION_FIELDS(
    ServeOptions, (index, "Index folder made by cadclip index"),
    (host, "Address to bind (0.0.0.0 = every interface)"), (port, "TCP port; 0 = any free one"),
    (checkpoint, "Checkpoint to search with; it must hold the index's weights"),
    (threads, "Threads answering requests (a connection waiting for its request holds none)"),
    (header_timeout_s, "Seconds a client may take to send a request line and headers (then 408)"),
    (body_timeout_s,
     "Seconds a client may take to send a request body after its headers (then 408)"),
    (max_connections, "Open connections in all; more are refused with 503"),
    (max_client_connections, "Open connections from one client address; more are refused with 503"),
    (max_in_flight, "Searches running or waiting at once; more get HTTP 503"),
    (max_uploads, "Part uploads read at once; more get HTTP 503"),
    (torch_threads, "Intra-op threads per encoder"),
    (text_matmul,
     "Query encoding's matmuls: fp32, bf16, or auto (bf16 where the CPU has AMX or AVX512-BF16)"),
    (encoders, "Threads encoding text queries, a batch each"),
    (max_batch, "Text queries per forward pass"),
    (batch_window_ms, "How long an idle encoder waits for more queries to batch"),
    (max_query_chars, "Longest text query in bytes"), (max_k, "Largest k a request may ask for"),
    (max_upload_mb, "Largest request body, MiB"),
    (web_root, "Serve the page from this folder instead of the copy in the binary"),
    (worker_binary, "cadclip executable that reads uploaded parts (default: this one)"),
    (limits, "What an uploaded part may cost to ingest"),
    (api_key_file,
     "File of API keys, one per line; requests to /api/ and thumbnails must show one "
     "(Authorization: Bearer KEY). Needed to bind beyond 127.0.0.1"),
    (rate_limit,
     "Requests per second per client (its key, else its address); more get 429. 0 = no limit; "
     "default: 20 beyond loopback, none on it"),
    (rate_burst, "Requests a client may make at once; 0 = twice the rate"),
    (trust_proxy, "Take the client's address from X-Forwarded-For (behind a reverse proxy)"),
    (access_log,
     "Append one JSON line per request (time, id, client, key id, target, status, ms) to this "
     "file; - = stderr"),
    (reload_interval_s,
     "Seconds between looks for a new index version, swapped in without dropping requests; 0 "
     "= never"))

namespace {

using detail::printable;
using detail::send_error;

std::mutex g_server_mutex;
httplib::Server* g_server = nullptr;
bool g_stop_requested = false;  // stop() came before the server listened

// The limits and the address: throws naming what is wrong before anything loads.
void check_options(const ServeOptions& o) {
  if (o.max_in_flight < 1 || o.max_uploads < 1 || o.threads < 1 || o.max_k < 1 ||
      o.max_query_chars < 1 || o.max_upload_mb <= 0 || o.encoders < 1 || o.max_batch < 1 ||
      o.batch_window_ms < 0 || o.max_connections < 1 || o.max_client_connections < 1 ||
      !(o.header_timeout_s > 0) || !(o.body_timeout_s > 0))
    throw Error(
        "serve: threads, max-in-flight, max-uploads, max-k, max-query-bytes, max-upload-mb, "
        "encoders, max-batch, max-connections, max-client-connections and the header and body "
        "timeouts must be positive, and the batch window not negative");
  if (!detail::is_loopback(o.host) && o.api_key_file.empty())
    throw Error(
        format("serve: binding to {} lets other machines query the index; give --api-key-file FILE "
               "(one key per line, at least 16 characters; e.g. `openssl rand -hex 32 > FILE`) so "
               "that every request needs a key, or bind to 127.0.0.1 behind a reverse proxy "
               "(docs/HTTP_API.md, \"A team server\")",
               o.host));
  if (!(o.reload_interval_s >= 0) || o.rate_burst < 0)
    throw Error("serve: the reload interval and the rate burst must not be negative");
}

index::Searcher open_searcher(const ServeOptions& o) {
  if (o.torch_threads > 0) at::set_num_threads(o.torch_threads);
  index::SearcherOptions searcher_options;
  searcher_options.checkpoint = o.checkpoint;
  searcher_options.max_k = o.max_k;
  searcher_options.worker_binary = o.worker_binary;
  searcher_options.limits = o.limits;
  searcher_options.text_matmul = o.text_matmul;
  return index::Searcher::open(o.index, searcher_options);
}

detail::ConnectionOptions connection_options(const ServeOptions& o) {
  detail::ConnectionOptions connections;
  connections.threads = o.threads;
  connections.header_timeout_s = o.header_timeout_s;
  connections.body_timeout_s = o.body_timeout_s;
  connections.max_connections = o.max_connections;
  connections.max_client_connections = o.max_client_connections;
  connections.max_body_bytes = static_cast<int64_t>(o.max_upload_mb * 1024 * 1024);
  connections.max_large_bodies = o.max_uploads;
  connections.access_log = o.access_log;
  return connections;
}

// Errors that httplib answers itself (a request line it cannot parse, a
// target over 8 KiB, ...) get a JSON body too, and an exception that escapes
// a handler (none should) is a 500 with JSON and a log line, never httplib's
// bare answer with the exception's text.
void answer_httplib_errors_as_json(httplib::Server& server, double max_upload_mb) {
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_upload_mb](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = format("the request could not be answered (HTTP {})", res.status);
        if (res.status == 400) message = "the request could not be parsed as HTTP/1.1";
        if (res.status == 404) message = format("nothing at {}", printable(req.path));
        if (res.status == 413)
          message = format(
              "the request body is too large: at most {} MiB, and a form-encoded body "
              "(application/x-www-form-urlencoded) at most 8 KiB",
              max_upload_mb);
        if (res.status == 414) message = "the request target is longer than 8 KiB";
        send_error(res, res.status, message);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log::error("serve", "{} {} {}: {}", detail::current_request_id(), req.method,
                   printable(req.path), printable(what, 2000));
        send_error(res, 500,
                   format("internal error while answering the request; the server log has it "
                          "under request {}",
                          detail::current_request_id()));
      });
}

// Binds to o.host:o.port (any free port for 0); the port bound.
int bind_address(detail::HttpServer& server, const ServeOptions& o) {
  const int port = o.port == 0 ? server.bind_to_any_port(o.host)
                               : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw Error(format("cannot listen on {}:{}; is the port in use? choose another with --port",
                       o.host, o.port));
  server.widen_listen_backlog();
  return port;
}

}  // namespace

void serve(const ServeOptions& o, const std::function<void(int port)>& on_ready) {
  check_options(o);
  ServeOptions options = o;
  if (options.rate_limit < 0) options.rate_limit = detail::is_loopback(o.host) ? 0 : 20;
  // Before the index and the model load: a bad key file fails at once.
  detail::ApiKeys keys;
  if (!o.api_key_file.empty()) keys = detail::ApiKeys::read(o.api_key_file);
  index::Searcher searcher = open_searcher(o);
  const int64_t parts = searcher.size();
  const std::string text_matmul(searcher.text_matmul());
  detail::Routes routes(options, std::move(searcher), std::move(keys));

  const detail::ConnectionOptions connections = connection_options(o);
  detail::HttpServer server(connections);
  server.set_payload_max_length(static_cast<size_t>(connections.max_body_bytes));
  answer_httplib_errors_as_json(server, o.max_upload_mb);
  routes.install(server);
  const int port = bind_address(server, o);
  {
    std::lock_guard lock(g_server_mutex);
    if (g_stop_requested) {
      g_stop_requested = false;
      return;
    }
    g_server = &server;
  }
  log::info("serve", "{} parts from {} on http://{}:{}/ (query encoding in {})", parts, o.index,
            o.host, port, text_matmul);
  on_ready(port);
  server.listen_after_bind();
  std::lock_guard lock(g_server_mutex);
  g_server = nullptr;
  g_stop_requested = false;
}

void stop() {
  std::unique_lock lock(g_server_mutex);
  if (!g_server) {
    g_stop_requested = true;
    return;
  }
  // httplib's stop() does nothing until listen_after_bind has marked the
  // server running, so a stop that comes just after the ready line would be
  // lost and the server would run on: wait for the mark first.
  while (g_server && !g_server->is_running()) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
  if (g_server) g_server->stop();
}

}  // namespace cadclip::serve
