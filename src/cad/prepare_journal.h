// The prepare job's journal: an append-only record of finished inputs
// (prepared or failed) with their graphs and drawings, so that an interrupted
// run finishes without redoing them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/data/ingest_failure.h"

namespace cadclip::cad::prepare_detail {

struct JournalEntry {
  std::string path;                            // the input file as the job found it
  std::string id;                              // its model id
  uint64_t size = 0;                           // file size when ingested
  int64_t mtime_ns = 0;                        // modification time when ingested
  std::optional<data::IngestFailure> failure;  // none: prepared; else kIngest, kCrash, kTimeout...
  std::vector<std::string> warnings;  // prepared models: what ingest skipped without failing
  double seconds = 0;                 // ingest time in the worker
  int64_t faces = 0, edges = 0;
  // Drawings (prepared models of a run with thumbnails): drawn, or why there
  // is none (kDraw, kCrash, kTimeout); neither: none was asked for.
  bool drawn = false;
  std::optional<data::IngestFailure> no_drawing;
  uint64_t svg_size = 0;                          // the SVG: the payload's last svg_size bytes
  uint64_t payload_offset = 0, payload_size = 0;  // encoded graph, then the SVG, in the journal
};

// A record torn by an interruption is cut off when the journal is reopened.
class Journal {
 public:
  // Opens `file`, creating it; reads the records there. Throws cadclip::Error.
  explicit Journal(const std::filesystem::path& file);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::vector<JournalEntry>& entries() const { return entries_; }
  int64_t dropped_bytes() const { return dropped_bytes_; }  // torn tail cut off on open
  void append(JournalEntry entry, std::string_view payload);
  std::string payload(const JournalEntry& entry) const;
  void sync();

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  uint64_t end_ = 0;
  int64_t dropped_bytes_ = 0;
  std::vector<JournalEntry> entries_;
};

}  // namespace cadclip::cad::prepare_detail
