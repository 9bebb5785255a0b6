// Plates and brackets of `cadclip synth`: a drilled plate (its holes in a
// grid, on a circle or in a row), L-brackets and U-brackets.
#include <algorithm>
#include <cmath>

#include "synth/family.h"

namespace cadclip::synth {
namespace {

// A plate's drawn parameters and where its holes go.
struct PlatePlan {
  double L = 0, W = 0, T = 0;  // length, width, thickness
  double d = 0;                // hole diameter
  int pattern = 0;             // grid, circle, row
  bool countersink = false;
  double r = 0;            // corner radius, 0 for sharp corners
  int nx = 0, ny = 0;      // grid: columns and rows
  int n = 0;               // hole count
  double pcd = 0;          // circle: the pattern's diameter
  double pitch = 0;        // row: the hole spacing
  std::vector<gp_Pnt> at;  // hole centres on the bottom face
};

// The holes of the plan's pattern, `m` from the edges and at least `spacing`
// apart; a Reject when they do not fit.
void layout_plate_holes(Rng& rng, PlatePlan& p, double spacing, double m) {
  const double L = p.L, W = p.W, d = p.d;
  std::vector<gp_Pnt>& at = p.at;
  if (p.pattern == 0) {
    const int nx = rng.integer(2, 6), ny = rng.integer(2, 4);
    p.nx = nx, p.ny = ny, p.n = nx * ny;
    const double px = (L - 2 * m) / (nx - 1), py = (W - 2 * m) / (ny - 1);
    if (px < spacing || py < spacing) throw Reject("plate: hole grid does not fit");
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) at.emplace_back(m + i * px, m + j * py, 0);
  } else if (p.pattern == 1) {
    const int n = p.n = rng.integer(3, 12);
    const double max_r = std::min(L, W) / 2 - m;
    if (max_r < d) throw Reject("plate: hole circle does not fit");
    const double pcd = p.pcd = 2 * rng.step(std::max(d, 0.5 * max_r), max_r, 0.5);
    if (pcd * std::sin(kPi / n) < spacing) throw Reject("plate: holes on the circle overlap");
    for (int i = 0; i < n; ++i) {
      const double a = 2 * kPi * i / n + kPi / 2;
      at.emplace_back(L / 2 + pcd / 2 * std::cos(a), W / 2 + pcd / 2 * std::sin(a), 0);
    }
  } else {
    const int n = p.n = rng.integer(2, 10);
    const double pitch = p.pitch = (L - 2 * m) / (n - 1);
    if (pitch < spacing) throw Reject("plate: row of holes does not fit");
    for (int i = 0; i < n; ++i) at.emplace_back(m + i * pitch, W / 2, 0);
  }
}

PlatePlan draw_plate(Rng& rng) {
  const double L = rng.step(40, 300, 5);
  const double W = rng.step(30, std::min(L, 200.0), 5);
  const double T = rng.step(2, 20, 1);
  const double d = pick_hole(rng, 3, std::min(22.0, std::min(L, W) / 4));
  const int pattern = rng.integer(0, 2);  // grid, circle, row
  const bool countersink = rng.chance(0.35) && T >= d / 2 + 1.5;
  const double r = rng.chance(0.4) ? rng.step(2, std::max(2.0, std::min(L, W) / 6), 1) : 0;
  const double spacing = countersink ? 2.6 * d : 2 * d;
  const double m = std::max(1.5 * d, r + d);
  PlatePlan p;
  p.L = L, p.W = W, p.T = T, p.d = d;
  p.pattern = pattern, p.countersink = countersink, p.r = r;
  layout_plate_holes(rng, p, spacing, m);
  return p;
}

// The plate: a box, its vertical edges rounded, the holes (and countersinks) cut.
TopoDS_Shape plate_shape(const PlatePlan& p) {
  const double L = p.L, W = p.W, T = p.T, d = p.d, r = p.r;
  TopoDS_Shape shape = box(0, 0, 0, L, W, T);
  if (r > 0)
    shape = fillet_edges(shape, r, [&](const gp_Pnt& mid, bool straight) {
      return straight && std::abs(mid.Z() - T / 2) < 1e-6;
    });
  std::vector<TopoDS_Shape> tools;
  for (const gp_Pnt& at : p.at) {
    tools.push_back(cylinder(gp_Pnt(at.X(), at.Y(), -1), kZ, d / 2, T + 2));
    if (p.countersink) {
      const double h = d / 2;  // 90° countersink to twice the hole diameter
      tools.push_back(cone(gp_Pnt(at.X(), at.Y(), T - h), kZ, d / 2, d / 2 + h + 1, h + 1));
    }
  }
  return cut(shape, tools);
}

// The plate's names, sizes, features and construction steps for the caption writer.
void describe_plate(const PlatePlan& p, Description& desc) {
  const double L = p.L, W = p.W, T = p.T, d = p.d, r = p.r, pcd = p.pcd, pitch = p.pitch;
  const int pattern = p.pattern, nx = p.nx, ny = p.ny, n = p.n;
  const bool countersink = p.countersink;
  desc.family = "plate";
  desc.names = {"rectangular plate", "flat plate", "mounting plate", "base plate", "plate"};
  desc.dims = {dim_length(L), dim_width(W), dim_thickness(T)};
  desc.kind_word = "plate";
  desc.vague_feature = "some holes";
  auto where = [=](CaptionWriter& w) -> std::string {
    if (pattern == 0)
      return w.pick({" in a ", " arranged in a ", " laid out as a "}) +
             w.count("grid_columns", nx) + " by " + w.count("grid_rows", ny) + " grid";
    if (pattern == 1)
      return w.pick({" on a ", " equally spaced on a ", " around a "}) +
             w.opt("", "pattern_diameter", pcd, " ") +
             w.pick({"circle", "bolt circle", "pitch circle"});
    return w.pick({" in a single row", " in one line", " along the centre line"}) +
           w.opt(", ", "hole_spacing", pitch, " apart");
  };
  desc.features.push_back({"holes",
                           [=](CaptionWriter& w) {
                             return holes_text(w, "hole_count", n, "hole_diameter", d, "",
                                               where(w));
                           },
                           [=](CaptionWriter& w) { return brief_holes(w, "hole_count", n); }});
  if (countersink)
    desc.features.push_back(
        {"countersinks",
         [=](CaptionWriter& w) {
           return w.pick({"90 degree countersinks", "countersinks", "a countersink on each hole"}) +
                  w.opt(" to ", "countersink_diameter", 2 * d, " on the top face");
         },
         [](CaptionWriter& w) {
           return w.pick({"countersunk holes", "countersinks"});
         }});
  if (r > 0)
    desc.features.push_back(
        {"rounded corners",
         [=](CaptionWriter& w) {
           return w.pick({"rounded corners", "corner fillets", "radiused corners"}) +
                  w.opt(" of radius ", "corner_radius", r);
         },
         [](CaptionWriter& w) {
           return w.pick({"rounded corners", "round corners"});
         }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"sketch a rectangle ", "draw a rectangle ", "start from a rectangle "}) +
           w.opt("", "length", L, " by ") + w.opt("", "width", W, " ") + "on the XY plane";
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude it", "extrude the rectangle", "pad it"}) +
           w.opt(" by ", "thickness", T);
  });
  if (r > 0)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "round the four vertical edges" + w.opt(" with a ", "corner_radius", r, " fillet");
    });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"drill ", "cut ", "make "}) +
           holes_text(w, "hole_count", n, "hole_diameter", d, "through", where(w));
  });
  if (countersink)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "countersink each hole at 90 degrees" + w.opt(" to ", "countersink_diameter", 2 * d);
    });
}

}  // namespace

Built plate(Rng& rng) {
  const PlatePlan p = draw_plate(rng);
  Built b;
  b.shape = plate_shape(p);
  const char* kPatterns[] = {"grid", "circle", "row"};
  b.params = {{"length", p.L},
              {"width", p.W},
              {"thickness", p.T},
              {"hole_diameter", p.d},
              {"hole_count", p.n},
              {"pattern", kPatterns[p.pattern]},
              {"countersink", p.countersink},
              {"corner_radius", p.r}};
  if (p.pattern == 0) b.params["grid"] = {p.nx, p.ny};
  if (p.pattern == 1) b.params["pattern_diameter"] = p.pcd;
  b.holes = {{"hole_count", "hole_diameter", p.n, p.d}};
  describe_plate(p, b.desc);
  return b;
}

Built l_bracket(Rng& rng) {
  const double A = rng.step(30, 150, 5), B = rng.step(25, 150, 5), W = rng.step(20, 120, 5);
  const double t = rng.step(2, 12, 1);
  if (3 * t > std::min(A, B)) throw Reject("l_bracket: legs too thick for their length");
  const double ri = rng.chance(0.5) ? rng.step(1, 1.5 * t, 0.5) : 0;
  const int nb = rng.integer(1, 4), nl = rng.integer(0, 3);
  const double d = pick_hole(rng, 3,
                             std::min({(A - t - ri) / 2.5, (B - t - ri) / 2.5, W / 2.0 / nb,
                                       nl ? W / 2.0 / nl : 1e9, 20.0}));
  std::vector<P2> profile = {{0, 0}, {A, 0}, {A, t}, {t, t, 0, ri}, {t, B}, {0, B}};
  TopoDS_Shape shape = extrude(profile_face(profile, kO, kX, kZ), gp_Vec(0, W, 0));
  std::vector<TopoDS_Shape> tools;
  const double xb = t + ri + (A - t - ri) / 2, zl = t + ri + (B - t - ri) / 2;
  for (int i = 0; i < nb; ++i)
    tools.push_back(cylinder(gp_Pnt(xb, W * (i + 0.5) / nb, -1), kZ, d / 2, t + 2));
  for (int i = 0; i < nl; ++i)
    tools.push_back(cylinder(gp_Pnt(-1, W * (i + 0.5) / nl, zl), kX, d / 2, t + 2));
  shape = cut(shape, tools);

  Built b;
  b.shape = shape;
  const int n = nb + nl;
  b.params = {{"base_length", A},   {"leg_height", B},  {"width", W},      {"thickness", t},
              {"inner_radius", ri}, {"base_holes", nb}, {"leg_holes", nl}, {"hole_diameter", d}};
  b.holes = {{"hole_count", "hole_diameter", n, d}};
  Description& desc = b.desc;
  desc.family = "l_bracket";
  desc.names = {"L-bracket", "angle bracket", "L-shaped bracket", "right-angle bracket"};
  desc.dims = {dim_length(A), dim_width(W), dim_height(B)};
  desc.kind_word = "bracket";
  desc.vague_feature = "some holes";
  desc.features.push_back(
      {"holes",
       [=](CaptionWriter& w) {
         if (nl == 0)
           return holes_text(w, "hole_count", n, "hole_diameter", d, "", " in the base leg");
         const std::string all = holes_text(w, "hole_count", n, "hole_diameter", d, "", "");
         return all + ", " + w.count("base_hole_count", nb) + " in the base and " +
                w.count("leg_hole_count", nl) + " in the upright leg";
       },
       [=](CaptionWriter& w) { return brief_holes(w, "hole_count", n); }});
  desc.features.push_back(
      {"legs",
       [=](CaptionWriter& w) {
         return w.pick({"legs", "walls", "both legs"}) + w.opt(" ", "leg_thickness", t, " thick");
       },
       [](CaptionWriter& w) {
         return w.pick({"two legs", "a right angle"});
       }});
  if (ri > 0)
    desc.features.push_back(
        {"inner radius",
         [=](CaptionWriter& w) {
           return w.pick({"an inner bend radius", "a fillet in the inside corner"}) +
                  w.opt(" of ", "inner_radius", ri);
         },
         [](CaptionWriter& w) { return std::string("a rounded inside corner"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch an L profile on the XZ plane" + w.opt(" with a ", "length", A, " base") +
           w.opt(", a ", "height", B, " upright") + w.opt(" and ", "leg_thickness", t, " legs");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude it", "extrude the profile"}) + w.opt(" by ", "width", W);
  });
  if (ri > 0)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "fillet the inside corner" + w.opt(" with radius ", "inner_radius", ri);
    });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"drill ", "cut "}) + holes_text(w, "hole_count", n, "hole_diameter", d, "",
                                                   nl ? " through both legs" : " through the base");
  });
  return b;
}

Built u_bracket(Rng& rng) {
  const double L = rng.step(40, 200, 5), W = rng.step(20, 100, 5), H = rng.step(15, 100, 5);
  const double t = rng.step(2, 10, 1);
  if (4 * t > L || 2 * t > H - 5) throw Reject("u_bracket: walls too thick");
  const double ri = rng.chance(0.4) ? rng.step(1, 1.5 * t, 0.5) : 0;
  const int nb = rng.integer(1, 6), ns = rng.integer(0, 2);
  const double inner = L - 2 * t - 2 * ri;
  const double d = pick_hole(rng, 3,
                             std::min({inner / nb / 2, W / 2.5, ns ? W / 2.0 / ns : 1e9,
                                       ns ? (H - t - ri) / 2.5 : 1e9, 20.0}));
  std::vector<P2> profile = {{0, 0},        {L, 0}, {L, H}, {L - t, H}, {L - t, t, 0, ri},
                             {t, t, 0, ri}, {t, H}, {0, H}};
  TopoDS_Shape shape = extrude(profile_face(profile, kO, kX, kZ), gp_Vec(0, W, 0));
  std::vector<TopoDS_Shape> tools;
  for (int i = 0; i < nb; ++i)
    tools.push_back(cylinder(gp_Pnt(t + ri + inner * (i + 0.5) / nb, W / 2, -1), kZ, d / 2, t + 2));
  const double zs = t + ri + (H - t - ri) / 2;
  for (int i = 0; i < ns; ++i)
    tools.push_back(cylinder(gp_Pnt(-1, W * (i + 0.5) / ns, zs), kX, d / 2, L + 2));
  shape = cut(shape, tools);

  Built b;
  b.shape = shape;
  const int n = nb + 2 * ns;
  b.params = {{"length", L},           {"width", W},         {"height", H},
              {"thickness", t},        {"inner_radius", ri}, {"base_holes", nb},
              {"side_holes_each", ns}, {"hole_diameter", d}};
  b.holes = {{"hole_count", "hole_diameter", n, d}};
  Description& desc = b.desc;
  desc.family = "u_bracket";
  desc.names = {"U-bracket", "channel bracket", "U-shaped bracket", "U-channel"};
  desc.dims = {dim_length(L), dim_width(W), dim_height(H)};
  desc.kind_word = "bracket";
  desc.vague_feature = "some holes";
  desc.features.push_back({"holes",
                           [=](CaptionWriter& w) {
                             if (ns == 0)
                               return holes_text(w, "hole_count", n, "hole_diameter", d, "",
                                                 " in the base");
                             return holes_text(w, "hole_count", n, "hole_diameter", d, "", "") +
                                    ", " + w.count("base_hole_count", nb) + " in the base and " +
                                    w.count("side_hole_count", 2 * ns) + " in the side walls";
                           },
                           [=](CaptionWriter& w) { return brief_holes(w, "hole_count", n); }});
  desc.features.push_back(
      {"walls",
       [=](CaptionWriter& w) {
         return w.pick({"two upright sides", "two side walls", "parallel side walls"}) +
                w.opt(" ", "wall_thickness", t, " thick");
       },
       [](CaptionWriter& w) {
         return w.pick({"two side walls", "upturned sides"});
       }});
  if (ri > 0)
    desc.features.push_back(
        {"inner radius",
         [=](CaptionWriter& w) {
           return "rounded inside corners" + w.opt(" of radius ", "inner_radius", ri);
         },
         [](CaptionWriter& w) { return std::string("rounded inside corners"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch a U profile on the XZ plane" + w.opt(", ", "length", L, " wide") +
           w.opt(" and ", "height", H, " tall") + w.opt(" with ", "wall_thickness", t, " walls");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude it", "extrude the channel"}) + w.opt(" by ", "width", W);
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"drill ", "cut "}) + holes_text(w, "hole_count", n, "hole_diameter", d, "", "");
  });
  return b;
}

}  // namespace cadclip::synth
