#include "cadclip/serve/server.h"

#include <ATen/Parallel.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/utf8.h"
#include "cadclip/index/searcher.h"
#include "cadclip/serve/text_batcher.h"
#include "serve/web_assets.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;

// A request that ends in an error: its status and message.
struct HttpError {
  int status;
  std::string message;
};

std::mutex g_server_mutex;
httplib::Server* g_server = nullptr;
bool g_stop_requested = false;  // stop() came before the server listened

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", {{"status", status}, {"message", message}}}});
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

  void install(httplib::Server& server) {
    server.Get("/api/health", wrap([this](const auto&, auto& res) { health(res); }));
    server.Get("/api/search", wrap([this](const auto& req, auto& res) {
                 text_search(req.get_param_value("q"),
                             req.has_param("k") ? req.get_param_value("k") : "", res);
               }));
    server.Post("/api/search", wrap([this](const auto& req, auto& res) { json_search(req, res); }));
    server.Post("/api/search/part",
                wrap([this](const auto& req, auto& res) { part_search(req, res); }));
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
  }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Every handler's errors become JSON: ours with their status, bad input
  // (cadclip::Error) as 400, anything else as 500 without internals.
  Handler wrap(Handler handler) {
    return [handler](const httplib::Request& req, httplib::Response& res) {
      try {
        handler(req, res);
      } catch (const HttpError& e) {
        send_error(res, e.status, e.message);
      } catch (const Error& e) {
        send_error(res, 400, e.what());
      } catch (const std::exception& e) {
        log::error("serve", "{} {}: {}", req.method, req.path, e.what());
        send_error(res, 500, "internal error while answering the request; see the server log");
      }
    };
  }

  int64_t parse_k(const std::string& text) const {
    if (text.empty()) return 10;
    int64_t k = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
    if (ec != std::errc() || end != text.data() + text.size() || k < 1 || k > o_.max_k)
      throw HttpError{400, format("k must be a whole number from 1 to {}, not '{}'", o_.max_k,
                                  text.substr(0, 40))};
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
        out += format("%{:02X}", static_cast<int>(c));
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
    answer(res, {{"text", q}, {"k", k}}, hits);
  }

  void json_search(const httplib::Request& req, httplib::Response& res) {
    nlohmann::json body;
    try {
      body = nlohmann::json::parse(req.body);
    } catch (const nlohmann::json::exception& e) {
      throw HttpError{400, format("the body is not valid JSON: {}", e.what())};
    }
    if (!body.is_object() || !body.contains("q") || !body["q"].is_string())
      throw HttpError{400,
                      "the body must be a JSON object with a string \"q\" (and optional \"k\")"};
    std::string k_text;
    if (body.contains("k")) {
      if (!body["k"].is_number_integer())
        throw HttpError{400, format("k must be a whole number from 1 to {}", o_.max_k)};
      k_text = std::to_string(body["k"].get<int64_t>());
    }
    text_search(body["q"].get<std::string>(), k_text, res);
  }

  void part_search(const httplib::Request& req, httplib::Response& res) {
    if (!index::can_ingest_parts())
      throw HttpError{501,
                      "this cadclip was built without Open CASCADE and cannot read part "
                      "files; search by text or by an indexed part instead"};
    std::string filename, content;
    if (req.is_multipart_form_data()) {
      if (!req.has_file("file"))
        throw HttpError{400, "the form has no field 'file' holding the part"};
      const httplib::MultipartFormData file = req.get_file_value("file");
      filename = file.filename;
      content = file.content;
    } else {
      filename = req.get_param_value("filename");
      content = req.body;
    }
    if (content.empty()) throw HttpError{400, "the uploaded part is empty"};
    // Only the extension of the client's name is used: it picks the reader.
    const std::string extension = fs::path(filename).extension().string();
    const std::string lower = [&] {
      std::string s = extension;
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }();
    static const std::set<std::string> kKnown = {".step", ".stp",  ".iges",
                                                 ".igs",  ".brep", ".json"};
    if (!kKnown.count(lower))
      throw HttpError{415, format("'{}' is no part file cadclip reads; upload .step, .stp, .iges, "
                                  ".igs, .brep or DeepCAD .json",
                                  filename.substr(0, 80))};
    const int64_t k = parse_k(req.has_param("k") ? req.get_param_value("k") : "");
    InFlight guard(in_flight_, o_.max_in_flight);
    // Each upload costs a worker process (LibTorch and Open CASCADE loaded):
    // fewer of them run at once than searches.
    InFlight upload_guard(uploads_in_flight_, o_.max_uploads, "part uploads");
    const fs::path scratch = fs::temp_directory_path() /
                             format("cadclip-upload-{}-{}", ::getpid(), uploads_.fetch_add(1));
    fs::create_directories(scratch);
    struct Cleanup {
      fs::path path;
      ~Cleanup() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
      }
    } cleanup{scratch};
    const fs::path part = scratch / ("upload" + lower);
    {
      std::ofstream file(part, std::ios::binary);
      file.write(content.data(), static_cast<std::streamsize>(content.size()));
      if (!file) throw HttpError{500, "could not store the upload on the server"};
    }
    data::BRepGraph graph;
    try {
      graph = index::ingest_isolated(part, scratch / "work", o_.worker_binary);
    } catch (const Error& e) {
      throw HttpError{422, format("the part could not be read: {}", e.what())};
    }
    answer(res, {{"part", filename}, {"faces", graph.num_faces()}, {"k", k}},
           searcher_.search(searcher_.embed_graph(graph), k));
  }

  void similar(const std::string& id, const std::string& k_text, httplib::Response& res) {
    const int64_t k = parse_k(k_text);
    if (searcher_.find(id) == nullptr)
      throw HttpError{404, format("no part '{}' in the index", id.substr(0, 200))};
    InFlight guard(in_flight_, o_.max_in_flight);
    answer(res, {{"like", id}, {"k", k}}, searcher_.search_like_item(id, k));
  }

  void item(const std::string& id, httplib::Response& res) const {
    const index::Item* item = searcher_.find(id);
    if (item == nullptr)
      throw HttpError{404, format("no part '{}' in the index", id.substr(0, 200))};
    send_json(res, 200, item_json(*item));
  }

  // The file served is the one the catalog names for a known id: no part of
  // the request path ever reaches the file system.
  void thumbnail(const std::string& id, httplib::Response& res) const {
    const index::Item* item = searcher_.find(id);
    if (item == nullptr || item->thumbnail.empty())
      throw HttpError{404, format("no thumbnail for '{}'", id.substr(0, 200))};
    const fs::path file = searcher_.folder() / "thumbnails" / item->thumbnail;
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
    throw HttpError{404, format("nothing at /{}", name.substr(0, 200))};
  }

  ServeOptions o_;
  index::Searcher searcher_;
  TextBatcher batcher_;  // after searcher_, which it uses
  std::atomic<int> in_flight_{0};
  std::atomic<int> uploads_in_flight_{0};
  std::atomic<int64_t> uploads_{0};
};

}  // namespace

void serve(const ServeOptions& o, const std::function<void(int port)>& on_ready) {
  if (o.max_in_flight < 1 || o.max_uploads < 1 || o.threads < 1 || o.max_k < 1 ||
      o.max_query_chars < 1 || o.max_upload_mb <= 0 || o.encoders < 1 || o.max_batch < 1 ||
      o.batch_window_ms < 0)
    throw Error(
        "serve: threads, max-in-flight, max-uploads, max-k, max-query-bytes, max-upload-mb, "
        "encoders and "
        "max-batch must be positive, and the batch window not negative");
  if (o.torch_threads > 0) at::set_num_threads(o.torch_threads);
  index::SearcherOptions searcher_options;
  searcher_options.checkpoint = o.checkpoint;
  searcher_options.max_k = o.max_k;
  searcher_options.worker_binary = o.worker_binary;
  index::Searcher searcher = index::Searcher::open(o.index, searcher_options);
  const int64_t parts = searcher.size();
  Api api(o, std::move(searcher));

  httplib::Server server;
  server.new_task_queue = [threads = o.threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(static_cast<size_t>(o.max_upload_mb * 1024 * 1024));
  // Load generators and pages keep connections open; the default of 5
  // requests per connection makes every fifth request pay a new handshake.
  server.set_keep_alive_max_count(1000);
  server.set_read_timeout(30, 0);
  server.set_write_timeout(30, 0);
  // Errors that httplib answers itself (413 over the body limit, 400 for a
  // request it cannot parse) get a JSON body too; ours already have one.
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([&o](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = format("HTTP error {}", res.status);
        if (res.status == 413)
          message = format("the request body is larger than {} MiB", o.max_upload_mb);
        if (res.status == 400) message = "the request could not be parsed";
        send_error(res, res.status, message);
        return httplib::Server::HandlerResponse::Handled;
      }));
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
  std::lock_guard lock(g_server_mutex);
  if (g_server) {
    g_server->stop();
  } else {
    g_stop_requested = true;
  }
}

}  // namespace cadclip::serve
