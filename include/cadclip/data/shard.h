// Shards: many BRepGraphs in one safetensors file, each array of every model
// concatenated along its first axis with offset arrays that say where each
// model begins. Python's `safetensors` reads them; docs/FORMATS.md lists the
// tensors and the metadata.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/data/brep_graph.h"

namespace cadclip::data {

inline constexpr std::string_view kShardFormat = "cadclip.brep_graph";  // metadata "format"
inline constexpr int kShardSchemaVersion = 1;  // metadata "schema_version"; bumped on any change

// Collects models in memory and writes them as one shard. Models keep the
// order in which they were added; equal inputs give equal bytes.
class ShardWriter {
 public:
  // Throws cadclip::Error naming the model when validate_graph rejects it.
  void add(const BRepGraph& graph);

  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  int64_t num_faces() const { return face_offsets_.back(); }
  int64_t num_edges() const { return edge_offsets_.back(); }
  // Bytes of tensor data collected so far (the file adds its header).
  uint64_t byte_size() const;

  // Writes the collected models to `path` atomically, then starts empty.
  // Throws cadclip::Error when there is nothing to write or writing fails.
  void write(const std::filesystem::path& path);

 private:
  std::vector<std::string> ids_, units_, hashes_;
  std::vector<int64_t> face_offsets_{0}, edge_offsets_{0};  // [N + 1]
  std::vector<float> face_grids_, face_areas_, face_centroids_;
  std::vector<uint8_t> face_types_, face_rational_;
  std::vector<int32_t> face_loops_;
  std::vector<int32_t> edge_src_, edge_dst_;  // face indices local to the model
  std::vector<float> edge_grids_, edge_lengths_;
  std::vector<uint8_t> edge_types_, edge_convexity_;
  std::vector<float> bbox_mm_, scale_mm_;  // [N, 6], [N]
  std::vector<int32_t> solid_count_;       // [N]
  std::vector<uint8_t> closed_;            // [N]
};

}  // namespace cadclip::data
