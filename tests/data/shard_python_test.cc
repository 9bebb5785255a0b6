// The shards open in Python's safetensors, and what Python reads there is what
// cadclip wrote.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "../run_command.h"
#include "cadclip/data/shard.h"
#include "test_graphs.h"

namespace cadclip::data {
namespace {

TEST(ShardPython, SafetensorsReadsEveryModel) {
  testing::ScratchDir dir("shard-python");
  const std::vector<BRepGraph> graphs = {testing::chain_graph("0070/00702684", 3, 1.0f),
                                         testing::chain_graph("solo", 1, 2.5f)};
  ShardWriter writer;
  for (const auto& g : graphs) writer.add(g);
  const auto path = dir.path() / "s.safetensors";
  writer.write(path);

  const std::string out =
      cadclip::testing::run_command(std::string(CADCLIP_PYTHON_EXE) + " " + CADCLIP_SOURCE_DIR +
                                        "/tests/data/read_shard.py " + path.string(),
                                    /*with_stderr=*/false)
          .output;
  const nlohmann::json doc = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(doc.is_object()) << "python printed: " << out;
  EXPECT_EQ(doc["format"], kShardFormat);
  EXPECT_EQ(doc["schema_version"], std::to_string(kShardSchemaVersion));
  ASSERT_EQ(doc["models"].size(), graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    const auto& m = doc["models"][i];
    const BRepGraph& g = graphs[i];
    EXPECT_EQ(m["id"], g.id);
    EXPECT_EQ(m["faces"], g.num_faces());
    EXPECT_EQ(m["edges"], g.num_edges());
    EXPECT_EQ(m["grid_shape"], nlohmann::json::array({g.num_faces(), 10, 10, 7}));
    double grid_sum = 0, edge_sum = 0;
    for (float v : g.face_grids) grid_sum += v;
    for (float v : g.edge_grids) edge_sum += v;
    EXPECT_NEAR(m["grid_sum"].get<double>(), grid_sum, 1e-6 * (1 + std::abs(grid_sum)));
    EXPECT_NEAR(m["edge_grid_sum"].get<double>(), edge_sum, 1e-6 * (1 + std::abs(edge_sum)));
    EXPECT_EQ(m["edge_src"], nlohmann::json(g.edge_src));
    for (int k = 0; k < 6; ++k) EXPECT_FLOAT_EQ(m["bbox_mm"][k].get<float>(), g.bbox_mm[k]);
  }
}

}  // namespace
}  // namespace cadclip::data
