#include "serve/routes.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/utf8.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/result_export.h"
#include "serve/connections.h"
#include "serve/web_assets.h"

namespace cadclip::serve::detail {
namespace {

namespace fs = std::filesystem;

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

std::string url_encode(const std::string& text) {
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

}  // namespace

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_body(status, message, current_request_id()), "application/json");
  if (!res.has_header("X-Request-Id")) res.set_header("X-Request-Id", current_request_id());
  note_error(printable(message, 300));
}

InFlight::InFlight(std::atomic<int>& count, int limit, const char* what) : count_(count) {
  if (count_.fetch_add(1) >= limit) {
    count_.fetch_sub(1);
    throw HttpError{503,
                    format("the server is busy ({} {} running); try again shortly", limit, what)};
  }
}

Routes::Routes(const ServeOptions& options, index::Searcher searcher, ApiKeys keys)
    : o_(options),
      searcher_(std::move(searcher)),
      keys_(std::move(keys)),
      batcher_({.workers = options.encoders,
                .max_batch = options.max_batch,
                .max_queued = options.max_in_flight,
                .window_ms = options.batch_window_ms}),
      limiter_(options.rate_limit,
               options.rate_burst > 0 ? options.rate_burst : 2 * options.rate_limit),
      scratch_root_(make_scratch_root()) {
  if (o_.reload_interval_s > 0) reloader_ = std::thread([this] { watch_versions(); });
}

Routes::~Routes() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (reloader_.joinable()) reloader_.join();
}

void Routes::install(httplib::Server& server) {
  server.Get("/api/health", wrap([this](const auto& req, auto& res) { health(req, res); }));
  server.Get("/api/search", wrap([this](const auto& req, auto& res) {
               text_search(req.get_param_value("q"), param(req, "k"), options_of(req),
                           param(req, "format"), res);
             }));
  // The POST bodies are read here, whatever their Content-Type: httplib
  // would parse an application/x-www-form-urlencoded body (curl's default
  // for --data-binary) as a form and refuse one over 8 KiB.
  server.Post("/api/search", wrap_reader([this](const auto& req, auto& res, const auto& reader) {
                json_search(read_body(req, reader, kBufferedBody, "a search request"), res);
              }));
  server.Post("/api/search/part",
              wrap_reader([this](const auto& req, auto& res, const auto& reader) {
                part_search(req, reader, res);
              }));
  server.Get(R"(/api/similar/(.+))",
             wrap([this](const auto& req, auto& res) { similar(req.matches[1].str(), req, res); }));
  server.Get("/api/duplicates", wrap([this](const auto& req, auto& res) { duplicates(req, res); }));
  server.Get(R"(/api/items/(.+))",
             wrap([this](const auto& req, auto& res) { item(req.matches[1].str(), res); }));
  server.Get(R"(/thumbnails/(.+)\.svg)",
             wrap([this](const auto& req, auto& res) { thumbnail(req.matches[1].str(), res); }));
  server.Get(R"(/(.*))",
             wrap([this](const auto& req, auto& res) { page(req.matches[1].str(), res); }));
  // Before any handler (and before a body is read): the request id, 405
  // for a method the path does not answer, the key, and the client's rate.
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Request-Id", current_request_id());
    const std::string allowed = allowed_methods(req.path);
    if (!method_allowed(req.method, allowed)) {
      res.set_header("Allow", allowed);
      close_after_response();  // the body, if any, was not read
      send_error(res, 405,
                 format("{} is not allowed on {}; it answers {}", printable(req.method, 20),
                        printable(req.path), allowed));
      return httplib::Server::HandlerResponse::Handled;
    }
    return admitted(req, res) ? httplib::Server::HandlerResponse::Unhandled
                              : httplib::Server::HandlerResponse::Handled;
  });
}

template <class Call>
void Routes::answer_errors(const httplib::Request& req, httplib::Response& res, Call&& call) {
  try {
    call();
  } catch (const HttpError& e) {
    send_error(res, e.status, e.message);
  } catch (const Error& e) {
    send_error(res, 400, e.what());
  } catch (const std::exception& e) {
    log::error("serve", "{} {} {}: {}", current_request_id(), req.method, printable(req.path),
               printable(e.what(), 2000));
    send_error(res, 500,
               format("internal error while answering the request; the server log has it "
                      "under request {}",
                      current_request_id()));
  }
}

Routes::Handler Routes::wrap(Handler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    answer_errors(req, res, [&] { handler(req, res); });
  };
}

Routes::ReaderHandler Routes::wrap_reader(ReaderHandler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& reader) {
    answer_errors(req, res, [&] { handler(req, res, reader); });
  };
}

std::string Routes::client_address(const httplib::Request& req) const {
  if (o_.trust_proxy && req.has_header("X-Forwarded-For")) {
    const std::string chain = req.get_header_value("X-Forwarded-For");
    const size_t comma = chain.rfind(',');
    std::string last = comma == std::string::npos ? chain : chain.substr(comma + 1);
    while (!last.empty() && last.front() == ' ') last.erase(0, 1);
    if (!last.empty()) return printable(last, 64);
  }
  return req.remote_addr;
}

bool Routes::admitted(const httplib::Request& req, httplib::Response& res) {
  const std::string client = client_address(req);
  std::string key_id;
  const bool needs_key = !keys_.empty() && req.path != "/api/health" &&
                         (req.path.starts_with("/api/") || req.path.starts_with("/thumbnails/"));
  if (needs_key) {
    const std::optional<std::string> id = keys_.check(
        presented_key(req.get_header_value("Authorization"), req.get_header_value("X-API-Key")));
    if (!id) {
      note_client(client, "");
      res.set_header("WWW-Authenticate", "Bearer realm=\"cadclip\"");
      send_error(res, 401,
                 "this server needs an API key: send it as 'Authorization: Bearer KEY' or "
                 "'X-API-Key: KEY' (ask whoever runs the server for one)");
      return false;
    }
    key_id = *id;
  } else if (!keys_.empty()) {
    const std::optional<std::string> id = keys_.check(
        presented_key(req.get_header_value("Authorization"), req.get_header_value("X-API-Key")));
    if (id) key_id = *id;
  }
  note_client(client, key_id);
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

std::string Routes::param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : "";
}

std::string Routes::read_body(const httplib::Request& req, const httplib::ContentReader& reader,
                              int64_t limit, const char* what) {
  if (req.get_header_value<uint64_t>("Content-Length") > static_cast<uint64_t>(limit)) {
    close_after_response();  // not read
    throw HttpError{413, format("{} body has at most {} KiB", what, limit / 1024)};
  }
  std::string body;
  if (!reader([&](const char* data, size_t n) {
        body.append(data, n);
        return true;
      }))
    throw HttpError{400, "the request body could not be read (the connection broke or timed out)"};
  return body;
}

int64_t Routes::parse_k(const std::string& text) const {
  if (text.empty()) return 10;
  int64_t k = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
  if (ec != std::errc() || end != text.data() + text.size() || k < 1 || k > o_.max_k)
    throw HttpError{400, format("k must be a whole number from 1 to {}, not '{}'", o_.max_k,
                                printable(text, 40))};
  return k;
}

double Routes::parse_number(const std::string& text, const char* name, double low, double high) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < low ||
      value > high)
    throw HttpError{400, format("{} must be a number from {} to {}, not '{}'", name, low, high,
                                printable(text, 40))};
  return value;
}

void Routes::check_text(const std::string& q) const {
  if (q.empty()) throw HttpError{400, "the query is empty; pass some text as q"};
  if (static_cast<int64_t>(q.size()) > o_.max_query_chars)
    throw HttpError{413, format("the query has {} bytes; at most {} are accepted", q.size(),
                                o_.max_query_chars)};
  if (const auto at = data::first_invalid_utf8(q))
    throw HttpError{400, format("the query is not valid UTF-8 (byte {})", *at)};
}

index::SearchOptions Routes::options_of(const httplib::Request& req) const {
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

std::string Routes::thumbnail_url(const index::Item& item) {
  return item.thumbnail.empty() ? "" : "/thumbnails/" + url_encode(item.id) + ".svg";
}

void Routes::health(const httplib::Request& req, httplib::Response& res) const {
  const bool locked =
      !keys_.empty() && !keys_.check(presented_key(req.get_header_value("Authorization"),
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

void Routes::item(const std::string& id, httplib::Response& res) const {
  const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
  const index::Item* item = searcher->find(id);
  if (item == nullptr) throw HttpError{404, format("no part '{}' in the index", printable(id))};
  send_json(res, 200, index::item_json(*item, thumbnail_url(*item)));
}

void Routes::thumbnail(const std::string& id, httplib::Response& res) const {
  const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
  const index::Item* item = searcher->find(id);
  if (item == nullptr || item->thumbnail.empty())
    throw HttpError{404, format("no thumbnail for '{}'", printable(id))};
  const fs::path file = searcher->version_folder() / "thumbnails" / item->thumbnail;
  res.set_content(read_text_file(file), "image/svg+xml");
  res.set_header("Cache-Control", "max-age=3600");
}

void Routes::page(const std::string& name_in, httplib::Response& res) const {
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
    for (const WebAsset& asset : web_assets()) {
      if (asset.name == name) {
        res.set_content(std::string(asset.data), content_type(name));
        return;
      }
    }
  }
  throw HttpError{404, format("nothing at /{}", printable(name))};
}

void Routes::watch_versions() {
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

}  // namespace cadclip::serve::detail
