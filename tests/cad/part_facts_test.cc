// data/part_facts.h on real solids: round holes counted and measured as
// `cadclip synth` measures them on the solid (every family, from its STEP
// file), fillets and bosses not counted; the shape signature calls a mirror
// image a mirror image, and a moved or turned copy not.
#include "cadclip/data/part_facts.h"

#include <gtest/gtest.h>

#include <BRepAlgoAPI_Cut.hxx>
#include <BRepAlgoAPI_Fuse.hxx>
#include <BRepBuilderAPI_Transform.hxx>
#include <BRepPrimAPI_MakeBox.hxx>
#include <BRepPrimAPI_MakeCylinder.hxx>
#include <gp_Ax1.hxx>
#include <gp_Ax2.hxx>
#include <gp_Trsf.hxx>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"
#include "cadclip/core/file.h"
#include "cadclip/synth/synth.h"
#include "test_shapes.h"

namespace cadclip::cad {
namespace {

using synth::make_synth_part;
using synth::synth_families;
using synth::SynthOptions;
using synth::SynthPart;

data::BRepGraph featurize(const TopoDS_Shape& shape) {
  Result<data::BRepGraph> graph = ingest_shape(shape, "part", "synthetic:mm", IngestOptions{});
  EXPECT_TRUE(graph) << graph.status().reason();
  return graph ? std::move(graph).value() : data::BRepGraph{};
}

// Part `index` of `options`, written as STEP to `folder` and ingested.
std::pair<SynthPart, data::BRepGraph> ingested(const std::filesystem::path& folder,
                                               const SynthOptions& options, int64_t index) {
  SynthPart part = make_synth_part(options, index);
  const auto file = folder / (part.id + ".step");
  write_text_atomic(file, part.step);
  Result<data::BRepGraph> graph = ingest_file(file, IngestOptions{});
  EXPECT_TRUE(graph) << part.id << ": " << graph.status().reason();
  return {std::move(part), graph ? std::move(graph).value() : data::BRepGraph{}};
}

TopoDS_Shape transformed(const TopoDS_Shape& shape, const gp_Trsf& t) {
  return BRepBuilderAPI_Transform(shape, t, /*copy=*/true).Shape();
}

// Three arms of different lengths along x, y and z from one corner: no plane
// of symmetry, so it has a hand.
TopoDS_Shape corner() {
  TopoDS_Shape shape = BRepAlgoAPI_Fuse(BRepPrimAPI_MakeBox(80, 10, 10).Shape(),
                                        BRepPrimAPI_MakeBox(10, 50, 10).Shape())
                           .Shape();
  return BRepAlgoAPI_Fuse(shape, BRepPrimAPI_MakeBox(10, 10, 30).Shape()).Shape();
}

TEST(PartFacts, HolesOfSimpleSolids) {
  data::PartFacts through = data::part_facts(featurize(testing::plate_with_hole(80, 50, 8, 6)));
  ASSERT_EQ(through.hole_diameters_mm.size(), 1u);
  EXPECT_NEAR(through.hole_diameters_mm[0], 12, 0.01);
  data::PartFacts blind = data::part_facts(featurize(testing::plate_with_hole(80, 50, 8, 3, 5)));
  ASSERT_EQ(blind.hole_diameters_mm.size(), 1u);
  EXPECT_NEAR(blind.hole_diameters_mm[0], 6, 0.01);
  // A rounded edge is a convex quarter turn; a box has no cylinder at all.
  EXPECT_TRUE(
      data::part_facts(featurize(testing::filleted_box(40, 30, 20, 5))).hole_diameters_mm.empty());
  EXPECT_TRUE(
      data::part_facts(featurize(testing::rounded_box(40, 30, 20, 4))).hole_diameters_mm.empty());
  EXPECT_TRUE(data::part_facts(featurize(testing::box(10, 20, 30))).hole_diameters_mm.empty());
}

// A stepped pin under a round head: the thread-sized pieces join along one
// axis, the head is a shaft of its own on the same axis, and a hole drilled
// across is a hole, not a shaft.
TEST(PartFacts, ShaftsOfASteppedPin) {
  const gp_Ax2 axis(gp_Pnt(5, 5, 0), gp_Dir(0, 0, 1));
  TopoDS_Shape pin = BRepPrimAPI_MakeCylinder(axis, 4, 25).Shape();  // d 8, 25 long
  const gp_Ax2 thread_axis(gp_Pnt(5, 5, 25), gp_Dir(0, 0, 1));
  pin = BRepAlgoAPI_Fuse(pin, BRepPrimAPI_MakeCylinder(thread_axis, 3.3, 15).Shape()).Shape();
  const gp_Ax2 head_axis(gp_Pnt(5, 5, -6), gp_Dir(0, 0, 1));
  pin = BRepAlgoAPI_Fuse(pin, BRepPrimAPI_MakeCylinder(head_axis, 6.5, 6).Shape()).Shape();
  const data::PartFacts facts = data::part_facts(featurize(pin));
  EXPECT_TRUE(facts.hole_diameters_mm.empty());
  ASSERT_EQ(facts.shafts.size(), 3u);
  for (const data::Shaft& s : facts.shafts) EXPECT_EQ(s.axis, 0);
  std::vector<std::array<double, 3>> found;  // diameter, from, to
  for (const data::Shaft& s : facts.shafts) found.push_back({s.diameter_mm, s.from_mm, s.to_mm});
  std::sort(found.begin(), found.end());
  EXPECT_NEAR(found[0][0], 6.6, 0.01);
  EXPECT_NEAR(found[1][0], 8, 0.01);
  EXPECT_NEAR(found[2][0], 13, 0.01);
  // Lengths along the axis, whichever way the axis points.
  EXPECT_NEAR(found[0][2] - found[0][1], 15, 0.5);
  EXPECT_NEAR(found[1][2] - found[1][1], 25, 0.5);
  EXPECT_NEAR(found[2][2] - found[2][1], 6, 0.5);
  // The thread starts where the shank ends.
  const bool up = found[0][1] > found[1][1];
  EXPECT_NEAR(up ? found[0][1] - found[1][2] : found[1][1] - found[0][2], 0, 0.5);
  // A plate's hole is no shaft, and its rounded edges are no full turn.
  EXPECT_TRUE(data::part_facts(featurize(testing::plate_with_hole(80, 50, 8, 6))).shafts.empty());
  EXPECT_TRUE(data::part_facts(featurize(testing::filleted_box(40, 30, 20, 5))).shafts.empty());
}

// The synthetic families measure their holes on the solid (cylindrical faces
// pointing at their axis, a full turn per axis line and place): the graph's
// grids must find the same holes with the same diameters.
TEST(PartFacts, HolesAgreeWithTheSynthMeasureForEveryFamily) {
  const auto folder = testing::scratch_folder();
  int with_holes = 0;
  for (const std::string& family : synth_families()) {
    SynthOptions options;
    options.seed = 3;
    options.families = {family};
    for (int64_t i = 0; i < 2; ++i) {
      const auto [part, graph] = ingested(folder, options, i);
      std::vector<double> expected;
      for (const auto& set : part.measured.at("holes"))
        for (int n = 0; n < set.at("count").get<int>(); ++n)
          expected.push_back(set.at("diameter").get<double>());
      std::sort(expected.begin(), expected.end());
      const std::vector<double> found = data::part_facts(graph).hole_diameters_mm;
      ASSERT_EQ(found.size(), expected.size()) << family << " " << part.id;
      for (size_t h = 0; h < found.size(); ++h)
        EXPECT_NEAR(found[h], expected[h], 0.01 * expected[h] + 0.01) << family << " " << part.id;
      with_holes += !expected.empty();
    }
  }
  EXPECT_GE(with_holes, 10);  // the check saw holes, not only parts without
}

// The central bore is the smallest round hole on an axis through the box's
// centre: a bearing's bore (not its rings' raceways), a collar's or
// pulley's bore (not its radial set screw hole), a washer's or nut's hole;
// a bolt or pin has none, and a hole off the centre is none.
TEST(PartFacts, TheCentralBoreOfStandardParts) {
  const auto folder = testing::scratch_folder();
  const std::vector<std::pair<std::string, std::string>> bored = {
      {"ball_bearing", "d"}, {"shaft_collar", "d1"}, {"gt2_pulley", "bore"},
      {"spur_gear", "bore"}, {"plain_washer", "d1"}, {"hex_nut", "D1"}};
  SynthOptions options;
  options.kind = "standard";
  options.seed = 4;
  for (const std::string& family : {std::string("hex_bolt"), std::string("dowel_pin")}) {
    options.families = {family};
    for (int64_t i = 0; i < 2; ++i) {
      const auto [part, graph] = ingested(folder, options, i);
      EXPECT_FALSE(data::central_bore_mm(graph)) << family << " " << part.id;
    }
  }
  for (const auto& [family, key] : bored) {
    options.families = {family};
    for (int64_t i = 0; i < 2; ++i) {
      const auto [part, graph] = ingested(folder, options, i);
      const std::optional<double> bore = data::central_bore_mm(graph);
      const double expected = part.params.at("dims").at(key).get<double>();
      ASSERT_TRUE(bore) << family << " " << part.id;
      EXPECT_NEAR(*bore, expected, 0.01 * expected) << family << " " << part.id;
    }
  }
  EXPECT_NEAR(*data::central_bore_mm(featurize(testing::plate_with_hole(80, 50, 8, 6))), 12, 0.01);
  // The same hole moved off the plate's centre.
  const TopoDS_Shape off =
      BRepAlgoAPI_Cut(
          testing::box(80, 50, 8),
          BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(20, 25, -1), gp_Dir(0, 0, 1)), 6, 10).Shape())
          .Shape();
  EXPECT_FALSE(data::central_bore_mm(featurize(off)));
  EXPECT_FALSE(data::central_bore_mm(featurize(testing::box(10, 20, 30))));
}

// A gear's teeth, a T-slot profile's slots (three or four of them) and a
// flange's bolt holes each give a set of that many congruent faces; a
// stepped shaft's pieces are its steps.
TEST(PartFacts, RepeatedFacesCountTeethSlotsAndBoltHoles) {
  const auto folder = testing::scratch_folder();
  const std::vector<std::pair<std::string, std::string>> counted = {
      {"spur_gear", "teeth"}, {"tslot_profile", "slots"}, {"flange", "bolt_holes"}};
  int checked = 0;
  for (const auto& [family, key] : counted) {
    SynthOptions options;
    options.seed = 5;
    options.families = {family};
    for (int64_t i = 0; i < 6; ++i) {
      const SynthPart part = make_synth_part(options, i);
      const int64_t count = part.params.at(key).get<int64_t>();
      if (count < 3) continue;
      const auto file = folder / (part.id + ".step");
      write_text_atomic(file, part.step);
      Result<data::BRepGraph> graph = ingest_file(file, IngestOptions{});
      ASSERT_TRUE(graph) << part.id << ": " << graph.status().reason();
      const std::vector<int64_t> repeats = data::part_facts(graph.value()).repeats;
      std::string sets;
      for (const int64_t n : repeats) sets += " " + std::to_string(n);
      EXPECT_TRUE(std::find(repeats.begin(), repeats.end(), count) != repeats.end())
          << family << " " << part.id << ": " << count << " " << key << ", sets of" << sets;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
  // A plain box and a plate with one hole repeat nothing three times over.
  EXPECT_TRUE(data::part_facts(featurize(testing::plate_with_hole(80, 50, 8, 6))).repeats.empty());
}

TEST(PartFacts, AMirrorImageIsOneAndAMovedOrTurnedCopyIsNot) {
  const TopoDS_Shape part = corner();
  gp_Trsf mirror, turn, move;
  mirror.SetMirror(gp_Ax2(gp_Pnt(0, 0, 0), gp_Dir(1, 0, 0)));  // across the plane x = 0
  turn.SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), M_PI / 2);
  move.SetTranslation(gp_Vec(12.5, -40, 7));
  const data::ShapeSignature own = data::part_facts(featurize(part)).shape;
  const data::ShapeSignature mirrored =
      data::part_facts(featurize(transformed(part, mirror))).shape;
  const data::ShapeSignature turned = data::part_facts(featurize(transformed(part, turn))).shape;
  const data::ShapeSignature moved = data::part_facts(featurize(transformed(part, move))).shape;
  EXPECT_NE(own.handedness, 0);
  EXPECT_EQ(mirrored.handedness, -own.handedness);
  EXPECT_EQ(turned.handedness, own.handedness);
  EXPECT_EQ(moved.handedness, own.handedness);
  EXPECT_TRUE(data::mirror_images(own, mirrored));
  EXPECT_FALSE(data::mirror_images(own, turned));
  EXPECT_FALSE(data::mirror_images(own, moved));
  EXPECT_FALSE(data::mirror_images(own, own));
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(own.spread_mm[i], mirrored.spread_mm[i], 1e-3);
    EXPECT_NEAR(own.spread_mm[i], turned.spread_mm[i], 1e-3);
  }
  // A plate with a centred hole has planes of symmetry: it cannot be told
  // from its mirror image, and no mirror image is reported.
  const data::ShapeSignature plate =
      data::part_facts(featurize(testing::plate_with_hole(80, 50, 8, 6))).shape;
  EXPECT_EQ(plate.handedness, 0);
  EXPECT_FALSE(data::mirror_images(plate, plate));
}

}  // namespace
}  // namespace cadclip::cad
