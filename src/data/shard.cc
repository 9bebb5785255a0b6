#include "cadclip/data/shard.h"

#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::data {
namespace {

template <class T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

template <class T>
uint64_t bytes_of(const std::vector<T>& values) {
  return values.size() * sizeof(T);
}

template <class T>
void add_tensor(SafetensorsWriter& writer, const char* name, DType dtype,
                std::vector<int64_t> shape, const std::vector<T>& values) {
  writer.add(name, dtype, std::move(shape), std::as_bytes(std::span(values.data(), values.size())));
}

}  // namespace

void ShardWriter::add(const BRepGraph& g) {
  const Status valid = validate_graph(g);
  if (!valid) {
    throw Error(
        format("model '{}' cannot go into a shard: {}; this is a bug in the featurizer that "
               "produced it",
               g.id, valid.reason()));
  }
  ids_.push_back(g.id);
  units_.push_back(g.unit);
  hashes_.push_back(g.geometry_hash);
  face_offsets_.push_back(face_offsets_.back() + g.num_faces());
  edge_offsets_.push_back(edge_offsets_.back() + g.num_edges());
  append(face_grids_, g.face_grids);
  append(face_types_, g.face_types);
  append(face_areas_, g.face_areas);
  append(face_centroids_, g.face_centroids);
  append(face_rational_, g.face_rational);
  append(face_loops_, g.face_loops);
  append(edge_src_, g.edge_src);
  append(edge_dst_, g.edge_dst);
  append(edge_grids_, g.edge_grids);
  append(edge_types_, g.edge_types);
  append(edge_lengths_, g.edge_lengths);
  append(edge_convexity_, g.edge_convexity);
  bbox_mm_.insert(bbox_mm_.end(), g.bbox_mm.begin(), g.bbox_mm.end());
  scale_mm_.push_back(g.scale_mm);
  solid_count_.push_back(g.solid_count);
  closed_.push_back(g.closed ? 1 : 0);
}

uint64_t ShardWriter::byte_size() const {
  return bytes_of(face_offsets_) + bytes_of(edge_offsets_) + bytes_of(face_grids_) +
         bytes_of(face_areas_) + bytes_of(face_centroids_) + bytes_of(face_types_) +
         bytes_of(face_rational_) + bytes_of(face_loops_) + bytes_of(edge_src_) +
         bytes_of(edge_dst_) + bytes_of(edge_grids_) + bytes_of(edge_lengths_) +
         bytes_of(edge_types_) + bytes_of(edge_convexity_) + bytes_of(bbox_mm_) +
         bytes_of(scale_mm_) + bytes_of(solid_count_) + bytes_of(closed_);
}

void ShardWriter::write(const std::filesystem::path& path) {
  if (ids_.empty()) throw Error(format("no models to write into shard {}", path.string()));
  const int64_t n = size(), f = num_faces(), e = num_edges();
  SafetensorsWriter writer;
  add_tensor(writer, "face_offsets", DType::kI64, {n + 1}, face_offsets_);
  add_tensor(writer, "edge_offsets", DType::kI64, {n + 1}, edge_offsets_);
  add_tensor(writer, "face_grids", DType::kF32, {f, kUvGridSize, kUvGridSize, kFaceChannels},
             face_grids_);
  add_tensor(writer, "face_types", DType::kU8, {f}, face_types_);
  add_tensor(writer, "face_areas", DType::kF32, {f}, face_areas_);
  add_tensor(writer, "face_centroids", DType::kF32, {f, 3}, face_centroids_);
  add_tensor(writer, "face_rational", DType::kU8, {f}, face_rational_);
  add_tensor(writer, "face_loops", DType::kI32, {f}, face_loops_);
  add_tensor(writer, "edge_src", DType::kI32, {e}, edge_src_);
  add_tensor(writer, "edge_dst", DType::kI32, {e}, edge_dst_);
  add_tensor(writer, "edge_grids", DType::kF32, {e, kCurveSamples, kEdgeChannels}, edge_grids_);
  add_tensor(writer, "edge_types", DType::kU8, {e}, edge_types_);
  add_tensor(writer, "edge_lengths", DType::kF32, {e}, edge_lengths_);
  add_tensor(writer, "edge_convexity", DType::kU8, {e}, edge_convexity_);
  add_tensor(writer, "bbox_mm", DType::kF32, {n, 6}, bbox_mm_);
  add_tensor(writer, "scale_mm", DType::kF32, {n}, scale_mm_);
  add_tensor(writer, "solid_count", DType::kI32, {n}, solid_count_);
  add_tensor(writer, "closed", DType::kU8, {n}, closed_);
  writer.set_metadata("format", std::string(kShardFormat));
  writer.set_metadata("schema_version", std::to_string(kShardSchemaVersion));
  writer.set_metadata("count", std::to_string(n));
  writer.set_metadata("ids", nlohmann::json(ids_).dump());
  writer.set_metadata("units", nlohmann::json(units_).dump());
  writer.set_metadata("geometry_hashes", nlohmann::json(hashes_).dump());
  writer.write(path);
  *this = ShardWriter();
}

}  // namespace cadclip::data
