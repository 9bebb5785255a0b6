// Paths and readers for the fixtures of scripts/make_text_fixtures.py.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cadclip/core/file.h"

namespace cadclip::text::testing {

inline std::filesystem::path data_dir() {
  return std::filesystem::path(CADCLIP_SOURCE_DIR) / "tests" / "fixtures" / "text";
}

inline std::filesystem::path minilm_dir() {
  if (const char* env = std::getenv("CADCLIP_MINILM")) return env;
  return "/opt/cadclip/models/all-MiniLM-L6-v2";
}

inline nlohmann::json read_json(const std::string& name) {
  return nlohmann::json::parse(read_text_file(data_dir() / name));
}

inline std::vector<std::string> corpus() {
  return read_json("corpus.json")["corpus"].get<std::vector<std::string>>();
}

}  // namespace cadclip::text::testing
