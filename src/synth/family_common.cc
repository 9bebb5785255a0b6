// What the part families share: sizes, hole diameters, caption phrases and
// turned profiles.
#include <cmath>

#include "cadclip/core/format.h"
#include "synth/family.h"

namespace cadclip::synth {
namespace {

// ISO metric clearance-hole and common drill diameters, mm.
const std::vector<double> kHoleSizes = {3,  3.5, 4,    4.5, 5,  5.5,  6,  6.6, 8,  9, 10,
                                        11, 12,  13.5, 14,  16, 17.5, 18, 20,  22, 26};

bool is_one(const std::string& count_text) { return count_text == "one" || count_text == "1"; }

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

}  // namespace

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

}  // namespace cadclip::synth
