// The search routes of the HTTP API: by text (GET and a JSON body), by an
// uploaded part, by an indexed part, and the duplicate clusters.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/utf8.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/result_export.h"
#include "serve/connections.h"
#include "serve/routes.h"

namespace cadclip::serve::detail {
namespace {

namespace fs = std::filesystem;

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

void Routes::answer(httplib::Response& res, const nlohmann::json& query,
                    const index::SearchResult& result, const std::string& format_name) const {
  if (format_name == "csv") {
    const std::string label = query.contains("text")   ? query["text"].get<std::string>()
                              : query.contains("like") ? "like " + query["like"].get<std::string>()
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

nlohmann::json Routes::query_json(nlohmann::json base, const index::SearchOptions& o) {
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

void Routes::text_search(const std::string& q, const std::string& k_text,
                         index::SearchOptions options, const std::string& format_name,
                         httplib::Response& res) {
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

void Routes::json_search(const std::string& text, httplib::Response& res) {
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
    if (!body["format"].is_string()) throw HttpError{400, "\"format\" must be \"json\" or \"csv\""};
    format_name = body["format"].get<std::string>();
  }
  text_search(body["q"].get<std::string>(), k_text, options, format_name, res);
}

Routes::Upload Routes::take_upload(const httplib::Request& req,
                                   const httplib::ContentReader& reader) {
  Upload upload;
  bool read = false;
  if (req.is_multipart_form_data()) {
    std::string field;
    read = reader(
        [&](const httplib::MultipartFormData& part) {
          field = part.name;
          if (field == "file") {
            upload.has_file = true;
            upload.filename = part.filename;
          }
          return true;
        },
        [&](const char* data, size_t n) {
          if (field == "file") upload.content.append(data, n);
          return true;
        });
  } else {
    read = reader([&](const char* data, size_t n) {
      upload.content.append(data, n);
      return true;
    });
    upload.filename = req.get_param_value("filename");
    upload.has_file = true;
  }
  if (!read)
    throw HttpError{400,
                    "the upload could not be read (a broken multipart form, or the connection "
                    "broke or timed out)"};
  return upload;
}

data::BRepGraph Routes::read_upload(const Upload& upload) {
  // Only the extension of the client's name is used: it picks the reader.
  std::string extension = fs::path(upload.filename).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const ScratchDir scratch(scratch_root_.path() / format("upload-{}", uploads_.fetch_add(1)));
  const fs::path part = scratch.path() / ("upload" + extension);
  {
    std::ofstream file(part, std::ios::binary);
    file.write(upload.content.data(), static_cast<std::streamsize>(upload.content.size()));
    if (!file) throw HttpError{500, "could not store the upload on the server"};
  }
  try {
    return index::ingest_isolated(part, o_.worker_binary, o_.limits);
  } catch (const Error& e) {
    // The reason names the server's scratch files; the client knows its part by its name.
    std::string reason = e.what();
    const std::string shown =
        upload.filename.empty() ? "the upload" : printable(upload.filename, 80);
    replace_all(reason, part.string(), shown);
    replace_all(reason, scratch.path().string(), "(upload)");
    replace_all(reason, scratch_root_.path().string(), "(upload)");
    replace_all(reason, part.filename().string(), shown);
    throw HttpError{422, format("the part could not be read: {}", reason)};
  }
}

void Routes::part_search(const httplib::Request& req, const httplib::ContentReader& reader,
                         httplib::Response& res) {
  const Upload upload = take_upload(req, reader);
  if (!index::can_ingest_parts())
    throw HttpError{501,
                    "this cadclip was built without Open CASCADE and cannot read part "
                    "files; search by text or by an indexed part instead"};
  if (!upload.has_file) throw HttpError{400, "the form has no field 'file' holding the part"};
  if (upload.content.empty()) throw HttpError{400, "the uploaded part is empty"};
  if (!data::is_cad_path(upload.filename))
    throw HttpError{415, format("'{}' is no part file cadclip reads; upload {}",
                                printable(upload.filename, 80), data::kCadExtensions)};
  index::SearchOptions options = options_of(req);
  options.k = parse_k(param(req, "k"));
  InFlight guard(in_flight_, o_.max_in_flight);
  // Each upload costs a worker process (LibTorch and Open CASCADE loaded):
  // fewer of them run at once than searches.
  InFlight upload_guard(uploads_in_flight_, o_.max_uploads, "part uploads");
  const data::BRepGraph graph = read_upload(upload);
  const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
  answer(res,
         query_json({{"part", printable(upload.filename, 200)}, {"faces", graph.num_faces()}},
                    options),
         searcher->query_graph(graph, options), param(req, "format"));
}

void Routes::similar(const std::string& id, const httplib::Request& req, httplib::Response& res) {
  index::SearchOptions options = options_of(req);
  options.k = parse_k(param(req, "k"));
  const std::shared_ptr<const index::Searcher> searcher = searcher_.get();
  if (searcher->find(id) == nullptr)
    throw HttpError{404, format("no part '{}' in the index", printable(id))};
  InFlight guard(in_flight_, o_.max_in_flight);
  answer(res, query_json({{"like", id}}, options), searcher->query_item(id, options),
         param(req, "format"));
}

void Routes::duplicates(const httplib::Request& req, httplib::Response& res) {
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

}  // namespace cadclip::serve::detail
