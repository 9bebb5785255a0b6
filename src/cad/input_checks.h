// What is known about an input file before it is opened: the failures of
// kinds kUnreadable, kBadName and kTooLarge, with their reasons, shared by
// the ingest pool and the prepare job's input search.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cadclip/data/ingest_failure.h"

namespace cadclip::cad {

struct FileFacts {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// The file's size and modification time, or kUnreadable.
std::optional<data::IngestFailure> stat_input(const std::filesystem::path& path, FileFacts& facts);
// kBadName for an id that is not UTF-8.
std::optional<data::IngestFailure> check_id(const std::string& id);
// kTooLarge for a file over `max_file_mb` MiB; 0 = no limit.
std::optional<data::IngestFailure> check_size(uint64_t size, double max_file_mb);

}  // namespace cadclip::cad
