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
#include <cmath>
#include <condition_variable>
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
#include "cadclip/index/duplicates.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/result_export.h"
#include "cadclip/index/searcher.h"
#include "cadclip/serve/text_batcher.h"
#include "serve/access.h"
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

// The searcher the server answers from, swapped for a new index version while
// requests are answered: each request takes the current one and keeps it
// (and so its version's files) until it has answered.
class CurrentSearcher {
 public:
  explicit CurrentSearcher(index::Searcher searcher)
      : current_(std::make_shared<const index::Searcher>(std::move(searcher))) {}
  std::shared_ptr<const index::Searcher> get() const {
    std::lock_guard lock(mutex_);
    return current_;
  }
  void set(std::shared_ptr<const index::Searcher> next) {
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const index::Searcher> current_;
};

bool truthy(const std::string& text) {
  return text == "1" || text == "true" || text == "yes" || text == "on";
}

// The version number of a version name ("versions/3" -> 3; 0 for an index
// made before versions): health shows it without a path.
int64_t version_number(const std::string& name) {
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos) return 0;
  try {
    return std::stoll(name.substr(slash + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

class Api {
 public:
  Api(const ServeOptions& options, index::Searcher searcher, detail::ApiKeys keys)
      : o_(options),
        searcher_(std::move(searcher)),
        keys_(std::move(keys)),
        batcher_({.workers = options.encoders,
                  .max_batch = options.max_batch,
                  .max_queued = options.max_in_flight,
                  .window_ms = options.batch_window_ms}),
        limiter_(options.rate_limit,
                 options.rate_burst > 0 ? options.rate_burst : 2 * options.rate_limit) {
    if (o_.reload_interval_s > 0) reloader_ = std::thread([this] { watch_versions(); });
  }
  ~Api() {
    {
      std::lock_guard lock(stop_mutex_);
      stopping_ = true;
    }
    stop_.notify_all();
    if (reloader_.joinable()) reloader_.join();
  }
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  void install(httplib::Server& server) {
    server.Get("/api/health", wrap([this](const auto& req, auto& res) { health(req, res); }));
    server.Get("/api/search", wrap([this](const auto& req, auto& res) {
                 text_search(req.get_param_value("q"), param(req, "k"), options_of(req),
                             param(req, "format"), res);
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
                 similar(req.matches[1].str(), req, res);
               }));
    server.Get("/api/duplicates",
               wrap([this](const auto& req, auto& res) { duplicates(req, res); }));
    server.Get(R"(/api/items/(.+))",
               wrap([this](const auto& req, auto& res) { item(req.matches[1].str(), res); }));
    server.Get(R"(/thumbnails/(.+)\.svg)",
               wrap([this](const auto& req, auto& res) { thumbnail(req.matches[1].str(), res); }));
    server.Get(R"(/(.*))",
               wrap([this](const auto& req, auto& res) { page(req.matches[1].str(), res); }));
    // Before any handler (and before a body is read): the request id, 405
    // for a method the path does not answer, the key, and the client's rate.
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Request-Id", detail::current_request_id());
      const std::string allowed = allowed_methods(req.path);
      if (!method_allowed(req.method, allowed)) {
        res.set_header("Allow", allowed);
        detail::close_after_response();  // the body, if any, was not read
        send_error(res, 405,
                   format("{} is not allowed on {}; it answers {}", printable(req.method, 20),
                          printable(req.path), allowed));
        return httplib::Server::HandlerResponse::Handled;
      }
      return admitted(req, res) ? httplib::Server::HandlerResponse::Unhandled
                                : httplib::Server::HandlerResponse::Handled;
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

  static std::string param(const httplib::Request& req, const char* name) {
    return req.has_param(name) ? req.get_param_value(name) : "";
  }

  // The client's address as this server trusts it: behind a reverse proxy
  // (--trust-proxy) the last X-Forwarded-For entry, which the proxy wrote.
  std::string client_address(const httplib::Request& req) const {
    if (o_.trust_proxy && req.has_header("X-Forwarded-For")) {
      const std::string chain = req.get_header_value("X-Forwarded-For");
      const size_t comma = chain.rfind(',');
      std::string last = comma == std::string::npos ? chain : chain.substr(comma + 1);
      while (!last.empty() && last.front() == ' ') last.erase(0, 1);
      if (!last.empty()) return printable(last, 64);
    }
    return req.remote_addr;
  }

  // The key check and the rate limit; false when the request was answered
  // (401 or 429). The page's own files need no key: they hold no data.
  bool admitted(const httplib::Request& req, httplib::Response& res) {
    const std::string client = client_address(req);
    std::string key_id;
    const bool needs_key = !keys_.empty() && req.path != "/api/health" &&
                           (req.path.starts_with("/api/") || req.path.starts_with("/thumbnails/"));
    if (needs_key) {
      const std::optional<std::string> id = keys_.check(detail::presented_key(
          req.get_header_value("Authorization"), req.get_header_value("X-API-Key")));
      if (!id) {
        detail::note_client(client, "");
        res.set_header("WWW-Authenticate", "Bearer realm=\"cadclip\"");
        send_error(res, 401,
                   "this server needs an API key: send it as 'Authorization: Bearer KEY' or "
                   "'X-API-Key: KEY' (ask whoever runs the server for one)");
        return false;
      }
      key_id = *id;
    } else if (!keys_.empty()) {
      const std::optional<std::string> id = keys_.check(detail::presented_key(
          req.get_header_value("Authorization"), req.get_header_value("X-API-Key")));
      if (id) key_id = *id;
    }
    detail::note_client(client, key_id);
    // The API's answers cost work; the page's files and drawings are read
    // from memory and disk, and a page of results asks for 24 drawings at once.
    double retry_after = 0;
    if (req.path.starts_with("/api/") &&
        !limiter_.allow(key_id.empty() ? client : "key:" + key_id, retry_after)) {
      res.set_header("Retry-After", std::to_string(static_cast<int64_t>(std::ceil(retry_after))));
      send_error(res, 429,
                 format("too many requests from this client (at most {} per second, --rate-limit); "
                        "try again in {} s",
                        o_.rate_limit, fixed(retry_after, 1)));
      return false;
    }
    return true;
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

  static double parse_number(const std::string& text, const char* name, double low, double high) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < low ||
        value > high)
      throw HttpError{400, format("{} must be a number from {} to {}, not '{}'", name, low, high,
                                  printable(text, 40))};
    return value;
  }

  void check_text(const std::string& q) const {
    if (q.empty()) throw HttpError{400, "the query is empty; pass some text as q"};
    if (static_cast<int64_t>(q.size()) > o_.max_query_chars)
      throw HttpError{413, format("the query has {} bytes; at most {} are accepted", q.size(),
                                  o_.max_query_chars)};
    if (const auto at = data::first_invalid_utf8(q))
      throw HttpError{400, format("the query is not valid UTF-8 (byte {})", *at)};
  }

  // Filters and similarity controls from the query string: filter, min_score,
  // strict (the facts the text states as hard conditions), facts (=0: rank
  // by the embedding alone), same_size (percent), ignore_mirrored.
  index::SearchOptions options_of(const httplib::Request& req) const {
    index::SearchOptions o;
    const std::string filter = param(req, "filter");
    if (static_cast<int64_t>(filter.size()) > o_.max_query_chars)
      throw HttpError{413, format("the filter has {} bytes; at most {} are accepted", filter.size(),
                                  o_.max_query_chars)};
    if (const auto at = data::first_invalid_utf8(filter))
      throw HttpError{400, format("the filter is not valid UTF-8 (byte {})", *at)};
    o.filter = index::parse_filter(filter);
    if (req.has_param("min_score"))
      o.filter.min_score = parse_number(param(req, "min_score"), "min_score", -1, 1);
    o.strict_numbers = truthy(param(req, "strict"));
    if (req.has_param("facts")) o.rank_by_facts = truthy(param(req, "facts"));
    if (req.has_param("same_size"))
      o.same_size = parse_number(param(req, "same_size"), "same_size (percent)", 0, 99) / 100;
    o.ignore_mirrored = truthy(param(req, "ignore_mirrored"));
    return o;
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

  static std::string thumbnail_url(const index::Item& item) {
    return item.thumbnail.empty() ? "" : "/thumbnails/" + url_encode(item.id) + ".svg";
  }

  // The answer as JSON, or as a CSV catalog export (format=csv).
  void answer(httplib::Response& res, const nlohmann::json& query,
              const index::SearchResult& result, const std::string& format_name) const {
    if (format_name == "csv") {
      const std::string label = query.contains("text") ? query["text"].get<std::string>()
                                : query.contains("like")
                                    ? "like " + query["like"].get<std::string>()
                                    : "like " + query.value("part", "");
      res.status = 200;
      res.set_content(index::results_csv({{label, result}}), "text/csv; charset=utf-8");
      res.set_header("Content-Disposition", "attachment; filename=\"cadclip-results.csv\"");
      return;
    }
    if (!format_name.empty() && format_name != "json")
      throw HttpError{400,
                      format("format must be json or csv, not '{}'", printable(format_name, 20))};
    send_json(res, 200, index::result_json(query, result, thumbnail_url));
  }

  static nlohmann::json query_json(nlohmann::json base, const index::SearchOptions& o) {
    base["k"] = o.k;
    if (!o.filter.conditions.empty()) {
      index::Filter given = o.filter;
      given.min_score.reset();
      base["filter"] = given.to_string();
    }
    if (o.filter.min_score) base["min_score"] = *o.filter.min_score;
    if (o.strict_numbers) base["strict"] = true;
    if (!o.rank_by_facts) base["facts"] = false;
    if (o.same_size > 0) base["same_size"] = o.same_size * 100;
    if (o.ignore_mirrored) base["ignore_mirrored"] = true;
    return base;
  }

  void health(const httplib::Request& req, httplib::Response& res) const {
    const bool locked =
        !keys_.empty() && !keys_.check(detail::presented_key(req.get_header_value("Authorization"),
                                                             req.get_header_value("X-API-Key")));
    // Without a key a locked server says only that it is up and wants one.
    if (locked) {
      send_json(res, 200, {{"status", "ok"}, {"api_key_required", true}});
      return;
    }
    const std::shared_ptr<const index::Searcher> s = searcher_.get();
    send_json(res, 200,
              {{"status", "ok"},
               {"api_key_required", !keys_.empty()},
               {"parts", s->size()},
               {"version", version_number(s->version())},
               {"dim", s->dim()},
               {"factory", s->factory()},
               {"checkpoint", s->checkpoint_identity().substr(0, 16)},
               {"model", {{"name", s->model().name}, {"sha256", s->model().sha256}}},
               {"fields", s->fields()},
               {"part_upload", index::can_ingest_parts()},
               {"limits",
                {{"max_k", o_.max_k},
                 {"max_query_bytes", o_.max_query_chars},
                 {"max_upload_mb", o_.max_upload_mb},
                 {"max_in_flight", o_.max_in_flight},
                 {"max_uploads", o_.max_uploads},
                 {"rate_limit", o_.rate_limit}}}});
  }

  void text_search(const std::string& q, const std::string& k_text, index::SearchOptions options,
                   const std::string& format_name, httplib::Response& res) {
    check_text(q);
    options.k = parse_k(k_text);
    if (options.same_size > 0 || options.ignore_mirrored)
      throw HttpError{400,
                      "same_size and ignore_mirrored compare with a part: use them with "
                      "/api/similar/ID or /api/search/part"};
    InFlight guard(in_flight_, o_.max_in_flight);
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    index::SearchResult result;
    try {
      result = batcher_.search(searcher, q, options);
    } catch (const Busy& e) {
      throw HttpError{503, e.what()};
    }
    // q is valid UTF-8 (check_text); `searcher` holds the hits' parts until answered.
    answer(res, query_json({{"text", q}}, options), result, format_name);
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
                      "the body must be a JSON object with a string \"q\" (and optional \"k\", "
                      "\"filter\", \"min_score\", \"strict\", \"facts\", \"format\")"};
    std::string k_text;
    if (body.contains("k")) {
      // As written (dump): a number past int64, an unsigned JSON integer, must
      // not wrap around into another number on its way to parse_k.
      if (!body["k"].is_number_integer())
        throw HttpError{400, format("k must be a whole number from 1 to {}, not '{}'", o_.max_k,
                                    printable(body["k"].dump(), 40))};
      k_text = body["k"].dump();
    }
    index::SearchOptions options;
    if (body.contains("filter")) {
      if (!body["filter"].is_string())
        throw HttpError{400, "\"filter\" must be a string such as \"size<100 holes>=6\""};
      options.filter = index::parse_filter(body["filter"].get<std::string>());
    }
    if (body.contains("min_score")) {
      if (!body["min_score"].is_number() || body["min_score"].get<double>() < -1 ||
          body["min_score"].get<double>() > 1)
        throw HttpError{400, "\"min_score\" must be a number from -1 to 1"};
      options.filter.min_score = body["min_score"].get<double>();
    }
    if (body.contains("strict")) {
      if (!body["strict"].is_boolean()) throw HttpError{400, "\"strict\" must be true or false"};
      options.strict_numbers = body["strict"].get<bool>();
    }
    if (body.contains("facts")) {
      if (!body["facts"].is_boolean()) throw HttpError{400, "\"facts\" must be true or false"};
      options.rank_by_facts = body["facts"].get<bool>();
    }
    std::string format_name;
    if (body.contains("format")) {
      if (!body["format"].is_string())
        throw HttpError{400, "\"format\" must be \"json\" or \"csv\""};
      format_name = body["format"].get<std::string>();
    }
    text_search(body["q"].get<std::string>(), k_text, options, format_name, res);
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
    index::SearchOptions options = options_of(req);
    options.k = parse_k(param(req, "k"));
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
      graph = index::ingest_isolated(part, o_.worker_binary, o_.limits);
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
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    answer(res,
           query_json({{"part", printable(filename, 200)}, {"faces", graph.num_faces()}}, options),
           searcher->query_graph(graph, options), param(req, "format"));
  }

  void similar(const std::string& id, const httplib::Request& req, httplib::Response& res) {
    index::SearchOptions options = options_of(req);
    options.k = parse_k(param(req, "k"));
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    if (searcher->find(id) == nullptr)
      throw HttpError{404, format("no part '{}' in the index", printable(id))};
    InFlight guard(in_flight_, o_.max_in_flight);
    answer(res, query_json({{"like", id}}, options), searcher->query_item(id, options),
           param(req, "format"));
  }

  // Duplicate clusters of the current version, computed once per version and
  // options (one computation at a time; on 100,000 parts it takes seconds).
  void duplicates(const httplib::Request& req, httplib::Response& res) {
    index::DuplicateOptions options;
    if (req.has_param("kinds")) {
      const std::string kinds = param(req, "kinds");
      options.exact = kinds.find("exact") != std::string::npos;
      options.mirrored = kinds.find("mirrored") != std::string::npos;
      options.near = kinds.find("near") != std::string::npos;
      if (!options.exact && !options.mirrored && !options.near)
        throw HttpError{400, "kinds must name one or more of exact, mirrored, near"};
    }
    if (req.has_param("min_score"))
      options.min_score = parse_number(param(req, "min_score"), "min_score", -1, 1);
    if (req.has_param("size_tolerance"))
      options.size_tolerance =
          parse_number(param(req, "size_tolerance"), "size_tolerance (percent)", 0, 99) / 100;
    options.filter = options_of(req).filter;
    const int64_t limit =
        req.has_param("limit")
            ? static_cast<int64_t>(parse_number(param(req, "limit"), "limit", 1, 100000))
            : 100;
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    const std::string key =
        format("{}|{}{}{}|{}|{}|{}", searcher->version(), options.exact, options.mirrored,
               options.near, options.min_score, options.size_tolerance, options.filter.to_string());
    InFlight guard(in_flight_, o_.max_in_flight);
    std::shared_ptr<const DuplicatesAnswer> found;
    {
      std::lock_guard lock(duplicates_mutex_);
      if (!duplicates_ || duplicates_->key != key || duplicates_->searcher != searcher) {
        auto fresh = std::make_shared<DuplicatesAnswer>();
        fresh->key = key;
        fresh->searcher = searcher;
        fresh->report = index::find_duplicates(*searcher, options);
        fresh->csv = index::duplicates_csv(fresh->report);
        duplicates_ = std::move(fresh);
      }
      found = duplicates_;
    }
    if (param(req, "format") == "csv") {
      res.status = 200;
      res.set_content(found->csv, "text/csv; charset=utf-8");
      res.set_header("Content-Disposition", "attachment; filename=\"cadclip-duplicates.csv\"");
      return;
    }
    const index::DuplicateReport& r = found->report;
    nlohmann::json clusters = nlohmann::json::array();
    for (size_t c = 0; c < r.clusters.size() && static_cast<int64_t>(c) < limit; ++c) {
      nlohmann::json members = nlohmann::json::array();
      for (const index::DuplicateMember& m : r.clusters[c].members) {
        nlohmann::json j = index::item_json(*m.item, thumbnail_url(*m.item));
        j["score"] = m.score;
        members.push_back(std::move(j));
      }
      clusters.push_back({{"kind", r.clusters[c].kind},
                          {"min_score", r.clusters[c].min_score},
                          {"members", std::move(members)}});
    }
    send_json(res, 200,
              {{"parts", r.parts},
               {"parts_in_clusters",
                {{"exact", r.exact_parts}, {"mirrored", r.mirrored_parts}, {"near", r.near_parts}}},
               {"clusters_total", r.clusters.size()},
               {"seconds", r.seconds},
               {"clusters", std::move(clusters)}});
  }

  void item(const std::string& id, httplib::Response& res) const {
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    const index::Item* item = searcher->find(id);
    if (item == nullptr) throw HttpError{404, format("no part '{}' in the index", printable(id))};
    send_json(res, 200, index::item_json(*item, thumbnail_url(*item)));
  }

  // The file served is the one the catalog names for a known id: no part of
  // the request path ever reaches the file system.
  void thumbnail(const std::string& id, httplib::Response& res) const {
    const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
    const index::Item* item = searcher->find(id);
    if (item == nullptr || item->thumbnail.empty())
      throw HttpError{404, format("no thumbnail for '{}'", printable(id))};
    const fs::path file = searcher->version_folder() / "thumbnails" / item->thumbnail;
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

  // Swaps in each new version of the index as `cadclip index` writes it.
  // Requests already answering keep the searcher they took; the old
  // version's files go when the last of them is done.
  void watch_versions() {
    const auto interval = std::chrono::duration<double>(o_.reload_interval_s);
    std::string failed_on;  // a version that could not be opened, reported once
    std::unique_lock lock(stop_mutex_);
    while (!stop_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      try {
        const std::shared_ptr<const index::Searcher> now = searcher_.get();
        if (std::optional<index::Searcher> next = now->reopen_if_changed()) {
          log::info("serve", "now answering from {} of {} ({} parts, before {})", next->version(),
                    o_.index, next->size(), now->version());
          searcher_.set(std::make_shared<const index::Searcher>(std::move(*next)));
          failed_on.clear();
        }
      } catch (const std::exception& e) {
        const std::string message = e.what();
        if (message != failed_on)
          log::warn("serve",
                    "a new version of {} could not be opened, answering from the one "
                    "before: {}",
                    o_.index, printable(message, 500));
        failed_on = message;
      }
      lock.lock();
    }
  }

  // The last duplicates answer, with the searcher its members point into.
  struct DuplicatesAnswer {
    std::string key;
    std::shared_ptr<const index::Searcher> searcher;
    index::DuplicateReport report;
    std::string csv;
  };

  ServeOptions o_;
  CurrentSearcher searcher_;
  detail::ApiKeys keys_;
  std::mutex duplicates_mutex_;
  std::shared_ptr<const DuplicatesAnswer> duplicates_;
  TextBatcher batcher_;
  detail::RateLimiter limiter_;
  const ScratchDir scratch_root_{make_scratch_root()};  // removed with the server
  std::atomic<int> in_flight_{0};
  std::atomic<int> uploads_in_flight_{0};
  std::atomic<int64_t> uploads_{0};
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread reloader_;  // last: started once everything above exists
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
  if (!detail::is_loopback(o.host) && o.api_key_file.empty())
    throw Error(
        format("serve: binding to {} lets other machines query the index; give --api-key-file FILE "
               "(one key per line, at least 16 characters; e.g. `openssl rand -hex 32 > FILE`) so "
               "that every request needs a key, or bind to 127.0.0.1 behind a reverse proxy "
               "(docs/HTTP_API.md, \"A team server\")",
               o.host));
  ServeOptions options = o;
  if (options.rate_limit < 0) options.rate_limit = detail::is_loopback(o.host) ? 0 : 20;
  if (!(options.reload_interval_s >= 0) || options.rate_burst < 0)
    throw Error("serve: the reload interval and the rate burst must not be negative");
  // Before the index and the model load: a bad key file fails at once.
  detail::ApiKeys keys;
  if (!o.api_key_file.empty()) keys = detail::ApiKeys::read(o.api_key_file);
  if (o.torch_threads > 0) at::set_num_threads(o.torch_threads);
  index::SearcherOptions searcher_options;
  searcher_options.checkpoint = o.checkpoint;
  searcher_options.max_k = o.max_k;
  searcher_options.worker_binary = o.worker_binary;
  searcher_options.limits = o.limits;
  index::Searcher searcher = index::Searcher::open(o.index, searcher_options);
  const int64_t parts = searcher.size();
  Api api(options, std::move(searcher), std::move(keys));

  detail::ConnectionOptions connections;
  connections.threads = o.threads;
  connections.header_timeout_s = o.header_timeout_s;
  connections.body_timeout_s = o.body_timeout_s;
  connections.max_connections = o.max_connections;
  connections.max_client_connections = o.max_client_connections;
  connections.max_body_bytes = static_cast<int64_t>(o.max_upload_mb * 1024 * 1024);
  connections.max_large_bodies = o.max_uploads;
  connections.access_log = o.access_log;
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
  server.widen_listen_backlog();
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
