#include "cadclip/data/dataset.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/shard.h"

namespace cadclip::data {
namespace {

// Per-model arrays grouped by what their first axis counts.
const char* const kFaceTensors[] = {"face_grids",     "face_types",    "face_areas",
                                    "face_centroids", "face_rational", "face_loops"};
const char* const kEdgeTensors[] = {"edge_src",   "edge_dst",     "edge_grids",
                                    "edge_types", "edge_lengths", "edge_convexity"};
const char* const kModelTensors[] = {"bbox_mm", "scale_mm", "solid_count", "closed"};

struct Shard {
  explicit Shard(SafetensorsReader opened) : file(std::move(opened)) {}
  SafetensorsReader file;
  std::vector<int64_t> face_offsets, edge_offsets;  // [n + 1]
  std::vector<std::string> ids, units, hashes;
  int64_t first = 0;  // global index of the shard's first model
};

[[noreturn]] void bad_shard(const std::filesystem::path& path, const std::string& problem) {
  throw Error(
      format("{} is not a usable cadclip shard: {}; prepare the dataset again with this "
             "cadclip version",
             path.string(), problem));
}

std::vector<std::string> metadata_list(const SafetensorsReader& file, const char* key) {
  const auto it = file.metadata().find(key);
  if (it == file.metadata().end()) bad_shard(file.path(), format("metadata '{}' is missing", key));
  const nlohmann::json list =
      nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) bad_shard(file.path(), format("metadata '{}' is not a JSON list", key));
  std::vector<std::string> values;
  for (const auto& v : list) {
    if (!v.is_string()) bad_shard(file.path(), format("metadata '{}' holds a non-string", key));
    values.push_back(v.get<std::string>());
  }
  return values;
}

std::vector<int64_t> read_offsets(const SafetensorsReader& file, const char* name, int64_t n,
                                  const char* counted_by) {
  const TensorInfo& info = file.at(name);
  if (info.dtype != DType::kI64 || info.shape != std::vector<int64_t>{n + 1})
    bad_shard(file.path(), format("'{}' must be I64 of shape [{}]", name, n + 1));
  std::vector<int64_t> offsets(n + 1);
  std::memcpy(offsets.data(), file.bytes(info).data(), offsets.size() * sizeof(int64_t));
  if (offsets[0] != 0) bad_shard(file.path(), format("'{}' does not start at 0", name));
  for (int64_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i])
      bad_shard(file.path(), format("'{}' decreases at model {}", name, i));
  }
  const TensorInfo& counted = file.at(counted_by);
  if (counted.shape.empty() || counted.shape[0] != offsets[n])
    bad_shard(file.path(), format("'{}' ends at {} but '{}' has {} rows", name, offsets[n],
                                  counted_by, counted.shape.empty() ? 0 : counted.shape[0]));
  return offsets;
}

Shard open_shard(const std::filesystem::path& path) {
  Shard shard(SafetensorsReader::open(path));
  const SafetensorsReader& file = shard.file;
  const auto& meta = file.metadata();
  const auto format_it = meta.find("format");
  if (format_it == meta.end() || format_it->second != kShardFormat)
    bad_shard(path, format("metadata 'format' is not '{}'", kShardFormat));
  const auto version_it = meta.find("schema_version");
  if (version_it == meta.end() || version_it->second != std::to_string(kShardSchemaVersion))
    bad_shard(path, format("schema_version is '{}', this cadclip reads {}",
                           version_it == meta.end() ? "missing" : version_it->second,
                           kShardSchemaVersion));
  shard.ids = metadata_list(file, "ids");
  shard.units = metadata_list(file, "units");
  shard.hashes = metadata_list(file, "geometry_hashes");
  const int64_t n = static_cast<int64_t>(shard.ids.size());
  if (static_cast<int64_t>(shard.units.size()) != n ||
      static_cast<int64_t>(shard.hashes.size()) != n)
    bad_shard(path, "the metadata lists 'ids', 'units' and 'geometry_hashes' differ in length");
  shard.face_offsets = read_offsets(file, "face_offsets", n, "face_types");
  shard.edge_offsets = read_offsets(file, "edge_offsets", n, "edge_src");
  for (const char* name : kFaceTensors) {
    const TensorInfo& t = file.at(name);
    if (t.shape.empty() || t.shape[0] != shard.face_offsets[n])
      bad_shard(path, format("'{}' does not have one row per face", name));
  }
  for (const char* name : kEdgeTensors) {
    const TensorInfo& t = file.at(name);
    if (t.shape.empty() || t.shape[0] != shard.edge_offsets[n])
      bad_shard(path, format("'{}' does not have one row per edge", name));
  }
  for (const char* name : kModelTensors) {
    const TensorInfo& t = file.at(name);
    if (t.shape.empty() || t.shape[0] != n)
      bad_shard(path, format("'{}' does not have one row per model", name));
  }
  return shard;
}

// Copies rows [begin, end) of a tensor whose first axis is counted by the
// offsets, after checking its dtype.
template <class T>
std::vector<T> rows(const SafetensorsReader& file, const char* name, DType dtype, int64_t begin,
                    int64_t end) {
  const TensorInfo& t = file.at(name);
  if (t.dtype != dtype)
    bad_shard(file.path(),
              format("'{}' is {}, expected {}", name, dtype_name(t.dtype), dtype_name(dtype)));
  int64_t row = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) row *= t.shape[d];
  std::vector<T> values(static_cast<size_t>((end - begin) * row));
  if (!values.empty())
    std::memcpy(values.data(), file.bytes(t).data() + begin * row * sizeof(T),
                values.size() * sizeof(T));
  return values;
}

}  // namespace

struct Dataset::State {
  std::vector<Shard> shards;
  std::vector<int64_t> starts;  // global index of each shard's first model, plus the total
  std::unordered_map<std::string, int64_t> by_id;
};

namespace {

// A shard file and what the user named that holds it: its prepared folder,
// or the shard itself when shards are opened one by one.
struct ShardSource {
  std::filesystem::path shard, origin;
};

std::vector<ShardSource> manifest_shards(const std::filesystem::path& folder) {
  const std::filesystem::path manifest_path = folder / "manifest.json";
  if (!std::filesystem::exists(manifest_path)) {
    throw Error(format("{} has no manifest.json; is it a folder written by `cadclip prepare`?",
                       folder.string()));
  }
  const nlohmann::json manifest =
      nlohmann::json::parse(read_text_file(manifest_path), nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object() || !manifest.contains("shards") || !manifest["shards"].is_array())
    throw Error(
        format("{} has no 'shards' list; prepare the dataset again", manifest_path.string()));
  std::vector<ShardSource> shards;
  for (const auto& entry : manifest["shards"]) {
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string())
      throw Error(format("{}: a 'shards' entry has no 'file'", manifest_path.string()));
    // Relative to the folder; a merged folder's entries lead into other folders.
    shards.push_back({(folder / entry["file"].get<std::string>()).lexically_normal(), folder});
  }
  return shards;
}

}  // namespace

struct Dataset::Opener {
  static Dataset open(const std::vector<ShardSource>& sources) {
    auto state = std::make_shared<State>();
    int64_t total = 0;
    std::vector<size_t> source_of;  // per model: its entry in `sources`
    for (size_t s = 0; s < sources.size(); ++s) {
      Shard shard = open_shard(sources[s].shard);
      shard.first = total;
      state->starts.push_back(total);
      for (size_t i = 0; i < shard.ids.size(); ++i) {
        const auto [it, inserted] =
            state->by_id.emplace(shard.ids[i], total + static_cast<int64_t>(i));
        if (inserted) {
          source_of.push_back(s);
          continue;
        }
        const ShardSource& first = sources[source_of[static_cast<size_t>(it->second)]];
        if (first.origin != sources[s].origin) {
          throw Error(
              format("model id '{}' is in both {} and {}; the folders of one dataset must hold "
                     "distinct ids: leave one of them out, or prepare one again with inputs "
                     "whose ids differ (an id is the input's path below its folder)",
                     shard.ids[i], first.origin.string(), sources[s].origin.string()));
        }
        throw Error(
            format("model id '{}' appears twice (in {} and {}); shards of different datasets "
                   "cannot be mixed this way",
                   shard.ids[i], first.shard.string(), sources[s].shard.string()));
      }
      total += static_cast<int64_t>(shard.ids.size());
      state->shards.push_back(std::move(shard));
    }
    state->starts.push_back(total);
    Dataset dataset;
    dataset.state_ = std::move(state);
    return dataset;
  }
};

Dataset Dataset::open(const std::filesystem::path& folder) {
  return Opener::open(manifest_shards(folder));
}

Dataset Dataset::open(const std::vector<std::filesystem::path>& folders) {
  std::vector<ShardSource> sources;
  for (const auto& folder : folders) {
    const std::vector<ShardSource> shards = manifest_shards(folder);
    sources.insert(sources.end(), shards.begin(), shards.end());
  }
  return Opener::open(sources);
}

Dataset Dataset::open_shards(const std::vector<std::filesystem::path>& paths) {
  std::vector<ShardSource> sources;
  for (const auto& path : paths) sources.push_back({path, path});
  return Opener::open(sources);
}

int64_t Dataset::size() const { return state_ ? state_->starts.back() : 0; }

namespace {
std::pair<const Shard*, int64_t> locate(const std::vector<Shard>& shards,
                                        const std::vector<int64_t>& starts, int64_t index) {
  if (index < 0 || index >= starts.back())
    throw Error(format("model index {} is out of range: the dataset holds {} models", index,
                       starts.back()));
  const auto it = std::upper_bound(starts.begin(), starts.end(), index);
  const size_t s = static_cast<size_t>(it - starts.begin()) - 1;
  return {&shards[s], index - starts[s]};
}
}  // namespace

const std::string& Dataset::id(int64_t index) const {
  const auto [shard, i] = locate(state_->shards, state_->starts, index);
  return shard->ids[i];
}

int64_t Dataset::num_faces(int64_t index) const {
  const auto [shard, i] = locate(state_->shards, state_->starts, index);
  return shard->face_offsets[i + 1] - shard->face_offsets[i];
}

int64_t Dataset::num_edges(int64_t index) const {
  const auto [shard, i] = locate(state_->shards, state_->starts, index);
  return shard->edge_offsets[i + 1] - shard->edge_offsets[i];
}

std::optional<int64_t> Dataset::find(std::string_view id) const {
  if (!state_) return std::nullopt;
  const auto it = state_->by_id.find(std::string(id));
  if (it == state_->by_id.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Dataset::ids() const {
  std::vector<std::string> all;
  if (!state_) return all;
  for (const Shard& shard : state_->shards)
    all.insert(all.end(), shard.ids.begin(), shard.ids.end());
  return all;
}

namespace {

// madvise over the pages that hold `bytes` (the mapping is page-aligned).
void madvise_pages(std::span<const std::byte> bytes, int advice) {
  if (bytes.empty()) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(bytes.data()) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(bytes.data() + bytes.size());
  // A hint: when the kernel refuses it, reading works all the same.
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

// The bytes of rows [begin, end) of a tensor whose first axis those rows count.
std::span<const std::byte> row_bytes(const SafetensorsReader& file, const char* name, int64_t begin,
                                     int64_t end) {
  const TensorInfo& t = file.at(name);
  const std::span<const std::byte> all = file.bytes(t);
  const int64_t rows = t.shape.empty() ? 0 : t.shape[0];
  if (rows == 0 || end <= begin) return {};
  const size_t row = all.size() / static_cast<size_t>(rows);
  return all.subspan(static_cast<size_t>(begin) * row, static_cast<size_t>(end - begin) * row);
}

}  // namespace

void Dataset::advise(Access access) const {
  if (!state_) return;
  const int advice = access == Access::kRandom ? MADV_RANDOM : MADV_NORMAL;
  for (const Shard& shard : state_->shards)
    for (const TensorInfo& t : shard.file.tensors()) madvise_pages(shard.file.bytes(t), advice);
}

void Dataset::prefetch(int64_t index) const {
  const auto [shard, i] = locate(state_->shards, state_->starts, index);
  const SafetensorsReader& f = shard->file;
  const int64_t f0 = shard->face_offsets[i], f1 = shard->face_offsets[i + 1];
  const int64_t e0 = shard->edge_offsets[i], e1 = shard->edge_offsets[i + 1];
  for (const char* name : kFaceTensors) madvise_pages(row_bytes(f, name, f0, f1), MADV_WILLNEED);
  for (const char* name : kEdgeTensors) madvise_pages(row_bytes(f, name, e0, e1), MADV_WILLNEED);
  for (const char* name : kModelTensors) madvise_pages(row_bytes(f, name, i, i + 1), MADV_WILLNEED);
}

BRepGraph Dataset::graph(int64_t index) const {
  const auto [shard, i] = locate(state_->shards, state_->starts, index);
  const SafetensorsReader& f = shard->file;
  const int64_t f0 = shard->face_offsets[i], f1 = shard->face_offsets[i + 1];
  const int64_t e0 = shard->edge_offsets[i], e1 = shard->edge_offsets[i + 1];
  BRepGraph g;
  g.id = shard->ids[i];
  g.face_grids = rows<float>(f, "face_grids", DType::kF32, f0, f1);
  g.face_types = rows<uint8_t>(f, "face_types", DType::kU8, f0, f1);
  g.face_areas = rows<float>(f, "face_areas", DType::kF32, f0, f1);
  g.face_centroids = rows<float>(f, "face_centroids", DType::kF32, f0, f1);
  g.face_rational = rows<uint8_t>(f, "face_rational", DType::kU8, f0, f1);
  g.face_loops = rows<int32_t>(f, "face_loops", DType::kI32, f0, f1);
  g.edge_src = rows<int32_t>(f, "edge_src", DType::kI32, e0, e1);
  g.edge_dst = rows<int32_t>(f, "edge_dst", DType::kI32, e0, e1);
  g.edge_grids = rows<float>(f, "edge_grids", DType::kF32, e0, e1);
  g.edge_types = rows<uint8_t>(f, "edge_types", DType::kU8, e0, e1);
  g.edge_lengths = rows<float>(f, "edge_lengths", DType::kF32, e0, e1);
  g.edge_convexity = rows<uint8_t>(f, "edge_convexity", DType::kU8, e0, e1);
  const std::vector<float> bbox = rows<float>(f, "bbox_mm", DType::kF32, i, i + 1);
  std::copy(bbox.begin(), bbox.end(), g.bbox_mm.begin());
  g.scale_mm = rows<float>(f, "scale_mm", DType::kF32, i, i + 1)[0];
  g.solid_count = rows<int32_t>(f, "solid_count", DType::kI32, i, i + 1)[0];
  g.closed = rows<uint8_t>(f, "closed", DType::kU8, i, i + 1)[0] != 0;
  g.unit = shard->units[i];
  g.geometry_hash = shard->hashes[i];
  const Status valid = validate_graph(g);
  if (!valid) bad_shard(f.path(), format("model {} ('{}'): {}", i, g.id, valid.reason()));
  return g;
}

}  // namespace cadclip::data
