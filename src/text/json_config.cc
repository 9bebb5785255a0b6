#include "json_config.h"

#include "cadclip/core/file.h"

namespace cadclip::text::detail {

nlohmann::json read_json(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw Error(format("{}: missing; a Hugging Face model folder has one", path.string()));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{}: not valid JSON ({})", path.string(), e.what()));
  }
  if (!doc.is_object()) throw Error(format("{}: expected a JSON object", path.string()));
  return doc;
}

}  // namespace cadclip::text::detail
