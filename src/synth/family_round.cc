// Round parts of `cadclip synth`: flanges, washers, hex nuts, stepped shafts,
// pipes and pipe elbows.
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

#include "cadclip/core/format.h"
#include "synth/family.h"

namespace cadclip::synth {

Built flange(Rng& rng) {
  const double OD = rng.step(50, 300, 5), T = rng.step(6, 30, 1);
  const double hub = rng.step(std::ceil(0.3 * OD), std::floor(0.55 * OD), 1);
  const double Hh = rng.step(5, 60, 1);
  const double bore = rng.step(std::max(5.0, std::ceil(0.3 * hub)), std::floor(0.7 * hub), 1);
  const double d = pick_hole(rng, 5, std::min(26.0, (OD - hub) / 2 - 6));
  if (std::abs(d - bore) < 1) throw Reject("flange: bolt holes as large as the bore");
  const double lo = hub + d + 4, hi = OD - d - 4;
  if (hi < lo) throw Reject("flange: no room for the bolt circle");
  const double pcd = rng.step(std::ceil(lo), hi, 1);
  const int n = rng.integer(3, 12);
  if (pcd * std::sin(kPi / n) < d + 3) throw Reject("flange: bolt holes overlap");
  TopoDS_Shape shape = turned_about_z({{bore / 2, 0},
                                       {OD / 2, 0},
                                       {OD / 2, T},
                                       {hub / 2, T},
                                       {hub / 2, T + Hh},
                                       {bore / 2, T + Hh}});
  std::vector<TopoDS_Shape> tools;
  for (int i = 0; i < n; ++i) {
    const double a = 2 * kPi * i / n;
    tools.push_back(
        cylinder(gp_Pnt(pcd / 2 * std::cos(a), pcd / 2 * std::sin(a), -1), kZ, d / 2, T + 2));
  }
  shape = cut(shape, tools);

  Built b;
  b.shape = shape;
  b.params = {{"outer_diameter", OD}, {"flange_thickness", T},  {"hub_diameter", hub},
              {"hub_height", Hh},     {"bore_diameter", bore},  {"bolt_circle_diameter", pcd},
              {"bolt_holes", n},      {"bolt_hole_diameter", d}};
  b.holes = {{"bolt_hole_count", "bolt_hole_diameter", n, d}, {"", "bore_diameter", 1, bore}};
  Description& desc = b.desc;
  desc.family = "flange";
  desc.names = {"flange", "hub flange", "round flange", "bolted flange"};
  desc.dims = {dim_od(OD), dim_height(T + Hh)};
  desc.kind_word = "round part";
  desc.vague_feature = "some holes";
  desc.features.push_back(
      {"bolt holes",
       [=](CaptionWriter& w) {
         return holes_text(w, "bolt_hole_count", n, "bolt_hole_diameter", d, "bolt",
                           w.pick({" on a ", " equally spaced on a ", " around a "}) +
                               w.opt("", "bolt_circle_diameter", pcd, " ") +
                               w.pick({"bolt circle", "pitch circle", "circle"}));
       },
       [=](CaptionWriter& w) { return w.count("bolt_hole_count", n) + " bolt holes"; }});
  desc.features.push_back({"hub",
                           [=](CaptionWriter& w) {
                             return "a raised hub" +
                                    w.opt(" of ", "hub_diameter", hub, " diameter") +
                                    w.opt(", ", "hub_height", Hh, " high");
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"a hub", "a raised hub"});
                           }});
  desc.features.push_back(bore_feature("bore_diameter", bore));
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"draw a circle", "sketch a disc"}) +
           w.opt(" of ", "outer_diameter", OD, " diameter") + " and extrude it" +
           w.opt(" ", "flange_thickness", T);
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return "add a hub" + w.opt(" of diameter ", "hub_diameter", hub) + " on top" +
           w.opt(", extruded ", "hub_height", Hh);
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return "bore the centre through" + w.opt(" at ", "bore_diameter", bore);
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"drill ", "pattern "}) +
           holes_text(w, "bolt_hole_count", n, "bolt_hole_diameter", d, "bolt",
                      w.opt(" on a ", "bolt_circle_diameter", pcd, " circle"));
  });
  return b;
}

Built washer(Rng& rng) {
  const double OD = rng.step(8, 120, 1);
  const double ID = rng.step(std::max(2.0, std::ceil(0.3 * OD)), std::floor(0.7 * OD), 0.5);
  const double T = rng.step(0.5, std::max(0.5, std::min(8.0, OD / 8)), 0.5);
  if (OD - ID < 2) throw Reject("washer: ring too narrow");
  TopoDS_Shape shape = turned_about_z({{ID / 2, 0}, {OD / 2, 0}, {OD / 2, T}, {ID / 2, T}});
  Built b;
  b.shape = shape;
  b.params = {{"outer_diameter", OD}, {"inner_diameter", ID}, {"thickness", T}};
  b.holes = {{"", "inner_diameter", 1, ID}};
  Description& desc = b.desc;
  desc.family = "washer";
  desc.names = {"washer", "flat washer", "plain washer", "ring washer"};
  desc.dims = {dim_od(OD), dim_thickness(T)};
  desc.kind_word = "ring";
  desc.vague_feature = "a hole";
  desc.features.push_back({"hole",
                           [=](CaptionWriter& w) {
                             switch (w.rng().integer(0, 2)) {
                               case 0:
                                 return "a centre hole" + w.opt(" of ", "inner_diameter", ID);
                               case 1:
                                 return "an inner diameter" + w.opt(" of ", "inner_diameter", ID);
                               default:
                                 return "a hole" + w.opt(" ", "inner_diameter", ID, " across") +
                                        " in the middle";
                             }
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"a centre hole", "a hole"});
                           }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "draw two concentric circles" + w.opt(", ", "outer_diameter", OD, "") +
           w.opt(" and ", "inner_diameter", ID, "") + " in diameter";
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude the ring", "extrude the annulus"}) + w.opt(" by ", "thickness", T);
  });
  return b;
}

Built hex_nut(Rng& rng) {
  struct Size {
    double d, s;
  };
  static const std::vector<Size> kSizes = {{3, 5.5}, {4, 7},   {5, 8},   {6, 10},  {8, 13},
                                           {10, 16}, {10, 17}, {12, 18}, {12, 19}, {14, 22},
                                           {16, 24}, {18, 27}, {20, 30}, {22, 32}, {24, 36},
                                           {27, 41}, {30, 46}, {33, 50}, {36, 55}};
  const Size size = rng.pick(kSizes);
  const double d = size.d, s = size.s;
  const double m = rng.step(std::ceil(0.5 * d), d, 0.1);
  const bool chamfered = rng.chance(0.6);
  const double Rc = s / std::sqrt(3.0);
  std::vector<P2> hex;
  for (int i = 0; i < 6; ++i)
    hex.push_back({Rc * std::cos(kPi / 3 * i), Rc * std::sin(kPi / 3 * i)});
  TopoDS_Shape shape = extrude(profile_face(hex, kO, kX, kY), gp_Vec(0, 0, m));
  if (chamfered) {
    const double r0 = 0.95 * s / 2, rout = Rc + 1;
    const double h = (rout - r0) * std::tan(kPi / 6);
    if (2 * h >= m - 0.5) throw Reject("hex_nut: too thin for chamfers");
    shape =
        common(shape, turned_about_z({{0, 0}, {r0, 0}, {rout, h}, {rout, m - h}, {r0, m}, {0, m}}));
  }
  shape = cut(shape, {cylinder(gp_Pnt(0, 0, -1), kZ, d / 2, m + 2)});
  Built b;
  b.shape = shape;
  b.params = {{"thread", d}, {"across_flats", s}, {"thickness", m}, {"chamfered", chamfered}};
  b.holes = {{"", "bore_diameter", 1, d}};
  Description& desc = b.desc;
  desc.family = "hex_nut";
  desc.names = {"hex nut", "hexagon nut", "six-sided nut", "hex-head nut"};
  desc.dims = {{"across_flats", s, "width across flats", "across the flats"}, dim_thickness(m)};
  desc.kind_word = "nut";
  desc.vague_feature = "a hole";
  desc.features.push_back(
      {"bore",
       [=](CaptionWriter& w) {
         switch (w.rng().integer(0, 2)) {
           case 0:
             return "a bore" + w.opt(" of ", "bore_diameter", d) + " for an M" +
                    w.value("thread", d) + " bolt";
           case 1:
             return "an M" + w.value("thread", d) + " hole" +
                    w.opt(" (", "bore_diameter", d, " plain bore)");
           default:
             return "a through hole" + w.opt(" ", "bore_diameter", d, " in diameter") +
                    " for the thread";
         }
       },
       [=](CaptionWriter& w) { return "an M" + w.value("thread", d) + " bore"; }});
  if (chamfered)
    desc.features.push_back({"chamfers",
                             [](CaptionWriter& w) {
                               return w.pick({"30 degree chamfers on both faces",
                                              "chamfered corners on both sides",
                                              "a double chamfer"});
                             },
                             [](CaptionWriter& w) {
                               return w.pick({"chamfered corners", "chamfers"});
                             }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch a regular hexagon" + w.opt(" ", "across_flats", s, " across the flats") +
           " and extrude it" + w.opt(" ", "thickness", m);
  });
  if (chamfered)
    desc.steps.push_back([](CaptionWriter& w) {
      return w.pick({"chamfer the corners at 30 degrees on both faces",
                     "intersect it with a double cone to chamfer the corners"});
    });
  desc.steps.push_back([=](CaptionWriter& w) {
    return "cut a through hole" + w.opt(" of ", "bore_diameter", d) + " on the axis";
  });
  return b;
}

Built stepped_shaft(Rng& rng) {
  const int k = rng.integer(2, 5);
  std::vector<double> D(k), len(k);
  for (int i = 0; i < k; ++i) {
    do D[i] = rng.step(6, 80, 1);
    while (i > 0 && std::abs(D[i] - D[i - 1]) < 3);
    len[i] = rng.step(5, 120, 1);
  }
  const double c =
      rng.chance(0.6)
          ? rng.step(0.5, std::max(0.5, std::min(2.0, std::min(D[0], D[k - 1]) / 8)), 0.5)
          : 0;
  const double f = rng.chance(0.5) ? rng.step(0.5, 2, 0.5) : 0;
  for (int i = 0; i < k; ++i) {
    if (len[i] < 2 * f + 2 * c + 2) throw Reject("stepped_shaft: step too short");
    if (i > 0 && std::abs(D[i] - D[i - 1]) / 2 < f + 0.5)
      throw Reject("stepped_shaft: shoulder too low");
  }
  std::vector<P2> profile = {{0, 0}, {0, D[0] / 2, c}};
  double x = 0;
  for (int i = 0; i < k; ++i) {
    x += len[i];
    if (i + 1 < k) {
      const bool up = D[i + 1] > D[i];
      profile.push_back({x, D[i] / 2, 0, up ? f : 0});
      profile.push_back({x, D[i + 1] / 2, 0, up ? 0 : f});
    }
  }
  profile.push_back({x, D[k - 1] / 2, c});
  profile.push_back({x, 0});
  TopoDS_Shape shape = turned_about_x(profile);
  const double total = x;
  Built b;
  b.shape = shape;
  b.params = {{"diameters", D}, {"lengths", len}, {"end_chamfer", c}, {"shoulder_fillet", f}};
  Description& desc = b.desc;
  desc.family = "stepped_shaft";
  desc.names = {"stepped shaft", "shouldered shaft", "turned shaft", "multi-diameter shaft"};
  desc.dims = {dim_length(total),
               {"outer_diameter", *std::max_element(D.begin(), D.end()), "largest diameter",
                "across at its widest"}};
  desc.kind_word = "shaft";
  desc.vague_feature = "some steps";
  desc.features.push_back({"steps",
                           [=](CaptionWriter& w) {
                             std::string text =
                                 w.count("step_count", k) + " " +
                                 w.pick({"steps", "diameter sections", "cylindrical sections"});
                             std::string list;
                             for (int i = 0; i < k; ++i) {
                               const std::string part =
                                   w.opt("", format("step{}_diameter", i + 1), D[i], "") +
                                   w.opt(" x ", format("step{}_length", i + 1), len[i]);
                               if (part.empty()) continue;
                               list += (list.empty() ? "" : (i + 1 == k ? " and " : ", ")) + part;
                             }
                             return list.empty() ? text : text + " (" + list + ")";
                           },
                           [=](CaptionWriter& w) { return w.count("step_count", k) + " steps"; }});
  if (c > 0)
    desc.features.push_back({"chamfers",
                             [=](CaptionWriter& w) {
                               return w.opt("", "end_chamfer", c, " ") + "chamfers on both ends";
                             },
                             [](CaptionWriter& w) { return std::string("chamfered ends"); }});
  if (f > 0)
    desc.features.push_back({"fillets",
                             [=](CaptionWriter& w) {
                               return "fillets at the shoulders" +
                                      w.opt(" of radius ", "shoulder_fillet", f);
                             },
                             [](CaptionWriter& w) { return std::string("filleted shoulders"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch the half profile of " + w.count("step_count", k) + " steps along the X axis" +
           w.opt(", ", "length", total, " in total");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    std::string text =
        w.pick({"revolve it a full turn about the X axis", "revolve the profile 360 degrees"});
    for (int i = 0; i < k; ++i)
      text +=
          w.opt(i == 0 ? " to get diameters of " : ", ", format("step{}_diameter", i + 1), D[i]);
    return text;
  });
  if (c > 0)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "chamfer both end edges" + w.opt(" by ", "end_chamfer", c);
    });
  if (f > 0)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "fillet each shoulder" + w.opt(" with radius ", "shoulder_fillet", f);
    });
  return b;
}

Built pipe(Rng& rng) {
  const double OD = rng.step(6, 200, 1);
  const double wall = rng.step(0.5, std::max(0.5, std::min(OD * 0.25, 12.0)), 0.5);
  const double L = rng.step(std::max(20.0, OD), 600, 5);
  const double bevel = rng.chance(0.3) ? std::min(2.0, std::floor(wall * 2) / 4) : 0;
  const double ID = OD - 2 * wall;
  if (ID < 2) throw Reject("pipe: bore too small");
  TopoDS_Shape shape =
      turned_about_x({{0, ID / 2}, {L, ID / 2}, {L, OD / 2, bevel}, {0, OD / 2, bevel}});
  Built b;
  b.shape = shape;
  b.params = {{"outer_diameter", OD}, {"wall", wall}, {"length", L}, {"bevel", bevel}};
  b.holes = {{"", "inner_diameter", 1, ID}};
  Description& desc = b.desc;
  desc.family = "pipe";
  desc.names = {"straight pipe", "tube", "pipe", "round tube", "pipe section"};
  desc.dims = {dim_length(L), dim_od(OD)};
  desc.kind_word = "tube";
  desc.vague_feature = "a hole through it";
  desc.features.push_back({"bore",
                           [=](CaptionWriter& w) {
                             return w.pick({"a bore", "an inner diameter", "a hollow core"}) +
                                    w.opt(" of ", "inner_diameter", ID) +
                                    w.opt(", wall ", "wall_thickness", wall);
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"a hollow core", "thin walls"});
                           }});
  if (bevel > 0)
    desc.features.push_back({"bevels",
                             [=](CaptionWriter& w) {
                               return "bevelled outer edges" + w.opt(" (", "bevel", bevel, ")");
                             },
                             [](CaptionWriter& w) { return std::string("bevelled ends"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "draw two concentric circles" + w.opt(" of ", "outer_diameter", OD) +
           w.opt(" and ", "inner_diameter", ID) + " on the YZ plane";
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude the ring along X", "extrude the annulus"}) + w.opt(" by ", "length", L);
  });
  if (bevel > 0)
    desc.steps.push_back(
        [=](CaptionWriter& w) { return "bevel both outer edges" + w.opt(" by ", "bevel", bevel); });
  return b;
}

Built elbow(Rng& rng) {
  const double OD = rng.step(10, 150, 1);
  const double wall = rng.step(1, std::max(1.0, std::min(OD * 0.2, 10.0)), 0.5);
  const double Rb = rng.step(OD, 3 * OD, 1);
  static const std::vector<double> kAngles = {30, 45, 60, 90, 90, 120, 135, 180};
  const double angle = rng.pick(kAngles);
  const double ID = OD - 2 * wall;
  TopoDS_Shape face;
  try {
    const gp_Ax2 ax(gp_Pnt(Rb, 0, 0), kY);
    BRepBuilderAPI_MakeWire outer(BRepBuilderAPI_MakeEdge(gp_Circ(ax, OD / 2)).Edge());
    BRepBuilderAPI_MakeWire inner(BRepBuilderAPI_MakeEdge(gp_Circ(ax, ID / 2)).Edge());
    BRepBuilderAPI_MakeFace make(outer.Wire(), true);
    make.Add(TopoDS::Wire(inner.Wire().Reversed()));
    face = make.Face();
  } catch (const Standard_Failure&) {
    throw Reject("elbow: ring face failed");
  }
  TopoDS_Shape shape = revolve(face, gp_Ax1(kO, kZ), angle * kPi / 180);
  Built b;
  b.shape = shape;
  b.params = {{"outer_diameter", OD}, {"wall", wall}, {"bend_radius", Rb}, {"angle", angle}};
  Description& desc = b.desc;
  desc.family = "elbow";
  desc.names = {"pipe elbow", "elbow", "bent pipe", "pipe bend", "elbow fitting"};
  desc.dims = {{"pipe_outer_diameter", OD, "pipe diameter", "in pipe diameter"}};
  desc.kind_word = "bent tube";
  desc.vague_feature = "a curve";
  desc.features.push_back(
      {"bend",
       [=](CaptionWriter& w) {
         return "a " + w.deg("bend_angle", angle) + " bend" +
                w.opt(" with a ", "bend_radius", Rb, " centreline radius");
       },
       [=](CaptionWriter& w) { return "a " + w.deg("bend_angle", angle) + " bend"; }});
  desc.features.push_back({"wall",
                           [=](CaptionWriter& w) {
                             return w.pick({"a wall", "walls"}) +
                                    w.opt(" ", "wall_thickness", wall, " thick") +
                                    w.opt(" around a ", "pipe_inner_diameter", ID, " bore");
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"thin walls", "a hollow section"});
                           }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "draw two concentric circles" + w.opt(" of ", "pipe_outer_diameter", OD) +
           w.opt(" and ", "pipe_inner_diameter", ID) +
           w.opt(", centred ", "bend_radius", Rb, " from the Z axis");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"revolve the ring about the Z axis by ",
                   "sweep the ring around the Z axis through "}) +
           w.deg("bend_angle", angle);
  });
  return b;
}

}  // namespace cadclip::synth
