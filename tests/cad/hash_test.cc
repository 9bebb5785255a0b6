// The geometry hash's invariances (docs/INGEST.md): equal for a moved part and
// for the same part written to STEP and read back, different for a scaled
// copy; and ingesting the same file twice gives the same bytes.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "../shared_corpus.h"
#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"
#include "test_shapes.h"

namespace cadclip::cad {
namespace {

data::BRepGraph featurize(const TopoDS_Shape& shape) {
  Result<data::BRepGraph> graph = ingest_shape(shape, "part", "synthetic:mm", IngestOptions{});
  EXPECT_TRUE(graph) << graph.status().reason();
  return graph ? std::move(graph).value() : data::BRepGraph{};
}

void expect_same_bytes(const data::BRepGraph& a, const data::BRepGraph& b) {
  EXPECT_EQ(a.face_grids, b.face_grids);
  EXPECT_EQ(a.face_types, b.face_types);
  EXPECT_EQ(a.face_areas, b.face_areas);
  EXPECT_EQ(a.face_centroids, b.face_centroids);
  EXPECT_EQ(a.face_rational, b.face_rational);
  EXPECT_EQ(a.face_loops, b.face_loops);
  EXPECT_EQ(a.edge_src, b.edge_src);
  EXPECT_EQ(a.edge_dst, b.edge_dst);
  EXPECT_EQ(a.edge_grids, b.edge_grids);
  EXPECT_EQ(a.edge_types, b.edge_types);
  EXPECT_EQ(a.edge_lengths, b.edge_lengths);
  EXPECT_EQ(a.edge_convexity, b.edge_convexity);
  EXPECT_EQ(a.bbox_mm, b.bbox_mm);
  EXPECT_EQ(a.scale_mm, b.scale_mm);
  EXPECT_EQ(a.unit, b.unit);
  EXPECT_EQ(a.solid_count, b.solid_count);
  EXPECT_EQ(a.closed, b.closed);
  EXPECT_EQ(a.geometry_hash, b.geometry_hash);
}

TEST(GeometryHash, EqualForAMovedPart) {
  const TopoDS_Shape part = testing::plate_with_hole(80, 50, 8, 6);
  const data::BRepGraph here = featurize(part);
  const data::BRepGraph there = featurize(testing::translated(part, 123.456, -78.9, 1000.25));
  EXPECT_EQ(here.geometry_hash, there.geometry_hash);
  EXPECT_NEAR(there.bbox_mm[0] - here.bbox_mm[0], 123.456, 1e-3);
  // Normalised grids agree too (up to float rounding of the moved coordinates).
  ASSERT_EQ(here.face_grids.size(), there.face_grids.size());
  for (size_t k = 0; k < here.face_grids.size(); ++k)
    ASSERT_NEAR(here.face_grids[k], there.face_grids[k], 1e-5) << k;
}

TEST(GeometryHash, EqualAfterAStepRoundTripAndForTwoExports) {
  const auto folder = testing::scratch_folder();
  const TopoDS_Shape part = testing::filleted_box(40, 30, 20, 5);
  ASSERT_TRUE(write_step(part, folder / "first.step"));
  ASSERT_TRUE(write_step(part, folder / "second.step"));
  const Result<data::BRepGraph> first = ingest_file(folder / "first.step", IngestOptions{});
  const Result<data::BRepGraph> second = ingest_file(folder / "second.step", IngestOptions{});
  ASSERT_TRUE(first && second) << first.status().reason() << second.status().reason();
  EXPECT_EQ(first->geometry_hash, featurize(part).geometry_hash);
  data::BRepGraph renamed = second.value();
  renamed.id = first->id;
  expect_same_bytes(first.value(), renamed);
  EXPECT_EQ(first->unit, "file:mm");
}

TEST(GeometryHash, DifferentForAScaledCopy) {
  const TopoDS_Shape washer = testing::plate_with_hole(10, 10, 1, 2);
  const std::string base = featurize(washer).geometry_hash;
  EXPECT_NE(featurize(testing::scaled(washer, 2.0)).geometry_hash, base);
  EXPECT_NE(featurize(testing::scaled(washer, 1.01)).geometry_hash, base);
  EXPECT_NE(featurize(testing::plate_with_hole(10, 10, 1, 2.5)).geometry_hash, base);
}

TEST(GeometryHash, SameFileTwiceGivesTheSameBytes) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const std::filesystem::path file = CADCLIP_SHARED_DATA "/cad/aagnet/partA.step";
  const Result<data::BRepGraph> a = ingest_file(file, IngestOptions{});
  const Result<data::BRepGraph> b = ingest_file(file, IngestOptions{});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->id, b->id);
  expect_same_bytes(a.value(), b.value());
}

TEST(GeometryHash, EqualForAMovedCorpusPart) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const std::filesystem::path file = CADCLIP_SHARED_DATA "/cad/occt/screw.step";
  const Result<LoadedShape> loaded = read_shape(file, IngestOptions{});
  ASSERT_TRUE(loaded) << loaded.status().reason();
  const Result<data::BRepGraph> original = ingest_file(file, IngestOptions{});
  ASSERT_TRUE(original);
  EXPECT_EQ(featurize(testing::translated(loaded->shape, -40, 25.5, 7)).geometry_hash,
            original->geometry_hash);
}

TEST(GeometryHash, ThreadsIngestingAtOnceGiveTheSameBytes) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  // The STEP/IGES translators are serialised by xstep_mutex; the rest runs
  // in parallel on distinct shapes and must not change a byte.
  const std::vector<std::filesystem::path> files = {
      CADCLIP_SHARED_DATA "/cad/occt/screw.step", CADCLIP_SHARED_DATA "/cad/aagnet/partA.step",
      CADCLIP_SHARED_DATA "/cad/occt/solid.brep", CADCLIP_SHARED_DATA "/cad/occt/bearing.iges",
      "tests/fixtures/deepcad/plate_hole.json"};
  std::vector<data::BRepGraph> alone;
  for (const auto& file : files) {
    Result<data::BRepGraph> graph = ingest_file(file, IngestOptions{});
    ASSERT_TRUE(graph) << graph.status().reason();
    alone.push_back(std::move(graph).value());
  }
  std::vector<Result<data::BRepGraph>> together(files.size(), Status::failure("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < files.size(); ++i)
    threads.emplace_back([&, i] { together[i] = ingest_file(files[i], IngestOptions{}); });
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < files.size(); ++i) {
    ASSERT_TRUE(together[i]) << together[i].status().reason();
    expect_same_bytes(alone[i], together[i].value());
  }
}

}  // namespace
}  // namespace cadclip::cad
