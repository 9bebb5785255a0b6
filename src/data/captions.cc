#include "cadclip/data/captions.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/data/csv.h"
#include "cadclip/data/utf8.h"

namespace cadclip::data {
namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::optional<size_t> column(const std::vector<std::string>& header, std::string_view name) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  return static_cast<size_t>(it - header.begin());
}

std::vector<std::string> read_header(CsvScanner& scanner, const std::filesystem::path& path) {
  const std::optional<CsvRecord> header = scanner.next();
  if (!header) throw Error(format("caption file {} is empty", path.string()));
  if (header->problem)
    throw Error(
        format("caption file {}: the header on line {} is broken ({}); fix the file's first "
               "line",
               path.string(), header->line, *header->problem));
  std::vector<std::string> names;
  for (const auto& f : header->fields) names.push_back(trim(f));
  return names;
}

// A cell's text, or nullopt after recording why it was dropped.
std::optional<std::string> cell_text(const std::string& cell, int64_t line, const std::string& name,
                                     CaptionFile& out) {
  if (const auto bad = first_invalid_utf8(cell)) {
    out.problems.push_back(
        {line, format("column '{}' holds a byte that is not UTF-8 at offset {}", name, *bad)});
    return std::nullopt;
  }
  if (const size_t nul = cell.find('\0'); nul != std::string::npos) {
    out.problems.push_back(
        {line, format("column '{}' holds a NUL byte at offset {} (a binary or UTF-16 file?)", name,
                      nul)});
    return std::nullopt;
  }
  std::string text = trim(cell);
  if (text.empty()) {
    ++out.empty;
    return std::nullopt;
  }
  return text;
}

// Reads rows whose id is in column `id_col` and whose captions sit in
// `text_cols` (each with a fixed level, or the level from `level_col`).
// `unique_ids`: one row per id (Text2CAD); a later row of an id is a problem.
void read_rows(CsvScanner& scanner, const std::vector<std::string>& header, size_t id_col,
               const std::vector<std::pair<size_t, std::string>>& text_cols,
               std::optional<size_t> level_col, bool unique_ids, CaptionFile& out) {
  std::map<std::string, int64_t> first_line;
  while (std::optional<CsvRecord> record = scanner.next()) {
    ++out.rows;
    if (record->problem) {
      out.problems.push_back({record->line, *record->problem});
      continue;
    }
    if (record->fields.size() != header.size()) {
      out.problems.push_back({record->line, format("{} fields where the header has {}",
                                                   record->fields.size(), header.size())});
      continue;
    }
    const std::optional<std::string> id =
        cell_text(record->fields[id_col], record->line, header[id_col], out);
    if (!id) {
      if (!first_invalid_utf8(record->fields[id_col])) {
        out.problems.push_back(
            {record->line, format("the id column '{}' is empty", header[id_col])});
        --out.empty;
      }
      continue;
    }
    if (unique_ids) {
      const auto [seen, fresh] = first_line.emplace(*id, record->line);
      if (!fresh) {
        out.problems.push_back(
            {record->line,
             format("uid '{}' was already on line {}; this row is left out", *id, seen->second)});
        continue;
      }
    }
    std::optional<std::string> level;
    if (level_col) {
      level = cell_text(record->fields[*level_col], record->line, header[*level_col], out);
      if (!level) continue;
    }
    for (const auto& [col, fixed_level] : text_cols) {
      std::optional<std::string> text =
          cell_text(record->fields[col], record->line, header[col], out);
      if (text) out.captions.push_back({*id, level ? *level : fixed_level, std::move(*text)});
    }
  }
}

void read_jsonl(std::string_view text, const CaptionOptions& options, CaptionFile& out) {
  int64_t line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view row = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    if (trim(row).empty()) continue;
    ++out.rows;
    if (const auto bad = first_invalid_utf8(row)) {
      out.problems.push_back({line, format("a byte that is not UTF-8 at offset {}", *bad)});
      continue;
    }
    const nlohmann::json value = nlohmann::json::parse(row, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded() || !value.is_object()) {
      out.problems.push_back({line, "not a JSON object"});
      continue;
    }
    const auto id = value.find("id");
    const auto text_it = value.find("text");
    const auto level = value.find("level");
    if (id == value.end() || !id->is_string() || trim(id->get<std::string>()).empty()) {
      out.problems.push_back({line, "no string \"id\""});
      continue;
    }
    if (text_it == value.end() || !text_it->is_string()) {
      out.problems.push_back({line, "no string \"text\""});
      continue;
    }
    if (level != value.end() && !level->is_string()) {
      out.problems.push_back({line, "\"level\" is not a string"});
      continue;
    }
    const auto facts = value.find("facts");
    if (facts != value.end() && !facts->is_null() && !facts->is_object()) {
      out.problems.push_back({line, "\"facts\" is not an object"});
      continue;
    }
    std::string caption = trim(text_it->get<std::string>());
    if (caption.find('\0') != std::string::npos ||
        id->get<std::string>().find('\0') != std::string::npos) {
      out.problems.push_back({line, "\"id\" or \"text\" holds a NUL character (\\u0000)"});
      continue;
    }
    if (caption.empty()) {
      ++out.empty;
      continue;
    }
    const std::string level_text =
        level == value.end() ? options.level : trim(level->get<std::string>());
    // nlohmann::json keeps object keys sorted, so dump() is a canonical form.
    out.captions.push_back({trim(id->get<std::string>()),
                            level_text.empty() ? options.level : level_text, std::move(caption),
                            facts != value.end() && facts->is_object() ? facts->dump() : ""});
  }
}

bool looks_like_text2cad(const std::vector<std::string>& header) {
  if (!column(header, "uid")) return false;
  for (const char* level : kText2CadLevels)
    if (column(header, level)) return true;
  return false;
}

}  // namespace

CaptionFile read_captions(const std::filesystem::path& path, const CaptionOptions& options) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(format("caption file {} does not exist or is not a file", path.string()));
  const std::string text = read_text_file(path);
  CaptionFile out;
  out.path = path;
  std::string format_name = options.format;
  const std::string ext = path.extension().string();
  if (format_name == "auto") {
    if (ext == ".jsonl") {
      format_name = "jsonl";
    } else if (ext == ".csv") {
      CsvScanner probe(text);
      const std::optional<CsvRecord> header = probe.next();
      std::vector<std::string> names;
      if (header && !header->problem)
        for (const auto& f : header->fields) names.push_back(trim(f));
      format_name = looks_like_text2cad(names) ? "text2cad" : "csv";
    } else {
      throw Error(
          format("cannot tell the format of caption file {} from its extension '{}'; name it "
                 ".csv or .jsonl, or pass the caption format (text2cad, jsonl, csv)",
                 path.string(), ext));
    }
  }
  out.format = format_name;
  if (format_name == "jsonl") {
    read_jsonl(text, options, out);
  } else if (format_name == "text2cad") {
    CsvScanner scanner(text);
    const std::vector<std::string> header = read_header(scanner, path);
    const std::optional<size_t> id_col = column(header, "uid");
    std::vector<std::pair<size_t, std::string>> text_cols;
    for (const char* level : kText2CadLevels)
      if (const auto col = column(header, level)) text_cols.emplace_back(*col, level);
    if (!id_col || text_cols.empty())
      throw Error(
          format("caption file {} is not a Text2CAD CSV: it needs a 'uid' column and at "
                 "least one of abstract, beginner, intermediate, expert; its columns are: {}",
                 path.string(), join(header)));
    read_rows(scanner, header, *id_col, text_cols, std::nullopt, /*unique_ids=*/true, out);
  } else if (format_name == "csv") {
    CsvScanner scanner(text);
    const std::vector<std::string> header = read_header(scanner, path);
    const std::optional<size_t> id_col = column(header, options.id_column);
    const std::optional<size_t> text_col = column(header, options.text_column);
    std::optional<size_t> level_col;
    if (!options.level_column.empty()) level_col = column(header, options.level_column);
    if (!id_col || !text_col || (!options.level_column.empty() && !level_col))
      throw Error(format(
          "caption file {} lacks the column '{}'; its columns are: {}; name the "
          "right ones with the caption column options",
          path.string(),
          !id_col ? options.id_column : (!text_col ? options.text_column : options.level_column),
          join(header)));
    read_rows(scanner, header, *id_col, {{*text_col, options.level}}, level_col,
              /*unique_ids=*/false, out);
  } else {
    throw Error(format("unknown caption format '{}' for {}; use auto, text2cad, jsonl or csv",
                       format_name, path.string()));
  }
  return out;
}

void write_captions_jsonl(const std::filesystem::path& path, const std::vector<Caption>& captions) {
  std::string text;
  for (const Caption& c : captions) {
    nlohmann::ordered_json line = {{"id", c.id}, {"level", c.level}, {"text", c.text}};
    if (!c.facts.empty()) line["facts"] = nlohmann::ordered_json::parse(c.facts);
    text += line.dump();
    text += '\n';
  }
  write_text_atomic(path, text);
}

}  // namespace cadclip::data
