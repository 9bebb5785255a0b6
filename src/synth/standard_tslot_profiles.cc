// Aluminium T-slot profiles cut to length (a manufacturer convention, no
// standard; data/standards/tslot_profiles.csv): a square of side a with one
// T-slot per side and a centre bore, extruded along z. The slot's opening and
// the outer size are the catalogues'; the chamber behind the lip is simplified
// to a trapezoid that narrows at 45 degrees, so that adjacent chambers keep a
// wall between them as real profiles do.
#include <string>
#include <vector>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kTslotTable = "tslot_profiles.csv";

// The lengths the catalogues cut profiles to, mm.
const std::vector<double>& tslot_lengths() {
  static const std::vector<double> kLengths = {250, 500, 1000, 2000};
  return kLengths;
}

}  // namespace

std::vector<StandardItem> tslot_profile_catalog() {
  const cad::StandardTable& t = cad::standard_table(kTslotTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    for (double l : tslot_lengths())
      items.push_back({"tslot_profile", "catalogue", kTslotTable, row, l, "",
                       "T-slot " + t.cell(row, "designation") + " x " + num_text(l)});
  return items;
}

StandardBuilt build_tslot_profile(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kTslotTable);
  const size_t row = item.row;
  const double a = t.number(row, "a"), w = t.number(row, "slot"), lip = t.number(row, "lip");
  const double c = t.number(row, "chamber"), depth = t.number(row, "depth");
  const double corner = t.number(row, "corner"), bore = t.number(row, "bore"), l = item.length;
  const double h = a / 2, bottom = c / 2 - (depth - lip);  // half the chamber's bottom width
  // The chambers of two adjacent sides are mirror images about the diagonal: a wall is
  // left between them while every chamber point keeps y - |x| > 0, and the bore stays clear.
  if (!(w < c && bottom > 0 && h - lip - c / 2 > 0.5 && h - depth > bore / 2 + 0.5))
    throw Error(
        format("standard table {} row {} ({}): the slot does not fit the section; "
               "fix lip, chamber or depth",
               kTslotTable, row + 1, t.cell(row, "designation")));
  // The top side from its right corner towards -x; the other sides are it turned by 90 degrees.
  const std::vector<P2> side = {{h, h, 0, corner}, {w / 2, h},          {w / 2, h - lip},
                                {c / 2, h - lip},  {bottom, h - depth}, {-bottom, h - depth},
                                {-c / 2, h - lip}, {-w / 2, h - lip},   {-w / 2, h}};
  std::vector<P2> outline;
  for (int k = 0; k < 4; ++k)
    for (P2 p : side) {
      for (int turn = 0; turn < k; ++turn) p = {-p.y, p.x, p.chamfer, p.fillet};
      outline.push_back(p);
    }
  const TopoDS_Shape bar = extrude(
      profile_face(outline, gp_Pnt(0, 0, 0), gp_Dir(1, 0, 0), gp_Dir(0, 1, 0)), gp_Vec(0, 0, l));
  StandardBuilt built;
  built.shape = cut(bar, {cylinder(gp_Pnt(0, 0, -1), gp_Dir(0, 0, 1), bore / 2, l + 2)});
  built.extent[0] = a, built.extent[1] = a, built.extent[2] = l;
  built.dims = {{"a", a},         {"slot", w},        {"lip", lip},   {"chamber", c},
                {"depth", depth}, {"corner", corner}, {"bore", bore}, {"l", l}};
  return built;
}

}  // namespace cadclip::synth
