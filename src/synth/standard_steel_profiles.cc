// Hot rolled steel sections cut to length: IPE, HEA and HEB I sections and
// UPN channels (EN 10365), equal leg angles L (EN 10056-1), from
// data/standards/. The section lies in the xy plane (flange width along x,
// depth along y) and is extruded along z by the nominal length. Root and toe
// radii are true arcs; UPN's tapered flanges are parallel flanges of the
// table's tf (measured at half the flange width), so its area is a little above A.
#include <string>
#include <vector>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kISectionTable = "steel_i_sections.csv";
constexpr const char* kChannelTable = "steel_channels.csv";
constexpr const char* kAngleTable = "steel_angles.csv";

// The lengths stockholders cut sections to, mm.
const std::vector<double>& profile_lengths() {
  static const std::vector<double> kLengths = {500, 1000, 2000};
  return kLengths;
}

TopoDS_Shape extruded_section(const std::vector<P2>& section, double length) {
  return extrude(profile_face(section, gp_Pnt(0, 0, 0), gp_Dir(1, 0, 0), gp_Dir(0, 1, 0)),
                 gp_Vec(0, 0, length));
}

}  // namespace

std::vector<StandardItem> steel_profile_catalog() {
  std::vector<StandardItem> items;
  for (const char* file : {kISectionTable, kChannelTable, kAngleTable}) {
    const cad::StandardTable& t = cad::standard_table(file);
    const std::string standard = std::string(file) == kAngleTable ? "EN 10056-1" : "EN 10365";
    for (size_t row = 0; row < t.rows.size(); ++row)
      for (double l : profile_lengths())
        items.push_back({"steel_profile", standard, file, row, l, "",
                         t.cell(row, "designation") + " x " + num_text(l)});
  }
  return items;
}

StandardBuilt build_steel_profile(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(item.table);
  const size_t row = item.row;
  const double l = item.length;
  StandardBuilt built;
  built.extent[2] = l;
  std::vector<P2> section;
  if (item.table == kAngleTable) {
    // The heel at the origin, the legs along +x and +y.
    const double a = t.number(row, "a"), th = t.number(row, "t");
    const double r1 = t.number(row, "r1"), r2 = t.number(row, "r2");
    section = {{0, 0}, {a, 0}, {a, th, 0, r2}, {th, th, 0, r1}, {th, a, 0, r2}, {0, a}};
    built.extent[0] = a, built.extent[1] = a;
    built.dims = {{"a", a}, {"t", th}, {"r1", r1}, {"r2", r2}, {"l", l}};
  } else if (item.table == kChannelTable) {
    // The web's back on x = 0, the flanges along +x.
    const double h = t.number(row, "h"), b = t.number(row, "b"), tw = t.number(row, "tw");
    const double tf = t.number(row, "tf"), r1 = t.number(row, "r1"), r2 = t.number(row, "r2");
    section = {
        {0, 0}, {b, 0}, {b, tf, 0, r2}, {tw, tf, 0, r1}, {tw, h - tf, 0, r1}, {b, h - tf, 0, r2},
        {b, h}, {0, h}};
    built.extent[0] = b, built.extent[1] = h;
    built.dims = {{"h", h}, {"b", b}, {"tw", tw}, {"tf", tf}, {"r1", r1}, {"r2", r2}, {"l", l}};
  } else {
    // Symmetric about x = 0, the bottom flange on y = 0.
    const double h = t.number(row, "h"), b = t.number(row, "b"), tw = t.number(row, "tw");
    const double tf = t.number(row, "tf"), r = t.number(row, "r");
    const double x = b / 2, w = tw / 2;
    section = {{-x, 0}, {x, 0},  {x, tf},      {w, tf, 0, r},      {w, h - tf, 0, r}, {x, h - tf},
               {x, h},  {-x, h}, {-x, h - tf}, {-w, h - tf, 0, r}, {-w, tf, 0, r},    {-x, tf}};
    built.extent[0] = b, built.extent[1] = h;
    built.dims = {{"h", h}, {"b", b}, {"tw", tw}, {"tf", tf}, {"r", r}, {"l", l}};
  }
  built.dims["A"] = t.number(row, "A");
  built.shape = extruded_section(section, l);
  return built;
}

}  // namespace cadclip::synth
