// DeepCAD JSON sequences: the hand-written fixtures of tests/data/deepcad/
// against volumes computed by hand, and malformed sequences that must fail.
#include <gtest/gtest.h>
#include <BRepGProp.hxx>
#include <GProp_GProps.hxx>

#include <cmath>
#include <fstream>
#include <string>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"

namespace cadclip::cad {
namespace {

const std::filesystem::path kFixtures = "tests/data/deepcad";

std::string fixture(const std::string& name) {
  std::ifstream in(kFixtures / name, std::ios::binary);
  EXPECT_TRUE(in) << "missing fixture " << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

double volume_of(const std::string& name, const IngestOptions& options = {}) {
  const Result<TopoDS_Shape> shape = deepcad_to_shape(fixture(name), name, options);
  EXPECT_TRUE(shape) << name << ": " << shape.status().reason();
  if (!shape) return -1;
  GProp_GProps props;
  BRepGProp::VolumeProperties(shape.value(), props);
  return props.Mass();
}

TEST(Deepcad, FixtureVolumesMatchHandArithmetic) {
  // 100 x 60 plate, 10 thick, minus a radius-10 hole: 100*60*10 - pi*10^2*10.
  EXPECT_NEAR(volume_of("plate_hole.json"), 60000 - 1000 * M_PI, 1e-3);
  // L of 60 x 10 plus 10 x 30 (area 900), extruded 20: 18000.
  EXPECT_NEAR(volume_of("l_profile.json"), 18000, 1e-3);
  // 50 x 50 x 20 block minus a 20 x 20 pocket 5 deep: 50000 - 2000.
  EXPECT_NEAR(volume_of("cut.json"), 48000, 1e-3);
  // Radius-5 disc, symmetric extent 10 taken in full on each side: length 20,
  // pi*25*20 = 500 pi.
  EXPECT_NEAR(volume_of("symmetric.json"), 500 * M_PI, 1e-3);
  // Slot: 40 x 20 rectangle + two half discs of radius 10 (area 800 + 100 pi),
  // 5 thick: 4000 + 500 pi.
  EXPECT_NEAR(volume_of("arcs.json"), 4000 + 500 * M_PI, 1e-3);
  // Two 20 x 20 x 10 blocks overlapping by 10 x 20 x 10: 4000 + 4000 - 2000.
  EXPECT_NEAR(volume_of("two_bodies.json"), 6000, 1e-3);
  // One extrude of two 10 x 10 profiles, 5 high: 2 * 500.
  EXPECT_NEAR(volume_of("two_profiles.json"), 1000, 1e-3);
  // 10 x 10 square, 3 up and 2 down: 10*10*5.
  EXPECT_NEAR(volume_of("two_sides.json"), 500, 1e-3);
  // 20-cube intersected with a radius-10 cylinder through it: pi*100*20.
  EXPECT_NEAR(volume_of("intersect.json"), 2000 * M_PI, 1e-3);
}

TEST(Deepcad, SymmetricExtentMeaningIsAnOption) {
  IngestOptions text2cad;
  text2cad.deepcad_symmetric_full = false;
  // Half of 10 on each side: length 10, pi*25*10 = 250 pi.
  EXPECT_NEAR(volume_of("symmetric.json", text2cad), 250 * M_PI, 1e-3);
}

TEST(Deepcad, AssumedUnitScalesLengths) {
  IngestOptions metres;
  metres.assume_unit = "m";
  // Every length times 1000: the volume times 1e9.
  EXPECT_NEAR(volume_of("l_profile.json", metres), 18000 * 1e9, 1e-3 * 1e9);
  const Result<data::BRepGraph> graph = ingest_file(kFixtures / "l_profile.json", metres);
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(graph->unit, "assumed:m");
  EXPECT_NEAR(graph->scale_mm, 60000, 1e-2);
}

TEST(Deepcad, FixturesIngestIntoGraphs) {
  for (const char* name :
       {"plate_hole.json", "l_profile.json", "cut.json", "symmetric.json", "arcs.json",
        "two_bodies.json", "two_profiles.json", "two_sides.json", "intersect.json"}) {
    const Result<data::BRepGraph> graph = ingest_file(kFixtures / name, IngestOptions{});
    ASSERT_TRUE(graph) << name << ": " << graph.status().reason();
    EXPECT_TRUE(graph->closed) << name;
    EXPECT_EQ(graph->solid_count, std::string(name) == "two_profiles.json" ? 2 : 1) << name;
  }
  // The L on the XZ plane, extruded along -y (the sketch's z axis): x 0..60, y -20..0, z 0..40.
  const Result<data::BRepGraph> l = ingest_file(kFixtures / "l_profile.json", IngestOptions{});
  ASSERT_TRUE(l);
  const std::array<float, 6> expected{0, -20, 0, 60, 0, 40};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(l->bbox_mm[k], expected[k], 1e-4) << k;
  EXPECT_EQ(l->num_faces(), 8);
  int concave = 0;
  for (uint8_t c : l->edge_convexity) concave += c == uint8_t(data::Convexity::kConcave);
  EXPECT_EQ(concave, 2) << "the L's inner corner, both directions";
  // Joined blocks become one 30 x 20 x 10 box: coplanar faces are merged.
  const Result<data::BRepGraph> joined =
      ingest_file(kFixtures / "two_bodies.json", IngestOptions{});
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->num_faces(), 6);
}

Status failure_of(const std::string& json) {
  const Result<TopoDS_Shape> shape = deepcad_to_shape(json, "inline", IngestOptions{});
  EXPECT_FALSE(shape);
  return shape.status();
}

TEST(Deepcad, BrokenSequencesFailWithTheirReason) {
  const std::string plate = fixture("plate_hole.json");
  auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  // A gap in the outer loop.
  EXPECT_NE(failure_of(replaced(plate, R"("end_point": {"x": 100, "y": 0, "z": 0}},)",
                                R"("end_point": {"x": 90, "y": 0, "z": 0}},)"))
                .reason()
                .find("closed chain"),
            std::string::npos);
  EXPECT_NE(failure_of(replaced(plate, "NewBodyFeatureOperation", "CutFeatureOperation"))
                .reason()
                .find("nothing to"),
            std::string::npos);
  EXPECT_NE(failure_of(replaced(plate, "NewBodyFeatureOperation", "LoftFeatureOperation"))
                .reason()
                .find("unsupported operation"),
            std::string::npos);
  EXPECT_NE(failure_of(replaced(plate, R"("value": 10, "name")", R"("value": 0, "name")"))
                .reason()
                .find("zero distance"),
            std::string::npos);
  EXPECT_NE(failure_of(replaced(plate, R"("sketch": "FsketchA")", R"("sketch": "nowhere")"))
                .reason()
                .find("no 'nowhere'"),
            std::string::npos);
  EXPECT_NE(failure_of("[1, 2, 3]").reason().find("not a JSON object"), std::string::npos);
  // A cut that removes the whole block: nothing left.
  std::string cut = fixture("cut.json");
  cut = replaced(cut, R"("x": 15, "y": -35, "z": 0}, "end_point": {"x": 35, "y": -35)",
                 R"("x": -5, "y": -55, "z": 0}, "end_point": {"x": 55, "y": -55)");
  cut = replaced(cut, R"("x": 35, "y": -15, "z": 0}, "end_point": {"x": 35, "y": -35)",
                 R"("x": 55, "y": 5, "z": 0}, "end_point": {"x": 55, "y": -55)");
  cut = replaced(cut, R"("x": 35, "y": -15, "z": 0}, "end_point": {"x": 15, "y": -15)",
                 R"("x": 55, "y": 5, "z": 0}, "end_point": {"x": -5, "y": 5)");
  cut = replaced(cut, R"("x": 15, "y": -35, "z": 0}, "end_point": {"x": 15, "y": -15)",
                 R"("x": -5, "y": -55, "z": 0}, "end_point": {"x": -5, "y": 5)");
  cut = replaced(cut, R"("distance": {"value": 5})", R"("distance": {"value": 30})");
  const std::string reason = failure_of(cut).reason();
  EXPECT_TRUE(reason.find("no solid") != std::string::npos ||
              reason.find("zero volume") != std::string::npos)
      << reason;
}

}  // namespace
}  // namespace cadclip::cad
