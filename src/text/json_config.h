// Reading Hugging Face JSON configs with errors that name the file and key.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/core/error.h"

namespace cadclip::text::detail {

// Throws cadclip::Error naming the file when it is missing or not a JSON object.
nlohmann::json read_json(const std::filesystem::path& path);

// The value of `key`, or `fallback` when it is absent or null; throws
// cadclip::Error naming the file and key when it has the wrong type.
template <class T>
T value_or(const nlohmann::json& doc, const char* key, T fallback,
           const std::filesystem::path& source) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return fallback;
  try {
    return it->template get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(format("{}: \"{}\" has the wrong type ({}); fix the config", source.string(), key,
                       it->dump()));
  }
}

}  // namespace cadclip::text::detail
