// `cadclip merge`: one prepared folder over many (the parts of a sharded
// prepare, or datasets side by side) without copying a shard: its manifest
// lists their shards by relative path, and it holds the merged captions,
// splits, failures and warnings (docs/FORMATS.md, "Merged folders").
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::data {

struct MergeOptions {
  std::vector<std::string> inputs;    // prepared folders or dataset files (data::dataset_folders)
  std::string out;                    // the merged folder (created)
  bool allow_missing_shards = false;  // merge only some parts of a sharded prepare
  bool overwrite = false;             // replace what `out` holds (a prepared or merged folder)
};
// Its JSON form: the merged folder's options.json.
void to_json(nlohmann::json& json, const MergeOptions& options);
void from_json(const nlohmann::json& json, MergeOptions& options);
// The help of the field at `field` (a member of `options`), its flag's.
std::string_view field_help(const MergeOptions& options, const void* field);

struct MergeSummary {
  int64_t folders = 0;   // prepared folders behind the inputs
  int64_t models = 0;    // models in the merged dataset
  int64_t shards = 0;    // shard files it lists
  int64_t captions = 0;  // captions in its captions.jsonl
};

// Writes the merged folder. Reads every shard's header (so ids are checked to
// be distinct) but copies none. Throws cadclip::Error for an input that is
// not a prepared folder, ids found in two folders, parts of a sharded prepare
// missing or given twice (unless allow_missing_shards), or an `out` that
// holds something else.
MergeSummary merge_prepared(const MergeOptions& options);

}  // namespace cadclip::data
