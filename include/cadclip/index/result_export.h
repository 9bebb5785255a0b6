// Search results as programs and spreadsheets take them: the JSON of the
// HTTP API and `cadclip search --json`, and a CSV catalog export (one row per
// result, a column per imported field). The same for the command line and
// the server, so the two never drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/index/searcher.h"

namespace cadclip::index {

// A part's catalog entry: id, name, source, size_mm, faces, holes,
// hole_diameters_mm, file_type, caption, metadata (an object) and thumbnail
// (`thumbnail_url`, or null when empty).
nlohmann::json item_json(const Item& item, const std::string& thumbnail_url);

// What a query applied: [{"clause": "size<100", "origin": "given" | "query" |
// "same_size", "because": "under 100 mm"}], and {"clause": "score>=0.4",
// "origin": "given"} for a minimum score.
nlohmann::json applied_json(const Filter& applied);

// The facts a text stated that ranked its answer: [{"clause":
// "equal_holes=6", "because": "six bolt holes"}].
nlohmann::json stated_json(const std::vector<Condition>& stated);

// One query's answer: {"query": query, "filters": applied_json, "candidates",
// "results": [item_json + rank, score]}, with "mirrored_left_out" when some
// were. With stated facts, "facts": stated_json, "meeting_all" (candidates
// that meet every one) and each result's "meets" (one bool per fact). `thumbnail_url` maps a part
// to its thumbnail's URL ("" = none).
template <class ThumbnailUrl>
nlohmann::json result_json(nlohmann::json query, const SearchResult& result,
                           ThumbnailUrl&& thumbnail_url) {
  nlohmann::json results = nlohmann::json::array();
  for (const Hit& h : result.hits) {
    nlohmann::json r = item_json(*h.item, thumbnail_url(*h.item));
    r["rank"] = h.rank;
    r["score"] = h.score;
    if (!result.stated.empty()) r["meets"] = h.meets;
    results.push_back(std::move(r));
  }
  nlohmann::json out = {{"query", std::move(query)},
                        {"filters", applied_json(result.applied)},
                        {"candidates", result.candidates},
                        {"results", std::move(results)}};
  if (result.mirrored_left_out > 0) out["mirrored_left_out"] = result.mirrored_left_out;
  if (!result.stated.empty()) {
    out["facts"] = stated_json(result.stated);
    out["meeting_all"] = result.meeting_all;
  }
  return out;
}

// A CSV table of the results of one or more queries: query, rank, score, id,
// name, size_x_mm, size_y_mm, size_z_mm, faces, holes, hole_diameters_mm
// (separated by spaces), file_type, source, caption, then one column per
// imported field met in the results.
std::string results_csv(const std::vector<std::pair<std::string, SearchResult>>& answers);

}  // namespace cadclip::index
