// What one CAD file may cost to ingest and embed, with one default each:
// `cadclip prepare`, `cadclip index`, the part queries of `cadclip search` and
// `cadclip serve`, and Python's read_cad take their limits from here, under
// the same names. docs/INGEST.md gives the measurements behind the defaults.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace cadclip::data {

struct IngestLimits {
  // A model with more faces fails, never truncated; 0 = no limit. Embedding
  // memory grows with faces squared: one 5,000-face part takes 2.2 GiB and
  // 23 s on one CPU thread, 10,000 faces 8.3 GiB and 100 s (docs/INGEST.md);
  // real purchased parts have 1,000-1,100.
  int max_faces = 5000;
  // Directed edges (two per B-Rep edge between two faces), likewise; 0 = no
  // limit. Real parts have about 6 per face, so this passes every part under
  // max_faces; embedding cost grows linearly with them.
  int max_edges = 100000;
  // Larger files fail without being opened, MiB; 0 = no limit. Well above a
  // STEP file of max_faces faces (a few MiB), below what fills a worker's memory.
  double max_file_mb = 1024;
  // A file still ingesting after this many seconds fails (kTimeout) and its
  // worker is replaced; its drawing gets as long again; 0 = no limit. Reading
  // a 5,000-face STEP file takes seconds; a hang costs this much.
  double file_timeout_s = 300;
};

// Throws cadclip::Error for a negative limit, naming its flag.
void check_limits(const IngestLimits& limits);

// Its JSON form: {"max_faces", "max_edges", "max_file_mb", "file_timeout_s"}.
void to_json(nlohmann::json& json, const IngestLimits& limits);
void from_json(const nlohmann::json& json, IngestLimits& limits);
// The help of the field at `field` (a member of `limits`), its flag's.
std::string_view field_help(const IngestLimits& limits, const void* field);

}  // namespace cadclip::data
