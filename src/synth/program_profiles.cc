// Sketch profiles of program parts (rectangles, rounded rectangles, circles,
// slots, polygons), the 2-D checks that keep a profile a valid face (no loop
// crossing itself or another, holes inside the outer loop), and the frame
// arithmetic of sketch planes.
#include <algorithm>
#include <cmath>

#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;

double angle_of(Pt from, Pt to) { return std::atan2(to.y - from.y, to.x - from.x); }

double positive_angle(double a) {
  while (a <= 0) a += kTwoPi;
  while (a > kTwoPi) a -= kTwoPi;
  return a;
}

SketchCurve line(Pt a, Pt b) {
  SketchCurve c;
  c.kind = SketchCurve::kLine;
  c.start = a;
  c.end = b;
  return c;
}

SketchCurve arc(Pt a, Pt b, Pt centre, double radius, bool ccw) {
  SketchCurve c;
  c.kind = SketchCurve::kArc;
  c.start = a;
  c.end = b;
  c.centre = centre;
  c.radius = radius;
  c.ccw = ccw;
  return c;
}

double dist(Pt a, Pt b) { return std::hypot(a.x - b.x, a.y - b.y); }

double cross(Pt o, Pt a, Pt b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

double point_segment(Pt p, Pt a, Pt b) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  return dist(p, {a.x + t * dx, a.y + t * dy});
}

bool segments_cross(Pt a, Pt b, Pt c, Pt d) {
  const double d1 = cross(c, d, a), d2 = cross(c, d, b), d3 = cross(a, b, c), d4 = cross(a, b, d);
  return ((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)) && d1 != 0 && d2 != 0 && d3 != 0 &&
         d4 != 0;
}

double segment_distance(Pt a, Pt b, Pt c, Pt d) {
  if (segments_cross(a, b, c, d)) return 0;
  return std::min({point_segment(a, c, d), point_segment(b, c, d), point_segment(c, a, b),
                   point_segment(d, a, b)});
}

// Points along one curve from its start (the end point excluded).
void sample(const SketchCurve& curve, std::vector<Pt>& out) {
  if (curve.kind == SketchCurve::kLine) {
    out.push_back(curve.start);
    return;
  }
  const double sweep = curve.kind == SketchCurve::kCircle ? kTwoPi : curve.sweep();
  const int n = std::max(4, static_cast<int>(std::ceil(sweep / (kTwoPi / 48))));
  const double a0 = curve.kind == SketchCurve::kCircle ? 0 : angle_of(curve.centre, curve.start);
  const double sign = curve.kind == SketchCurve::kCircle || curve.ccw ? 1 : -1;
  for (int i = 0; i < n; ++i) {
    const double a = a0 + sign * sweep * i / n;
    out.push_back(
        {curve.centre.x + curve.radius * std::cos(a), curve.centre.y + curve.radius * std::sin(a)});
  }
}

double signed_area(const std::vector<Pt>& poly) {
  double twice = 0;
  for (size_t i = 0; i < poly.size(); ++i) {
    const Pt& a = poly[i];
    const Pt& b = poly[(i + 1) % poly.size()];
    twice += a.x * b.y - b.x * a.y;
  }
  return twice / 2;
}

bool inside(Pt p, const std::vector<Pt>& poly) {
  bool in = false;
  for (size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    const Pt& a = poly[i];
    const Pt& b = poly[j];
    if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) in = !in;
  }
  return in;
}

double size_of(const SketchProfile& profile) {
  const auto [lo, hi] = profile_box(profile);
  return std::max({hi.x - lo.x, hi.y - lo.y, 1e-9});
}

}  // namespace

double SketchCurve::sweep() const {
  const double a0 = angle_of(centre, start), a1 = angle_of(centre, end);
  return ccw ? positive_angle(a1 - a0) : positive_angle(a0 - a1);
}

Pt SketchCurve::mid() const {
  const double a = angle_of(centre, start) + (ccw ? 1 : -1) * sweep() / 2;
  return {centre.x + radius * std::cos(a), centre.y + radius * std::sin(a)};
}

std::pair<double, double> ProgramStep::range() const {
  switch (extent) {
    case Extent::kOneSide:
      return {std::min(0.0, e1), std::max(0.0, e1)};
    case Extent::kSymmetric:
      return {-e1, e1};  // DeepCAD's meaning: the full distance on each side
    default:
      return {-e2, e1};
  }
}

SketchLoop rectangle_loop(Pt lo, Pt hi) {
  SketchLoop loop;
  loop.shape = std::abs((hi.x - lo.x) - (hi.y - lo.y)) < 1e-12 ? "square" : "rectangle";
  const Pt b{hi.x, lo.y}, d{lo.x, hi.y};
  loop.curves = {line(lo, b), line(b, hi), line(hi, d), line(d, lo)};
  return loop;
}

SketchLoop rounded_rectangle_loop(Pt lo, Pt hi, double r) {
  SketchLoop loop;
  loop.shape = "rounded rectangle";
  const double x0 = lo.x, y0 = lo.y, x1 = hi.x, y1 = hi.y;
  loop.curves = {
      line({x0 + r, y0}, {x1 - r, y0}), arc({x1 - r, y0}, {x1, y0 + r}, {x1 - r, y0 + r}, r, true),
      line({x1, y0 + r}, {x1, y1 - r}), arc({x1, y1 - r}, {x1 - r, y1}, {x1 - r, y1 - r}, r, true),
      line({x1 - r, y1}, {x0 + r, y1}), arc({x0 + r, y1}, {x0, y1 - r}, {x0 + r, y1 - r}, r, true),
      line({x0, y1 - r}, {x0, y0 + r}), arc({x0, y0 + r}, {x0 + r, y0}, {x0 + r, y0 + r}, r, true)};
  return loop;
}

SketchLoop circle_loop(Pt centre, double radius) {
  SketchLoop loop;
  loop.shape = "circle";
  SketchCurve c;
  c.kind = SketchCurve::kCircle;
  c.centre = centre;
  c.radius = radius;
  loop.curves = {c};
  return loop;
}

SketchLoop slot_loop(Pt a, Pt b, double r) {
  const double len = dist(a, b);
  const Pt d{(b.x - a.x) / len, (b.y - a.y) / len};
  const Pt n{-d.y, d.x};
  auto at = [](Pt p, Pt v, double s) { return Pt{p.x + v.x * s, p.y + v.y * s}; };
  SketchLoop loop;
  loop.shape = "slot";
  loop.curves = {line(at(a, n, -r), at(b, n, -r)), arc(at(b, n, -r), at(b, n, r), b, r, true),
                 line(at(b, n, r), at(a, n, r)), arc(at(a, n, r), at(a, n, -r), a, r, true)};
  return loop;
}

SketchLoop polygon_loop(const std::vector<Pt>& points, const std::string& shape) {
  SketchLoop loop;
  loop.shape = shape;
  for (size_t i = 0; i < points.size(); ++i)
    loop.curves.push_back(line(points[i], points[(i + 1) % points.size()]));
  return loop;
}

SketchLoop with_arc(SketchLoop loop, size_t edge, double sweep, bool outward) {
  const SketchCurve& l = loop.curves[edge];
  const Pt a = l.start, b = l.end;
  const double chord = dist(a, b);
  const double radius = chord / (2 * std::sin(sweep / 2));
  const Pt m{(a.x + b.x) / 2, (a.y + b.y) / 2};
  // The loop runs counterclockwise, so its outside is to the right of a→b.
  const Pt right{(b.y - a.y) / chord, -(b.x - a.x) / chord};
  const double h = std::sqrt(std::max(0.0, radius * radius - chord * chord / 4));
  // The centre sits on the far side of the chord from the bulge (sweep < π); travel
  // with the centre on the left is counterclockwise about it.
  const double side = outward ? -1 : 1;
  const Pt centre{m.x + side * right.x * h, m.y + side * right.y * h};
  loop.curves[edge] = arc(a, b, centre, radius, /*ccw=*/outward);
  return loop;
}

std::vector<Pt> polyline(const SketchLoop& loop) {
  std::vector<Pt> out;
  for (const SketchCurve& c : loop.curves) sample(c, out);
  return out;
}

std::pair<Pt, Pt> profile_box(const SketchProfile& profile) {
  Pt lo{1e300, 1e300}, hi{-1e300, -1e300};
  auto add = [&](Pt p) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
  };
  for (const SketchCurve& c : profile.loops.at(0).curves) {
    if (c.kind == SketchCurve::kLine) {
      add(c.start);
      add(c.end);
      continue;
    }
    // Circles, and arcs through their extreme points where the arc reaches them.
    if (c.kind == SketchCurve::kArc) {
      add(c.start);
      add(c.end);
    }
    const double a0 = c.kind == SketchCurve::kArc ? angle_of(c.centre, c.ccw ? c.start : c.end) : 0;
    const double sweep = c.kind == SketchCurve::kArc ? c.sweep() : kTwoPi;
    for (int q = 0; q < 4; ++q) {
      const double a = q * kTwoPi / 4;
      if (c.kind == SketchCurve::kCircle || positive_angle(a - a0) <= sweep + 1e-12 ||
          std::abs(std::remainder(a - a0, kTwoPi)) < 1e-12)
        add({c.centre.x + c.radius * std::cos(a), c.centre.y + c.radius * std::sin(a)});
    }
  }
  return {lo, hi};
}

void check_profile(const SketchProfile& profile) {
  if (profile.loops.empty()) throw Reject("self-intersecting profile: a profile with no loop");
  const double size = size_of(profile);
  const double clearance = size / kSketchLevels;  // one grid step of the profile's own box
  struct Seg {
    Pt a, b;
    size_t curve;
  };
  std::vector<std::vector<Seg>> loops;
  std::vector<std::vector<Pt>> polys;
  for (const SketchLoop& loop : profile.loops) {
    for (const SketchCurve& c : loop.curves) {
      if (c.kind == SketchCurve::kLine && dist(c.start, c.end) < clearance / 2)
        throw Reject("self-intersecting profile: a line of almost no length");
      if (c.kind != SketchCurve::kLine && c.radius < clearance)
        throw Reject("self-intersecting profile: an arc or circle of almost no radius");
    }
    std::vector<Seg> segs;
    std::vector<Pt> poly;
    for (size_t ci = 0; ci < loop.curves.size(); ++ci) {
      std::vector<Pt> pts;
      sample(loop.curves[ci], pts);
      const Pt end =
          loop.curves[ci].kind == SketchCurve::kCircle ? pts.front() : loop.curves[ci].end;
      pts.push_back(end);
      for (size_t k = 0; k + 1 < pts.size(); ++k) segs.push_back({pts[k], pts[k + 1], ci});
      poly.insert(poly.end(), pts.begin(), pts.end() - 1);
    }
    if (std::abs(signed_area(poly)) < clearance * clearance)
      throw Reject("self-intersecting profile: a loop with no area");
    loops.push_back(std::move(segs));
    polys.push_back(std::move(poly));
  }
  // Within a loop: segments of curves that are not neighbours keep a clearance;
  // neighbours may only meet at their shared vertex.
  for (const auto& segs : loops) {
    const size_t n_curves = segs.back().curve + 1;
    for (size_t i = 0; i < segs.size(); ++i) {
      for (size_t j = i + 1; j < segs.size(); ++j) {
        const size_t ci = segs[i].curve, cj = segs[j].curve;
        if (ci == cj) continue;
        const bool neighbours = cj == ci + 1 || (ci == 0 && cj + 1 == n_curves);
        if (neighbours) {
          const bool touching = j == i + 1 || (i == 0 && j + 1 == segs.size());
          if (!touching && segments_cross(segs[i].a, segs[i].b, segs[j].a, segs[j].b))
            throw Reject("self-intersecting profile: a loop crosses itself");
          continue;
        }
        if (segment_distance(segs[i].a, segs[i].b, segs[j].a, segs[j].b) < clearance / 2)
          throw Reject("self-intersecting profile: a loop crosses or touches itself");
      }
    }
  }
  // Between loops: a clearance, every hole inside the outer loop and outside the others.
  for (size_t a = 0; a < loops.size(); ++a) {
    for (size_t b = a + 1; b < loops.size(); ++b) {
      for (const Seg& s : loops[a])
        for (const Seg& t : loops[b])
          if (segment_distance(s.a, s.b, t.a, t.b) < clearance)
            throw Reject("self-intersecting profile: two loops touch or cross");
    }
    if (a == 0) continue;
    if (!inside(polys[a][0], polys[0]))
      throw Reject("self-intersecting profile: a hole outside the outer loop");
    for (size_t b = 1; b < loops.size(); ++b)
      if (b != a && inside(polys[a][0], polys[b]))
        throw Reject("self-intersecting profile: a hole inside another hole");
  }
}

double on_grid(double size, double k) { return k * size / kSketchLevels; }

double model_grid(double value) { return std::round(value / kModelStep) * kModelStep; }

namespace {
V3 turned(const double r[3][3], const V3& v) {
  return {r[0][0] * v.x + r[0][1] * v.y + r[0][2] * v.z,
          r[1][0] * v.x + r[1][1] * v.y + r[1][2] * v.z,
          r[2][0] * v.x + r[2][1] * v.y + r[2][2] * v.z};
}
}  // namespace

void turn_program(Program& program, const double rotation[3][3]) {
  for (ProgramStep& step : program.steps) {
    step.frame.origin = turned(rotation, step.frame.origin);
    step.frame.x = turned(rotation, step.frame.x);
    step.frame.y = turned(rotation, step.frame.y);
    step.frame.z = turned(rotation, step.frame.z);
  }
}

void move_program(Program& program, const V3& offset) {
  for (ProgramStep& step : program.steps) {
    step.frame.origin.x += offset.x;
    step.frame.origin.y += offset.y;
    step.frame.origin.z += offset.z;
  }
}

V3 frame_point(const Frame& f, Pt p) {
  return {f.origin.x + p.x * f.x.x + p.y * f.y.x, f.origin.y + p.x * f.x.y + p.y * f.y.y,
          f.origin.z + p.x * f.x.z + p.y * f.y.z};
}

}  // namespace cadclip::synth
