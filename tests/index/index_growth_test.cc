// Large libraries: an inverted file is updated in place (removed rows
// dropped, new parts appended, nothing retrained) and then answers as one
// built anew; a lossy index (8-bit codes) orders what it finds by the exact
// vectors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/shard.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/searcher.h"
#include "cadclip/index/stored_index.h"
#include "index_fixture.h"

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

// The tiny checkpoint's embedding size (tests/model/tiny_model.h).
constexpr int kTinyDim = 8;

class IndexGrowthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(1);
    root_ = testing::fresh_folder("cadclip_index_growth_test");
    testing::write_checkpoint(root_ / "run", 0);
  }
  void TearDown() override { fs::remove_all(root_); }

  IndexOptions options(const fs::path& library, const fs::path& out,
                       const std::string& factory) const {
    IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = library.string();
    o.out = out.string();
    o.factory = factory;
    // Every list: the inverted file searches exactly.
    if (factory != "Flat") o.search_params = "nprobe=4";
    return o;
  }

  // Every part's ten nearest parts in `a` are those in `b`, with equal scores.
  static void expect_same_answers(const Searcher& a, const Searcher& b) {
    ASSERT_EQ(a.size(), b.size());
    for (const Item& item : a.items()) {
      const std::vector<Hit> x = a.search_like_item(item.id, 10);
      const std::vector<Hit> y = b.search_like_item(item.id, 10);
      ASSERT_EQ(x.size(), y.size()) << item.id;
      EXPECT_EQ(x.front().item->id, item.id);
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(x[i].item->id, y[i].item->id) << item.id << " rank " << i + 1;
        EXPECT_NEAR(x[i].score, y[i].score, 1e-5) << item.id << " rank " << i + 1;
      }
    }
  }

  fs::path root_;
};

// A prepared folder of parts named <prefix>0.. from seeds of their own.
void write_parts(const fs::path& folder, const std::string& prefix, int n, int seed) {
  fs::create_directories(folder);
  data::ShardWriter writer;
  for (int i = 0; i < n; ++i) {
    data::BRepGraph g = cadclip::testing::random_graph(2 + i % 5, seed + i);
    g.id = prefix + std::to_string(i);
    g.geometry_hash = prefix + std::to_string(seed + i);
    writer.add(g);
  }
  writer.write(folder / "shard-00000.safetensors");
  write_text_atomic(folder / "manifest.json",
                    R"({"shards": [{"file": "shard-00000.safetensors"}]})");
}

TEST_F(IndexGrowthTest, AnInvertedFileTakesNewPartsAndLosesOldOnesWithoutRetraining) {
  write_parts(root_ / "first", "m", 24, 100);
  write_parts(root_ / "batch", "n", 6, 500);
  IndexSummary s = build_index(options(root_ / "first", root_ / "index", "IVF4,Flat"));
  EXPECT_EQ(s.vectors_kept, 0);

  // A batch added: the 24 vectors stay where they are, 6 join them.
  IndexOptions add = options(root_ / "batch", root_ / "index", "auto");
  add.add = true;
  s = build_index(add);
  EXPECT_EQ(s.added, 6);
  EXPECT_EQ(s.removed, 0);
  EXPECT_EQ(s.parts, 30);
  EXPECT_EQ(s.vectors_kept, 24);
  EXPECT_EQ(s.factory, "IVF4,Flat");

  // The same 30 parts in one folder, built anew with a Flat index: the same answers.
  write_parts(root_ / "all", "m", 24, 100);
  {
    data::ShardWriter more;
    const data::Dataset batch = data::Dataset::open(root_ / "batch");
    for (int64_t i = 0; i < batch.size(); ++i) more.add(batch.graph(i));
    more.write(root_ / "all" / "shard-00001.safetensors");
    write_text_atomic(root_ / "all" / "manifest.json",
                      R"({"shards": [{"file": "shard-00000.safetensors"},)"
                      R"( {"file": "shard-00001.safetensors"}]})");
  }
  build_index(options(root_ / "all", root_ / "exact", "Flat"));
  expect_same_answers(Searcher::open(root_ / "index"), Searcher::open(root_ / "exact"));

  // An update from the first folder alone: the batch leaves, the rest stay
  // in place, and one changed part is embedded again.
  write_parts(root_ / "first", "m", 24, 100);
  {
    data::ShardWriter changed;
    const data::Dataset first = data::Dataset::open(root_ / "first");
    for (int64_t i = 0; i < first.size(); ++i) {
      data::BRepGraph g = first.graph(i);
      if (g.id == "m3") {
        g = cadclip::testing::random_graph(4, 999);
        g.id = "m3";
      }
      changed.add(g);
    }
    changed.write(root_ / "first" / "shard-00000.safetensors");
  }
  IndexOptions update = options(root_ / "first", root_ / "index", "auto");
  update.update = true;
  s = build_index(update);
  EXPECT_EQ(s.removed, 6);
  EXPECT_EQ(s.changed, 1);
  EXPECT_EQ(s.parts, 24);
  EXPECT_EQ(s.vectors_kept, 23);
  build_index(options(root_ / "first", root_ / "exact2", "Flat"));
  expect_same_answers(Searcher::open(root_ / "index"), Searcher::open(root_ / "exact2"));
  // Written out as parts, the index is in id order whatever its rows.
  const StoredIndex stored = read_stored_index(root_ / "index");
  for (size_t i = 1; i < stored.parts.size(); ++i)
    EXPECT_LT(stored.parts[i - 1].item.id, stored.parts[i].item.id);
}

TEST_F(IndexGrowthTest, EightBitCodesAreRerankedByTheExactVectors) {
  std::vector<Item> items(400);
  for (size_t i = 0; i < items.size(); ++i) items[i].id = "p" + std::to_string(1000 + i);
  const StoredIndex library = testing::random_library(root_ / "run", items, 7, kTinyDim);
  write_stored_index(root_ / "exact", library, {.factory = "Flat"});
  write_stored_index(root_ / "coded", library,
                     {.factory = "IVF4,SQ8", .search_params = "nprobe=4,rerank=50"});
  write_stored_index(root_ / "raw", library,
                     {.factory = "IVF4,SQ8", .search_params = "nprobe=4,rerank=0"});
  const Searcher exact = Searcher::open(root_ / "exact");
  const Searcher coded = Searcher::open(root_ / "coded");
  const Searcher raw = Searcher::open(root_ / "raw");
  expect_same_answers(coded, exact);
  // The codes alone score a part against itself below 1: what reranking mends.
  int below = 0;
  for (const Item& item : raw.items())
    below += raw.search_like_item(item.id, 1).front().score < 1 - 1e-6;
  EXPECT_GT(below, 0);
}

TEST_F(IndexGrowthTest, ARerankThatIsNoCountIsRefusedByName) {
  std::vector<Item> items(8);
  for (size_t i = 0; i < items.size(); ++i) items[i].id = "p" + std::to_string(i);
  const StoredIndex library = testing::random_library(root_ / "run", items, 3, kTinyDim);
  write_stored_index(root_ / "good", library, {.factory = "IVF2,SQ8", .search_params = "rerank=4"});
  try {
    write_stored_index(root_ / "bad", library,
                       {.factory = "IVF2,SQ8", .search_params = "nprobe=2,rerank=many"});
    ADD_FAILURE() << "rerank=many was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rerank=many"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cadclip::index
