#include "cadclip/data/pairwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace cadclip::data {
namespace {

constexpr int kPoints = kUvGridSize * kUvGridSize;

// Sets every grid point of face `f`: normal `in` where inside (the first
// `inside` points), normal `out` with mask 0 elsewhere.
void set_face(BRepGraph& g, int f, int inside, std::array<float, 3> in, std::array<float, 3> out) {
  for (int p = 0; p < kPoints; ++p) {
    float* v = &g.face_grids[(f * kPoints + p) * kFaceChannels];
    const auto& n = p < inside ? in : out;
    v[0] = v[1] = v[2] = 0.1f * p;
    v[3] = n[0], v[4] = n[1], v[5] = n[2];
    v[6] = p < inside ? 1.0f : 0.0f;
  }
}

// Faces 0-1-2 in a chain, face 3 alone; see each face's normals below.
BRepGraph hand_built() {
  BRepGraph g;
  g.id = "hand";
  const int f = 4;
  g.face_grids.assign(f * kPoints * kFaceChannels, 0.0f);
  g.face_types.assign(f, 0);
  g.face_areas.assign(f, 1.0f);
  g.face_rational.assign(f, 0);
  g.face_loops.assign(f, 1);
  g.face_centroids = {0, 0, 0, 3, 4, 0, 0, 0, 1, 1, 1, 1};
  set_face(g, 0, kPoints, {0, 0, 1}, {0, 0, 0});
  // Face 1: inside points face +x; the masked-out half faces -z and must not count.
  set_face(g, 1, kPoints / 2, {2, 0, 0}, {0, 0, -1});
  set_face(g, 2, kPoints, {0, 0, -1}, {0, 0, 0});
  // Face 3: a full cylinder's normals cancel out: half +x, half -x, all inside.
  set_face(g, 3, kPoints / 2, {1, 0, 0}, {-1, 0, 0});
  for (int p = kPoints / 2; p < kPoints; ++p)
    g.face_grids[(3 * kPoints + p) * kFaceChannels + 6] = 1;
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 2}}) {
    g.edge_src.insert(g.edge_src.end(), {a, b});
    g.edge_dst.insert(g.edge_dst.end(), {b, a});
  }
  g.edge_grids.assign(4 * kCurveSamples * kEdgeChannels, 0.0f);
  g.edge_types.assign(4, 0);
  g.edge_lengths.assign(4, 1.0f);
  g.edge_convexity.assign(4, 0);
  return g;
}

TEST(Pairwise, HopsAnglesAndDistancesOfAHandBuiltGraph) {
  const PairwiseInputs p = pairwise_inputs(hand_built());
  const int f = 4;
  ASSERT_EQ(p.num_faces, f);
  auto hops = [&](int i, int j) { return p.hops[i * f + j]; };
  auto angle = [&](int i, int j) { return p.normal_angle[i * f + j]; };
  auto dist = [&](int i, int j) { return p.centroid_distance[i * f + j]; };

  EXPECT_EQ(hops(0, 0), 0);
  EXPECT_EQ(hops(0, 1), 1);
  EXPECT_EQ(hops(0, 2), 2);
  EXPECT_EQ(hops(2, 0), 2);
  EXPECT_EQ(hops(0, 3), kUnreachableHops);
  EXPECT_EQ(hops(3, 3), 0);

  EXPECT_EQ(p.normal_defined, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_NEAR(angle(0, 1), std::numbers::pi / 2, 1e-6);  // masked-out -z half ignored
  EXPECT_NEAR(angle(0, 2), std::numbers::pi, 1e-6);
  EXPECT_NEAR(angle(1, 2), std::numbers::pi / 2, 1e-6);
  EXPECT_FLOAT_EQ(angle(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(angle(0, 3), 0.0f);  // undefined normal

  EXPECT_FLOAT_EQ(dist(0, 1), 5.0f);
  EXPECT_FLOAT_EQ(dist(1, 0), 5.0f);
  EXPECT_FLOAT_EQ(dist(0, 2), 1.0f);
  EXPECT_NEAR(dist(0, 3), std::sqrt(3.0f), 1e-6);
  EXPECT_FLOAT_EQ(dist(2, 2), 0.0f);
}

TEST(Pairwise, AGraphWithoutFacesGivesEmptyMatrices) {
  const PairwiseInputs p = pairwise_inputs(BRepGraph{});
  EXPECT_EQ(p.num_faces, 0);
  EXPECT_TRUE(p.hops.empty());
}

}  // namespace
}  // namespace cadclip::data
