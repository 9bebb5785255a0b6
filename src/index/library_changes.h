// What a run of `cadclip index` finds in its library and what changed since
// the current version (private to the index layer): the parts found, the
// files that failed before embedding, and the new, changed, moved and gone parts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "cadclip/data/ingest_failure.h"
#include "cadclip/data/prepared.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/searcher.h"
#include "metadata.h"
#include "store.h"

namespace cadclip::index::detail {

// One part of the library as found on disk, before embedding.
struct Found {
  Item item;
  int64_t dataset_row = -1;  // prepared library: the row in the dataset
};

// A line of failures.jsonl (a file not indexed), or of warnings.jsonl (a part
// indexed without a drawing, its kind written "thumbnail_<kind>").
struct Listed {
  std::string path, id;
  data::IngestFailure failure;
  bool drawing = false;
};

// What changed in the library since the current version.
struct Changes {
  std::vector<Found*> todo;          // new and changed parts, to embed, in the order found
  std::set<std::string> present;     // every id the library holds now
  std::vector<std::string> gone;     // ids in the index that left the library
  std::vector<std::string> moved;    // "old -> new" of parts kept by their content
  std::set<std::string> moved_from;  // ids in `gone` whose content another id now holds
};

// What a part's catalog entry holds besides what embedding it gives.
struct Annotations {
  const std::map<std::string, std::string>& captions;
  const PartMetadata* metadata;  // null: parts keep their earlier fields
  const std::filesystem::path& library;
  bool keep_missing = false;  // parts the library does not name stay (IndexOptions::add)
};

// The lines of a JSON Lines file. Throws cadclip::Error naming the file and
// the line that is no JSON.
std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& file);

// A part's thumbnail file name under <version>/thumbnails/.
std::string thumbnail_name(const std::string& id);

// The parts of a prepared library, with the content hash of each graph.
std::vector<Found> found_in_dataset(const data::PreparedData& prepared);
// The CAD files of `library` by path; a file whose id (its stem) an earlier
// one gives joins `failures`.
std::vector<Found> found_in_folder(const std::filesystem::path& library,
                                   std::vector<Listed>& failures);

// Unchanged parts keep their embedding (a caption or metadata file may change
// on its own, so their captions and fields are brought up to date). A part
// whose content the index holds under another path or id (a moved, renamed
// or copied file) takes that entry's embedding, facts and drawing.
Changes find_changes(std::vector<Found>& found, std::map<std::string, StoredItem>& existing,
                     const Annotations& notes, Catalog& catalog, const std::filesystem::path& out,
                     IndexSummary& summary);
// Names the parts a run adds, replaces, moves and removes (a few of each).
void log_changes(const Changes& changes);

}  // namespace cadclip::index::detail
