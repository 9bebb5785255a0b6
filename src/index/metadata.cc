#include "metadata.h"

#include <algorithm>
#include <cctype>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/data/csv.h"
#include "cadclip/data/utf8.h"

namespace cadclip::index::detail {
namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string field_name(std::string_view header) {
  std::string out = trimmed(header);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == ' ' || c == '-') c = '_';
  }
  return out;
}

}  // namespace

PartMetadata PartMetadata::read(const fs::path& csv) {
  PartMetadata out;
  out.file_ = csv;
  if (!fs::is_regular_file(csv))
    throw Error(
        format("--metadata {}: no such file; give a CSV file with an 'id' or 'file' "
               "column and one column per field",
               csv.string()));
  const std::string text = read_text_file(csv);
  if (const auto bad = data::first_invalid_utf8(text))
    throw Error(
        format("--metadata {}: byte {} is not UTF-8; save the file as UTF-8", csv.string(), *bad));
  data::CsvScanner scanner(text);
  const std::optional<data::CsvRecord> header = scanner.next();
  if (!header) throw Error(format("--metadata {}: the file is empty", csv.string()));
  if (header->problem)
    throw Error(format("--metadata {}: the header on line {} is broken ({})", csv.string(),
                       header->line, *header->problem));
  std::vector<std::string> names;
  for (const std::string& h : header->fields) names.push_back(field_name(h));
  size_t key = names.size();
  for (const char* candidate : {"id", "file", "path"}) {
    const auto it = std::find(names.begin(), names.end(), candidate);
    if (it != names.end()) {
      key = static_cast<size_t>(it - names.begin());
      break;
    }
  }
  if (key == names.size())
    throw Error(
        format("--metadata {}: the header ({}) has no column 'id' (the part's id) or "
               "'file' (its source file); add one",
               csv.string(), join(names, ", ")));
  out.key_column_ = names[key];
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == key) continue;
    if (names[i].empty())
      throw Error(
          format("--metadata {}: column {} has no name in the header", csv.string(), i + 1));
    if (std::count(names.begin(), names.end(), names[i]) > 1)
      throw Error(format("--metadata {}: the column '{}' is given twice", csv.string(), names[i]));
    out.fields_.push_back(names[i]);
  }
  while (std::optional<data::CsvRecord> record = scanner.next()) {
    if (record->problem)
      throw Error(format("--metadata {} line {}: {}; fix the row", csv.string(), record->line,
                         *record->problem));
    if (record->fields.size() != names.size())
      throw Error(format("--metadata {} line {}: {} fields where the header has {}", csv.string(),
                         record->line, record->fields.size(), names.size()));
    const std::string part = trimmed(record->fields[key]);
    if (part.empty())
      throw Error(format("--metadata {} line {}: the '{}' cell is empty", csv.string(),
                         record->line, out.key_column_));
    Fields fields;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i == key) continue;
      std::string value = trimmed(record->fields[i]);
      if (!value.empty()) fields.emplace_back(names[i], std::move(value));
    }
    if (!out.rows_.emplace(part, std::move(fields)).second)
      throw Error(format("--metadata {} line {}: '{}' has a row already; give each part one row",
                         csv.string(), record->line, part));
  }
  return out;
}

const Fields* PartMetadata::find(const Item& item, const fs::path& library) const {
  std::vector<std::string> keys;
  if (key_column_ == "id") {
    keys.push_back(item.id);
  } else if (!item.source.empty()) {
    const fs::path source(item.source);
    keys.push_back(item.source);
    keys.push_back(source.lexically_relative(library).generic_string());
    keys.push_back(source.filename().string());
  }
  for (const std::string& k : keys) {
    const auto it = rows_.find(k);
    if (it != rows_.end()) {
      matched_[k] = true;
      return &it->second;
    }
  }
  return nullptr;
}

std::vector<std::string> PartMetadata::unmatched() const {
  std::vector<std::string> out;
  for (const auto& [k, fields] : rows_)
    if (!matched_.count(k)) out.push_back(k);
  return out;
}

}  // namespace cadclip::index::detail
