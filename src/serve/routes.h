// The HTTP API's routes (private to the serve layer): what each path answers
// (docs/HTTP_API.md), the checks every request passes before its handler
// (method, API key, rate), and the searcher they answer from, swapped for each
// new index version while requests are answered. How connections are held
// and requests read is connections.h; serve() in server.cc joins the two.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>

#include "cadclip/core/file.h"
#include "cadclip/index/duplicates.h"
#include "cadclip/index/searcher.h"
#include "cadclip/serve/server.h"
#include "cadclip/serve/text_batcher.h"
#include "serve/access.h"

namespace cadclip::serve::detail {

// A request that ends in an error: its status and message.
struct HttpError {
  int status;
  std::string message;
};

// Answers never fail to serialise: text that is not UTF-8 (an id or a query
// echoed back) has already been escaped, and what is left is replaced.
void send_json(httplib::Response& res, int status, const nlohmann::json& body);
// The API's JSON error, with the request id, noted for the log line.
void send_error(httplib::Response& res, int status, const std::string& message);

// Counts searches in flight; a request over the limit is refused, not queued,
// so that a burst cannot pile up unbounded work.
class InFlight {
 public:
  InFlight(std::atomic<int>& count, int limit, const char* what = "searches");
  ~InFlight() { count_.fetch_sub(1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

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

class Routes {
 public:
  // `options` as serve() settled them (the rate limit decided).
  Routes(const ServeOptions& options, index::Searcher searcher, ApiKeys keys);
  ~Routes();
  Routes(const Routes&) = delete;
  Routes& operator=(const Routes&) = delete;

  // Every path's handler, and the checks before them, on `server`.
  void install(httplib::Server& server);

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using ReaderHandler = std::function<void(const httplib::Request&, httplib::Response&,
                                           const httplib::ContentReader&)>;

  // Every handler's errors become JSON: ours with their status, bad input
  // (cadclip::Error) as 400, anything else as 500 without internals (the log
  // has them, under the request id the answer names).
  template <class Call>
  static void answer_errors(const httplib::Request& req, httplib::Response& res, Call&& call);
  Handler wrap(Handler handler);
  ReaderHandler wrap_reader(ReaderHandler handler);

  // ---- before the handlers (routes.cc)
  // The client's address as this server trusts it: behind a reverse proxy
  // (--trust-proxy) the last X-Forwarded-For entry, which the proxy wrote.
  std::string client_address(const httplib::Request& req) const;
  // The key check and the rate limit; false when the request was answered
  // (401 or 429). The page's own files need no key: they hold no data.
  bool admitted(const httplib::Request& req, httplib::Response& res);

  // ---- reading requests (routes.cc)
  static std::string param(const httplib::Request& req, const char* name);
  // The whole body of a request that is not a form upload, at most `limit` bytes.
  static std::string read_body(const httplib::Request& req, const httplib::ContentReader& reader,
                               int64_t limit, const char* what);
  int64_t parse_k(const std::string& text) const;
  static double parse_number(const std::string& text, const char* name, double low, double high);
  void check_text(const std::string& q) const;
  // Filters and similarity controls from the query string: filter, min_score,
  // strict (the facts the text states as hard conditions), facts (=0: rank
  // by the embedding alone), same_size (percent), ignore_mirrored.
  index::SearchOptions options_of(const httplib::Request& req) const;
  static std::string thumbnail_url(const index::Item& item);

  // ---- searches (search_routes.cc)
  // The answer as JSON, or as a CSV catalog export (format=csv).
  void answer(httplib::Response& res, const nlohmann::json& query,
              const index::SearchResult& result, const std::string& format_name) const;
  static nlohmann::json query_json(nlohmann::json base, const index::SearchOptions& o);
  void text_search(const std::string& q, const std::string& k_text, index::SearchOptions options,
                   const std::string& format_name, httplib::Response& res);
  void json_search(const std::string& text, httplib::Response& res);
  void part_search(const httplib::Request& req, const httplib::ContentReader& reader,
                   httplib::Response& res);
  // A part sent to /api/search/part: a multipart form's field 'file', or
  // the whole body named by ?filename=.
  struct Upload {
    std::string filename;  // the client's name for it
    std::string content;
    bool has_file = false;
  };
  static Upload take_upload(const httplib::Request& req, const httplib::ContentReader& reader);
  // The uploaded part as a graph, read by a worker process from a scratch
  // file; an error names the part by the client's file name.
  data::BRepGraph read_upload(const Upload& upload);
  void similar(const std::string& id, const httplib::Request& req, httplib::Response& res);
  // Duplicate clusters of the current version, computed once per version and
  // options (one computation at a time; on 100,000 parts it takes seconds).
  void duplicates(const httplib::Request& req, httplib::Response& res);

  // ---- the index and the page (routes.cc)
  void health(const httplib::Request& req, httplib::Response& res) const;
  void item(const std::string& id, httplib::Response& res) const;
  // The file served is the one the catalog names for a known id: no part of
  // the request path ever reaches the file system.
  void thumbnail(const std::string& id, httplib::Response& res) const;
  void page(const std::string& name_in, httplib::Response& res) const;
  // Swaps in each new version of the index as `cadclip index` writes it.
  // Requests already answering keep the searcher they took; the old
  // version's files go when the last of them is done.
  void watch_versions();

  // The last duplicates answer, with the searcher its members point into.
  struct DuplicatesAnswer {
    std::string key;
    std::shared_ptr<const index::Searcher> searcher;
    index::DuplicateReport report;
    std::string csv;
  };

  ServeOptions o_;
  CurrentSearcher searcher_;
  ApiKeys keys_;
  std::mutex duplicates_mutex_;
  std::shared_ptr<const DuplicatesAnswer> duplicates_;
  TextBatcher batcher_;
  RateLimiter limiter_;
  const ScratchDir scratch_root_;  // this server's uploads; removed with it
  std::atomic<int> in_flight_{0};
  std::atomic<int> uploads_in_flight_{0};
  std::atomic<int64_t> uploads_{0};
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread reloader_;  // last: started once everything above exists
};

}  // namespace cadclip::serve::detail
