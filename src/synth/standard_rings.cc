// Standard rings: spring lock washers (DIN 127 B) and retaining rings for
// shafts (DIN 471) and bores (DIN 472) from data/standards/, as flat solids
// about z with one face at z = 0. A spring washer is a helix whose free
// height h is about twice its thickness; here it is the flat ring split by a
// radial cut (the cut, not the twist, is what tells it from a plain washer in
// a B-Rep), which the table's notes say too.
//
// DIN 471/472 fix d3, s, a, b and d5 and leave the outline open; the rule
// here (and in docs/SYNTHETIC.md): a ring of constant width b on the free
// diameter d3 (inside it for a shaft ring, outside for a bore ring), opened
// by a gap b wide across +y; beside the gap two lugs reach a from d3 (outwards
// for a shaft ring, inwards for a bore ring), each d5 + a/2 wide along x
// (a shaft ring's lugs at most to 0.9 of its outer radius), with a plier hole
// d5 at the lug's middle, a/2 from d3.
#include <algorithm>
#include <cmath>
#include <utility>

#include "cadclip/cad/standard_tables.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kSpringTable = "spring_lock_washers.csv";
constexpr const char* kShaftRingTable = "retaining_rings_shaft.csv";
constexpr const char* kBoreRingTable = "retaining_rings_bore.csv";
constexpr double kPi = 3.14159265358979323846;

// A slot `width` wide from the axis outwards to `reach`, along the direction at
// `angle` (radians from x), through z0..z1: the tool of a radial cut.
TopoDS_Shape radial_slot(double angle, double width, double reach, double z0, double z1) {
  const gp_Dir along(std::cos(angle), std::sin(angle), 0),
      across(-std::sin(angle), std::cos(angle), 0);
  const std::vector<P2> slot = {
      {0, -width / 2}, {reach, -width / 2}, {reach, width / 2}, {0, width / 2}};
  return extrude(profile_face(slot, gp_Pnt(0, 0, z0), along, across), gp_Vec(0, 0, z1 - z0));
}

// The outline of a retaining ring by the rule above, from its table row; `shaft`:
// DIN 471 (lugs outside d3) rather than DIN 472 (lugs inside).
struct RingOutline {
  double r_free, r_other;  // radius d3/2 and the ring's other edge (d3/2 -/+ b)
  double gap, lug_width;   // the opening across +y, and each lug's width along x
  double hole_x, hole_y;   // centre of the plier hole on the +x side
};

RingOutline ring_outline(bool shaft, double d3, double a, double b, double d5) {
  RingOutline o{d3 / 2, shaft ? d3 / 2 + b : d3 / 2 - b, b, d5 + a / 2, 0, 0};
  if (shaft) o.lug_width = std::min(o.lug_width, 0.9 * o.r_other - o.gap / 2);
  o.hole_x = o.gap / 2 + o.lug_width / 2;
  o.hole_y = shaft ? o.r_free + a / 2 : o.r_free - a / 2;
  return o;
}

}  // namespace

std::vector<StandardItem> spring_washer_catalog() {
  const cad::StandardTable& t = cad::standard_table(kSpringTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    items.push_back({"spring_lock_washer", "DIN 127", kSpringTable, row, 0, "B",
                     "DIN 127 B " + t.cell(row, "size")});
  return items;
}

StandardBuilt build_spring_washer(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kSpringTable);
  const double d1 = t.number(item.row, "d1"), d2 = t.number(item.row, "d2");
  const double s = t.number(item.row, "s"), gap = s / 2;
  // The cut at 45 degrees leaves the ring whole on both axes, so the bounding
  // box stays d2 x d2 x s.
  const TopoDS_Shape ring = turned_z({{d1 / 2, 0}, {d2 / 2, 0}, {d2 / 2, s}, {d1 / 2, s}});
  StandardBuilt built;
  built.shape = cut(ring, {radial_slot(kPi / 4, gap, d2, -1, s + 1)});
  built.dims = {{"d1", d1}, {"d2", d2}, {"s", s}, {"b", t.number(item.row, "b")}, {"gap", gap}};
  built.extent[0] = d2, built.extent[1] = d2, built.extent[2] = s;
  return built;
}

std::vector<StandardItem> retaining_ring_catalog() {
  std::vector<StandardItem> items;
  for (const auto& [standard, file] :
       {std::pair{"DIN 471", kShaftRingTable}, std::pair{"DIN 472", kBoreRingTable}}) {
    const cad::StandardTable& t = cad::standard_table(file);
    for (size_t row = 0; row < t.rows.size(); ++row)
      items.push_back({"retaining_ring", standard, file, row, 0, "",
                       std::string(standard) + " " + t.cell(row, "size") + "x" + t.cell(row, "s")});
  }
  return items;
}

StandardBuilt build_retaining_ring(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(item.table);
  const bool shaft = item.standard == "DIN 471";
  const double d1 = t.number(item.row, "d1"), s = t.number(item.row, "s");
  const double d3 = t.number(item.row, "d3"), a = t.number(item.row, "a");
  const double b = t.number(item.row, "b"), d5 = t.number(item.row, "d5");
  const RingOutline o = ring_outline(shaft, d3, a, b, d5);
  const double r_in = std::min(o.r_free, o.r_other), r_out = std::max(o.r_free, o.r_other);
  // Each lug a rectangle from the ring's far side to a beyond d3; what lies in
  // the shaft (or outside the bore) is trimmed off below.
  const double y_lo = shaft ? 0 : o.r_free - a, y_hi = shaft ? o.r_free + a : o.r_free + 1;
  std::vector<TopoDS_Shape> lugs;
  for (double side : {1.0, -1.0}) {
    const double x0 = side > 0 ? o.gap / 2 : -o.gap / 2 - o.lug_width;
    lugs.push_back(box(x0, y_lo, 0, o.lug_width, y_hi - y_lo, s));
  }
  TopoDS_Shape body = fuse(turned_z({{r_in, 0}, {r_out, 0}, {r_out, s}, {r_in, s}}), lugs);
  const gp_Dir z(0, 0, 1);
  if (shaft)
    body = cut(body, {cylinder(gp_Pnt(0, 0, -1), z, o.r_free, s + 2)});
  else
    body = common(body, cylinder(gp_Pnt(0, 0, -1), z, o.r_free, s + 2));
  std::vector<TopoDS_Shape> tools = {box(-o.gap / 2, 0, -1, o.gap, r_out + a + 1, s + 2)};
  for (double side : {1.0, -1.0})
    tools.push_back(cylinder(gp_Pnt(side * o.hole_x, o.hole_y, -1), z, d5 / 2, s + 2));
  StandardBuilt built;
  built.shape = cut(body, tools);
  built.dims = {{"d1", d1},
                {"s", s},
                {"d3", d3},
                {"a", a},
                {"b", b},
                {"d5", d5},
                {"gap", o.gap},
                {"lug_width", o.lug_width},
                {"hole_spacing", 2 * o.hole_x}};
  // A shaft ring: the ring's outer edge across x, the lugs' tops at +y. A bore
  // ring: d3 across x, and at +y the free circle where the gap ends it.
  built.extent[0] = 2 * r_out;
  built.extent[1] =
      shaft ? r_out + o.r_free + a : o.r_free + std::sqrt(o.r_free * o.r_free - o.gap * o.gap / 4);
  built.extent[2] = s;
  return built;
}

}  // namespace cadclip::synth
