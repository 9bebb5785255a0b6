// Standard nuts and washers: hexagon nuts (ISO 4032, ISO 4035, DIN 934),
// prevailing-torque nuts with a non-metallic insert (ISO 7040) and plain
// washers (ISO 7089, ISO 7090, ISO 7093), from data/standards/. Axis z, the
// bearing face at z = 0. A nut's thread is its hole at the minor diameter
// D1 = D - 1.0825 P (ISO 724).
#include <cmath>

#include "cadclip/cad/standard_tables.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kNutTable = "hex_nuts.csv";
constexpr const char* kWasherTable = "plain_washers.csv";
const double kTan30 = std::tan(30.0 * 3.14159265358979323846 / 180);

// A hexagon from z0 to z1 whose corners are turned off at 30 degrees from the
// across-flats circle on the faces asked for (ISO 4032's figure).
TopoDS_Shape chamfered_hex(double s, double z0, double z1, bool bottom, bool top) {
  const double reach = s / std::sqrt(3.0) + 0.5, drop = (reach - s / 2) * kTan30;
  std::vector<P2> profile = {{0, z0}};
  if (bottom)
    profile.insert(profile.end(), {{s / 2, z0}, {reach, z0 + drop}});
  else
    profile.push_back({reach, z0});
  if (top)
    profile.insert(profile.end(), {{reach, z1 - drop}, {s / 2, z1}});
  else
    profile.push_back({reach, z1});
  profile.push_back({0, z1});
  return common(hex_prism(s, z0, z1), turned_z(profile));
}

}  // namespace

std::vector<StandardItem> hex_nut_catalog() {
  const cad::StandardTable& t = cad::standard_table(kNutTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const std::string size = t.cell(row, "size");
    auto add = [&](const char* standard) {
      items.push_back(
          {"hex_nut", standard, kNutTable, row, 0, "", std::string(standard) + " " + size});
    };
    add("ISO 4032");
    if (t.has(row, "m_4035")) add("ISO 4035");
    if (t.has(row, "h_7040")) add("ISO 7040");
    // DIN 934 is its own solid only where it differs from ISO 4032.
    if (t.number(row, "s_din") != t.number(row, "s") ||
        t.number(row, "m_din") != t.number(row, "m_4032"))
      add("DIN 934");
  }
  return items;
}

StandardBuilt build_hex_nut(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kNutTable);
  const size_t row = item.row;
  const bool din = item.standard == "DIN 934", nyloc = item.standard == "ISO 7040";
  const double D = t.number(row, "D"), pitch = t.number(row, "P");
  const double s = t.number(row, din ? "s_din" : "s");
  const double m = t.number(row, din ? "m_din" : item.standard == "ISO 4035" ? "m_4035" : "m_4032");
  const double D1 = D - 1.0825 * pitch;
  StandardBuilt built;
  built.dims = {{"D", D},  {"P", pitch}, {"s", s}, {"m", m}, {"e", 2 * s / std::sqrt(3.0)},
                {"D1", D1}};
  TopoDS_Shape body;
  double height = m;
  if (nyloc) {
    // ISO 7040 gives the total height h; the hexagon takes ISO 4032's m and the
    // round collar holding the insert the rest, 0.9 s across, its top edge chamfered.
    height = t.number(row, "h_7040");
    const double rc = 0.45 * s, c = 0.25 * (height - m);
    const TopoDS_Shape collar = turned_z({{0, m / 2}, {rc, m / 2}, {rc, height, c}, {0, height}});
    body = fuse(chamfered_hex(s, 0, m, /*bottom=*/true, /*top=*/false), {collar});
    built.dims["h"] = height;
    built.dims["collar_diameter"] = 2 * rc;
  } else {
    body = chamfered_hex(s, 0, m, /*bottom=*/true, /*top=*/true);
  }
  built.shape = cut(body, {cylinder(gp_Pnt(0, 0, -1), gp_Dir(0, 0, 1), D1 / 2, height + 2)});
  built.extent[0] = 2 * s / std::sqrt(3.0), built.extent[1] = s, built.extent[2] = height;
  return built;
}

std::vector<StandardItem> plain_washer_catalog() {
  const cad::StandardTable& t = cad::standard_table(kWasherTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const std::string size = t.cell(row, "size");
    for (const char* standard : {"ISO 7089", "ISO 7090", "ISO 7093"}) {
      if (std::string(standard) == "ISO 7090" && t.number(row, "iso_7090") == 0) continue;
      items.push_back(
          {"plain_washer", standard, kWasherTable, row, 0, "", std::string(standard) + " " + size});
    }
  }
  return items;
}

StandardBuilt build_plain_washer(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kWasherTable);
  const bool large = item.standard == "ISO 7093";
  const double d1 = t.number(item.row, large ? "d1_large" : "d1");
  const double d2 = t.number(item.row, large ? "d2_large" : "d2");
  const double h = t.number(item.row, large ? "h_large" : "h");
  std::vector<P2> profile = {{d1 / 2, 0}, {d2 / 2, 0}};
  StandardBuilt built;
  built.dims = {{"d1", d1}, {"d2", d2}, {"h", h}};
  if (item.standard == "ISO 7090") {
    // The outer edge chamfered at 30 degrees to the face, h/3 deep (the standard: h/4 to h/2).
    const double depth = h / 3, width = depth / kTan30;
    profile.insert(profile.end(), {{d2 / 2, h - depth}, {d2 / 2 - width, h}});
    built.dims["chamfer_depth"] = depth;
  } else {
    profile.push_back({d2 / 2, h});
  }
  profile.push_back({d1 / 2, h});
  built.shape = turned_z(profile);
  built.extent[0] = d2, built.extent[1] = d2, built.extent[2] = h;
  return built;
}

}  // namespace cadclip::synth
