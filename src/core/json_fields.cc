#include "cadclip/core/json_fields.h"

#include "cadclip/core/file.h"

namespace cadclip {
namespace {

// An empty object in `known` is a map (shares by source name), whose keys are
// data, not names of fields: any key is taken.
void collect_unknown(const nlohmann::json& given, const nlohmann::json& known,
                     const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : given.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const auto it = known.find(key);
    if (it == known.end()) {
      out.push_back(path);
    } else if (value.is_object() && it->is_object() && !it->empty()) {
      collect_unknown(value, *it, path, out);
    }
  }
}

}  // namespace

std::vector<std::string> unknown_keys(const nlohmann::json& given, const nlohmann::json& known) {
  std::vector<std::string> out;
  if (given.is_object() && known.is_object()) collect_unknown(given, known, "", out);
  return out;
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
  try {
    return nlohmann::json::parse(read_text_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("--config {} is not valid JSON: {}", file.string(), e.what()));
  }
}

}  // namespace cadclip
