// Collation: packed faces and edges, pairwise inputs padded to the largest graph.
#include <gtest/gtest.h>

#include <algorithm>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/size_groups.h"
#include "cadclip/data/batch.h"
#include "random_graph.h"

namespace cadclip::data {
namespace {

TEST(Collate, PacksFacesAndEdgesAndPadsPairsToTheLargestGraph) {
  const std::vector<BRepGraph> graphs = {testing::random_graph(5, 1), testing::random_graph(9, 2),
                                         testing::random_graph(1, 3)};
  const BRepBatch batch = collate(graphs);
  const int64_t n = 15, m = 9;
  int64_t e = 0;
  for (const BRepGraph& g : graphs) e += g.num_edges();

  EXPECT_EQ(batch.num_graphs(), 3);
  EXPECT_EQ(batch.max_faces(), m);
  EXPECT_EQ(batch.face_grids.sizes(), (at::IntArrayRef{n, 7, 10, 10}));
  EXPECT_EQ(batch.face_attrs.sizes(), (at::IntArrayRef{n, kFaceAttrs}));
  EXPECT_EQ(batch.edge_grids.sizes(), (at::IntArrayRef{e, 12, 10}));
  EXPECT_EQ(batch.hops.sizes(), (at::IntArrayRef{3, m, m}));
  EXPECT_EQ(batch.padding_mask.sizes(), (at::IntArrayRef{3, m}));
  EXPECT_TRUE(at::equal(batch.face_offsets, at::tensor({0, 5, 14, 15}, at::kLong)));
  EXPECT_EQ(batch.padding_mask.sum().item<int64_t>(), 3 * m - n);
  EXPECT_TRUE(batch.padding_mask[2][0].item<bool>() == false);
  EXPECT_TRUE(batch.padding_mask[2][1].item<bool>());

  // Channels-last grids become channels-first: face 2 of graph 1 is row 7.
  const BRepGraph& g = graphs[1];
  const int u = 3, v = 8, c = 4;
  EXPECT_EQ(batch.face_grids[7][c][u][v].item<float>(),
            g.face_grids[((2 * 10 + u) * 10 + v) * 7 + c]);
  EXPECT_EQ(batch.face_slot[7].item<int64_t>(), 1 * m + 2);
  EXPECT_EQ(batch.face_graph[7].item<int64_t>(), 1);

  // Edge 3 of graph 1 points at its pair in the flattened [B, M, M].
  const int64_t edge_row = graphs[0].num_edges() + 3;
  EXPECT_EQ(batch.edge_pair[edge_row].item<int64_t>(),
            1 * m * m + int64_t{g.edge_src[3]} * m + g.edge_dst[3]);
  EXPECT_EQ(batch.edge_grids[edge_row][7][2].item<float>(), g.edge_grids[(3 * 10 + 2) * 12 + 7]);

  // Pairwise inputs: the graph's own values inside, "unreachable" on padding.
  const PairwiseInputs p = pairwise_inputs(g);
  EXPECT_EQ(batch.hops[1][4][6].item<int64_t>(), p.hops[4 * 9 + 6]);
  EXPECT_FLOAT_EQ(batch.centroid_distance[0][1][2].item<float>(),
                  pairwise_inputs(graphs[0]).centroid_distance[1 * 5 + 2]);
  EXPECT_EQ(batch.hops[0][1][7].item<int64_t>(), kUnreachableHops);
  EXPECT_EQ(batch.hops[2][0][0].item<int64_t>(), 0);
  EXPECT_FLOAT_EQ(batch.face_attrs[7][0].item<float>(), std::log1p(g.face_areas[2]));
  EXPECT_FLOAT_EQ(batch.graph_attrs[1][0].item<float>(), std::log1p(g.scale_mm));

  const BRepBatch moved = batch.to(at::kCPU);
  EXPECT_EQ(moved.ids, batch.ids);
  EXPECT_TRUE(at::equal(moved.face_grids, batch.face_grids));
  EXPECT_TRUE(at::equal(moved.padding_mask, batch.padding_mask));
  EXPECT_TRUE(at::equal(moved.edge_pair, batch.edge_pair));
}

TEST(Collate, RejectsBadInputWithTheGraphNamed) {
  EXPECT_THROW(collate(std::vector<BRepGraph>{}), Error);
  BRepGraph broken = testing::random_graph(4, 7);
  broken.edge_dst[0] = 4;  // no face 4
  try {
    collate(std::vector<BRepGraph>{testing::random_graph(3, 8), broken});
    FAIL() << "an edge to a missing face was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(broken.id), std::string::npos) << e.what();
  }
  BRepGraph empty = testing::random_graph(1, 9);
  empty.face_grids.clear();
  empty.face_types.clear();
  empty.face_areas.clear();
  empty.face_centroids.clear();
  empty.face_rational.clear();
  empty.face_loops.clear();
  EXPECT_THROW(collate(std::vector<BRepGraph>{empty}), Error);
}

TEST(GroupBySize, CoversEveryGraphOnceAndSplitsOnlyWhenPaddingCostsMore) {
  // Nine small graphs and one large: the large one goes alone.
  const std::vector<int64_t> counts = {10, 12, 200, 9, 11, 10, 12, 8, 10, 11};
  const auto groups = group_by_size(counts, /*group_overhead=*/4096);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups.back(), std::vector<int64_t>{2});
  std::vector<int64_t> seen;
  for (const auto& g : groups) seen.insert(seen.end(), g.begin(), g.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));

  // Equal sizes never split; a huge overhead keeps one group; none for none.
  EXPECT_EQ(group_by_size(std::vector<int64_t>(8, 30)).size(), 1u);
  EXPECT_EQ(group_by_size(counts, /*group_overhead=*/int64_t{1} << 40).size(), 1u);
  EXPECT_TRUE(group_by_size(std::vector<int64_t>{}).empty());
  EXPECT_THROW(group_by_size(counts, -1), Error);
}

TEST(GroupBySize, NeverCostsMoreThanOnePaddedGroup) {
  std::vector<int64_t> counts;
  for (int i = 0; i < 64; ++i) counts.push_back(4 + (i * 37) % 240);
  const int64_t overhead = 4096;
  auto cost = [&](const std::vector<int64_t>& g) {
    int64_t m = 0;
    for (int64_t i : g) m = std::max(m, counts[i]);
    return static_cast<double>(g.size()) * (m + 1) * (m + 1) + overhead;
  };
  double grouped = 0;
  for (const auto& g : group_by_size(counts, overhead)) grouped += cost(g);
  std::vector<int64_t> all(counts.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  EXPECT_LT(grouped, 0.5 * cost(all));
}

}  // namespace
}  // namespace cadclip::data
