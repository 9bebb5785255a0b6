// index/stored_index.h: an index read and written as parts with embeddings,
// without a model. A grown library searches as the index it came from.
#include "cadclip/index/stored_index.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <map>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/searcher.h"
#include "index_fixture.h"

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

class StoredIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(1);
    root_ = testing::fresh_folder("cadclip_stored_index_test");
    testing::write_checkpoint(root_ / "run", 0);
    testing::write_prepared(root_ / "prepared", 8);
    IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = (root_ / "prepared").string();
    o.out = (root_ / "index").string();
    build_index(o);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(StoredIndexTest, ARewrittenIndexSearchesAsTheOriginal) {
  const StoredIndex stored = read_stored_index(root_ / "index");
  ASSERT_EQ(stored.parts.size(), 8u);
  EXPECT_EQ(stored.parts[0].item.id, "m0");
  EXPECT_EQ(stored.embed_dim, static_cast<int64_t>(stored.parts[0].embedding.size()));
  EXPECT_FALSE(stored.checkpoint_identity.empty());

  // Written back into another folder with an approximate factory's parameters.
  const fs::path version =
      write_stored_index(root_ / "copy", stored, {.factory = "Flat", .search_params = ""});
  EXPECT_TRUE(fs::exists(version / "vectors.faiss"));
  const Searcher original = Searcher::open(root_ / "index");
  const Searcher copy = Searcher::open(root_ / "copy");
  EXPECT_EQ(copy.size(), 8);
  EXPECT_EQ(copy.checkpoint_identity(), original.checkpoint_identity());
  for (const char* text : {"hex nut", "a cube of 10 mm"}) {
    const std::vector<Hit> a = original.search_text(text, 8), b = copy.search_text(text, 8);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].item->id, b[i].item->id) << text << " rank " << i + 1;
      EXPECT_FLOAT_EQ(static_cast<float>(a[i].score), static_cast<float>(b[i].score));
    }
  }
  // Read back, the copy holds the same parts and vectors.
  const StoredIndex again = read_stored_index(root_ / "copy");
  ASSERT_EQ(again.parts.size(), stored.parts.size());
  for (size_t i = 0; i < again.parts.size(); ++i) {
    EXPECT_EQ(again.parts[i].item.id, stored.parts[i].item.id);
    EXPECT_EQ(again.parts[i].embedding, stored.parts[i].embedding);
  }
}

TEST_F(StoredIndexTest, MorePartsFromGivenVectorsAndASearchParameterOverride) {
  StoredIndex grown = read_stored_index(root_ / "index");
  const size_t real = grown.parts.size();
  for (size_t i = 0; i < real; ++i) {
    StoredPart copy = grown.parts[i];
    copy.item.id += "~copy";
    for (float& x : copy.embedding) x = -x;  // the opposite direction: the negated score
    grown.parts.push_back(std::move(copy));
  }
  write_stored_index(root_ / "grown", grown, {.factory = "IVF2,Flat", .search_params = "nprobe=1"});
  const Searcher one_list = Searcher::open(root_ / "grown");
  EXPECT_EQ(one_list.size(), 16);
  EXPECT_EQ(one_list.factory(), "IVF2,Flat");
  const Searcher every_list = Searcher::open(root_ / "grown", {.search_params = "nprobe=2"});
  const at::Tensor query = every_list.embed_text("hex nut");
  // Searching one of the two lists leaves parts out; both lists find all 16,
  // each copy at minus its source's score.
  EXPECT_LT(one_list.search(query, 16).size(), 16u);
  const std::vector<Hit> hits = every_list.search(query, 16);
  ASSERT_EQ(hits.size(), 16u);
  std::map<std::string, double> score;
  for (const Hit& h : hits) score[h.item->id] = h.score;
  for (int i = 0; i < 8; ++i) {
    const std::string id = "m" + std::to_string(i);
    EXPECT_NEAR(score.at(id + "~copy"), -score.at(id), 1e-5) << id;
  }
}

TEST_F(StoredIndexTest, RefusesRepeatedIdsAndWrongSizesAndLeavesTheIndexAsItWas) {
  StoredIndex bad = read_stored_index(root_ / "index");
  bad.parts.push_back(bad.parts[0]);
  try {
    write_stored_index(root_ / "index", bad);
    FAIL() << "a repeated id was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'m0' is given twice"), std::string::npos) << e.what();
  }
  bad.parts.pop_back();
  bad.parts[3].embedding.pop_back();
  try {
    write_stored_index(root_ / "index", bad);
    FAIL() << "a short embedding was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'m3' has an embedding of size"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(Searcher::open(root_ / "index").size(), 8);
}

}  // namespace
}  // namespace cadclip::index
