// Test-only: random BRepGraphs with a valid adjacency (a random spanning tree
// plus extra pairs, both directions of each, sometimes two edges between the
// same faces) and random grids and attributes, and a face/edge permutation.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "cadclip/data/brep_graph.h"

namespace cadclip::testing {

inline data::BRepGraph random_graph(int faces, uint32_t seed, double extra_edge_share = 0.5) {
  using namespace cadclip::data;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  std::uniform_real_distribution<float> positive(0.f, 1.f);
  BRepGraph g;
  g.id = "random-" + std::to_string(seed);
  for (int i = 0; i < faces; ++i) {
    // A mean normal direction per face, jittered per point.
    float n[3] = {unit(rng), unit(rng), unit(rng)};
    for (int p = 0; p < kUvGridSize * kUvGridSize; ++p) {
      for (int c = 0; c < 3; ++c) g.face_grids.push_back(unit(rng));
      float m[3] = {n[0] + 0.2f * unit(rng), n[1] + 0.2f * unit(rng), n[2] + 0.2f * unit(rng)};
      const float len = std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) + 1e-6f;
      for (float v : m) g.face_grids.push_back(v / len);
      g.face_grids.push_back(positive(rng) < 0.8f ? 1.f : 0.f);
    }
    g.face_types.push_back(static_cast<uint8_t>(rng() % static_cast<int>(SurfaceType::kCount)));
    g.face_areas.push_back(1.f + 1000.f * positive(rng));
    for (int c = 0; c < 3; ++c) g.face_centroids.push_back(unit(rng));
    g.face_rational.push_back(rng() % 2);
    g.face_loops.push_back(1 + rng() % 3);
  }
  auto add_pair = [&](int a, int b) {
    for (int direction = 0; direction < 2; ++direction) {
      g.edge_src.push_back(direction ? b : a);
      g.edge_dst.push_back(direction ? a : b);
      for (int k = 0; k < kCurveSamples * kEdgeChannels; ++k) g.edge_grids.push_back(unit(rng));
      g.edge_types.push_back(static_cast<uint8_t>(rng() % static_cast<int>(CurveType::kCount)));
      g.edge_lengths.push_back(0.5f + 100.f * positive(rng));
      g.edge_convexity.push_back(static_cast<uint8_t>(rng() % 3));
    }
  };
  for (int i = 1; i < faces; ++i) add_pair(static_cast<int>(rng() % i), i);
  const int extra = static_cast<int>(extra_edge_share * faces);
  for (int k = 0; k < extra && faces > 1; ++k) {
    const int a = static_cast<int>(rng() % faces), b = static_cast<int>(rng() % faces);
    if (a != b) add_pair(a, b);  // may repeat a pair: two B-Rep edges between the same faces
  }
  const float size = 10.f + 90.f * positive(rng);
  g.bbox_mm = {0, 0, 0, size, size * 0.5f, size * 0.25f};
  g.scale_mm = size;
  g.unit = "assumed:mm";
  g.solid_count = 1;
  g.closed = true;
  g.geometry_hash = "0";
  return g;
}

// Face i of `g` becomes face face_perm[i]; the edges are listed in a shuffled order.
inline data::BRepGraph permute_graph(const data::BRepGraph& g, uint32_t seed) {
  using namespace cadclip::data;
  std::mt19937 rng(seed);
  const int64_t f = g.num_faces(), e = g.num_edges();
  std::vector<int32_t> face_perm(f), edge_order(e);
  std::iota(face_perm.begin(), face_perm.end(), 0);
  std::iota(edge_order.begin(), edge_order.end(), 0);
  std::shuffle(face_perm.begin(), face_perm.end(), rng);
  std::shuffle(edge_order.begin(), edge_order.end(), rng);
  BRepGraph p = g;
  constexpr int kGrid = kUvGridSize * kUvGridSize * kFaceChannels;
  for (int64_t i = 0; i < f; ++i) {
    const int64_t j = face_perm[i];
    std::copy_n(g.face_grids.begin() + i * kGrid, kGrid, p.face_grids.begin() + j * kGrid);
    p.face_types[j] = g.face_types[i];
    p.face_areas[j] = g.face_areas[i];
    std::copy_n(g.face_centroids.begin() + i * 3, 3, p.face_centroids.begin() + j * 3);
    p.face_rational[j] = g.face_rational[i];
    p.face_loops[j] = g.face_loops[i];
  }
  constexpr int kCurve = kCurveSamples * kEdgeChannels;
  for (int64_t k = 0; k < e; ++k) {
    const int64_t from = edge_order[k];
    p.edge_src[k] = face_perm[g.edge_src[from]];
    p.edge_dst[k] = face_perm[g.edge_dst[from]];
    std::copy_n(g.edge_grids.begin() + from * kCurve, kCurve, p.edge_grids.begin() + k * kCurve);
    p.edge_types[k] = g.edge_types[from];
    p.edge_lengths[k] = g.edge_lengths[from];
    p.edge_convexity[k] = g.edge_convexity[from];
  }
  return p;
}

}  // namespace cadclip::testing
