// DeepCAD JSON sequences: the hand-written fixtures of tests/fixtures/deepcad/
// against volumes computed by hand, and malformed sequences that must fail.
#include <gtest/gtest.h>
#include <BRepBndLib.hxx>
#include <BRepGProp.hxx>
#include <Bnd_Box.hxx>
#include <GProp_GProps.hxx>
#include <TopExp.hxx>
#include <TopTools_IndexedMapOfShape.hxx>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"

namespace cadclip::cad {
namespace {

const std::filesystem::path kFixtures = "tests/fixtures/deepcad";

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

// DeepCAD's arc rule: the side comes from the reference vector turned by the
// mean angle, never from `normal` (in-plane on these sketches, since the files
// store it in world coordinates) or from which end is called the start (both
// turns of a half circle land on the end point).
TEST(Deepcad, HalfCircleSlotsTakeTheReferenceSideOnEveryPlane) {
  // 5 * (40 x 20 + two half discs of radius 10 - a radius-4 hole).
  const double expected = 5 * (800 + 100 * M_PI - 16 * M_PI);
  for (const char* name : {"slot_xz.json", "slot_yz.json", "slot_oblique.json"})
    EXPECT_NEAR(volume_of(name), expected, 1e-3) << name;
  // On the XZ plane the slot spans x -10..50 and z -10..10, extruded 5 along
  // the sketch's z axis (0,-1,0); an end bulging inwards would give x 0..40.
  const Result<TopoDS_Shape> shape =
      deepcad_to_shape(fixture("slot_xz.json"), "slot_xz.json", IngestOptions{});
  ASSERT_TRUE(shape) << shape.status().reason();
  Bnd_Box box;
  BRepBndLib::AddOptimal(shape.value(), box, /*useTriangulation=*/false,
                         /*useShapeTolerance=*/false);
  double x0, y0, z0, x1, y1, z1;
  box.Get(x0, y0, z0, x1, y1, z1);
  const std::array<double, 6> got{x0, y0, z0, x1, y1, z1}, want{-10, -5, -10, 50, 0, 10};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(got[k], want[k], 1e-6) << k;
}

TEST(Deepcad, CircleSplitIntoTwoHalfArcsIsAHole) {
  // 40 x 40 plate, 4 thick, minus a radius-5 hole made of two half arcs, one
  // stored end-first with a -z normal: 4 * (1600 - 25 pi).
  EXPECT_NEAR(volume_of("split_circle.json"), 4 * (1600 - 25 * M_PI), 1e-3);
  const Result<data::BRepGraph> graph =
      ingest_file(kFixtures / "split_circle.json", IngestOptions{});
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(graph->num_faces(), 7) << "6 plate faces and the hole's wall";
}

TEST(Deepcad, ArcWhoseAnglesGiveNoSweepFailsWithItsReason) {
  std::string slot = fixture("slot_xz.json");
  // The left end's angles pi/2 .. 3 pi/2 become pi/2 .. pi/2.
  const std::string from = "\"end_angle\": 4.71238898038469";
  const size_t at = slot.find(from);
  ASSERT_NE(at, std::string::npos);
  slot.replace(at, from.size(), "\"end_angle\": 1.5707963267948966");
  const std::string reason = failure_of(slot).reason();
  EXPECT_NE(reason.find("midpoint on an end point"), std::string::npos) << reason;
}

TEST(Deepcad, EmptyExtrudeIsSkippedWithAWarning) {
  // 20 x 20 x 10 block, an extrude with no profiles, a 10 x 10 x 10 boss: 5000.
  std::vector<std::string> warnings;
  const Result<TopoDS_Shape> shape = deepcad_to_shape(
      fixture("empty_extrude.json"), "empty_extrude.json", IngestOptions{}, &warnings);
  ASSERT_TRUE(shape) << shape.status().reason();
  GProp_GProps props;
  BRepGProp::VolumeProperties(shape.value(), props);
  EXPECT_NEAR(props.Mass(), 5000, 1e-3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("extrude 'empty'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("empty profile list"), std::string::npos) << warnings[0];
  // Only empty extrudes: no solid, and the reason says why.
  std::string only_empty = fixture("empty_extrude.json");
  for (const char* feature : {"\"block\"", "\"boss\""}) {
    const std::string entity = std::string("\"entity\": ") + feature;
    const size_t at = only_empty.find(entity);
    ASSERT_NE(at, std::string::npos) << entity;
    only_empty.replace(at, entity.size(), "\"entity\": \"empty\"");
  }
  EXPECT_NE(failure_of(only_empty).reason().find("every extrude"), std::string::npos);
}

TEST(Deepcad, LengthsBeyondAnyPartFailBeforeOcctSeesThem) {
  std::string plate = fixture("plate_hole.json");
  const std::string from = R"("value": 10, "name")";
  const size_t at = plate.find(from);
  ASSERT_NE(at, std::string::npos);
  plate.replace(at, from.size(), R"("value": 1e300, "name")");
  const std::string reason = failure_of(plate).reason();
  EXPECT_NE(reason.find("beyond any part"), std::string::npos) << reason;
  EXPECT_NE(reason.find("--assume-unit"), std::string::npos) << reason;
}

TEST(Deepcad, FullCirclesStoredAsArcsBuildAsOneCircle) {
  // Walls of circles stored as arcs, on which OCCT 7.6's UnifySameDomain hung
  // or left an invalid solid when each arc stayed an edge of its own (found by
  // the parity oracle, tests/cad/parity/): they build, valid, as one circle.
  for (const char* name : {"parity_cases/split_circle_unify_hang.json",
                           "parity_cases/split_circle_hole_unify_hang.json",
                           "parity_cases/split_circle_unify_invalid.json"}) {
    const Result<data::BRepGraph> graph = ingest_file(kFixtures / name, IngestOptions{});
    EXPECT_TRUE(graph) << name << ": " << graph.status().reason();
  }
  // Two half arcs that the arc rule bulges to the same side enclose nothing:
  // not a full disc, nor a sliver; the only profile is skipped, so no solid.
  const std::string reason = failure_of(fixture("parity_cases/half_arcs_same_side.json")).reason();
  EXPECT_NE(reason.find("encloses no area"), std::string::npos) << reason;
}

// Healing (docs/INGEST.md, "What the builder heals"): each fixture of
// tests/fixtures/deepcad/heal/ reproduces one kind of damage found in
// quantised real models, which the builder refused before; it builds now, to
// the volume the drawing means, with a warning naming the entity.
struct Healed {
  double volume = -1;
  int solids = 0;
  std::vector<std::string> warnings;
  bool warned(const std::string& part) const {
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
  }
};

Healed healed(const std::string& name) {
  Healed out;
  const Result<TopoDS_Shape> shape =
      deepcad_to_shape(fixture("heal/" + name), name, IngestOptions{}, &out.warnings);
  EXPECT_TRUE(shape) << name << ": " << shape.status().reason();
  if (!shape) return out;
  GProp_GProps props;
  BRepGProp::VolumeProperties(shape.value(), props);
  out.volume = props.Mass();
  TopTools_IndexedMapOfShape solids;
  TopExp::MapShapes(shape.value(), TopAbs_SOLID, solids);
  out.solids = solids.Extent();
  return out;
}

std::string all(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings) out += w + "\n";
  return out;
}

TEST(DeepcadHeal, UnorderedReversedCurvesWithATinyGapClose) {
  // 100 x 60 x 10; the 0.02 mm overshoot moves one corner by at most 0.02 mm,
  // which changes the area by at most 0.02 * 60 / 2.
  const Healed plate = healed("gap_unordered.json");
  EXPECT_NEAR(plate.volume, 60000, 0.02 * 60 / 2 * 10) << all(plate.warnings);
  ASSERT_EQ(plate.warnings.size(), 1u) << all(plate.warnings);
  EXPECT_TRUE(plate.warned("loops[0]: closed gaps of up to 0.02")) << all(plate.warnings);
  // A gap of a tenth of the size stays an open loop, and the reason says where.
  std::string open = fixture("heal/gap_unordered.json");
  const std::string from = R"("x": 100.02)";
  const size_t at = open.find(from);
  ASSERT_NE(at, std::string::npos);
  open.replace(at, from.size(), R"("x": 110)");
  const std::string reason = failure_of(open).reason();
  EXPECT_NE(reason.find("do not join into a closed chain"), std::string::npos) << reason;
  EXPECT_NE(reason.find("10 mm"), std::string::npos) << reason;
}

TEST(DeepcadHeal, CurvesOfZeroSizeAreDroppedWithAWarning) {
  // The plate alone: the zero-length line, the hole of radius 0 and the
  // profile of one zero-radius circle add nothing.
  const Healed plate = healed("zero_size.json");
  EXPECT_NEAR(plate.volume, 60000, 1e-3) << all(plate.warnings);
  EXPECT_EQ(plate.solids, 1);
  EXPECT_TRUE(plate.warned("loops[0].profile_curves[1]: dropped a line of zero length"))
      << all(plate.warnings);
  EXPECT_TRUE(plate.warned("loops[1].profile_curves[0]: dropped a circle of radius 0"))
      << all(plate.warnings);
  EXPECT_TRUE(plate.warned("profile 'P2' of sketch 'S1': skipped the profile"))
      << all(plate.warnings);
  // A circle of negative radius is no quantisation artefact: it fails.
  std::string negative = fixture("heal/zero_size.json");
  const std::string from = R"("radius": 0,)";
  const size_t at = negative.find(from);
  ASSERT_NE(at, std::string::npos);
  negative.replace(at, from.size(), R"("radius": -3,)");
  EXPECT_NE(failure_of(negative).reason().find("negative radius"), std::string::npos);
}

TEST(DeepcadHeal, HoleOnTheOuterLoopLeavesTheRegionBetween) {
  // The hole spans the plate's full height: two strips 10 x 60, 10 thick.
  const Healed strips = healed("hole_on_outer.json");
  EXPECT_NEAR(strips.volume, 2 * 10 * 60 * 10, 1e-3) << all(strips.warnings);
  EXPECT_EQ(strips.solids, 2);
  EXPECT_TRUE(strips.warned("hole loops[1] is not inside the outer loop")) << all(strips.warnings);
  // A hole crossing the outer loop cuts a notch: the plate less a half disc.
  const Healed notch = healed("hole_crossing.json");
  EXPECT_NEAR(notch.volume, 60000 - 10 * M_PI * 100 / 2, 1e-3) << all(notch.warnings);
  EXPECT_EQ(notch.solids, 1);
  EXPECT_TRUE(notch.warned("hole loops[1] is not inside the outer loop")) << all(notch.warnings);
}

TEST(DeepcadHeal, ProfileWhoseHoleIsItsOuterLoopIsSkipped) {
  // Only the second profile's 10 x 10 x 5 block is left.
  const Healed block = healed("hole_is_outer.json");
  EXPECT_NEAR(block.volume, 500, 1e-3) << all(block.warnings);
  EXPECT_EQ(block.solids, 1);
  EXPECT_TRUE(block.warned("profile 'P1' of sketch 'S1': skipped the profile"))
      << all(block.warnings);
  // With no other profile there is no solid, and the reason says so.
  nlohmann::json alone = nlohmann::json::parse(fixture("heal/hole_is_outer.json"));
  alone["entities"]["E1"]["profiles"].erase(1);
  EXPECT_NE(failure_of(alone.dump()).reason().find("encloses no area"), std::string::npos);
}

TEST(DeepcadHeal, LoopOutAndBackOverOnePathIsSkipped) {
  // Before, the flat loop became a face of no area that broke featurization.
  const Healed block = healed("out_and_back.json");
  EXPECT_NEAR(block.volume, 500, 1e-3) << all(block.warnings);
  EXPECT_EQ(block.solids, 1);
  EXPECT_TRUE(
      block.warned("profile 'P1' of sketch 'S1': skipped the profile: its outer loop "
                   "loops[0] encloses no area"))
      << all(block.warnings);
  const Result<data::BRepGraph> graph =
      ingest_file(kFixtures / "heal/out_and_back.json", IngestOptions{});
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(graph->num_faces(), 6);
}

TEST(DeepcadHeal, ArcOfZeroSweepWithItsCentreFarAwayIsALine) {
  const Healed square = healed("straight_arc.json");
  EXPECT_NEAR(square.volume, 500, 1e-3) << all(square.warnings);
  EXPECT_TRUE(square.warned("profile_curves[3]: an arc of radius 1e+16 mm"))
      << all(square.warnings);
  // The same centre on an arc whose angles turn (a quarter turn) contradicts its ends: refused.
  nlohmann::json doc = nlohmann::json::parse(fixture("heal/straight_arc.json"));
  doc["entities"]["S1"]["profiles"]["P1"]["loops"][0]["profile_curves"][3]["end_angle"] = M_PI / 2;
  EXPECT_NE(failure_of(doc.dump()).reason().find("beyond any part"), std::string::npos);
}

}  // namespace
}  // namespace cadclip::cad
