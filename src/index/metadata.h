// Catalog fields from a CSV file (`cadclip index --metadata parts.csv`),
// private to the index layer: one row per part, named by an `id` column (the
// part's id) or a `file` / `path` column (its source file: the path as
// indexed, relative to the library, or the file name alone); every other
// column is a field, its name in lower case with '_' for spaces and dashes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/index/searcher.h"

namespace cadclip::index::detail {

using Fields = std::vector<std::pair<std::string, std::string>>;

class PartMetadata {
 public:
  // Throws cadclip::Error naming the file and line for a missing key column,
  // a broken or repeated row, or text that is not UTF-8.
  static PartMetadata read(const std::filesystem::path& csv);

  // The fields of `item` (empty values left out), or nullptr when no row
  // names it. `library` resolves relative paths of a `file` column.
  const Fields* find(const Item& item, const std::filesystem::path& library) const;
  const std::string& key_column() const { return key_column_; }
  const std::vector<std::string>& fields() const { return fields_; }
  int64_t rows() const { return static_cast<int64_t>(rows_.size()); }
  // Keys of rows that find() never matched.
  std::vector<std::string> unmatched() const;

 private:
  std::filesystem::path file_;
  std::string key_column_;
  std::vector<std::string> fields_;
  std::map<std::string, Fields> rows_;  // by key as written
  mutable std::map<std::string, bool> matched_;
};

}  // namespace cadclip::index::detail
