// Loading: the shared corpus, the model rule, units, and bad inputs that must
// fail with the right reason.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"
#include "test_shapes.h"

namespace cadclip::cad {
namespace {

const std::filesystem::path kCorpus = "../shared/data/cad";

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Ingest, EveryCorpusFileGivesAGraphOrAStatedFailure) {
  ASSERT_TRUE(std::filesystem::is_directory(kCorpus)) << "run from the project root";
  std::map<std::string, std::filesystem::path> files;  // sorted: a stable report
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kCorpus))
    if (entry.is_regular_file() && is_cad_path(entry.path()))
      files[entry.path().string()] = entry.path();
  ASSERT_GE(files.size(), 30u);
  int graphs = 0;
  for (const auto& [name, path] : files) {
    const Result<data::BRepGraph> graph = ingest_file(path, IngestOptions{});
    if (!graph) {
      EXPECT_FALSE(graph.status().reason().empty()) << name;
      std::cout << "[failed] " << name << ": " << graph.status().reason() << "\n";
      continue;
    }
    ++graphs;
    std::cout << "[graph] " << name << ": " << graph->num_faces() << " faces, "
              << graph->num_edges() << " edges, " << graph->solid_count << " solids, "
              << (graph->closed ? "closed" : "open") << ", " << graph->scale_mm << " mm, "
              << graph->unit << "\n";
    const int64_t f = graph->num_faces(), e = graph->num_edges();
    EXPECT_GT(f, 0) << name;
    EXPECT_EQ(graph->face_grids.size(), size_t(f * 10 * 10 * 7)) << name;
    EXPECT_EQ(graph->face_centroids.size(), size_t(f * 3)) << name;
    EXPECT_EQ(graph->edge_grids.size(), size_t(e * 10 * 12)) << name;
    EXPECT_EQ(graph->edge_dst.size(), size_t(e)) << name;
    EXPECT_EQ(e % 2, 0) << name;
    EXPECT_EQ(graph->id, path.stem().string());
    EXPECT_EQ(graph->geometry_hash.size(), 64u) << name;
    for (float value : graph->face_grids) ASSERT_TRUE(std::isfinite(value)) << name;
    for (float value : graph->edge_grids) ASSERT_TRUE(std::isfinite(value)) << name;
    for (int64_t k = 0; k < e; ++k) {
      ASSERT_GE(graph->edge_src[k], 0);
      ASSERT_LT(graph->edge_src[k], f);
      ASSERT_GE(graph->edge_dst[k], 0);
      ASSERT_LT(graph->edge_dst[k], f);
    }
  }
  EXPECT_GE(graphs, 28);
}

TEST(Ingest, ModelRuleRecordsSolidsAndClosedness) {
  struct Expect {
    const char* file;
    int solids;
    bool closed;
  };
  for (const Expect& expect :
       {Expect{"occt/screw.step", 1, true}, Expect{"occt/CrankArm.brep", 2, true},
        Expect{"occt/face1.brep", 0, false}, Expect{"occt/shell1.brep", 0, false},
        Expect{"brepnet/66312_164f2d26_0003_2.step", 0, false}}) {
    const Result<data::BRepGraph> graph = ingest_file(kCorpus / expect.file, IngestOptions{});
    ASSERT_TRUE(graph) << expect.file << ": " << graph.status().reason();
    EXPECT_EQ(graph->solid_count, expect.solids) << expect.file;
    EXPECT_EQ(graph->closed, expect.closed) << expect.file;
  }
}

}  // namespace
}  // namespace cadclip::cad
