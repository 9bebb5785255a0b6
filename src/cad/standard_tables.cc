// Reading the standards' dimension tables built into the binary.
#include "cadclip/cad/standard_tables.h"

#include <charconv>
#include <map>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace {

std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    cells.emplace_back(
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

bool parse_number(const std::string& text, double& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace

size_t StandardTable::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  throw Error(format("standard table {} has no column '{}'", file, name));
}

const std::string& StandardTable::cell(size_t row, const std::string& name) const {
  return rows.at(row).at(column(name));
}

double StandardTable::number(size_t row, const std::string& name) const {
  const std::string& text = cell(row, name);
  double value = 0;
  if (!parse_number(text, value))
    throw Error(format("standard table {} row {} ({}): column {} is '{}', not a number", file,
                       row + 1, rows[row][0], name, text));
  return value;
}

nlohmann::json StandardTable::row_json(size_t row) const {
  nlohmann::json out = nlohmann::json::object();
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string& text = rows.at(row)[c];
    double value = 0;
    if (text.empty()) continue;
    if (c > 0 && parse_number(text, value))
      out[columns[c]] = value;
    else
      out[columns[c]] = text;
  }
  return out;
}

StandardTable parse_standard_table(const std::string& file, std::string_view text) {
  StandardTable table;
  table.file = file;
  size_t line_number = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == '#') {
      line.remove_prefix(line.size() > 1 && line[1] == ' ' ? 2 : 1);
      table.notes.emplace_back(line);
      continue;
    }
    std::vector<std::string> cells = split_line(line);
    if (table.columns.empty()) {
      table.columns = std::move(cells);
      continue;
    }
    if (cells.size() != table.columns.size())
      throw Error(format("{} line {}: {} cells, the header has {}; fix the table", file,
                         line_number, cells.size(), table.columns.size()));
    table.rows.push_back(std::move(cells));
  }
  if (table.columns.empty() || table.rows.empty())
    throw Error(format("{}: no header or no rows; fix the table", file));
  return table;
}

const StandardTable& standard_table(const std::string& file) {
  static const std::map<std::string, StandardTable> kTables = [] {
    std::map<std::string, StandardTable> tables;
    for (const auto& [name, text] : embedded_standard_files())
      tables.emplace(name, parse_standard_table(name, text));
    return tables;
  }();
  const auto it = kTables.find(file);
  if (it == kTables.end())
    throw Error(
        format("no standard table {} is built in; the tables are data/standards/*.csv", file));
  return it->second;
}

}  // namespace cadclip::cad
