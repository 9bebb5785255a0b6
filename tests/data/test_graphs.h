// Small hand-made BRepGraphs and a scratch folder for the dataset tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "cadclip/core/file.h"
#include "cadclip/data/brep_graph.h"

namespace cadclip::data::testing {

// A graph with `faces` faces in a chain (face i adjacent to i + 1, both
// directions) whose every value is derived from `seed`, so that two graphs
// with different seeds differ everywhere.
inline BRepGraph chain_graph(const std::string& id, int faces, float seed) {
  BRepGraph g;
  g.id = id;
  const int grid = kUvGridSize * kUvGridSize * kFaceChannels;
  for (int f = 0; f < faces; ++f) {
    for (int k = 0; k < grid; ++k) g.face_grids.push_back(seed + 0.001f * (f * grid + k));
    g.face_types.push_back(static_cast<uint8_t>(f % static_cast<int>(SurfaceType::kCount)));
    g.face_areas.push_back(seed * 10 + f);
    for (int k = 0; k < 3; ++k) g.face_centroids.push_back(seed + f + 0.1f * k);
    g.face_rational.push_back(f % 2);
    g.face_loops.push_back(1 + f % 3);
  }
  for (int f = 0; f + 1 < faces; ++f) {
    for (int dir = 0; dir < 2; ++dir) {
      const int e = static_cast<int>(g.edge_src.size());
      g.edge_src.push_back(dir ? f + 1 : f);
      g.edge_dst.push_back(dir ? f : f + 1);
      for (int k = 0; k < kCurveSamples * kEdgeChannels; ++k)
        g.edge_grids.push_back(-seed - 0.01f * (e * 120 + k));
      g.edge_types.push_back(static_cast<uint8_t>(e % static_cast<int>(CurveType::kCount)));
      g.edge_lengths.push_back(seed + e);
      g.edge_convexity.push_back(static_cast<uint8_t>(e % 3));
    }
  }
  g.bbox_mm = {-seed, -2 * seed, -3 * seed, seed, 2 * seed, 3 * seed};
  g.scale_mm = 6 * seed;
  g.unit = "file:MM";
  g.solid_count = 1 + faces % 2;
  g.closed = faces % 2 == 0;
  g.geometry_hash = "hash-" + id;
  return g;
}

// A fresh empty folder under the system's temporary folder, removed on exit.
class ScratchDir : public cadclip::ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : cadclip::ScratchDir(emptied(name)) {}

 private:
  static std::filesystem::path emptied(const std::string& name) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                       ("cadclip-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    return path;
  }
};

inline bool same_graph(const BRepGraph& a, const BRepGraph& b) {
  return a.id == b.id && a.face_grids == b.face_grids && a.face_types == b.face_types &&
         a.face_areas == b.face_areas && a.face_centroids == b.face_centroids &&
         a.face_rational == b.face_rational && a.face_loops == b.face_loops &&
         a.edge_src == b.edge_src && a.edge_dst == b.edge_dst && a.edge_grids == b.edge_grids &&
         a.edge_types == b.edge_types && a.edge_lengths == b.edge_lengths &&
         a.edge_convexity == b.edge_convexity && a.bbox_mm == b.bbox_mm &&
         a.scale_mm == b.scale_mm && a.unit == b.unit && a.solid_count == b.solid_count &&
         a.closed == b.closed && a.geometry_hash == b.geometry_hash;
}

}  // namespace cadclip::data::testing
