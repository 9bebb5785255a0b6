#include "cadclip/data/shard.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/dataset.h"
#include "test_graphs.h"

namespace cadclip::data {
namespace {

using testing::chain_graph;
using testing::same_graph;
using testing::ScratchDir;

TEST(Shard, RoundTripThroughTheReaderAcrossTwoShards) {
  ScratchDir dir("shard-roundtrip");
  const std::vector<BRepGraph> graphs = {chain_graph("0070/00702684", 4, 1.0f),
                                         chain_graph("single", 1, 2.0f),
                                         chain_graph("third", 7, 3.0f)};
  ShardWriter writer;
  writer.add(graphs[0]);
  writer.add(graphs[1]);
  EXPECT_EQ(writer.num_faces(), 5);
  EXPECT_EQ(writer.num_edges(), 6);
  writer.write(dir.path() / "a.safetensors");
  EXPECT_EQ(writer.size(), 0);  // starts empty after a write
  writer.add(graphs[2]);
  writer.write(dir.path() / "b.safetensors");

  const Dataset dataset =
      Dataset::open_shards({dir.path() / "a.safetensors", dir.path() / "b.safetensors"});
  ASSERT_EQ(dataset.size(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(dataset.id(i), graphs[i].id);
    EXPECT_EQ(dataset.num_faces(i), graphs[i].num_faces());
    EXPECT_EQ(dataset.num_edges(i), graphs[i].num_edges());
    EXPECT_TRUE(same_graph(dataset.graph(i), graphs[i])) << "model " << i;
  }
  EXPECT_EQ(dataset.find("third"), 2);
  EXPECT_EQ(dataset.find("missing"), std::nullopt);
  EXPECT_THROW(dataset.graph(3), Error);
  EXPECT_THROW(dataset.graph(-1), Error);
}

TEST(Shard, MetadataCarriesSchemaAndIds) {
  ScratchDir dir("shard-meta");
  ShardWriter writer;
  writer.add(chain_graph("a", 2, 1.0f));
  writer.add(chain_graph("b", 3, 1.0f));
  writer.write(dir.path() / "s.safetensors");
  const SafetensorsReader file = SafetensorsReader::open(dir.path() / "s.safetensors");
  EXPECT_EQ(file.metadata().at("format"), kShardFormat);
  EXPECT_EQ(file.metadata().at("schema_version"), std::to_string(kShardSchemaVersion));
  EXPECT_EQ(file.metadata().at("count"), "2");
  EXPECT_EQ(nlohmann::json::parse(file.metadata().at("ids")), nlohmann::json::array({"a", "b"}));
  EXPECT_EQ(file.at("face_offsets").shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(file.at("face_grids").shape, (std::vector<int64_t>{5, 10, 10, 7}));
  EXPECT_EQ(file.at("edge_grids").shape, (std::vector<int64_t>{6, 10, 12}));
}

TEST(Shard, EqualInputsGiveEqualBytes) {
  ScratchDir dir("shard-determinism");
  for (const char* name : {"1.safetensors", "2.safetensors"}) {
    ShardWriter writer;
    writer.add(chain_graph("a", 3, 1.0f));
    writer.add(chain_graph("b", 2, 4.0f));
    writer.write(dir.path() / name);
  }
  EXPECT_EQ(read_text_file(dir.path() / "1.safetensors"),
            read_text_file(dir.path() / "2.safetensors"));
}

TEST(Shard, InconsistentGraphIsRefusedWithItsId) {
  BRepGraph g = chain_graph("broken-one", 3, 1.0f);
  g.face_loops.pop_back();
  ShardWriter writer;
  try {
    writer.add(g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken-one"), std::string::npos);
  }
  EXPECT_THROW(writer.write("/tmp/never-written.safetensors"), Error);  // nothing added
}

TEST(Dataset, RejectsAFileThatIsNoShard) {
  ScratchDir dir("shard-foreign");
  SafetensorsWriter other;
  const std::vector<float> w = {1, 2, 3};
  other.add_f32("weight", {3}, w);
  other.write(dir.path() / "model.safetensors");
  try {
    Dataset::open_shards({dir.path() / "model.safetensors"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos);
  }
}

TEST(Dataset, OpensAPreparedFolderThroughItsManifest) {
  ScratchDir dir("dataset-folder");
  ShardWriter writer;
  writer.add(chain_graph("x", 2, 1.0f));
  writer.write(dir.path() / "shards" / "shard-00000.safetensors");
  write_text_atomic(dir.path() / "manifest.json",
                    R"({"shards": [{"file": "shards/shard-00000.safetensors", "models": 1}]})");
  const Dataset dataset = Dataset::open(dir.path());
  ASSERT_EQ(dataset.size(), 1);
  EXPECT_EQ(dataset.graph(0).id, "x");
  EXPECT_THROW(Dataset::open(dir.path() / "shards"), Error);  // no manifest there
}

TEST(Dataset, DuplicateIdsAcrossShardsAreAnError) {
  ScratchDir dir("dataset-dup");
  for (const char* name : {"1.safetensors", "2.safetensors"}) {
    ShardWriter writer;
    writer.add(chain_graph("same", 2, 1.0f));
    writer.write(dir.path() / name);
  }
  EXPECT_THROW(Dataset::open_shards({dir.path() / "1.safetensors", dir.path() / "2.safetensors"}),
               Error);
}

}  // namespace
}  // namespace cadclip::data
