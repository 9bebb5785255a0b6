// CSV records (RFC 4180: fields separated by commas, optionally quoted, ""
// inside quotes for a quote, quoted fields may span lines), read one at a
// time so that a broken record costs only itself: caption files and the
// catalog fields `cadclip index --metadata` imports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::data {

struct CsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;                    // line where it starts
  std::optional<std::string> problem;  // why it is broken (then `fields` is empty)
};

class CsvScanner {
 public:
  // `text` must outlive the scanner; a UTF-8 byte order mark is skipped.
  explicit CsvScanner(std::string_view text);

  // The next non-blank record; nullopt at the end. A broken record is
  // returned with its problem, and scanning resumes at the line after the one
  // it started on, so that one bad quote cannot swallow the rows after it.
  std::optional<CsvRecord> next();

 private:
  CsvRecord broken(CsvRecord record, size_t start, int64_t start_line, const char* problem);

  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

}  // namespace cadclip::data
