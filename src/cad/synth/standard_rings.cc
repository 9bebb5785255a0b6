// Standard rings: spring lock washers (DIN 127 B) from data/standards/, as
// flat solids about z with the bearing face at z = 0. A spring washer is a
// helix whose free height h is about twice its thickness; here it is the flat
// ring split by a radial cut (the cut, not the twist, is what tells it from a
// plain washer in a B-Rep), which the table's notes say too.
#include <cmath>

#include "cad/synth/model.h"
#include "cad/synth/standard.h"
#include "cad/synth/standard_tables.h"

namespace cadclip::cad::synth {
namespace {

constexpr const char* kSpringTable = "spring_lock_washers.csv";
constexpr double kPi = 3.14159265358979323846;

// A slot `width` wide from the axis outwards to `reach`, along the direction at
// `angle` (radians from x), through z0..z1: the tool of a radial cut.
TopoDS_Shape radial_slot(double angle, double width, double reach, double z0, double z1) {
  const gp_Dir along(std::cos(angle), std::sin(angle), 0), across(-std::sin(angle), std::cos(angle), 0);
  const std::vector<P2> slot = {{0, -width / 2}, {reach, -width / 2}, {reach, width / 2}, {0, width / 2}};
  return extrude(profile_face(slot, gp_Pnt(0, 0, z0), along, across), gp_Vec(0, 0, z1 - z0));
}

}  // namespace

std::vector<StandardItem> spring_washer_catalog() {
  const StandardTable& t = standard_table(kSpringTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    items.push_back({"spring_lock_washer", "DIN 127", kSpringTable, row, 0, "B",
                     "DIN 127 B " + t.cell(row, "size")});
  return items;
}

StandardBuilt build_spring_washer(const StandardItem& item) {
  const StandardTable& t = standard_table(kSpringTable);
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

}  // namespace cadclip::cad::synth
