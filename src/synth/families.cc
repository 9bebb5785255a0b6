// The part families of `cadclip synth`: each draws its parameters from the
// part's parameter stream, models the solid with Open CASCADE, and describes
// it (names, sizes, features, construction steps) for the caption writer.
// Coordinates: prismatic parts span x (length), y (width), z (height) from the
// origin; round parts turn about z (flat ones) or x (long ones).
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

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/model.h"

namespace cadclip::synth {
namespace {

const gp_Pnt kO(0, 0, 0);
const gp_Dir kX(1, 0, 0), kY(0, 1, 0), kZ(0, 0, 1);
constexpr double kPi = 3.14159265358979323846;

// ISO metric clearance-hole and common drill diameters, mm.
const std::vector<double> kHoleSizes = {3,  3.5, 4,    4.5, 5,  5.5,  6,  6.6, 8,  9, 10,
                                        11, 12,  13.5, 14,  16, 17.5, 18, 20,  22, 26};

Dim dim_length(double v) { return {"length", v, "length", "long"}; }
Dim dim_width(double v) { return {"width", v, "width", "wide"}; }
Dim dim_height(double v) { return {"height", v, "height", "high"}; }
Dim dim_thickness(double v) { return {"thickness", v, "thickness", "thick"}; }
Dim dim_od(double v) { return {"outer_diameter", v, "outer diameter", "in diameter"}; }

double pick_hole(Rng& rng, double lo, double hi) {
  std::vector<double> fits;
  for (double d : kHoleSizes)
    if (d >= lo && d <= hi) fits.push_back(d);
  if (fits.empty()) throw Reject(format("no standard hole between {} and {} mm", lo, hi));
  return rng.pick(fits);
}

bool is_one(const std::string& count_text) { return count_text == "one" || count_text == "1"; }

// "six 8 mm holes in the base", "4 countersunk holes of 6.6 mm diameter", ...
std::string holes_text(CaptionWriter& w, const std::string& count_key, int n,
                       const std::string& diameter_key, double d, const std::string& adjective,
                       const std::string& where) {
  const std::string c = w.count(count_key, n);
  const std::string noun = is_one(c) ? "hole" : "holes";
  const std::string adj = adjective.empty() ? "" : adjective + " ";
  switch (w.rng().integer(0, 3)) {
    case 0:
      return c + " " + adj + noun + w.opt(" of ", diameter_key, d, " diameter") + where;
    case 1:
      return c + " " + adj + noun + where + w.opt(", ", diameter_key, d, " in diameter");
    case 2:
      return c + " " + adj + noun + where + w.opt(", each ", diameter_key, d, " across");
    default:
      return c + " " + adj + noun + w.opt(" (diameter ", diameter_key, d, ")") + where;
  }
}

std::string bore_text(CaptionWriter& w, const std::string& key, double d) {
  switch (w.rng().integer(0, 3)) {
    case 0:
      return "a central bore" + w.opt(" of ", key, d);
    case 1:
      return w.opt("a ", key, d, " bore").empty() ? "a bore" : w.opt("a ", key, d, " bore");
    case 2:
      return "a through hole in the centre" + w.opt(", ", key, d, " in diameter");
    default:
      return "a centre hole" + w.opt(" (", key, d, ")");
  }
}

std::string brief_holes(CaptionWriter& w, const std::string& key, int n) {
  const std::string c = w.count(key, n);
  return c + (is_one(c) ? " hole" : " holes");
}

Feature bore_feature(const std::string& key, double d) {
  return {"bore", [=](CaptionWriter& w) { return bore_text(w, key, d); },
          [](CaptionWriter& w) {
            return w.pick({"a bore", "a centre hole", "a central hole"});
          }};
}

// Drops points that lie on the line through their neighbours, so that a
// revolved profile has no split faces.
std::vector<P2> simplify(std::vector<P2> points) {
  bool changed = true;
  while (changed && points.size() > 3) {
    changed = false;
    for (size_t i = 0; i < points.size(); ++i) {
      const P2& a = points[(i + points.size() - 1) % points.size()];
      const P2& b = points[i];
      const P2& c = points[(i + 1) % points.size()];
      const double cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x);
      const bool same = std::hypot(b.x - a.x, b.y - a.y) < 1e-9;
      if ((std::abs(cross) < 1e-9 || same) && b.chamfer == 0 && b.fillet == 0) {
        points.erase(points.begin() + static_cast<long>(i));
        changed = true;
        break;
      }
    }
  }
  return points;
}

// A profile in the xz plane (x = radius, y = height) turned a full turn about z.
TopoDS_Shape turned_about_z(const std::vector<P2>& profile) {
  return revolve(profile_face(simplify(profile), kO, kX, kZ), gp_Ax1(kO, kZ), 2 * kPi);
}
// A profile in the xy plane (x = axial position, y = radius) turned about x.
TopoDS_Shape turned_about_x(const std::vector<P2>& profile) {
  return revolve(profile_face(simplify(profile), kO, kX, kY), gp_Ax1(kO, kX), 2 * kPi);
}

std::string plural(const std::string& count_text, const std::string& one, const std::string& many) {
  return is_one(count_text) ? one : many;
}

// ------------------------------------------------------------------ plate

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

// --------------------------------------------------------------- brackets

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

// ----------------------------------------------------------- round parts

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

// --------------------------------------------------------------- blocks

Built block(Rng& rng) {
  const double L = rng.step(30, 200, 5), W = rng.step(20, 150, 5), H = rng.step(10, 80, 5);
  bool pocket = rng.chance(0.6), slot = rng.chance(0.5);
  const int nh = std::vector<int>{0, 2, 4, 4}[rng.integer(0, 3)];
  if (!pocket && !slot && nh == 0) pocket = true;
  double d = 0, m = 0;
  if (nh) {
    d = pick_hole(rng, 3, std::min({14.0, W / 5, L / 6}));
    m = std::round(1.2 * d + 2);
  }
  const double e = nh ? m + d / 2 + 3 : 4;
  double x0 = e, x1 = L - e;
  if (x1 - x0 < 12) throw Reject("block: no room for features");
  const double mid = (x0 + x1) / 2;
  double pl = 0, pw = 0, pd = 0, pr = 0, sl = 0, sw = 0, px = 0, sx = 0;
  const double ymax = (nh == 4) ? W - 2 * (m + d / 2 + 2) : W - 8;
  if (ymax < 6) throw Reject("block: too narrow for features");
  std::vector<TopoDS_Shape> tools;
  if (pocket) {
    const double span = slot ? mid - 2 - x0 : x1 - x0;
    pl = rng.step(std::ceil(0.4 * span), std::floor(0.9 * span), 1);
    pw = rng.step(std::ceil(0.3 * ymax), std::floor(0.8 * ymax), 1);
    pd = rng.step(1, std::max(1.0, 0.6 * H), 0.5);
    pr = rng.chance(0.5) ? rng.step(1, std::max(1.0, std::min(pl, pw) / 4), 0.5) : 0;
    if (pl < 4 || pw < 4) throw Reject("block: pocket too small");
    px = x0 + span / 2;
    std::vector<P2> rect = {{px - pl / 2, W / 2 - pw / 2, 0, pr},
                            {px + pl / 2, W / 2 - pw / 2, 0, pr},
                            {px + pl / 2, W / 2 + pw / 2, 0, pr},
                            {px - pl / 2, W / 2 + pw / 2, 0, pr}};
    tools.push_back(
        extrude(profile_face(rect, gp_Pnt(0, 0, H - pd), kX, kY), gp_Vec(0, 0, pd + 1)));
  }
  if (slot) {
    const double start = pocket ? mid + 2 : x0;
    const double span = x1 - start;
    sw = rng.step(3, std::max(3.0, std::min(0.6 * ymax, 30.0)), 0.5);
    if (span < 2 * sw + 1) throw Reject("block: slot does not fit");
    sl = rng.step(2 * sw, span, 1);
    sx = start + span / 2;
    const double a = sx - sl / 2 + sw / 2, c = sx + sl / 2 - sw / 2;
    tools.push_back(box(a, W / 2 - sw / 2, -1, c - a, sw, H + 2));
    tools.push_back(cylinder(gp_Pnt(a, W / 2, -1), kZ, sw / 2, H + 2));
    tools.push_back(cylinder(gp_Pnt(c, W / 2, -1), kZ, sw / 2, H + 2));
  }
  std::vector<gp_Pnt> holes;
  if (nh == 2) holes = {{m, W / 2, -1}, {L - m, W / 2, -1}};
  if (nh == 4) holes = {{m, m, -1}, {L - m, m, -1}, {L - m, W - m, -1}, {m, W - m, -1}};
  if (nh && 2 * m + d > W) throw Reject("block: holes do not fit");
  for (const gp_Pnt& p : holes) tools.push_back(cylinder(p, kZ, d / 2, H + 2));
  TopoDS_Shape shape = cut(box(0, 0, 0, L, W, H), tools);

  Built b;
  b.shape = shape;
  b.params = {{"length", L},
              {"width", W},
              {"height", H},
              {"holes", nh},
              {"hole_diameter", d},
              {"pocket", pocket ? nlohmann::json{pl, pw, pd, pr} : nlohmann::json()},
              {"slot", slot ? nlohmann::json{sl, sw} : nlohmann::json()}};
  if (nh) b.holes = {{"hole_count", "hole_diameter", nh, d}};
  Description& desc = b.desc;
  desc.family = "block";
  desc.names = {"block", "rectangular block", "machined block", "solid block", "cuboid block"};
  desc.dims = {dim_length(L), dim_width(W), dim_height(H)};
  desc.kind_word = "block";
  desc.vague_feature = "a cut-out";
  if (pocket)
    desc.features.push_back(
        {"pocket",
         [=](CaptionWriter& w) {
           std::string text = w.pick({"a rectangular pocket", "a pocket", "a recess"});
           text += w.opt(" ", "pocket_length", pl, "") + w.opt(" by ", "pocket_width", pw, "");
           text += w.opt(", ", "pocket_depth", pd, " deep") + " in the top face";
           if (pr > 0) text += w.opt(" with ", "pocket_corner_radius", pr, " corner radii");
           return text;
         },
         [](CaptionWriter& w) {
           return w.pick({"a pocket", "a recess"});
         }});
  if (slot)
    desc.features.push_back(
        {"slot",
         [=](CaptionWriter& w) {
           return w.pick({"a through slot", "an elongated slot", "a slot with round ends"}) +
                  w.opt(" ", "slot_length", sl, " long") +
                  w.opt(" and ", "slot_width", sw, " wide");
         },
         [](CaptionWriter& w) {
           return w.pick({"a slot", "a through slot"});
         }});
  if (nh)
    desc.features.push_back({"holes",
                             [=](CaptionWriter& w) {
                               return holes_text(w, "hole_count", nh, "hole_diameter", d, "through",
                                                 nh == 4 ? " near the corners" : " at the ends");
                             },
                             [=](CaptionWriter& w) { return brief_holes(w, "hole_count", nh); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"make a box ", "sketch a rectangle and extrude it into a box "}) +
           w.opt("", "length", L, " long, ") + w.opt("", "width", W, " wide and ") +
           w.opt("", "height", H, " high");
  });
  if (pocket)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "cut a pocket" + w.opt(" ", "pocket_length", pl, "") +
             w.opt(" by ", "pocket_width", pw, "") + w.opt(" to a depth of ", "pocket_depth", pd) +
             " from the top";
    });
  if (slot)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "cut a round-ended slot" + w.opt(" ", "slot_length", sl, " long") +
             w.opt(" and ", "slot_width", sw, " wide") + " through the block";
    });
  if (nh)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "drill " + holes_text(w, "hole_count", nh, "hole_diameter", d, "through", "");
    });
  return b;
}

// --------------------------------------------------------- gears, pulleys

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

// ------------------------------------------------------------ enclosure

Built enclosure(Rng& rng) {
  const double L = rng.step(40, 250, 5), W = rng.step(30, 200, 5), H = rng.step(20, 120, 5);
  const double t = rng.step(1.5, 6, 0.5);
  const double ld = rng.step(1, std::max(1.0, std::min(5.0, H / 4)), 0.5);
  const double lw = rng.step(0.5, t - 1, 0.5);
  const double r =
      rng.chance(0.5) ? rng.step(1, std::max(1.0, std::floor(t * 0.8 * 2) / 2), 0.5) : 0;
  const bool bosses = rng.chance(0.4);
  TopoDS_Shape shape = box(0, 0, 0, L, W, H);
  if (r > 0)
    shape = fillet_edges(shape, r, [&](const gp_Pnt& mid, bool straight) {
      return straight && std::abs(mid.Z() - H / 2) < 1e-6;
    });
  shape = cut(shape, {box(t, t, t, L - 2 * t, W - 2 * t, H),
                      box(t - lw, t - lw, H - ld, L - 2 * (t - lw), W - 2 * (t - lw), ld + 1)});
  double rb = 0, bd = 0, bh = 0;
  if (bosses) {
    rb = rng.step(2.5, std::max(2.5, std::min(8.0, std::min(L, W) / 8)), 0.5);
    bd = std::max(1.5, std::floor(rb));  // blind hole for a screw
    bh = H - ld - 1 - t;
    if (bh < 4) throw Reject("enclosure: too shallow for bosses");
    std::vector<TopoDS_Shape> posts, holes;
    const double o = t + rb - 0.5;
    for (auto [x, y] : {std::pair{o, o}, {L - o, o}, {L - o, W - o}, {o, W - o}}) {
      posts.push_back(cylinder(gp_Pnt(x, y, t - 0.5), kZ, rb, bh + 0.5));
      holes.push_back(cylinder(gp_Pnt(x, y, t + bh * 0.3), kZ, bd / 2, bh));
    }
    shape = cut(fuse(shape, posts), holes);
  }
  Built b;
  b.shape = shape;
  b.params = {{"length", L},        {"width", W},        {"height", H},
              {"wall", t},          {"lip_depth", ld},   {"lip_width", lw},
              {"corner_radius", r}, {"boss_radius", rb}, {"boss_hole", bd}};
  if (bosses) b.holes = {{"boss_hole_count", "boss_hole_diameter", 4, bd}};
  Description& desc = b.desc;
  desc.family = "enclosure";
  desc.names = {"enclosure", "hollow enclosure", "housing", "electronics enclosure", "open box"};
  desc.dims = {dim_length(L), dim_width(W), dim_height(H)};
  desc.kind_word = "box";
  desc.vague_feature = "thin walls";
  desc.features.push_back({"walls",
                           [=](CaptionWriter& w) {
                             return w.pick({"walls and floor", "a shell", "walls"}) +
                                    w.opt(" ", "wall_thickness", t, " thick") +
                                    " around an open top";
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"thin walls", "an open top"});
                           }});
  desc.features.push_back({"lip",
                           [=](CaptionWriter& w) {
                             return w.pick({"a lid lip", "a rebate for the lid", "a stepped lip"}) +
                                    w.opt(" ", "lip_width", lw, " wide") +
                                    w.opt(" and ", "lip_depth", ld, " deep") +
                                    " around the opening";
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"a lid lip", "a lip for a lid"});
                           }});
  if (r > 0)
    desc.features.push_back({"rounded corners",
                             [=](CaptionWriter& w) {
                               return "rounded outside corners" +
                                      w.opt(" of radius ", "corner_radius", r);
                             },
                             [](CaptionWriter& w) { return std::string("rounded corners"); }});
  if (bosses)
    desc.features.push_back(
        {"bosses",
         [=](CaptionWriter& w) {
           return "four screw bosses in the corners" +
                  w.opt(", each with a ", "boss_hole_diameter", bd, " blind hole") +
                  (w.rng().chance(0.5) ? " (" + w.count("boss_hole_count", 4) + " holes)" : "");
         },
         [](CaptionWriter& w) {
           return w.pick({"screw bosses", "corner bosses"});
         }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "make a box" + w.opt(" ", "length", L, " by") + w.opt(" ", "width", W, " by") +
           w.opt(" ", "height", H, "");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"shell it from the top", "hollow it out, leaving the top open,"}) +
           w.opt(" with ", "wall_thickness", t, " walls");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return "cut a lip around the top inside edge" + w.opt(", ", "lip_width", lw, " wide") +
           w.opt(" and ", "lip_depth", ld, " deep");
  });
  if (bosses)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "add a boss in each inside corner" +
             w.opt(" and drill a ", "boss_hole_diameter", bd, " hole in each");
    });
  return b;
}

// ------------------------------------------------------- small round parts

Built spacer(Rng& rng) {
  const double OD = rng.step(4, 40, 0.5);
  const double ID =
      rng.step(std::max(1.5, std::ceil(0.3 * OD * 2) / 2), std::floor(0.75 * OD * 2) / 2, 0.5);
  const double L = rng.step(2, 60, 0.5);
  if (OD - ID < 1) throw Reject("spacer: wall too thin");
  const double c = (rng.chance(0.3) && OD - ID >= 2) ? 0.5 : 0;
  TopoDS_Shape shape = turned_about_x({{0, ID / 2}, {L, ID / 2}, {L, OD / 2, c}, {0, OD / 2, c}});
  Built b;
  b.shape = shape;
  b.params = {{"outer_diameter", OD}, {"inner_diameter", ID}, {"length", L}, {"chamfer", c}};
  b.holes = {{"", "inner_diameter", 1, ID}};
  Description& desc = b.desc;
  desc.family = "spacer";
  desc.names = {"spacer", "round spacer", "spacer sleeve", "bushing"};
  desc.dims = {dim_length(L), dim_od(OD)};
  desc.kind_word = "small round part";
  desc.vague_feature = "a hole";
  desc.features.push_back(
      {"bore",
       [=](CaptionWriter& w) {
         return w.pick({"a through bore", "a centre hole", "a hole along its axis"}) +
                w.opt(" of ", "inner_diameter", ID);
       },
       [](CaptionWriter& w) {
         return w.pick({"a through hole", "a bore"});
       }});
  if (c > 0)
    desc.features.push_back({"chamfers",
                             [=](CaptionWriter& w) {
                               return w.opt("", "chamfer", c, " ") + "chamfers on the outer edges";
                             },
                             [](CaptionWriter& w) { return std::string("chamfered ends"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "draw a ring" + w.opt(" of ", "outer_diameter", OD, " outside") +
           w.opt(" and ", "inner_diameter", ID, " inside");
  });
  desc.steps.push_back(
      [=](CaptionWriter& w) { return "extrude it along X" + w.opt(" by ", "length", L); });
  return b;
}

Built standoff(Rng& rng) {
  struct Size {
    double d, s;
  };
  static const std::vector<Size> kSizes = {{2, 4}, {2.5, 5}, {3, 5.5}, {3, 6},
                                           {4, 7}, {5, 8},   {6, 10},  {8, 13}};
  const Size size = rng.pick(kSizes);
  const double d = size.d, s = size.s;
  const double Lb = rng.step(5, 60, 0.5);
  const bool male = rng.chance(0.5), round = rng.chance(0.3);
  const double ls = male ? rng.step(std::ceil(1.2 * d), 3 * d, 1) : 0;
  const double depth = male ? std::min(Lb - 1.5, std::ceil(2 * d)) : Lb + 2;
  if (depth < d) throw Reject("standoff: too short for its thread");
  TopoDS_Shape body;
  if (round) {
    body = cylinder(kO, kZ, s / 2, Lb);
  } else {
    const double Rc = s / std::sqrt(3.0);
    std::vector<P2> hex;
    for (int i = 0; i < 6; ++i)
      hex.push_back({Rc * std::cos(kPi / 3 * i), Rc * std::sin(kPi / 3 * i)});
    body = extrude(profile_face(hex, kO, kX, kY), gp_Vec(0, 0, Lb));
  }
  if (male) body = fuse(body, {cylinder(gp_Pnt(0, 0, -ls), kZ, d / 2, ls + 0.5)});
  TopoDS_Shape shape =
      cut(body, {cylinder(gp_Pnt(0, 0, male ? Lb - depth : -1), kZ, d / 2, depth + 1)});
  Built b;
  b.shape = shape;
  b.params = {{"thread", d},
              {"size", s},
              {"body_length", Lb},
              {"male", male},
              {"round", round},
              {"stud_length", ls},
              {"hole_depth", male ? depth : Lb}};
  b.holes = {{"", "hole_diameter", 1, d}};
  Description& desc = b.desc;
  desc.family = "standoff";
  desc.names =
      round ? std::vector<std::string>{"round standoff", "standoff", "spacer post", "PCB standoff"}
            : std::vector<std::string>{"hex standoff", "standoff", "PCB standoff",
                                       "hexagonal spacer"};
  desc.dims = {round ? dim_od(s) : Dim{"across_flats", s, "width across flats", "across the flats"},
               dim_height(Lb + ls)};
  desc.kind_word = "small part";
  desc.vague_feature = "a hole";
  desc.features.push_back(
      {"thread",
       [=](CaptionWriter& w) {
         if (male)
           return "an M" + w.value("thread", d) + " stud" + w.opt(" ", "stud_length", ls, " long") +
                  " at the bottom and a blind hole" + w.opt(" of ", "hole_diameter", d) +
                  w.opt(", ", "hole_depth", depth, " deep,") + " at the top";
         return "an M" + w.value("thread", d) + " through hole" +
                w.opt(" (", "hole_diameter", d, ")") + " for screws at both ends";
       },
       [=](CaptionWriter& w) {
         return male ? "a male-female M" + w.value("thread", d) + " thread"
                     : "a female-female M" + w.value("thread", d) + " thread";
       }});
  desc.features.push_back(
      {"body",
       [=](CaptionWriter& w) {
         return std::string(round ? "a round body" : "a hexagonal body") +
                w.opt(" ", "body_length", Lb, " long");
       },
       [=](CaptionWriter& w) { return std::string(round ? "a round body" : "a hex body"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return std::string(round ? "draw a circle" : "draw a hexagon") +
           (round ? w.opt(" of ", "outer_diameter", s)
                  : w.opt(" ", "across_flats", s, " across the flats")) +
           " and extrude it" + w.opt(" ", "body_length", Lb);
  });
  if (male)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "add a stud" + w.opt(" of diameter ", "stud_diameter", d) +
             w.opt(", ", "stud_length", ls, " long,") + " under the body";
    });
  desc.steps.push_back([=](CaptionWriter& w) {
    return std::string(male ? "drill a blind hole" : "drill a through hole") +
           w.opt(" of ", "hole_diameter", d) + " on the axis";
  });
  return b;
}

// ------------------------------------------------------------ long profiles

Built tslot_profile(Rng& rng) {
  static const std::vector<double> kSizes = {20, 25, 30, 40, 45, 50, 60};
  const double a = rng.pick(kSizes);
  const double L = rng.step(30, 1000, 5);
  const int k = rng.integer(1, 4);
  const double so = std::round(0.3 * a * 2) / 2, lt = std::round(0.1 * a * 2) / 2;
  const double su = 0.5 * a, sd = 0.14 * a;
  const bool has_bore = rng.chance(0.8);
  const double bore =
      has_bore ? rng.step(std::ceil(0.2 * a * 2) / 2, std::floor(0.3 * a * 2) / 2, 0.5) : 0;
  TopoDS_Shape shape = box(0, 0, 0, L, a, a);
  std::vector<TopoDS_Shape> tools;
  // Sides in turn: top (+z), right (+y), bottom (-z), left (-y). Each slot is
  // an opening through the lip and a wider undercut behind it, in (u, v) where
  // u runs along the side and v inward from it.
  for (int side = 0; side < k; ++side) {
    auto slot_box = [&](double u0, double u1, double v0, double v1) {
      switch (side) {
        case 0:
          return box(-1, u0, a - v1, L + 2, u1 - u0, v1 - v0);
        case 1:
          return box(-1, a - v1, u0, L + 2, v1 - v0, u1 - u0);
        case 2:
          return box(-1, u0, v0, L + 2, u1 - u0, v1 - v0);
        default:
          return box(-1, v0, u0, L + 2, v1 - v0, u1 - u0);
      }
    };
    tools.push_back(slot_box(a / 2 - so / 2, a / 2 + so / 2, -1, lt + sd / 2));
    tools.push_back(slot_box(a / 2 - su / 2, a / 2 + su / 2, lt, lt + sd));
  }
  if (has_bore) tools.push_back(cylinder(gp_Pnt(-1, a / 2, a / 2), kX, bore / 2, L + 2));
  shape = cut(shape, tools);
  Built b;
  b.shape = shape;
  b.params = {
      {"size", a}, {"length", L}, {"slots", k}, {"slot_opening", so}, {"bore_diameter", bore}};
  if (has_bore) b.holes = {{"", "bore_diameter", 1, bore}};
  Description& desc = b.desc;
  desc.family = "tslot_profile";
  desc.names = {"T-slot profile", "T-slot extrusion", "aluminium extrusion", "slotted profile",
                "T-slot rail"};
  desc.dims = {dim_length(L), dim_width(a), dim_height(a)};
  desc.kind_word = "bar";
  desc.vague_feature = "some slots";
  desc.features.push_back({"slots",
                           [=](CaptionWriter& w) {
                             const std::string c = w.count("slot_count", k);
                             return c + " " + plural(c, "T-slot", "T-slots") +
                                    w.opt(" with ", "slot_opening", so, " openings") +
                                    plural(c, " on one side", " on its sides");
                           },
                           [=](CaptionWriter& w) {
                             const std::string c = w.count("slot_count", k);
                             return c + plural(c, " T-slot", " T-slots");
                           }});
  if (has_bore) desc.features.push_back(bore_feature("bore_diameter", bore));
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch a square" + w.opt(" of ", "width", a, " side") + " on the YZ plane with " +
           w.count("slot_count", k) + " T-shaped notches" +
           (has_bore ? w.opt(" and a ", "bore_diameter", bore, " centre hole") : "");
  });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude it along X", "extrude the profile"}) + w.opt(" by ", "length", L);
  });
  return b;
}

Built keyway_shaft(Rng& rng) {
  const double D = rng.step(8, 80, 1), L = rng.step(std::max(30.0, 2 * D), 400, 5);
  const double kw = std::max(2.0, std::round(D / 4)), kd = std::max(1.0, std::round(D / 8 * 2) / 2);
  const double kl = rng.step(std::max(2 * kw, std::ceil(0.15 * L)), std::floor(0.7 * L), 1);
  const bool open = rng.chance(0.4);
  const double c = rng.chance(0.6) ? rng.step(0.5, std::max(0.5, std::min(2.0, D / 10)), 0.5) : 0;
  if (c >= kd) throw Reject("keyway_shaft: chamfer deeper than the keyway");
  TopoDS_Shape shape = turned_about_x({{0, 0}, {0, D / 2, c}, {L, D / 2, c}, {L, 0}});
  const double R = D / 2;
  std::vector<TopoDS_Shape> tools;
  const double x1 = open ? L + 1 : L / 2 + kl / 2 - kw / 2;
  const double x0 = open ? L - kl + kw / 2 : L / 2 - kl / 2 + kw / 2;
  tools.push_back(box(x0, -kw / 2, R - kd, x1 - x0, kw, kd + 1));
  tools.push_back(cylinder(gp_Pnt(x0, 0, R - kd), kZ, kw / 2, kd + 1));
  if (!open) tools.push_back(cylinder(gp_Pnt(x1, 0, R - kd), kZ, kw / 2, kd + 1));
  shape = cut(shape, tools);
  Built b;
  b.shape = shape;
  b.params = {{"diameter", D},       {"length", L},      {"keyway_width", kw}, {"keyway_depth", kd},
              {"keyway_length", kl}, {"open_end", open}, {"chamfer", c}};
  Description& desc = b.desc;
  desc.family = "keyway_shaft";
  desc.names = {"keyed shaft", "shaft with a keyway", "drive shaft", "keyway shaft", "round shaft"};
  desc.dims = {dim_length(L), dim_od(D)};
  desc.kind_word = "shaft";
  desc.vague_feature = "a slot";
  desc.features.push_back({"keyway",
                           [=](CaptionWriter& w) {
                             return std::string(open ? "a keyway running out at one end"
                                                     : "a closed keyway") +
                                    w.opt(", ", "keyway_width", kw, " wide") +
                                    w.opt(", ", "keyway_depth", kd, " deep") +
                                    w.opt(" and ", "keyway_length", kl, " long");
                           },
                           [](CaptionWriter& w) {
                             return w.pick({"a keyway", "a key slot"});
                           }});
  if (c > 0)
    desc.features.push_back({"chamfers",
                             [=](CaptionWriter& w) {
                               return w.opt("", "end_chamfer", c, " ") + "chamfers at both ends";
                             },
                             [](CaptionWriter& w) { return std::string("chamfered ends"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "make a cylinder" + w.opt(" of diameter ", "outer_diameter", D) +
           w.opt(", ", "length", L, " long,") + " along the X axis";
  });
  if (c > 0)
    desc.steps.push_back(
        [=](CaptionWriter& w) { return "chamfer both ends" + w.opt(" by ", "end_chamfer", c); });
  desc.steps.push_back([=](CaptionWriter& w) {
    return "mill a keyway into the top" + w.opt(", ", "keyway_width", kw, " wide") +
           w.opt(", ", "keyway_depth", kd, " deep") + w.opt(" and ", "keyway_length", kl, " long") +
           (open ? ", open at the end" : "");
  });
  return b;
}

Built angle_bar(Rng& rng) {
  const double a = rng.step(15, 150, 5);
  const double bb = rng.chance(0.5) ? a : rng.step(15, 150, 5);
  const double t = rng.step(2, std::max(2.0, std::min(15.0, std::floor(std::min(a, bb) / 4))), 1);
  const double L = rng.step(100, 1500, 10);
  const double r = rng.chance(0.6) ? rng.step(1, 1.5 * t, 0.5) : 0;
  if (t + r > std::min(a, bb) - 3) throw Reject("angle_bar: legs too short");
  std::vector<P2> profile = {{0, 0}, {a, 0}, {a, t}, {t, t, 0, r}, {t, bb}, {0, bb}};
  TopoDS_Shape shape = extrude(profile_face(profile, kO, kY, kZ), gp_Vec(L, 0, 0));
  Built b;
  b.shape = shape;
  b.params = {{"leg_a", a}, {"leg_b", bb}, {"thickness", t}, {"length", L}, {"root_radius", r}};
  Description& desc = b.desc;
  desc.family = "angle_bar";
  desc.names = a == bb ? std::vector<std::string>{"equal angle bar", "angle bar", "angle iron",
                                                  "L-section bar"}
                       : std::vector<std::string>{"unequal angle bar", "angle bar", "angle iron",
                                                  "L-section bar"};
  desc.dims = {dim_length(L), dim_width(a), dim_height(bb)};
  desc.kind_word = "bar";
  desc.vague_feature = "";
  desc.features.push_back(
      {"legs",
       [=](CaptionWriter& w) {
         return std::string(a == bb ? "two equal legs" : "two unequal legs") +
                w.opt(" ", "leg_thickness", t, " thick");
       },
       [=](CaptionWriter& w) { return std::string(a == bb ? "equal legs" : "unequal legs"); }});
  if (r > 0)
    desc.features.push_back(
        {"root radius",
         [=](CaptionWriter& w) { return "a root fillet" + w.opt(" of ", "root_radius", r); },
         [](CaptionWriter& w) { return std::string("a rounded root"); }});
  desc.steps.push_back([=](CaptionWriter& w) {
    return "sketch an L section on the YZ plane" + w.opt(", ", "width", a, " by") +
           w.opt(" ", "height", bb, "") + w.opt(" with ", "leg_thickness", t, " legs");
  });
  if (r > 0)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "round the inside corner" + w.opt(" to ", "root_radius", r);
    });
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"extrude it along X", "extrude the section"}) + w.opt(" by ", "length", L);
  });
  return b;
}

}  // namespace

const std::vector<FamilyInfo>& families() {
  static const std::vector<FamilyInfo> kFamilies = {
      {"plate", "block", plate, {"rectangular plate", "flat plate", "mounting plate"}},
      {"l_bracket", "angle_bar", l_bracket, {"L-bracket", "angle bracket"}},
      {"u_bracket", "l_bracket", u_bracket, {"U-bracket", "channel bracket"}},
      {"flange", "pulley", flange, {"flange", "hub flange"}},
      {"washer", "spacer", washer, {"washer", "flat washer"}},
      {"hex_nut", "standoff", hex_nut, {"hex nut", "hexagon nut"}},
      {"stepped_shaft", "keyway_shaft", stepped_shaft, {"stepped shaft", "shouldered shaft"}},
      {"pipe", "spacer", pipe, {"pipe", "tube"}},
      {"elbow", "pipe", elbow, {"pipe elbow", "pipe bend"}},
      {"block", "plate", block, {"block", "machined block"}},
      {"spur_gear", "pulley", spur_gear, {"spur gear", "gear wheel"}},
      {"pulley", "flange", pulley, {"pulley", "belt pulley"}},
      {"enclosure", "block", enclosure, {"enclosure", "housing"}},
      {"spacer", "washer", spacer, {"spacer", "bushing"}},
      {"standoff", "hex_nut", standoff, {"standoff", "PCB standoff"}},
      {"tslot_profile", "angle_bar", tslot_profile, {"T-slot profile", "aluminium extrusion"}},
      {"keyway_shaft", "stepped_shaft", keyway_shaft, {"keyed shaft", "drive shaft"}},
      {"angle_bar", "l_bracket", angle_bar, {"angle bar", "angle iron"}},
  };
  return kFamilies;
}

const FamilyInfo& family(const std::string& key) {
  for (const FamilyInfo& info : families())
    if (info.key == key) return info;
  std::string known;
  for (const FamilyInfo& info : families()) known += (known.empty() ? "" : ", ") + info.key;
  throw Error(format("unknown synthetic part family '{}'; known families: {}", key, known));
}

}  // namespace cadclip::synth
