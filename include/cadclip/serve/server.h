// `cadclip serve`: an index over HTTP, a JSON API (docs/HTTP_API.md) and the
// web page of web/ built into the binary. Binds to 127.0.0.1 unless told
// otherwise, and beyond it only with API keys; every request is bounded
// (query length, upload size, k, requests in flight, rate per client) and
// every error is JSON with a message and the right status. A new version of
// the index is swapped in while requests keep being answered.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cadclip/data/ingest_limits.h"

namespace cadclip::serve {

struct ServeOptions {
  std::string index;                // the index folder (cadclip index)
  std::string host = "127.0.0.1";   // address to bind; 0.0.0.0 exposes the server to the network
  int port = 8600;                  // TCP port; 0 = any free port (printed when ready)
  std::string checkpoint;           // empty = the index's own (another one is refused)
  int threads = 8;                  // worker threads answering requests whose head has arrived;
                                    // connections waiting for a request hold none
  double header_timeout_s = 10;     // a request line and headers not in after this: 408, closed
  double body_timeout_s = 60;       // a request body not in this long after its headers: 408
  int max_connections = 512;        // open connections in all; more are refused with 503
  int max_client_connections = 64;  // open connections from one client address; more get 503
  int max_in_flight = 32;           // searches running or waiting at once; more get 503
  int max_uploads = 2;              // part uploads ingesting at once (a process each); more get 503
  int torch_threads = 1;            // intra-op threads per encoder (encoders run side by side)
  int encoders = 2;                 // threads encoding text queries, one batch each at a time
  int max_batch = 4;                // text queries per batch (split by length for the encoder)
  double batch_window_ms = 0;       // an idle encoder waits this long for more queries
  int64_t max_query_chars = 1000;   // longest text query, bytes
  int64_t max_k = 100;              // largest k a request may ask for
  double max_upload_mb = 20;        // largest request body (an uploaded part), MiB
  std::string web_root;             // folder of the web page; empty = the copy in the binary
  std::string worker_binary;        // cadclip executable that ingests uploads; empty = this one
  data::IngestLimits limits;        // what an uploaded part may cost to ingest
  std::string api_key_file;         // keys, one per line, that /api/ and thumbnail requests must
                                    // show (Authorization: Bearer KEY or X-API-Key: KEY);
                                    // required to bind beyond loopback; empty = no key needed
  double rate_limit = -1;           // /api/ requests per second per client (its key, else its
                                    // address), more get 429; 0 = none; < 0 = 20 beyond
                                    // loopback, none on it
  double rate_burst = 0;            // requests a client may make at once; 0 = twice the rate
  bool trust_proxy = false;         // the client address is the last X-Forwarded-For entry
                                    // (behind a reverse proxy that sets it)
  std::string access_log;           // one JSON line per request to this file; "-" = stderr
  double reload_interval_s = 2;     // look for a new index version this often and swap it in
                                    // without dropping requests; 0 = never
  // Query encoding's matmuls: fp32, bf16, or auto (bf16 where the CPU
  // multiplies it natively; cadclip/text/matmul_precision.h).
  std::string text_matmul = "auto";
};

// Its JSON form (`cadclip serve --config`), and the help of the field at
// `field` (a member of `options`), its flag's.
void to_json(nlohmann::json& json, const ServeOptions& options);
void from_json(const nlohmann::json& json, ServeOptions& options);
std::string_view field_help(const ServeOptions& options, const void* field);

// Opens the index, binds, calls `on_ready(port)` once listening, and serves
// until `stop()` is called or the process ends. Throws cadclip::Error when the
// index cannot be opened or the address cannot be bound.
void serve(const ServeOptions& options, const std::function<void(int port)>& on_ready);

// Ends a running serve() from another thread or a signal handler's helper
// thread; called before serve() listens, it makes serve() return at once.
void stop();

}  // namespace cadclip::serve
