// `cadclip index`: a trained checkpoint and a part library (a folder of CAD
// files, ingested on the fly by the ingest pool's worker processes, or a
// prepared folder) in, an index folder out. Each run writes a new version,
// INDEX/versions/<n>/ (vectors.faiss, catalog.sqlite, thumbnails/,
// failures.jsonl: files not indexed, warnings.jsonl: parts indexed without a
// thumbnail and why, options.json), and swaps it in only once it is complete;
// one run at a time writes an index (docs/HTTP_API.md, "The index folder").
// Running it again (or with --update) embeds only new and changed parts, keeps
// moved and renamed files by their content, and drops deleted ones.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cadclip/data/ingest_limits.h"

namespace cadclip::index {

struct IndexOptions {
  std::string checkpoint;          // run folder, checkpoint pointer (.json) or checkpoint folder
  std::string library;             // folder of CAD files, a prepared folder (has manifest.json),
                                   // or a dataset file listing prepared folders
  std::string out;                 // the index folder (created; updated when it exists)
  std::string factory = "auto";    // FAISS factory string ("Flat", "IVF1024,Flat", ...); "auto":
                                   // Flat below 20,000 parts, IVF<~4 sqrt(n)>,Flat below
                                   // 200,000, else IVF<~4 sqrt(n)>,SQ8 (8-bit codes)
  std::string search_params;       // FAISS parameters for searching, e.g. "efSearch=128", and
                                   // rerank=N (a lossy index orders N candidates by their exact
                                   // vectors); empty = efSearch=128 for HNSW, nprobe=16 for
                                   // IVF (nprobe=8,rerank=64 for SQ/PQ codes), else nothing
  std::string captions;            // a caption file (JSONL/CSV) naming parts by id; empty = the
                                   // prepared folder's captions.jsonl when there is one
  bool thumbnails = true;          // line-drawing thumbnails: drawn by the ingest workers for a
                                   // folder of CAD files; for a prepared folder, those that
                                   // `cadclip prepare --thumbnails` drew
  int64_t batch_size = 32;         // parts per forward pass
  int workers = 0;                 // ingest worker processes; 0 = one per core
  data::IngestLimits limits;       // what one CAD file of the library may cost (faces, edges,
                                   // file size, time); over one it fails (failures.jsonl)
  std::string assume_unit = "mm";  // unit of unitless CAD files (BREP, DeepCAD JSON)
  std::string metadata;            // CSV of catalog fields, a row per part named by an `id` or
                                   // `file` column (part number, material, ...); empty = parts
                                   // keep the fields an earlier run imported
  bool update = false;             // the index must exist, made with this checkpoint: only the
                                   // parts that changed are touched, never a rebuild
  bool add = false;                // as update, and the parts the library does not name stay:
                                   // a library indexed folder by folder, or in batches
  bool overwrite = false;          // rebuild an index that was made with another checkpoint
  bool wait = false;               // another run writing the index: wait for it (else fail)
  std::string worker_binary;       // the cadclip executable for ingest workers; empty = this one
};
// Its JSON form: what <index>/<version>/options.json records.
void to_json(nlohmann::json& json, const IndexOptions& options);
void from_json(const nlohmann::json& json, IndexOptions& options);
// The help of the field at `field` (a member of `options`), its flag's.
std::string_view field_help(const IndexOptions& options, const void* field);

struct IndexSummary {
  int64_t parts = 0;               // parts in the index afterwards
  int64_t added = 0;               // new parts embedded
  int64_t changed = 0;             // parts re-embedded because their content changed
  int64_t removed = 0;             // parts dropped because they left the library
  int64_t unchanged = 0;           // parts kept without embedding them again
  int64_t moved = 0;               // parts whose content the index already held under another path
                                   // or id (a moved, renamed or copied file): not embedded again
  int64_t failed = 0;              // library files listed in failures.jsonl
  int64_t thumbnails = 0;          // thumbnails drawn in this run
  int64_t thumbnail_failures = 0;  // parts in the index without a drawing that failed (HLR error,
                                   // crash or timeout), listed in warnings.jsonl
  std::string factory;             // the FAISS index type written
  int64_t vectors_kept = 0;        // vectors of the previous version's inverted file kept in
                                   // place (updated, not retrained); 0 = built anew
  std::string version;             // the version folder written, now the current one
};

// Throws cadclip::Error for unusable arguments (no checkpoint, a library that
// is neither kind, an index made with another checkpoint without overwrite,
// another run writing the index); files that cannot be ingested are
// failures, never exceptions. After an exception (or a crash) the index is
// as it was before the run.
IndexSummary build_index(const IndexOptions& options);

}  // namespace cadclip::index
