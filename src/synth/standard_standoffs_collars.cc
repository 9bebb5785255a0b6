// Hexagon standoffs (female-female and male-female; a catalogue convention,
// no standard) and set-screw shaft collars (DIN 705 form A) from
// data/standards/. Axis z.
//
// Standoffs: a male-female one's stud tip at z = 0 and its body above, a
// female-female one's body from z = 0. Threads follow the screws' and nuts'
// rule: a male thread is a plain cylinder at d3 = d - 1.22687 P with a P/2
// tip chamfer, a female thread a hole at D1 = d - 1.0825 P (ISO 724). A
// female-female standoff is tapped through; a male-female one is tapped from
// the top as deep as its stud is long, at most 0.8 of the body.
//
// Collars: the ring d1 x d2 x b from z = 0, the set screw's tapped hole (at
// D1 of the screw's thread) along +y at mid-width, through the wall.
#include <charconv>
#include <cmath>
#include <string>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kStandoffTable = "hex_standoffs.csv";
constexpr const char* kCollarTable = "shaft_collars.csv";

// The body lengths of the standoff catalogues (mm), from lo to hi.
std::vector<double> standoff_lengths(double lo, double hi) {
  static const std::vector<double> kSeries = {5, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40};
  std::vector<double> out;
  for (double l : kSeries)
    if (l >= lo && l <= hi) out.push_back(l);
  return out;
}

}  // namespace

std::vector<StandardItem> hex_standoff_catalog() {
  const cad::StandardTable& t = cad::standard_table(kStandoffTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const std::string size = t.cell(row, "size");
    for (const char* variant : {"FF", "MF"})
      for (double l : standoff_lengths(t.number(row, "l_min"), t.number(row, "l_max")))
        items.push_back({"hex_standoff", "catalogue", kStandoffTable, row, l, variant,
                         "standoff " + size + "x" + num_text(l) + " " +
                             (std::string(variant) == "FF" ? "F-F" : "M-F")});
  }
  return items;
}

StandardBuilt build_hex_standoff(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kStandoffTable);
  const double d = t.number(item.row, "d"), pitch = t.number(item.row, "P");
  const double s = t.number(item.row, "s"), l = item.length;
  const bool male = item.variant == "MF";
  const double stud = male ? t.number(item.row, "stud") : 0;
  const double D1 = d - 1.0825 * pitch, d3 = d - 1.22687 * pitch;
  const double depth = male ? std::min(stud, 0.8 * l) : l;
  const double top = stud + l;
  TopoDS_Shape body = hex_prism(s, stud, top);
  StandardBuilt built;
  built.dims = {{"d", d},   {"P", pitch},           {"s", s}, {"e", 2 * s / std::sqrt(3.0)},
                {"D1", D1}, {"thread_depth", depth}};
  if (male) {
    const double c = 0.5 * pitch;
    body = fuse(body, {turned_z({{0, 0}, {d3 / 2, 0, c}, {d3 / 2, stud + 0.5}, {0, stud + 0.5}})});
    built.dims["stud"] = stud;
    built.dims["d3"] = d3;
  }
  built.shape = cut(body, {cylinder(gp_Pnt(0, 0, top - depth - (male ? 0 : 1)), gp_Dir(0, 0, 1),
                                    D1 / 2, depth + (male ? 1 : 2))});
  built.extent[0] = 2 * s / std::sqrt(3.0), built.extent[1] = s, built.extent[2] = top;
  return built;
}

std::vector<StandardItem> shaft_collar_catalog() {
  const cad::StandardTable& t = cad::standard_table(kCollarTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    items.push_back(
        {"shaft_collar", "DIN 705", kCollarTable, row, 0, "A", "DIN 705 A " + t.cell(row, "size")});
  return items;
}

StandardBuilt build_shaft_collar(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kCollarTable);
  const double d1 = t.number(item.row, "d1"), d2 = t.number(item.row, "d2");
  const double b = t.number(item.row, "b"), pitch = t.number(item.row, "P3");
  const std::string& thread = t.cell(item.row, "d3");
  double d3 = 0;
  const char* end = thread.data() + thread.size();
  if (thread.size() < 2 || thread[0] != 'M' ||
      std::from_chars(thread.data() + 1, end, d3).ptr != end || !(d3 > 0))
    throw Error(
        format("standard table {} row {}: set screw d3 is '{}', not a metric thread "
               "such as M6; fix the table",
               kCollarTable, item.row + 1, thread));
  const double D1 = d3 - 1.0825 * pitch;
  const TopoDS_Shape ring = turned_z({{d1 / 2, 0}, {d2 / 2, 0}, {d2 / 2, b}, {d1 / 2, b}});
  // From inside the bore to beyond the outside, so that both ends open.
  const TopoDS_Shape hole =
      cylinder(gp_Pnt(0, d1 / 4, b / 2), gp_Dir(0, 1, 0), D1 / 2, d2 / 2 - d1 / 4 + 1);
  StandardBuilt built;
  built.shape = cut(ring, {hole});
  built.dims = {{"d1", d1}, {"d2", d2}, {"b", b}, {"set_screw", thread}, {"D1", D1}};
  built.extent[0] = d2, built.extent[1] = d2, built.extent[2] = b;
  return built;
}

}  // namespace cadclip::synth
