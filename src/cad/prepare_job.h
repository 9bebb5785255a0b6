// The steps of `cadclip prepare` (cad::run_prepare in prepare.cc: options,
// the output folder, the journal and the ingest pool): finding the inputs
// (prepare_inputs.cc) and writing the dataset from the journal
// (prepare_output.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cad/prepare_journal.h"
#include "cadclip/cad/prepare.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/ingest_failure.h"
#include "cadclip/data/splits.h"

namespace cadclip::cad::prepare_detail {

inline constexpr int kManifestVersion = 1;

struct Input {
  std::filesystem::path path;  // absolute and normalised
  std::string id;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// An input that failed: a line of failures.jsonl.
struct Failure {
  std::string path, id;
  data::IngestFailure failure;
};

// JSON as the job writes it: invalid UTF-8 replaced, never an exception.
std::string dump(const nlohmann::ordered_json& value, int indent = -1);
nlohmann::ordered_json ingest_json(const IngestOptions& o);

// Every input, sorted by id; files that cannot be ingested for reasons known
// before opening them (kUnreadable, kBadName, kDuplicateId, kTooLarge) go to
// `failures` instead. Throws cadclip::Error for an input that does not exist.
std::vector<Input> collect_inputs(const PrepareOptions& o, std::vector<Failure>& failures);

// What the dataset is written from, besides the journal.
struct FinishedRun {
  std::vector<Input> inputs;      // in id order
  std::vector<size_t> entry_of;   // each input's outcome: its entry in the journal
  std::vector<Failure> failures;  // inputs that failed before opening
  std::vector<data::CaptionFile> caption_files;
  std::optional<data::Splits> split_file;
  // A part of a job array (num_shards > 1): the ids of the other parts'
  // inputs, whose captions and splits entries name no missing model, and the
  // manifest's "shard" object; null for a whole run.
  std::set<std::string> other_part_ids;
  nlohmann::ordered_json shard;
  int64_t from_journal = 0;  // inputs an earlier run finished
  int64_t ingested_now = 0;
  std::chrono::steady_clock::time_point start, ingest_start, ingest_end;
};

// Keeps, of every input found (run.inputs, run.failures), those of part
// o.shard_index of o.num_shards, and records the rest in run.other_part_ids.
void select_part(const PrepareOptions& o, FinishedRun& run);

// Writes shards (in id order), thumbnails, captions, splits, failures,
// warnings, options and the manifest into o.out, then removes o.out/work
// unless o.keep_work.
PrepareSummary write_dataset(const PrepareOptions& o, const Journal& journal, FinishedRun run);

}  // namespace cadclip::cad::prepare_detail
