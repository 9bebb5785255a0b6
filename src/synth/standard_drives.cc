// Drive parts, axis z: GT2 timing pulleys (2 mm pitch; data/standards/gt2_pulleys.csv)
// and spur gears by module (data/standards/spur_gears.csv).
// A pulley is, from z = 0, the hub (with a radial M3 set screw hole
// at mid-height along +y), a 1 mm flange, the tooth zone (belt width + 1 mm)
// and a second flange, bored through. Each of its grooves is a U: a
// semicircle of radius 0.555 mm at the root (0.75 mm below OD) and straight
// radial flanks out to OD, one per tooth, so the tooth count is true.
//
// A spur gear is a plain disc b thick from z = 0, bored through, tooth 0 centred
// on +x. Each flank is a polyline of kFlankPoints points on the involute of the
// base circle db = m z cos 20, from the base circle (or the root circle where
// that is larger) to the tip circle da = m (z + 2); below the base circle a
// radial line to the root circle df = m (z - 2.5); the tip two chords through
// the tip circle's point on the tooth's centre line; the space between teeth two
// chords through the root circle's point on its centre line. The tooth
// thickness at the pitch circle d = m z is half the pitch (no backlash, no
// profile shift); undercut, which a generated gear of few teeth has, is not modelled.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cadclip/cad/standard_tables.h"
#include "cadclip/cad/standards.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"
#include "synth/standard.h"

namespace cadclip::synth {
namespace {

constexpr const char* kPulleyTable = "gt2_pulleys.csv";
constexpr double kPi = 3.14159265358979323846;
constexpr double kGrooveRadius = 0.555;  // the GT2 belt tooth's tip radius, mm
constexpr double kGrooveDepth = 0.75;    // the GT2 belt tooth's height, mm
constexpr double kFlange = 1;            // flange thickness, mm
constexpr double kMinWall = 1.25;        // least wall a bore leaves to the root and the hub, mm
constexpr const char* kGearTable = "spur_gears.csv";
constexpr int kFlankPoints = 6;  // points on each flank's involute, base (or root) to tip
const double kPressureAngle = 20 * kPi / 180;

double involute(double phi) { return std::tan(phi) - phi; }

// The gear's outline in the xy plane: kFlankPoints points per flank, plus the root and tip points.
std::vector<P2> gear_outline(double m, int z) {
  const cad::GearSize g = *cad::spur_gear_size(m, z);
  const double rb = g.base / 2, ra = g.tip / 2, rf = g.root / 2;
  const double start = std::max(rb, rf);
  // The half-angle of the tooth at radius rho: a quarter pitch at the pitch circle.
  const double at_pitch = kPi / (2 * z) + involute(kPressureAngle);
  auto half_angle = [&](double rho) {
    return at_pitch - involute(std::acos(std::min(1.0, rb / rho)));
  };
  // Roll angles of the involute from `start` to the tip, evenly spaced.
  const double t0 = std::sqrt(start * start / (rb * rb) - 1),
               t1 = std::sqrt(ra * ra / (rb * rb) - 1);
  std::vector<double> radii;
  for (int k = 0; k < kFlankPoints; ++k) {
    const double t = t0 + (t1 - t0) * k / (kFlankPoints - 1);
    radii.push_back(rb * std::sqrt(1 + t * t));
  }
  auto polar = [](double r, double a) { return P2{r * std::cos(a), r * std::sin(a)}; };
  std::vector<P2> out;
  for (int i = 0; i < z; ++i) {
    const double c = 2 * kPi * i / z;
    if (rb > rf) out.push_back(polar(rf, c - half_angle(start)));
    for (double rho : radii) out.push_back(polar(rho, c - half_angle(rho)));
    out.push_back(polar(ra, c));
    for (auto it = radii.rbegin(); it != radii.rend(); ++it)
      out.push_back(polar(*it, c + half_angle(*it)));
    if (rb > rf) out.push_back(polar(rf, c + half_angle(start)));
    out.push_back(polar(rf, c + kPi / z));
  }
  return out;
}

}  // namespace

std::vector<StandardItem> gt2_pulley_catalog() {
  const cad::StandardTable& t = cad::standard_table(kPulleyTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    const int teeth = static_cast<int>(t.number(row, "teeth"));
    const double root = cad::gt2_pulley_size(teeth)->outside - 2 * kGrooveDepth;
    for (double bore : {5.0, 6.35, 8.0}) {
      // The set screw needs the hub's wall; the bore may not reach the grooves.
      if (bore > root - 2 * kMinWall || bore > t.number(row, "hub_d") - 4 * kMinWall) continue;
      for (const char* belt : {"6", "10"})
        items.push_back(
            {"gt2_pulley", "catalogue", kPulleyTable, row, 0, belt,
             "GT2 " + std::to_string(teeth) + "T bore " + dim_text(bore) + " belt " + belt, bore});
    }
  }
  return items;
}

StandardBuilt build_gt2_pulley(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kPulleyTable);
  const size_t row = item.row;
  const int teeth = static_cast<int>(t.number(row, "teeth"));
  const cad::PulleySize size = *cad::gt2_pulley_size(teeth);
  const double od = size.outside, flange = t.number(row, "flange_d"), hub = t.number(row, "hub_d");
  const double hub_l = t.number(row, "hub_l"), belt = std::stod(item.variant);
  const double width = belt + 1, bore = item.bore;
  const double z0 = hub_l + kFlange, z1 = z0 + width, top = z1 + kFlange;
  // The body (hub, flanges and a core below the groove roots), solid to the axis; the bore
  // is cut last.
  const double root = od / 2 - kGrooveDepth, r = kGrooveRadius, out = od / 2 + 1;
  std::vector<P2> outline = {{0, 0}, {hub / 2, 0}, {hub / 2, hub_l}};
  if (hub != flange) outline.push_back({flange / 2, hub_l});  // else the flange has no step
  outline.insert(outline.end(), {{flange / 2, z0},
                                 {root - 0.25, z0},
                                 {root - 0.25, z1},
                                 {flange / 2, z1},
                                 {flange / 2, top},
                                 {0, top}});
  // The toothed ring reaches half into each flange, so that no face of it lies on a
  // flange's face (coplanar contact would split the flange faces along the grooves): OD
  // less one U groove per tooth, in the groove's own radial (u) and tangential (v) axes a
  // rectangle from the root out past OD, its root corners rounded by the groove radius into
  // a semicircle.
  std::vector<TopoDS_Shape> grooves;
  for (int i = 0; i < teeth; ++i) {
    const double a = 2 * kPi * i / teeth;
    const gp_Dir u(std::cos(a), std::sin(a), 0), v(-std::sin(a), std::cos(a), 0);
    grooves.push_back(extrude(profile_face({{root, -r, 0, r}, {out, -r}, {out, r}, {root, r, 0, r}},
                                           gp_Pnt(0, 0, z0 - kFlange), u, v),
                              gp_Vec(0, 0, width + 2 * kFlange)));
  }
  const TopoDS_Shape ring = cut(
      cylinder(gp_Pnt(0, 0, z0 - kFlange / 2), gp_Dir(0, 0, 1), od / 2, width + kFlange), grooves);
  const TopoDS_Shape body = fuse(turned_z(outline), {ring});
  // The bore, and the set screw's tapped hole (M3, D1 = 3 - 1.0825 x 0.5) from the bore
  // out through the hub at mid-height.
  const double d1 = 3 - 1.0825 * 0.5;
  const std::vector<TopoDS_Shape> tools = {
      cylinder(gp_Pnt(0, 0, -1), gp_Dir(0, 0, 1), bore / 2, top + 2),
      cylinder(gp_Pnt(0, bore / 4, hub_l / 2), gp_Dir(0, 1, 0), d1 / 2, hub / 2 - bore / 4 + 1)};
  StandardBuilt built;
  built.shape = cut(body, tools);
  built.extent[0] = flange, built.extent[1] = flange, built.extent[2] = top;
  built.dims = {{"teeth", teeth},   {"pitch", 2},         {"PD", size.pitch},
                {"OD", od},         {"bore", bore},       {"belt_width", belt},
                {"width", width},   {"flange_d", flange}, {"hub_d", hub},
                {"hub_l", hub_l},   {"groove_radius", r}, {"groove_depth", kGrooveDepth},
                {"set_screw", "M3"}};
  return built;
}

std::vector<StandardItem> spur_gear_catalog() {
  const cad::StandardTable& t = cad::standard_table(kGearTable);
  std::vector<StandardItem> items;
  for (size_t row = 0; row < t.rows.size(); ++row)
    items.push_back({"spur_gear", "ISO 53", kGearTable, row, 0, "",
                     "spur gear " + t.cell(row, "designation") + " b" +
                         dim_text(t.number(row, "b")) + " bore " + dim_text(t.number(row, "bore")),
                     t.number(row, "bore")});
  return items;
}

StandardBuilt build_spur_gear(const StandardItem& item) {
  const cad::StandardTable& t = cad::standard_table(kGearTable);
  const size_t row = item.row;
  const double m = t.number(row, "module"), b = t.number(row, "b"), bore = item.bore;
  const int z = static_cast<int>(t.number(row, "teeth"));
  const std::optional<cad::GearSize> g = cad::spur_gear_size(m, z);
  if (!g || z % 4 != 0 || !(bore > 0 && bore < g->root - 2 * m))
    throw Error(
        format("standard table {} row {} ({}): module {}, {} teeth and bore {} make no "
               "gear here (teeth a multiple of 4, the bore inside the root circle); "
               "fix the row",
               kGearTable, row + 1, t.cell(row, "designation"), m, z, bore));
  const std::vector<P2> outline = gear_outline(m, z);
  const TopoDS_Shape disc = extrude(
      profile_face(outline, gp_Pnt(0, 0, 0), gp_Dir(1, 0, 0), gp_Dir(0, 1, 0)), gp_Vec(0, 0, b));
  StandardBuilt built;
  built.shape = cut(disc, {cylinder(gp_Pnt(0, 0, -1), gp_Dir(0, 0, 1), bore / 2, b + 2)});
  built.extent[0] = g->tip, built.extent[1] = g->tip, built.extent[2] = b;
  built.dims = {{"module", m},
                {"teeth", z},
                {"pressure_angle", 20},
                {"d", g->pitch},
                {"da", g->tip},
                {"df", g->root},
                {"db", g->base},
                {"b", b},
                {"bore", bore},
                {"flank_points", kFlankPoints},
                {"outline_points", static_cast<int>(outline.size())}};
  return built;
}

}  // namespace cadclip::synth
