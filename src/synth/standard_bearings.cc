// Single-row deep groove ball bearings (ISO 15 boundary dimensions: d, D, B,
// r), open, with two metal shields (ZZ) or two seals (2RS), as one solid:
// inner ring, outer ring and the row of balls as one torus of the ball
// diameter, fused, sunk into both rings as into their grooves (single
// spheres fused into the rings did not survive a STEP round trip as valid
// solids). ISO 15 leaves the inside open; the rule here (and in
// docs/SYNTHETIC.md), with w = (D - d) / 2 the ring section:
//   ball diameter Dw = min(0.6 w, 0.7 B) on the pitch circle dm = (d + D) / 2,
//   ring land diameters dm -/+ 0.8 Dw (each ring holds a tenth of Dw of the ball row);
//   ZZ: shields 0.05 B thick, 0.05 B in from each face, gap 0.15 of the land
//   gap to the inner ring; 2RS: seals 0.08 B thick, 0.02 B in, 0.1 mm from the
//   inner ring (so that no closed void is left inside the solid).
#include <BRepPrimAPI_MakeTorus.hxx>
#include <Standard_Failure.hxx>
#include <gp_Ax2.hxx>

#include <cmath>

#include "cadclip/cad/standard_tables.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kBearingTable = "ball_bearings.csv";

// The ball row: a torus of tube radius `rb` on the pitch circle of radius `rm`, at height z.
TopoDS_Shape ball_row(double rm, double rb, double z) {
  try {
    return BRepPrimAPI_MakeTorus(gp_Ax2(gp_Pnt(0, 0, z), gp_Dir(0, 0, 1)), rm, rb).Shape();
  } catch (const Standard_Failure& e) {
    throw Reject(std::string("torus failed in Open CASCADE: ") + e.GetMessageString());
  }
}

// An annulus from ri to ro between z0 and z1.
TopoDS_Shape disc(double ri, double ro, double z0, double z1) {
  return turned_z({{ri, z0}, {ro, z0}, {ro, z1}, {ri, z1}});
}

}  // namespace

std::vector<StandardItem> ball_bearing_catalog() {
  const cad::StandardTable& t = cad::standard_table(kBearingTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const std::string name = t.cell(row, "designation");
    items.push_back({"ball_bearing", "ISO 15", kBearingTable, row, 0, "", name});
    items.push_back({"ball_bearing", "ISO 15", kBearingTable, row, 0, "ZZ", name + "ZZ"});
    items.push_back({"ball_bearing", "ISO 15", kBearingTable, row, 0, "2RS", name + "-2RS"});
  }
  return items;
}

StandardBuilt build_ball_bearing(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kBearingTable);
  const double d = t.number(item.row, "d"), D = t.number(item.row, "D");
  const double B = t.number(item.row, "B"), r = t.number(item.row, "r");
  const double w = (D - d) / 2, dw = std::min(0.6 * w, 0.7 * B), rb = dw / 2;
  const double rm = (d + D) / 4, ri = rm - 0.4 * dw, ro = rm + 0.4 * dw;
  const TopoDS_Shape inner = turned_z({{d / 2, 0, r}, {ri, 0}, {ri, B}, {d / 2, B, r}});
  const TopoDS_Shape outer = turned_z({{ro, 0}, {D / 2, 0, r}, {D / 2, B, r}, {ro, B}});
  std::vector<TopoDS_Shape> tools = {outer, ball_row(rm, rb, B / 2)};
  StandardBuilt built;
  built.dims = {{"d", d},
                {"D", D},
                {"B", B},
                {"r", r},
                {"ball_diameter", dw},
                {"pitch_diameter", 2 * rm},
                {"inner_land", 2 * ri},
                {"outer_land", 2 * ro}};
  if (!item.variant.empty()) {
    const bool shield = item.variant == "ZZ";
    const double thick = (shield ? 0.05 : 0.08) * B, inset = (shield ? 0.05 : 0.02) * B;
    const double gap = shield ? 0.15 * (ro - ri) : 0.1;
    // Each shield reaches a third into the outer ring, where a real one sits in its recess.
    const double reach = ro + (D / 2 - ro) / 3;
    tools.push_back(disc(ri + gap, reach, inset, inset + thick));
    tools.push_back(disc(ri + gap, reach, B - inset - thick, B - inset));
    built.dims[shield ? "shield_thickness" : "seal_thickness"] = thick;
  }
  built.shape = fuse(inner, tools);
  built.extent[0] = D, built.extent[1] = D, built.extent[2] = B;
  return built;
}

}  // namespace cadclip::synth
