#include "cadclip/core/json_fields.h"

namespace cadclip {
namespace {

void collect_unknown(const nlohmann::json& given, const nlohmann::json& known,
                     const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : given.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const auto it = known.find(key);
    if (it == known.end()) {
      out.push_back(path);
    } else if (value.is_object() && it->is_object()) {
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

}  // namespace cadclip
