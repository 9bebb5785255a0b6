#include "cadclip/data/pairwise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>

#include "cadclip/core/error.h"

namespace cadclip::data {
namespace {
// A mean of unit vectors shorter than this has cancelled out: no direction.
constexpr double kMinMeanNormal = 1e-3;
}  // namespace

PairwiseInputs pairwise_inputs(const BRepGraph& g) {
  const int64_t f = g.num_faces();
  CADCLIP_CHECK(
      static_cast<int64_t>(g.face_grids.size()) == f * kUvGridSize * kUvGridSize * kFaceChannels,
      "pairwise_inputs on an inconsistent graph '{}'", g.id);
  PairwiseInputs out;
  out.num_faces = f;

  // Hops: a breadth-first search from every face over the undirected adjacency.
  std::vector<std::vector<int32_t>> neighbours(f);
  for (int64_t e = 0; e < g.num_edges(); ++e) {
    CADCLIP_CHECK(
        g.edge_src[e] >= 0 && g.edge_src[e] < f && g.edge_dst[e] >= 0 && g.edge_dst[e] < f,
        "edge {} of '{}' names a face out of range", e, g.id);
    neighbours[g.edge_src[e]].push_back(g.edge_dst[e]);
    neighbours[g.edge_dst[e]].push_back(g.edge_src[e]);
  }
  out.hops.assign(f * f, kUnreachableHops);
  std::deque<int32_t> queue;
  for (int64_t s = 0; s < f; ++s) {
    int32_t* row = &out.hops[s * f];
    row[s] = 0;
    queue.assign(1, static_cast<int32_t>(s));
    while (!queue.empty()) {
      const int32_t at = queue.front();
      queue.pop_front();
      for (int32_t next : neighbours[at]) {
        if (row[next] == kUnreachableHops) {
          row[next] = row[at] + 1;
          queue.push_back(next);
        }
      }
    }
  }

  // Mean normals of the in-face grid points.
  constexpr int kPoints = kUvGridSize * kUvGridSize;
  std::vector<std::array<double, 3>> normals(f, {0, 0, 0});
  out.normal_defined.assign(f, 0);
  for (int64_t i = 0; i < f; ++i) {
    const float* grid = &g.face_grids[i * kPoints * kFaceChannels];
    std::array<double, 3> sum{0, 0, 0};
    int count = 0;
    for (int p = 0; p < kPoints; ++p) {
      const float* v = grid + p * kFaceChannels;
      if (v[6] <= 0.5f) continue;
      const double len = std::sqrt(double(v[3]) * v[3] + double(v[4]) * v[4] + double(v[5]) * v[5]);
      if (len < 1e-9) continue;
      for (int k = 0; k < 3; ++k) sum[k] += v[3 + k] / len;
      ++count;
    }
    if (count == 0) continue;
    const double len = std::sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]) / count;
    if (len < kMinMeanNormal) continue;
    const double norm = len * count;
    normals[i] = {sum[0] / norm, sum[1] / norm, sum[2] / norm};
    out.normal_defined[i] = 1;
  }

  out.normal_angle.assign(f * f, 0.0f);
  out.centroid_distance.assign(f * f, 0.0f);
  for (int64_t i = 0; i < f; ++i) {
    for (int64_t j = 0; j < f; ++j) {
      if (i != j && out.normal_defined[i] && out.normal_defined[j]) {
        double dot = 0;
        for (int k = 0; k < 3; ++k) dot += normals[i][k] * normals[j][k];
        out.normal_angle[i * f + j] = static_cast<float>(std::acos(std::clamp(dot, -1.0, 1.0)));
      }
      double d2 = 0;
      for (int k = 0; k < 3; ++k) {
        const double d = double(g.face_centroids[i * 3 + k]) - g.face_centroids[j * 3 + k];
        d2 += d * d;
      }
      out.centroid_distance[i * f + j] = static_cast<float>(std::sqrt(d2));
    }
  }
  return out;
}

}  // namespace cadclip::data
