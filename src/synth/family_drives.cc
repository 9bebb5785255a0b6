// Gears and pulleys of `cadclip synth`: spur gears and V-belt pulleys.
#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <Standard_Failure.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Wire.hxx>
#include <gp_Ax2.hxx>
#include <gp_Circ.hxx>

#include <algorithm>
#include <cmath>

#include "synth/family.h"

namespace cadclip::synth {

Built spur_gear(Rng& rng) {
  static const std::vector<double> kModules = {1, 1.25, 1.5, 2, 2.5, 3, 4, 5};
  const double mo = rng.pick(kModules);
  const int z = rng.integer(12, std::min(60, static_cast<int>(300 / mo) - 2));
  const double da = mo * (z + 2), df = mo * (z - 2.5);
  const double bw = rng.step(std::max(4.0, std::ceil(3 * mo)), std::min(60.0, 12 * mo), 1);
  const double bore =
      rng.step(std::max(3.0, std::ceil(0.15 * da)), std::max(3.0, std::floor(0.45 * df)), 1);
  int nl = 0;
  double dl = 0, pcd = 0;
  if (rng.chance(0.3)) {
    nl = rng.integer(4, 6);
    const double room = (df / 2 - 2 * mo) - (bore / 2 + 2);
    dl = std::floor(room * 0.7);
    pcd = std::round(2 * (bore / 2 + 2 + room / 2));
    if (dl < 3 || std::abs(dl - bore) < 1 || pcd * std::sin(kPi / nl) < dl + 2)
      nl = 0, dl = 0, pcd = 0;
  }
  const double rf = df / 2, ra = da / 2, p = 2 * kPi / z;
  std::vector<P2> outline;
  for (int i = 0; i < z; ++i) {
    const double c = i * p;
    for (auto [r, a] :
         {std::pair{rf, c - 0.3 * p}, {ra, c - 0.13 * p}, {ra, c + 0.13 * p}, {rf, c + 0.3 * p}})
      outline.push_back({r * std::cos(a), r * std::sin(a)});
  }
  // Bore and lightening holes as inner loops of the sketch: a boolean cut on a
  // prism of 4z side faces costs ten times the whole part otherwise.
  TopoDS_Shape face = profile_face(outline, kO, kX, kY);
  try {
    BRepBuilderAPI_MakeFace make(TopoDS::Face(face));
    auto add_hole = [&](double x, double y, double d) {
      const gp_Circ circle(gp_Ax2(gp_Pnt(x, y, 0), kZ), d / 2);
      BRepBuilderAPI_MakeWire wire(BRepBuilderAPI_MakeEdge(circle).Edge());
      make.Add(TopoDS::Wire(wire.Wire().Reversed()));
    };
    add_hole(0, 0, bore);
    for (int i = 0; i < nl; ++i) {
      const double a = 2 * kPi * i / nl + kPi / nl;
      add_hole(pcd / 2 * std::cos(a), pcd / 2 * std::sin(a), dl);
    }
    if (!make.IsDone()) throw Reject("spur_gear: face with holes failed");
    face = make.Face();
  } catch (const Standard_Failure&) {
    throw Reject("spur_gear: face with holes failed");
  }
  TopoDS_Shape shape = extrude(face, gp_Vec(0, 0, bw));
  Built b;
  b.shape = shape;
  b.params = {{"module", mo},           {"teeth", z},
              {"face_width", bw},       {"bore_diameter", bore},
              {"lightening_holes", nl}, {"lightening_hole_diameter", dl}};
  b.holes = {{"", "bore_diameter", 1, bore}};
  if (nl) b.holes.push_back({"lightening_hole_count", "lightening_hole_diameter", nl, dl});
  Description& desc = b.desc;
  desc.family = "spur_gear";
  desc.names = {"spur gear", "gear", "toothed gear", "gear wheel", "straight-cut gear"};
  desc.dims = {{"tip_diameter", da, "tip diameter", "across the teeth"}, dim_thickness(bw)};
  desc.kind_word = "round part";
  desc.vague_feature = "teeth";
  desc.features.push_back({"teeth",
                           [=](CaptionWriter& w) {
                             return w.count("tooth_count", z) + " teeth" +
                                    (w.rng().chance(0.5) ? " of module " + w.value("module", mo)
                                                         : "");
                           },
                           [=](CaptionWriter& w) { return w.count("tooth_count", z) + " teeth"; }});
  desc.features.push_back(bore_feature("bore_diameter", bore));
  if (nl)
    desc.features.push_back({"lightening holes",
                             [=](CaptionWriter& w) {
                               return holes_text(w, "lightening_hole_count", nl,
                                                 "lightening_hole_diameter", dl, "lightening",
                                                 " in the web");
                             },
                             [=](CaptionWriter& w) {
                               return w.count("lightening_hole_count", nl) + " lightening holes";
                             }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch a gear outline with " + w.count("tooth_count", z) + " teeth" +
           w.opt(", tip diameter ", "tip_diameter", da) + " and module " + w.value("module", mo);
  });
  desc.steps.push_back(
      [=](CaptionWriter& w) { return "extrude it" + w.opt(" by ", "thickness", bw); });
  desc.steps.push_back(
      [=](CaptionWriter& w) { return "cut the bore" + w.opt(" at ", "bore_diameter", bore); });
  if (nl)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "cut " + holes_text(w, "lightening_hole_count", nl, "lightening_hole_diameter", dl,
                                 "lightening",
                                 w.opt(" on a ", "lightening_circle_diameter", pcd, " circle"));
    });
  return b;
}

Built pulley(Rng& rng) {
  const double OD = rng.step(30, 250, 5), w = rng.step(10, 60, 1);
  const int n = rng.integer(1, 3);
  const double gd = rng.step(3, std::max(3.0, std::min(12.0, OD / 8)), 0.5);
  const double gw = std::floor(std::min(w / n - 2, 2 * gd * std::tan(kPi / 9) + 4));
  const double bottom = gw - 2 * gd * std::tan(kPi / 9);
  if (gw < 3 || bottom < 1) throw Reject("pulley: grooves do not fit");
  const double bore = rng.step(5, std::max(5.0, std::floor(0.3 * OD)), 1);
  const bool hub = rng.chance(0.6), web = rng.chance(0.4);
  const double hl = hub ? rng.step(3, 20, 1) : 0;
  const double dh = rng.step(bore + 8, std::max(bore + 8, std::floor(0.6 * OD)), 1);
  const double R = OD / 2, rim = R - gd - 3;
  if (dh / 2 > rim - 5) throw Reject("pulley: hub too large");
  const double tw = std::round(0.4 * w);
  std::vector<P2> pts = {{bore / 2, -hl}, {dh / 2, -hl}};
  // The rim's inside face has a 2 mm draft, as cast pulleys do (and so it is no hole).
  if (web)
    pts.insert(pts.end(), {{dh / 2, (w - tw) / 2}, {rim - 2, (w - tw) / 2}, {rim, 0}});
  else
    pts.push_back({dh / 2, 0});
  pts.push_back({R, 0});
  for (int j = 0; j < n; ++j) {
    const double z0 = (w / n) * j + (w / n - gw) / 2;
    pts.insert(pts.end(), {{R, z0},
                           {R - gd, z0 + (gw - bottom) / 2},
                           {R - gd, z0 + (gw + bottom) / 2},
                           {R, z0 + gw}});
  }
  pts.push_back({R, w});
  if (web)
    pts.insert(pts.end(), {{rim, w}, {rim - 2, (w + tw) / 2}, {dh / 2, (w + tw) / 2}});
  else
    pts.push_back({dh / 2, w});
  pts.insert(pts.end(), {{dh / 2, w + hl}, {bore / 2, w + hl}});
  TopoDS_Shape shape = turned_about_z(pts);
  Built b;
  b.shape = shape;
  b.params = {
      {"outer_diameter", OD},  {"face_width", w},    {"grooves", n},     {"groove_depth", gd},
      {"bore_diameter", bore}, {"hub_diameter", dh}, {"hub_length", hl}, {"web", web}};
  b.holes = {{"", "bore_diameter", 1, bore}};
  Description& desc = b.desc;
  desc.family = "pulley";
  desc.names = {"V-belt pulley", "pulley", "belt pulley", "grooved pulley", "sheave"};
  desc.dims = {dim_od(OD), {"face_width", w, "face width", "wide at the rim"}};
  desc.kind_word = "round part";
  desc.vague_feature = "a groove";
  desc.features.push_back({"grooves",
                           [=](CaptionWriter& wr) {
                             const std::string c = wr.count("groove_count", n);
                             return c + " " + plural(c, "V-groove", "V-grooves") +
                                    wr.opt(", ", "groove_depth", gd, " deep");
                           },
                           [=](CaptionWriter& wr) {
                             const std::string c = wr.count("groove_count", n);
                             return c + plural(c, " groove", " grooves");
                           }});
  if (hub)
    desc.features.push_back({"hub",
                             [=](CaptionWriter& wr) {
                               return "a hub" + wr.opt(" of ", "hub_diameter", dh, " diameter") +
                                      wr.opt(" standing out ", "hub_length", hl, " on each side");
                             },
                             [](CaptionWriter& wr) { return std::string("a hub"); }});
  if (web)
    desc.features.push_back({"web",
                             [](CaptionWriter& wr) {
                               return wr.pick({"a thin web between hub and rim", "recessed sides"});
                             },
                             [](CaptionWriter& wr) { return std::string("a recessed web"); }});
  desc.features.push_back(bore_feature("bore_diameter", bore));
  desc.steps.push_back([=](CaptionWriter& wr) {
    return "sketch the half cross-section" + wr.opt(" of a ", "outer_diameter", OD, " wheel") +
           wr.opt(", ", "face_width", w, " wide,") + " with " + wr.count("groove_count", n) +
           " V-notches on the rim";
  });
  desc.steps.push_back([=](CaptionWriter& wr) {
    return wr.pick(
               {"revolve it 360 degrees about the Z axis", "revolve the section about the axis"}) +
           wr.opt(", leaving a ", "bore_diameter", bore, " bore");
  });
  return b;
}

}  // namespace cadclip::synth
