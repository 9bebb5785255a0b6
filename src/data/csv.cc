#include "cadclip/data/csv.h"

namespace cadclip::data {

CsvScanner::CsvScanner(std::string_view text) : text_(text) {
  if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);  // UTF-8 byte order mark
}

std::optional<CsvRecord> CsvScanner::next() {
  while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ >= text_.size()) return std::nullopt;
  CsvRecord record;
  record.line = line_;
  const size_t start = pos_;
  const int64_t start_line = line_;
  std::string field;
  while (true) {
    if (pos_ < text_.size() && text_[pos_] == '"') {
      ++pos_;
      bool closed = false;
      while (pos_ < text_.size()) {
        const char c = text_[pos_++];
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field += '"';
            ++pos_;
          } else {
            closed = true;
            break;
          }
        } else {
          if (c == '\n') ++line_;
          field += c;
        }
      }
      if (!closed) return broken(record, start, start_line, "a quoted field is never closed");
      if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
      if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n')
        return broken(record, start, start_line, "text follows a closing quote");
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n') {
        if (text_[pos_] == '"')
          return broken(record, start, start_line, "a quote inside an unquoted field");
        field += text_[pos_++];
      }
      if (!field.empty() && field.back() == '\r') field.pop_back();
    }
    record.fields.push_back(std::move(field));
    field.clear();
    if (pos_ >= text_.size()) return record;
    if (text_[pos_++] == '\n') {
      ++line_;
      return record;
    }
  }
}

CsvRecord CsvScanner::broken(CsvRecord record, size_t start, int64_t start_line,
                             const char* problem) {
  record.problem = problem;
  record.fields.clear();
  const size_t eol = text_.find('\n', start);
  pos_ = eol == std::string_view::npos ? text_.size() : eol + 1;
  line_ = start_line + 1;
  return record;
}

}  // namespace cadclip::data
