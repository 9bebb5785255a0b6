// cadclip duplicates on a built library whose duplicates are known: exact
// duplicates (same geometry hash), mirror images, near duplicates (close
// embeddings and sizes, other geometry), and a close part of another size that
// is none; by exact pair comparison and through the vector index; under a
// filter; and the command's CSV and JSON.
#include "cadclip/index/duplicates.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/index/stored_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "index_fixture.h"

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

class DuplicatesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    at::set_num_threads(1);
    root_ = new fs::path(testing::fresh_folder("cadclip_duplicates_test"));
    testing::write_checkpoint(*root_ / "run", 0);
    StoredIndex library;
    library.checkpoint = (*root_ / "run").string();
    library.checkpoint_identity = model::checkpoint_identity(*root_ / "run");
    library.embed_dim = 8;
    // axis, lean toward axis 7 (or 6 when negative): the embedding.
    auto add = [&](const std::string& id, const std::string& hash, int axis, float lean,
                   std::array<double, 3> size, int faces, int handedness) {
      StoredPart p;
      p.item.id = p.item.name = id;
      p.item.geometry_hash = hash;
      for (int i = 0; i < 3; ++i) p.item.size_mm[i] = size[i];
      p.item.faces = faces;
      p.item.holes = 0;
      p.item.shape = {{size[0] / 3, size[1] / 3, size[2] / 3}, {0.3, 0.2, 0.1}, handedness};
      p.embedding.assign(8, 0.f);
      p.embedding[axis] = 1;
      p.embedding[lean >= 0 ? 7 : 6] = std::abs(lean);
      const float norm = std::sqrt(1 + lean * lean);
      for (float& v : p.embedding) v /= norm;
      library.parts.push_back(std::move(p));
    };
    add("a1", "g-a", 0, 0.0f, {50, 20, 10}, 8, 1);
    add("a2", "g-a", 0, 0.0f, {50, 20, 10}, 8, 1);  // exported again: same geometry
    add("left", "g-l", 1, 0.0f, {80, 40, 12}, 6, 1);
    add("right", "g-r", 1, 0.01f, {80, 40, 12}, 6, -1);  // its mirror image
    add("n1", "g-n1", 2, 0.0f, {100, 60, 30}, 14, 0);
    add("n2", "g-n2", 2, 0.1f, {100.5, 60.2, 30}, 14, 0);  // close, same size: near
    add("n3", "g-n3", 2, -0.1f, {110, 66, 33}, 14, 0);     // close, 10% larger: no
    add("x", "g-x", 3, 0.0f, {10, 10, 10}, 6, 0);
    write_stored_index(*root_ / "index", library, {.factory = "Flat"});
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }

  // "kind: id id ..." per cluster.
  static std::vector<std::string> clusters(const DuplicateReport& r) {
    std::vector<std::string> out;
    for (const DuplicateCluster& c : r.clusters) {
      std::string line = c.kind + ":";
      for (const DuplicateMember& m : c.members) line += " " + m.item->id;
      out.push_back(line);
    }
    return out;
  }

  static fs::path* root_;
};

fs::path* DuplicatesTest::root_ = nullptr;

TEST_F(DuplicatesTest, ExactMirroredAndNearClusters) {
  const Searcher searcher = Searcher::open(*root_ / "index");
  for (const int64_t exact_up_to : {int64_t{5000}, int64_t{0}}) {  // pairs, then the index
    SCOPED_TRACE(exact_up_to);
    DuplicateOptions options;
    options.exact_up_to = exact_up_to;
    const DuplicateReport r = find_duplicates(searcher, options);
    EXPECT_EQ(r.parts, 8);
    // Mirror images with close embeddings are near duplicates too.
    EXPECT_EQ(clusters(r), (std::vector<std::string>{"exact: a1 a2", "mirrored: left right",
                                                     "near: left right", "near: n1 n2"}));
    EXPECT_EQ(r.exact_parts, 2);
    EXPECT_EQ(r.mirrored_parts, 2);
    EXPECT_EQ(r.near_parts, 4);
    EXPECT_DOUBLE_EQ(r.clusters[0].members[1].score, 1.0);
    EXPECT_NEAR(r.clusters[3].members[1].score, 1 / std::sqrt(1.01), 1e-5);
    EXPECT_NEAR(r.clusters[3].min_score, 1 / std::sqrt(1.01), 1e-5);
  }
  // A wider size tolerance takes n3 in; a higher score threshold drops n2.
  DuplicateOptions wide;
  wide.exact = wide.mirrored = false;
  wide.size_tolerance = 0.15;
  EXPECT_EQ(clusters(find_duplicates(searcher, wide)),
            (std::vector<std::string>{"near: n1 n2 n3", "near: left right"}));
  DuplicateOptions strict = wide;
  strict.size_tolerance = 0.02;
  strict.min_score = 0.999;
  EXPECT_EQ(clusters(find_duplicates(searcher, strict)),
            (std::vector<std::string>{"near: left right"}));
  // Under a filter only the parts that pass are compared.
  DuplicateOptions six;
  six.filter = parse_filter("faces=6");
  const DuplicateReport r = find_duplicates(searcher, six);
  EXPECT_EQ(r.parts, 3);
  EXPECT_EQ(clusters(r), (std::vector<std::string>{"mirrored: left right", "near: left right"}));
  DuplicateOptions bad;
  bad.min_score = 2;
  EXPECT_THROW(find_duplicates(searcher, bad), Error);
}

TEST_F(DuplicatesTest, TheCommandWritesCsvAndJson) {
  auto run = [&](const std::string& args, int& status) {
    const std::string command = std::string(CADCLIP_BINARY) + " --log-level warn duplicates " +
                                (*root_ / "index").string() + " " + args + " 2>&1";
    std::FILE* pipe = ::popen(command.c_str(), "r");
    std::string output;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    status = WEXITSTATUS(::pclose(pipe));
    return output;
  };
  int status = 0;
  const std::string csv = run("--format csv", status);
  EXPECT_EQ(status, 1) << csv;  // clusters found
  EXPECT_TRUE(csv.starts_with("cluster,kind,member,id,name,score,")) << csv;
  EXPECT_NE(csv.find("\n1,exact,1,a1,a1,1.0000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,exact,2,a2,a2,1.0000,"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // header + 8 members
  const nlohmann::json json = nlohmann::json::parse(run("--format json --kinds exact", status));
  EXPECT_EQ(json["parts"], 8);
  ASSERT_EQ(json["clusters"].size(), 1u);
  EXPECT_EQ(json["clusters"][0]["members"][1]["id"], "a2");
  EXPECT_EQ(json["clusters"][0]["members"][1]["geometry_hash"], "g-a");
  run("--kinds exact,bogus", status);
  EXPECT_EQ(status, 2);
  run("--kinds near --filter \"faces=8\"", status);
  EXPECT_EQ(status, 0);  // a1 and a2 share their geometry: no near duplicates among them
}

}  // namespace
}  // namespace cadclip::index
