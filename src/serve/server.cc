#include "cadclip/serve/server.h"

#include <ATen/Parallel.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/utf8.h"
#include "cadclip/index/searcher.h"
#include "cadclip/serve/text_batcher.h"
#include "serve/connections.h"
#include "serve/web_assets.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;

// A request that ends in an error: its status and message.
struct HttpError {
  int status;
  std::string message;
};

using detail::printable;

std::mutex g_server_mutex;
httplib::Server* g_server = nullptr;
bool g_stop_requested = false;  // stop() came before the server listened

// Answers never fail to serialise: text that is not UTF-8 (an id or a query
// echoed back) has already been escaped, and what is left is replaced.
void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(detail::error_body(status, message, detail::current_request_id()),
                  "application/json");
  if (!res.has_header("X-Request-Id")) res.set_header("X-Request-Id", detail::current_request_id());
  detail::note_error(printable(message, 300));
}

// The methods a path answers, for 405 and its Allow header.
std::string allowed_methods(const std::string& path) {
  if (path == "/api/search") return "GET, HEAD, POST";
  if (path == "/api/search/part") return "POST";
  return "GET, HEAD";
}

bool method_allowed(const std::string& method, const std::string& allowed) {
  size_t start = 0;
  while (start < allowed.size()) {
    const size_t end = std::min(allowed.find(", ", start), allowed.size());
    if (allowed.compare(start, end - start, method) == 0) return true;
    start = end + 2;
  }
  return false;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// This server's scratch folder for uploads, <tmp>/cadclip-serve-<pid>; those
// of servers that died without cleaning up (killed) are removed at start.
fs::path make_scratch_root() {
  const fs::path tmp = fs::temp_directory_path();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(tmp, ec)) {
    const std::string name = entry.path().filename().string();
    std::string digits;
    for (const char* prefix : {"cadclip-serve-", "cadclip-upload-", "cadclip-like-"}) {
      if (name.starts_with(prefix)) digits = name.substr(std::string(prefix).size());
    }
    digits = digits.substr(0, digits.find('-'));
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) > 0)
      log::info("serve", "removed {}, left by a server (pid {}) that is gone",
                entry.path().string(), pid);
  }
  const fs::path root = tmp / format("cadclip-serve-{}", ::getpid());
  fs::create_directories(root);
  return root;
}

std::string content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  if (name.ends_with(".png")) return "image/png";
  return "application/octet-stream";
}

// Counts searches in flight; a request over the limit is refused, not queued,
// so that a burst cannot pile up unbounded work.
class InFlight {
 public:
  InFlight(std::atomic<int>& count, int limit, const char* what = "searches") : count_(count) {
    if (count_.fetch_add(1) >= limit) {
      count_.fetch_sub(1);
      throw HttpError{503,
                      format("the server is busy ({} {} running); try again shortly", limit, what)};
    }
  }
  ~InFlight() { count_.fetch_sub(1); }

 private:
  std::atomic<int>& count_;
};

class Api {
 public:
  Api(const ServeOptions& options, index::Searcher searcher)
      : o_(options),
        searcher_(std::move(searcher)),
        batcher_(searcher_, {.workers = options.encoders,
                             .max_batch = options.max_batch,
                             .max_queued = options.max_in_flight,
                             .window_ms = options.batch_window_ms}) {}
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  void install(httplib::Server& server) {
    server.Get("/api/health", wrap([this](const auto&, auto& res) { health(res); }));
    server.Get("/api/search", wrap([this](const auto& req, auto& res) {
                 text_search(req.get_param_value("q"),
                             req.has_param("k") ? req.get_param_value("k") : "", res);
               }));
    // The POST bodies are read here, whatever their Content-Type: httplib
    // would parse an application/x-www-form-urlencoded body (curl's default
    // for --data-binary) as a form and refuse one over 8 KiB.
    server.Post("/api/search", wrap_reader([this](const auto& req, auto& res, const auto& reader) {
                  json_search(read_body(req, reader, detail::kBufferedBody, "a search request"),
                              res);
                }));
    server.Post("/api/search/part",
                wrap_reader([this](const auto& req, auto& res, const auto& reader) {
                  part_search(req, reader, res);
                }));
    server.Get(R"(/api/similar/(.+))", wrap([this](const auto& req, auto& res) {
                 similar(req.matches[1].str(), req.has_param("k") ? req.get_param_value("k") : "",
                         res);
               }));
    server.Get(R"(/api/items/(.+))",
               wrap([this](const auto& req, auto& res) { item(req.matches[1].str(), res); }));
    server.Get(R"(/thumbnails/(.+)\.svg)",
               wrap([this](const auto& req, auto& res) { thumbnail(req.matches[1].str(), res); }));
    server.Get(R"(/(.*))",
               wrap([this](const auto& req, auto& res) { page(req.matches[1].str(), res); }));
    // Before any handler (and before a body is read): the request id, and
    // 405 for a method the path does not answer.
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Request-Id", detail::current_request_id());
      const std::string allowed = allowed_methods(req.path);
      if (method_allowed(req.method, allowed)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("Allow", allowed);
      detail::close_after_response();  // the body, if any, was not read
      send_error(res, 405,
                 format("{} is not allowed on {}; it answers {}", printable(req.method, 20),
                        printable(req.path), allowed));
      return httplib::Server::HandlerResponse::Handled;
    });
  }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using ReaderHandler = std::function<void(const httplib::Request&, httplib::Response&,
                                           const httplib::ContentReader&)>;

  // Every handler's errors become JSON: ours with their status, bad input
  // (cadclip::Error) as 400, anything else as 500 without internals (the log
  // has them, under the request id the answer names).
  template <class Call>
  static void answer_errors(const httplib::Request& req, httplib::Response& res, Call&& call) {
    try {
      call();
    } catch (const HttpError& e) {
      send_error(res, e.status, e.message);
    } catch (const Error& e) {
      send_error(res, 400, e.what());
    } catch (const std::exception& e) {
      log::error("serve", "{} {} {}: {}", detail::current_request_id(), req.method,
                 printable(req.path), printable(e.what(), 2000));
      send_error(res, 500,
                 format("internal error while answering the request; the server log has it "
                        "under request {}",
                        detail::current_request_id()));
    }
  }
  Handler wrap(Handler handler) {
    return [handler](const httplib::Request& req, httplib::Response& res) {
      answer_errors(req, res, [&] { handler(req, res); });
    };
  }
  ReaderHandler wrap_reader(ReaderHandler handler) {
    return [handler](const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& reader) {
      answer_errors(req, res, [&] { handler(req, res, reader); });
    };
  }

  // The whole body of a request that is not a form upload, at most `limit` bytes.
  static std::string read_body(const httplib::Request& req, const httplib::ContentReader& reader,
                               int64_t limit, const char* what) {
    if (req.get_header_value<uint64_t>("Content-Length") > static_cast<uint64_t>(limit)) {
      detail::close_after_response();  // not read
      throw HttpError{413, format("{} body has at most {} KiB", what, limit / 1024)};
    }
    std::string body;
    if (!reader([&](const char* data, size_t n) {
          body.append(data, n);
          return true;
        }))
      throw HttpError{400,
                      "the request body could not be read (the connection broke or timed out)"};
    return body;
  }

  int64_t parse_k(const std::string& text) const {
    if (text.empty()) return 10;
    int64_t k = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
    if (ec != std::errc() || end != text.data() + text.size() || k < 1 || k > o_.max_k)
      throw HttpError{400, format("k must be a whole number from 1 to {}, not '{}'", o_.max_k,
                                  printable(text, 40))};
    return k;
  }

  void check_text(const std::string& q) const {
    if (q.empty()) throw HttpError{400, "the query is empty; pass some text as q"};
    if (static_cast<int64_t>(q.size()) > o_.max_query_chars)
      throw HttpError{413, format("the query has {} bytes; at most {} are accepted", q.size(),
                                  o_.max_query_chars)};
    if (const auto at = data::first_invalid_utf8(q))
      throw HttpError{400, format("the query is not valid UTF-8 (byte {})", *at)};
  }

  nlohmann::json item_json(const index::Item& item) const {
    nlohmann::json j = {
        {"id", item.id},         {"name", item.name},
        {"source", item.source}, {"size_mm", {item.size_mm[0], item.size_mm[1], item.size_mm[2]}},
        {"faces", item.faces},   {"caption", item.caption},
        {"thumbnail", nullptr}};
    if (!item.thumbnail.empty()) j["thumbnail"] = "/thumbnails/" + url_encode(item.id) + ".svg";
    return j;
  }

  static std::string url_encode(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
        out += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned>(c));
        out += hex;
      }
    }
    return out;
  }

  void answer(httplib::Response& res, const nlohmann::json& query,
              const std::vector<index::Hit>& hits) const {
    nlohmann::json results = nlohmann::json::array();
    for (const index::Hit& h : hits) {
      nlohmann::json r = item_json(*h.item);
      r["rank"] = h.rank;
      r["score"] = h.score;
      results.push_back(std::move(r));
    }
    send_json(res, 200, {{"query", query}, {"results", results}});
  }

  void health(httplib::Response& res) const {
    send_json(res, 200,
              {{"status", "ok"},
               {"parts", searcher_.size()},
               {"dim", searcher_.dim()},
               {"factory", searcher_.factory()},
               {"checkpoint", searcher_.checkpoint_identity().substr(0, 16)},
               {"part_upload", index::can_ingest_parts()},
               {"limits",
                {{"max_k", o_.max_k},
                 {"max_query_bytes", o_.max_query_chars},
                 {"max_upload_mb", o_.max_upload_mb},
                 {"max_in_flight", o_.max_in_flight},
                 {"max_uploads", o_.max_uploads}}}});
  }

  void text_search(const std::string& q, const std::string& k_text, httplib::Response& res) {
    check_text(q);
    const int64_t k = parse_k(k_text);
    InFlight guard(in_flight_, o_.max_in_flight);
    std::vector<index::Hit> hits;
    try {
      hits = batcher_.search(q, k);
    } catch (const Busy& e) {
      throw HttpError{503, e.what()};
    }
    answer(res, {{"text", q}, {"k", k}}, hits);  // q is valid UTF-8 (check_text)
  }

  void json_search(const std::string& text, httplib::Response& res) {
    if (const auto at = data::first_invalid_utf8(text))
      throw HttpError{400, format("the body is not valid UTF-8 (byte {})", *at)};
    nlohmann::json body;
    try {
      body = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw HttpError{400, format("the body is not valid JSON: {}", e.what())};
    }
    if (!body.is_object() || !body.contains("q") || !body["q"].is_string())
      throw HttpError{400,
                      "the body must be a JSON object with a string \"q\" (and optional \"k\")"};
    std::string k_text;
    if (body.contains("k")) {
      // As written (dump): a number past int64, an unsigned JSON integer, must
      // not wrap around into another number on its way to parse_k.
      if (!body["k"].is_number_integer())
        throw HttpError{400, format("k must be a whole number from 1 to {}, not '{}'", o_.max_k,
                                    printable(body["k"].dump(), 40))};
      k_text = body["k"].dump();
    }
    text_search(body["q"].get<std::string>(), k_text, res);
  }

  void part_search(const httplib::Request& req, const httplib::ContentReader& reader,
                   httplib::Response& res) {
    std::string filename, content;
    bool has_file = false;
    bool read = false;
    if (req.is_multipart_form_data()) {
      std::string field;
      read = reader(
          [&](const httplib::MultipartFormData& part) {
            field = part.name;
            if (field == "file") {
              has_file = true;
              filename = part.filename;
            }
            return true;
          },
          [&](const char* data, size_t n) {
            if (field == "file") content.append(data, n);
            return true;
          });
    } else {
      read = reader([&](const char* data, size_t n) {
        content.append(data, n);
        return true;
      });
      filename = req.get_param_value("filename");
      has_file = true;
    }
    if (!read)
      throw HttpError{400,
                      "the upload could not be read (a broken multipart form, or the connection "
                      "broke or timed out)"};
    if (!index::can_ingest_parts())
      throw HttpError{501,
                      "this cadclip was built without Open CASCADE and cannot read part "
                      "files; search by text or by an indexed part instead"};
    if (!has_file) throw HttpError{400, "the form has no field 'file' holding the part"};
    if (content.empty()) throw HttpError{400, "the uploaded part is empty"};
    // Only the extension of the client's name is used: it picks the reader.
    if (!data::is_cad_path(filename))
      throw HttpError{415, format("'{}' is no part file cadclip reads; upload {}",
                                  printable(filename, 80), data::kCadExtensions)};
    const std::string lower = [&] {
      std::string s = fs::path(filename).extension().string();
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }();
    const int64_t k = parse_k(req.has_param("k") ? req.get_param_value("k") : "");
    InFlight guard(in_flight_, o_.max_in_flight);
    // Each upload costs a worker process (LibTorch and Open CASCADE loaded):
    // fewer of them run at once than searches.
    InFlight upload_guard(uploads_in_flight_, o_.max_uploads, "part uploads");
    const ScratchDir scratch(scratch_root_.path() / format("upload-{}", uploads_.fetch_add(1)));
    const fs::path part = scratch.path() / ("upload" + lower);
    {
      std::ofstream file(part, std::ios::binary);
      file.write(content.data(), static_cast<std::streamsize>(content.size()));
      if (!file) throw HttpError{500, "could not store the upload on the server"};
    }
    data::BRepGraph graph;
    try {
      graph = index::ingest_isolated(part, o_.worker_binary);
    } catch (const Error& e) {
      // The reason names the server's scratch files; the client knows its part by its name.
      std::string reason = e.what();
      const std::string shown = filename.empty() ? "the upload" : printable(filename, 80);
      replace_all(reason, part.string(), shown);
      replace_all(reason, scratch.path().string(), "(upload)");
      replace_all(reason, scratch_root_.path().string(), "(upload)");
      replace_all(reason, part.filename().string(), shown);
      throw HttpError{422, format("the part could not be read: {}", reason)};
    }
    answer(res, {{"part", printable(filename, 200)}, {"faces", graph.num_faces()}, {"k", k}},
           searcher_.search(searcher_.embed_graph(graph), k));
  }

  void similar(const std::string& id, const std::string& k_text, httplib::Response& res) {
    const int64_t k = parse_k(k_text);
    if (searcher_.find(id) == nullptr)
      throw HttpError{404, format("no part '{}' in the index", printable(id))};
    InFlight guard(in_flight_, o_.max_in_flight);
    answer(res, {{"like", id}, {"k", k}}, searcher_.search_like_item(id, k));
  }

  void item(const std::string& id, httplib::Response& res) const {
    const index::Item* item = searcher_.find(id);
    if (item == nullptr) throw HttpError{404, format("no part '{}' in the index", printable(id))};
    send_json(res, 200, item_json(*item));
  }

  // The file served is the one the catalog names for a known id: no part of
  // the request path ever reaches the file system.
  void thumbnail(const std::string& id, httplib::Response& res) const {
    const index::Item* item = searcher_.find(id);
    if (item == nullptr || item->thumbnail.empty())
      throw HttpError{404, format("no thumbnail for '{}'", printable(id))};
    const fs::path file = searcher_.version_folder() / "thumbnails" / item->thumbnail;
    res.set_content(read_text_file(file), "image/svg+xml");
    res.set_header("Cache-Control", "max-age=3600");
  }

  void page(const std::string& name_in, httplib::Response& res) const {
    const std::string name = name_in.empty() ? "index.html" : name_in;
    if (!o_.web_root.empty()) {
      // Only names of files that are directly in the web folder are served.
      for (const auto& entry : fs::directory_iterator(o_.web_root)) {
        if (entry.is_regular_file() && entry.path().filename().string() == name) {
          res.set_content(read_text_file(entry.path()), content_type(name));
          return;
        }
      }
    } else {
      for (const detail::WebAsset& asset : detail::web_assets()) {
        if (asset.name == name) {
          res.set_content(std::string(asset.data), content_type(name));
          return;
        }
      }
    }
    throw HttpError{404, format("nothing at /{}", printable(name))};
  }

  ServeOptions o_;
  index::Searcher searcher_;
  TextBatcher batcher_;                                 // after searcher_, which it uses
  const ScratchDir scratch_root_{make_scratch_root()};  // removed with the server
  std::atomic<int> in_flight_{0};
  std::atomic<int> uploads_in_flight_{0};
  std::atomic<int64_t> uploads_{0};
};

}  // namespace

void serve(const ServeOptions& o, const std::function<void(int port)>& on_ready) {
  if (o.max_in_flight < 1 || o.max_uploads < 1 || o.threads < 1 || o.max_k < 1 ||
      o.max_query_chars < 1 || o.max_upload_mb <= 0 || o.encoders < 1 || o.max_batch < 1 ||
      o.batch_window_ms < 0 || o.max_connections < 1 || o.max_client_connections < 1 ||
      !(o.header_timeout_s > 0) || !(o.body_timeout_s > 0))
    throw Error(
        "serve: threads, max-in-flight, max-uploads, max-k, max-query-bytes, max-upload-mb, "
        "encoders, max-batch, max-connections, max-client-connections and the header and body "
        "timeouts must be positive, and the batch window not negative");
  if (o.torch_threads > 0) at::set_num_threads(o.torch_threads);
  index::SearcherOptions searcher_options;
  searcher_options.checkpoint = o.checkpoint;
  searcher_options.max_k = o.max_k;
  searcher_options.worker_binary = o.worker_binary;
  index::Searcher searcher = index::Searcher::open(o.index, searcher_options);
  const int64_t parts = searcher.size();
  Api api(o, std::move(searcher));

  detail::ConnectionOptions connections;
  connections.threads = o.threads;
  connections.header_timeout_s = o.header_timeout_s;
  connections.body_timeout_s = o.body_timeout_s;
  connections.max_connections = o.max_connections;
  connections.max_client_connections = o.max_client_connections;
  connections.max_body_bytes = static_cast<int64_t>(o.max_upload_mb * 1024 * 1024);
  connections.max_large_bodies = o.max_uploads;
  detail::HttpServer server(connections);
  server.set_payload_max_length(static_cast<size_t>(connections.max_body_bytes));
  // Errors that httplib answers itself (a request line it cannot parse, a
  // target over 8 KiB, ...) get a JSON body too; ours already have one.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [&o](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = format("the request could not be answered (HTTP {})", res.status);
        if (res.status == 400) message = "the request could not be parsed as HTTP/1.1";
        if (res.status == 404) message = format("nothing at {}", printable(req.path));
        if (res.status == 413)
          message = format(
              "the request body is too large: at most {} MiB, and a form-encoded body "
              "(application/x-www-form-urlencoded) at most 8 KiB",
              o.max_upload_mb);
        if (res.status == 414) message = "the request target is longer than 8 KiB";
        send_error(res, res.status, message);
        return httplib::Server::HandlerResponse::Handled;
      }));
  // An exception that escapes a handler (none should) is a 500 with JSON and
  // a log line, never httplib's bare answer with the exception's text.
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
  api.install(server);

  const int port = o.port == 0 ? server.bind_to_any_port(o.host)
                               : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw Error(format("cannot listen on {}:{}; is the port in use? choose another with --port",
                       o.host, o.port));
  {
    std::lock_guard lock(g_server_mutex);
    if (g_stop_requested) {
      g_stop_requested = false;
      return;
    }
    g_server = &server;
  }
  log::info("serve", "{} parts from {} on http://{}:{}/", parts, o.index, o.host, port);
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
