// Caption files: Text2CAD CSV (uid, abstract, beginner, intermediate,
// expert), JSONL (id, level, text, optional facts) and CSV with named columns. Readers keep
// every good row and report each bad one (broken quoting, wrong field count,
// bad JSON, non-UTF-8 or NUL bytes, a Text2CAD uid on a second row) with its
// line number; they never stop on one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cadclip::data {

struct Caption {
  std::string id;     // the model id it describes
  std::string level;  // "abstract", "beginner", "intermediate", "expert", or a free label
  std::string text;   // valid UTF-8, surrounding whitespace trimmed, never empty
  // JSONL only: the line's "facts" object (what the caption states, as
  // `cadclip synth` records it) in canonical form: keys sorted, no spaces
  // (nlohmann::json::dump()). Empty when the line has no facts object. Two
  // captions with equal non-empty facts state the same thing.
  std::string facts = {};
};

struct CaptionProblem {
  int64_t line = 0;    // 1-based line where the row starts
  std::string reason;  // what is wrong with it
};

// What one file gave.
struct CaptionFile {
  std::filesystem::path path;
  std::string format;                    // the format it was read as: text2cad, jsonl or csv
  std::vector<Caption> captions;         // good captions, in file order
  int64_t rows = 0;                      // data rows (lines for JSONL) seen, blank lines excluded
  int64_t empty = 0;                     // empty caption cells skipped (not problems)
  std::vector<CaptionProblem> problems;  // rows or cells that were dropped, and why
};

struct CaptionOptions {
  std::string format = "auto";       // auto (.jsonl = jsonl; .csv = text2cad when its header has
                                     // uid and a level column, else csv), text2cad, jsonl, csv
  std::string id_column = "id";      // csv: the column with the model id
  std::string text_column = "text";  // csv: the column with the caption
  std::string level_column;          // csv: the column with the level; empty = use `level`
  std::string level = "caption";     // level of csv rows without a level column and of JSONL lines
                                     // without "level"
};

inline constexpr const char* kText2CadLevels[] = {"abstract", "beginner", "intermediate", "expert"};

// Throws cadclip::Error only when the file cannot be read at all, its format
// is unknown, or a CSV header lacks a required column (naming it and the
// columns there are).
CaptionFile read_captions(const std::filesystem::path& path, const CaptionOptions& options);

// One {"id", "level", "text"} object per line, in the order given, plus
// "facts" (the object again) when a caption has them; atomic.
void write_captions_jsonl(const std::filesystem::path& path, const std::vector<Caption>& captions);

}  // namespace cadclip::data
