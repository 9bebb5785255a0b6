#include "cadclip/data/merge.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/shard.h"
#include "data/prepared_parts.h"

namespace cadclip::data {

CADCLIP_OPTION_FIELDS(
    MergeOptions,
    (inputs,
     "Prepared folders (of `cadclip prepare` or `cadclip merge`), or dataset files listing them "
     "one per line"),
    (out, "Merged folder to write (new, or an earlier merge)"),
    (allow_missing_shards,
     "Merge only some parts of a sharded prepare (otherwise an error names the missing parts)"),
    (overwrite, "Replace an earlier merge in --out"))

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using prepared_detail::read_manifest;

constexpr int kManifestVersion = 1;  // as `cadclip prepare` writes (src/cad/prepare_job.h)

std::string dump(const ordered_json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

fs::path absolute_normal(const fs::path& path) { return fs::absolute(path).lexically_normal(); }

// `path` as the merged folder `out` names it: relative, so that the tree can
// move (or be mounted elsewhere) as a whole.
std::string relative_to(const fs::path& path, const fs::path& out) {
  const fs::path relative = absolute_normal(path).lexically_relative(absolute_normal(out));
  return (relative.empty() ? absolute_normal(path) : relative).generic_string();
}

int64_t count_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// Refuses an `out` that holds anything but an earlier merge (which
// --overwrite replaces), or that is one of the folders merged.
void check_out(const MergeOptions& o, const std::vector<fs::path>& sources,
               const std::vector<fs::path>& folders) {
  if (o.out.empty()) throw Error("merge needs an output folder: pass --out DIR");
  const fs::path out = absolute_normal(o.out);
  for (const auto* list : {&folders, &sources})
    for (const fs::path& folder : *list)
      if (absolute_normal(folder) == out)
        throw Error(format("--out {} is one of the folders to merge; choose a new folder", o.out));
  std::error_code error;
  if (!fs::exists(out, error)) return;
  if (!fs::is_directory(out, error)) throw Error(format("--out {} is a file, not a folder", o.out));
  if (fs::is_empty(out, error)) return;
  if (!fs::exists(out / "manifest.json", error))
    throw Error(format("--out {} holds other files; merge into a new or empty folder", o.out));
  const nlohmann::json manifest = read_manifest(out);
  if (!manifest.contains("merged"))
    throw Error(
        format("--out {} is a prepared folder with its own shards; merge into a new "
               "folder (nothing there was changed)",
               o.out));
  if (!o.overwrite)
    throw Error(
        format("--out {} already holds a merged dataset; pass --overwrite to replace it, "
               "or choose another --out",
               o.out));
}

// The lines of a folder's JSONL file (none when it has none).
std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// Lines of several files, sorted by the value of `key` (stable), as one prepare writes them.
std::string merged_lines(const std::vector<fs::path>& folders, const char* file, const char* key) {
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const fs::path& folder : folders) {
    for (std::string& line : lines_of(folder / file)) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      std::string value = j.is_object() && j.contains(key) && j[key].is_string()
                              ? j[key].get<std::string>()
                              : std::string();
      keyed.emplace_back(std::move(value), std::move(line));
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (const auto& [value, line] : keyed) text += line + "\n";
  return text;
}

// The counts of the folders' manifests, added up, and their shards and
// parts as the merged manifest lists them (paths relative to `out`).
struct ManifestTotals {
  ordered_json counts = {{"inputs", 0}, {"prepared", 0}, {"failed", 0}};
  std::map<std::string, int64_t> failed_by_kind;
  int64_t faces = 0, edges = 0, warning_count = 0, warned_models = 0;
  int64_t drawn = 0, not_drawn = 0;
  bool any_thumbnails = false;
  ordered_json shards = ordered_json::array(), parts = ordered_json::array();

  void add(const fs::path& folder, const fs::path& out) {
    const nlohmann::json manifest = read_manifest(folder);
    if (count_of(manifest, "shard_schema_version") != kShardSchemaVersion)
      throw Error(
          format("{} was prepared with shard schema {}, this cadclip reads {}; prepare it "
                 "again",
                 folder.string(), count_of(manifest, "shard_schema_version"), kShardSchemaVersion));
    const nlohmann::json c = manifest.value("counts", nlohmann::json::object());
    for (const char* key : {"inputs", "prepared", "failed"})
      counts[key] = counts[key].get<int64_t>() + count_of(c, key);
    const nlohmann::json by_kind = manifest.value("failed_by_kind", nlohmann::json::object());
    for (const auto& [kind, n] : by_kind.items())
      if (n.is_number_integer()) failed_by_kind[kind] += n.get<int64_t>();
    faces += count_of(manifest, "faces");
    edges += count_of(manifest, "edges");
    const nlohmann::json w = manifest.value("warnings", nlohmann::json::object());
    warning_count += count_of(w, "count");
    warned_models += count_of(w, "models");
    const nlohmann::json t = manifest.value("thumbnails", nlohmann::json());
    if (t.is_object()) {
      any_thumbnails = true;
      drawn += count_of(t, "drawn");
      not_drawn += count_of(t, "missing");
    }
    int64_t models = 0;
    const nlohmann::json shard_list = manifest.value("shards", nlohmann::json::array());
    for (const auto& entry : shard_list) {
      ordered_json shard = ordered_json::parse(entry.dump());
      shard["file"] = relative_to(folder / entry.value("file", ""), out);
      models += count_of(entry, "models");
      shards.push_back(std::move(shard));
    }
    ordered_json part = {{"path", relative_to(folder, out)}, {"models", models}};
    if (manifest.contains("shard")) part["shard"] = ordered_json::parse(manifest["shard"].dump());
    parts.push_back(std::move(part));
  }
};

// The merged folder's manifest.json.
ordered_json merged_manifest(const ManifestTotals& t, const PreparedData& data) {
  std::map<std::string, int64_t> by_level;
  for (const Caption& c : data.captions.captions) ++by_level[c.level];
  return {
      {"format", "cadclip.prepared"},
      {"manifest_version", kManifestVersion},
      {"shard_schema_version", kShardSchemaVersion},
      {"counts", t.counts},
      {"failed_by_kind", t.failed_by_kind},
      {"warnings",
       {{"count", t.warning_count}, {"models", t.warned_models}, {"file", "warnings.jsonl"}}},
      {"faces", t.faces},
      {"edges", t.edges},
      {"shards", t.shards},
      {"captions", {{"kept", data.captions.captions.size()}, {"by_level", by_level}}},
      {"splits",
       {{"source", "merged"},
        {"train", data.splits.train.size()},
        {"validation", data.splits.validation.size()},
        {"test", data.splits.test.size()}}},
      {"thumbnails", t.any_thumbnails ? ordered_json{{"drawn", t.drawn}, {"missing", t.not_drawn}}
                                      : ordered_json()},
      {"merged", {{"folders", t.parts}}}};
}

}  // namespace

MergeSummary merge_prepared(const MergeOptions& o) {
  if (o.inputs.empty()) throw Error("merge needs prepared folders (or dataset files) to merge");
  const std::vector<fs::path> folders = dataset_folders(o.inputs);
  std::vector<fs::path> sources;
  for (const fs::path& folder : folders) {
    const std::vector<fs::path> more = prepared_detail::sources_of(folder);
    sources.insert(sources.end(), more.begin(), more.end());
  }
  check_out(o, sources, folders);
  const std::vector<std::string> problems = prepared_detail::shard_set_problems(sources);
  if (!problems.empty() && !o.allow_missing_shards)
    throw Error(format("{}; merge every part, or pass --allow-missing-shards to merge these anyway",
                       join(problems, "; ")));

  // Opening checks every shard header and that ids are distinct across folders.
  const PreparedData data = open_prepared(folders);
  const fs::path out = o.out;
  fs::create_directories(out);
  fs::remove(out / "manifest.json");  // an earlier merge's: it is written again last

  ManifestTotals totals;
  for (const fs::path& folder : folders) totals.add(folder, out);
  write_captions_jsonl(out / "captions.jsonl", data.captions.captions);
  write_splits(out / "splits.json", data.splits);
  write_text_atomic(out / "failures.jsonl", merged_lines(folders, "failures.jsonl", "path"));
  write_text_atomic(out / "warnings.jsonl", merged_lines(folders, "warnings.jsonl", "id"));
  write_text_atomic(out / "options.json", nlohmann::json(o).dump(1) + "\n");
  const ordered_json manifest = merged_manifest(totals, data);
  // Last: until it is there, the folder does not look finished.
  write_text_atomic(out / "manifest.json", dump(manifest, 1) + "\n");

  MergeSummary summary;
  summary.folders = static_cast<int64_t>(sources.size());
  summary.models = data.dataset.size();
  summary.shards = static_cast<int64_t>(totals.shards.size());
  summary.captions = static_cast<int64_t>(data.captions.captions.size());
  log::info("merge", "{} folders, {} models in {} shards, {} captions: wrote {}", summary.folders,
            with_commas(summary.models), summary.shards, with_commas(summary.captions),
            out.string());
  return summary;
}

}  // namespace cadclip::data
