#include "cadclip/index/result_export.h"

#include <algorithm>

#include "csv_cells.h"

namespace cadclip::index {
namespace {

using detail::csv_cell;
using detail::fixed_number;

const char* origin_name(FilterOrigin origin) {
  switch (origin) {
    case FilterOrigin::kQueryText:
      return "query";
    case FilterOrigin::kSameSize:
      return "same_size";
    case FilterOrigin::kGiven:
      break;
  }
  return "given";
}

}  // namespace

nlohmann::json item_json(const Item& item, const std::string& thumbnail_url) {
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : item.metadata) metadata[key] = value;
  nlohmann::json j = {{"id", item.id},
                      {"name", item.name},
                      {"source", item.source},
                      {"size_mm", {item.size_mm[0], item.size_mm[1], item.size_mm[2]}},
                      {"faces", item.faces},
                      {"holes", nullptr},
                      {"hole_diameters_mm", item.hole_diameters_mm},
                      {"file_type", item.file_type},
                      {"caption", item.caption},
                      {"metadata", std::move(metadata)},
                      {"thumbnail", nullptr}};
  if (item.holes >= 0) j["holes"] = item.holes;
  if (!thumbnail_url.empty()) j["thumbnail"] = thumbnail_url;
  return j;
}

nlohmann::json applied_json(const Filter& applied) {
  nlohmann::json out = nlohmann::json::array();
  for (const Condition& c : applied.conditions) {
    nlohmann::json j = {{"clause", c.to_string()}, {"origin", origin_name(c.origin)}};
    if (!c.because.empty()) j["because"] = c.because;
    out.push_back(std::move(j));
  }
  if (applied.min_score) {
    Filter score_only;
    score_only.min_score = applied.min_score;
    out.push_back({{"clause", score_only.to_string()}, {"origin", "given"}});
  }
  return out;
}

nlohmann::json stated_json(const std::vector<Condition>& stated) {
  nlohmann::json out = nlohmann::json::array();
  for (const Condition& c : stated)
    out.push_back({{"clause", c.to_string()}, {"because", c.because}});
  return out;
}

std::string results_csv(const std::vector<std::pair<std::string, SearchResult>>& answers) {
  std::vector<std::string> fields;
  for (const auto& [query, result] : answers)
    for (const Hit& h : result.hits)
      for (const auto& [key, value] : h.item->metadata)
        if (std::find(fields.begin(), fields.end(), key) == fields.end()) fields.push_back(key);
  std::string out =
      "query,rank,score,id,name,size_x_mm,size_y_mm,size_z_mm,faces,holes,hole_diameters_mm,"
      "file_type,source,caption";
  for (const std::string& f : fields) out += "," + csv_cell(f);
  out += "\n";
  for (const auto& [query, result] : answers) {
    for (const Hit& h : result.hits) {
      const Item& item = *h.item;
      std::string diameters;
      for (const double d : item.hole_diameters_mm)
        diameters += (diameters.empty() ? "" : " ") + fixed_number(d, 2);
      std::vector<std::string> cells = {csv_cell(query),
                                        std::to_string(h.rank),
                                        fixed_number(h.score, 4),
                                        csv_cell(item.id),
                                        csv_cell(item.name),
                                        fixed_number(item.size_mm[0], 3),
                                        fixed_number(item.size_mm[1], 3),
                                        fixed_number(item.size_mm[2], 3),
                                        std::to_string(item.faces),
                                        item.holes >= 0 ? std::to_string(item.holes) : "",
                                        diameters,
                                        item.file_type,
                                        csv_cell(item.source),
                                        csv_cell(item.caption)};
      for (const std::string& f : fields) {
        const std::string* value = item.field(f);
        cells.push_back(value ? csv_cell(*value) : "");
      }
      for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
      out += "\n";
    }
  }
  return out;
}

}  // namespace cadclip::index
