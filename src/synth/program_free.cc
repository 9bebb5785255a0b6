// Free programs: a base of a random outline (rectangle, circle, polygon,
// lines with arcs, L-shape; sometimes with holes), then up to nine more
// extrudes on the faces of what is there, joining, cutting, adding a body or
// intersecting. And the rules that name a free program for its captions from
// its steps and the measured solid.
#include <algorithm>
#include <cmath>
#include <map>

#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

constexpr double kPi = 3.14159265358979323846;
double g(int k) { return grid_steps(k); }

struct Box {
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  void add(const V3& p) {
    const double v[3] = {p.x, p.y, p.z};
    for (int i = 0; i < 3; ++i) lo[i] = std::min(lo[i], v[i]), hi[i] = std::max(hi[i], v[i]);
  }
};

double comp(const V3& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : v.z; }
void set_comp(V3& v, int i, double x) { (i == 0 ? v.x : i == 1 ? v.y : v.z) = x; }
int axis_of(const V3& v) { return std::abs(v.x) > 0.5 ? 0 : std::abs(v.y) > 0.5 ? 1 : 2; }
double floor_grid(double v) { return std::floor(v / kModelStep + 1e-9) * kModelStep; }
double ceil_grid(double v) { return std::ceil(v / kModelStep - 1e-9) * kModelStep; }

// A random outline in [0, w] × [0, h] local steps of a sketch box of `size`.
SketchLoop outline(Rng& rng, int w, int h, double size, bool base) {
  auto Q = [&](double x, double y) { return sp(x, y, size); };
  const double r = rng.uniform();
  if (r < 0.32) return rectangle_loop(Q(0, 0), Q(w, h));
  if (r < 0.42 && std::min(w, h) >= 16)
    return rounded_rectangle_loop(Q(0, 0), Q(w, h),
                                  sk(rng.integer(3, std::max(3, std::min(w, h) / 4)), size));
  if (r < 0.6) {
    const int d = 2 * (std::min(w, h) / 2);  // even: the centre on the grid
    return circle_loop(Q(d / 2.0, d / 2.0), sk(d / 2.0, size));
  }
  if (r < 0.68 && std::min(w, h) >= 24 && std::abs(w - h) > 8) {
    return slot_loop(w > h ? Q(h / 2.0, h / 2.0) : Q(w / 2.0, w / 2.0),
                     w > h ? Q(w - h / 2.0, h / 2.0) : Q(w / 2.0, h - w / 2.0),
                     sk(std::min(w, h) / 2.0, size));
  }
  if (r < 0.78 && base && std::min(w, h) >= 48) {
    const int t = rng.integer(std::min(w, h) / 6, std::min(w, h) / 3);
    return polygon_loop({Q(0, 0), Q(w, 0), Q(w, t), Q(t, t), Q(t, h), Q(0, h)}, "L-shape");
  }
  // A polygon around the centre (star-shaped, so simple), maybe with arcs for edges.
  const int n = rng.integer(3, 8);
  std::vector<double> angles;
  for (int i = 0; i < n; ++i) angles.push_back(2 * kPi * (i + rng.uniform(-0.3, 0.3)) / n);
  std::vector<Pt> pts;
  for (double a : angles) {
    const double f = rng.uniform(0.6, 1.0);
    pts.push_back(Q(std::round(w / 2.0 + f * w / 2.0 * std::cos(a)),
                    std::round(h / 2.0 + f * h / 2.0 * std::sin(a))));
  }
  static const char* kNames[] = {"",         "",        "",         "triangle", "quadrilateral",
                                 "pentagon", "hexagon", "heptagon", "octagon"};
  SketchLoop loop = polygon_loop(pts, kNames[n]);
  if (rng.chance(0.45)) {
    const int arcs = rng.integer(1, std::min(2, n - 1));
    for (int i = 0; i < arcs; ++i) {
      const size_t edge = static_cast<size_t>(rng.integer(0, n - 1));
      if (loop.curves[edge].kind != SketchCurve::kLine) continue;
      static const std::vector<double> kSweeps = {kPi / 6, kPi / 4, kPi / 3, kPi / 2, 2 * kPi / 3};
      loop = with_arc(loop, edge, rng.pick(kSweeps), rng.chance(0.7));
    }
    loop.shape = "curved outline";
  }
  return loop;
}

// Holes for a base outline: circles, rectangles or slots inside its box.
void add_inner_loops(Rng& rng, SketchProfile& profile, int w, int h, double size) {
  const int n = rng.integer(1, 3);
  for (int tries = 0; tries < 6; ++tries) {
    SketchProfile trial = profile;
    for (int i = 0; i < n; ++i) {
      // A multiple of 4 steps: centres and slot ends stay on the grid.
      const int d =
          4 * rng.integer(std::max(2, std::min(w, h) / 40), std::max(2, std::min(w, h) / 16));
      const int x = rng.integer(d, std::max(d, w - 2 * d)),
                y = rng.integer(d, std::max(d, h - 2 * d));
      const double kind = rng.uniform();
      if (kind < 0.6)
        trial.loops.push_back(circle_loop(sp(x + d / 2.0, y + d / 2.0, size), sk(d / 2.0, size)));
      else if (kind < 0.85)
        trial.loops.push_back(rectangle_loop(sp(x, y, size), sp(x + d, y + d, size)));
      else
        trial.loops.push_back(slot_loop(sp(x + d / 4.0, y + d / 4.0, size),
                                        sp(x + d, y + d / 4.0, size), sk(d / 4.0, size)));
    }
    try {
      check_profile(trial);
      profile = trial;
      return;
    } catch (const Reject&) {
    }
  }
}

// The step's operation: joins and cuts most often, at most one intersection
// per program (a second would leave little of the body).
Operation draw_operation(Rng& rng, bool intersected) {
  double pick = rng.uniform();
  Operation op = pick < 0.45   ? Operation::kJoin
                 : pick < 0.78 ? Operation::kCut
                 : pick < 0.9  ? Operation::kNewBody
                               : Operation::kIntersect;
  if (op == Operation::kIntersect && intersected) op = Operation::kCut;
  return op;
}

// The face of the body's box to sketch on, as its outward normal: +z most often.
V3 draw_face_normal(Rng& rng) {
  static const std::vector<std::pair<V3, double>> kFaces = {
      {{0, 0, 1}, 0.35},  {{0, 0, -1}, 0.1},  {{1, 0, 0}, 0.15},
      {{-1, 0, 0}, 0.15}, {{0, 1, 0}, 0.125}, {{0, -1, 0}, 0.125}};
  double x = rng.uniform();
  V3 n = kFaces[0].first;
  for (const auto& [normal, w] : kFaces) {
    n = normal;
    if (x < w) break;
    x -= w;
  }
  return n;
}

// The sketch plane on a face of the body's box, and the face's region in the
// sketch's steps.
struct FacePlane {
  Frame frame;
  V3 n;                // the face's outward normal
  double gap = 0;      // from the face to the plane
  double along = 0;    // the body's depth under the face
  double size = 0;     // the sketch box
  int a0 = 0, a1 = 0;  // the face's region along the sketch's x, in steps
  int b0 = 0, b1 = 0;  // and along its y
};

FacePlane face_plane(const Box& box, const V3& n, bool adds) {
  FacePlane plane_out;
  plane_out.n = n;
  const int na = axis_of(n);
  const double sign = comp(n, na);
  // In-plane axes: x along the next axis, y along the one after, sign chosen so x × y = n.
  V3 ax, ay;
  const int ia = (na + 1) % 3, ib = (na + 2) % 3;
  set_comp(ax, ia, 1);
  set_comp(ay, ib, 1);
  if (sign < 0) set_comp(ay, ib, -1);
  Frame& f = plane_out.frame;
  f.x = ax;
  f.y = ay;
  f.z = n;
  // The plane: inside the face for material that is added (so it overlaps),
  // outside it for a cut or an intersection (so nothing is left over the cut).
  const double face = sign > 0 ? box.hi[na] : box.lo[na];
  const bool out = !adds;
  const double plane = (sign > 0) == out ? ceil_grid(face) : floor_grid(face);
  plane_out.gap = std::abs(plane - face);
  V3 origin;
  set_comp(origin, na, plane);
  set_comp(origin, ia, floor_grid(box.lo[ia]));
  set_comp(origin, ib, sign > 0 ? floor_grid(box.lo[ib]) : ceil_grid(box.hi[ib]));
  f.origin = origin;
  const double fa = box.hi[ia] - comp(origin, ia);
  const double fb = sign > 0 ? box.hi[ib] - comp(origin, ib) : comp(origin, ib) - box.lo[ib];
  const double size = std::max(g(4), ceil_grid(std::max(fa, fb) + g(1)));
  plane_out.size = size;
  const double step = sk(1, size);
  plane_out.a0 = static_cast<int>(std::ceil((box.lo[ia] - comp(origin, ia)) / step - 1e-9));
  plane_out.a1 = static_cast<int>(std::floor(fa / step + 1e-9));
  plane_out.b0 = static_cast<int>(std::ceil(
      (sign > 0 ? box.lo[ib] - comp(origin, ib) : comp(origin, ib) - box.hi[ib]) / step - 1e-9));
  plane_out.b1 = static_cast<int>(std::floor(fb / step + 1e-9));
  plane_out.along = box.hi[na] - box.lo[na];
  return plane_out;
}

// The step's sketch and its box [px, px + w] × [py, py + h] in sketch steps.
struct PlacedLoop {
  SketchLoop loop;
  int px = 0, py = 0, w = 0, h = 0;
};

// An intersection's tool covers about the whole face, so that it trims the
// body rather than leave a sliver.
PlacedLoop intersect_loop(Rng& rng, const FacePlane& face) {
  const int a0 = face.a0, a1 = face.a1, b0 = face.b0, b1 = face.b1;
  const double size = face.size;
  PlacedLoop placed;
  int& w = placed.w;
  int& h = placed.h;
  w = static_cast<int>((a1 - a0) * rng.uniform(0.85, 1.1));
  h = static_cast<int>((b1 - b0) * rng.uniform(0.85, 1.1));
  w = std::min(w, 256), h = std::min(h, 256);
  const int px = std::clamp((a0 + a1 - w) / 2, 0, 256 - w);
  const int py = std::clamp((b0 + b1 - h) / 2, 0, 256 - h);
  placed.px = px, placed.py = py;
  const int c = rng.integer(std::min(w, h) / 6, std::min(w, h) / 3);
  const int cx = px + w / 2, cy = py + h / 2;
  const int rr =
      std::min({static_cast<int>(0.95 * std::max(w, h) / 2), cx, 256 - cx, cy, 256 - cy});
  placed.loop = rng.chance(0.5) ? circle_loop(sp(cx, cy, size), sk(rr, size))
                                : rounded_rectangle_loop(sp(px, py, size), sp(px + w, py + h, size),
                                                         sk(std::max(2, c), size));
  return placed;
}

// A boss or a cut: a random outline a tenth to two fifths of the face.
PlacedLoop feature_loop(Rng& rng, Operation op, const FacePlane& face) {
  const int a0 = face.a0, a1 = face.a1, b0 = face.b0, b1 = face.b1;
  const double size = face.size;
  PlacedLoop placed;
  const int w = 2 * std::max(4, static_cast<int>((a1 - a0) * rng.uniform(0.1, 0.4)));
  const int h = 2 * std::max(4, static_cast<int>((b1 - b0) * rng.uniform(0.1, 0.4)));
  placed.w = w, placed.h = h;
  // Added material sits about the face's middle, where a round or polygonal
  // body has material under its box; cuts go anywhere on the face.
  const int spare_a = std::max(0, a1 - a0 - w), spare_b = std::max(0, b1 - b0 - h);
  const int qa = op == Operation::kCut ? 0 : spare_a / 4,
            qb = op == Operation::kCut ? 0 : spare_b / 4;
  int px = rng.integer(a0 + qa, a0 + spare_a - qa);
  const int py = rng.integer(b0 + qb, b0 + spare_b - qb);
  if (op == Operation::kCut && rng.chance(0.25)) {  // a notch over an edge of the face
    px = std::clamp(rng.chance(0.5) ? a0 - w / 3 : a1 - 2 * w / 3, 0, 256 - w);
  }
  placed.px = px, placed.py = py;
  SketchLoop local = outline(rng, w, h, size, /*base=*/false);
  // Move it to (px, py).
  const Pt shift = sp(px, py, size);
  for (SketchCurve& c : local.curves) {
    for (Pt* q : {&c.start, &c.end, &c.centre}) q->x += shift.x, q->y += shift.y;
  }
  placed.loop = local;
  return placed;
}

// The extent: added material rises from the plane (or both ways), a cut goes
// some depth or through, an intersection's tool spans the whole body.
void draw_extent(Rng& rng, Operation op, bool adds, const FacePlane& face, ProgramStep& s,
                 bool& intersected) {
  const double gap = face.gap, along = face.along;
  if (adds) {
    const int hk = steps_between(rng, 2, 48);
    if (rng.chance(0.2)) {
      s.extent = Extent::kSymmetric;
      s.e1 = g(hk);
    } else {
      s.e1 = gap + g(hk);
    }
  } else if (op == Operation::kCut) {
    const bool through = rng.chance(0.3);
    const double depth =
        gap + (through ? along + g(2) : std::max(g(1), model_grid(along * rng.uniform(0.15, 0.8))));
    if (rng.chance(0.7)) {
      s.e1 = -depth;
    } else {
      s.extent = Extent::kTwoSides;
      s.e1 = g(1);
      s.e2 = depth;
    }
  } else {
    s.extent = Extent::kTwoSides;
    s.e1 = g(1);
    s.e2 = gap + along + g(2);
    intersected = true;
  }
}

// The body's box after this step (cuts leave it; added material grows it).
void update_box(Box& box, Operation op, bool adds, const FacePlane& face, const PlacedLoop& placed,
                const ProgramStep& s) {
  const V3& n = face.n;
  const auto [lo, hi] = s.range();
  Box tool;
  for (double ka : {static_cast<double>(placed.px), static_cast<double>(placed.px + placed.w)})
    for (double kb : {static_cast<double>(placed.py), static_cast<double>(placed.py + placed.h)})
      for (double t : {lo, hi}) {
        V3 q = frame_point(face.frame, sp(ka, kb, face.size));
        q.x += n.x * t, q.y += n.y * t, q.z += n.z * t;
        tool.add(q);
      }
  if (adds) {
    for (int i = 0; i < 3; ++i)
      box.lo[i] = std::min(box.lo[i], tool.lo[i]), box.hi[i] = std::max(box.hi[i], tool.hi[i]);
  } else if (op == Operation::kIntersect) {
    for (int i = 0; i < 3; ++i)
      box.lo[i] = std::max(box.lo[i], tool.lo[i]), box.hi[i] = std::min(box.hi[i], tool.hi[i]);
  }
}

// Adds one extrude on a face of the body's box (model coordinates, XY base).
void add_step(Rng& rng, Program& p, Box& box, bool& intersected) {
  const Operation op = draw_operation(rng, intersected);
  const bool adds = op == Operation::kJoin || op == Operation::kNewBody;
  const FacePlane face = face_plane(box, draw_face_normal(rng), adds);
  if (face.a1 - face.a0 < 12 || face.b1 - face.b0 < 12)
    throw Reject("free program: a face too small to sketch on");
  const PlacedLoop placed =
      op == Operation::kIntersect ? intersect_loop(rng, face) : feature_loop(rng, op, face);
  ProgramStep s = step_on(face.frame, {single(placed.loop)}, op, adds ? "boss" : "cut", face.size);
  draw_extent(rng, op, adds, face, s, intersected);
  update_box(box, op, adds, face, placed, s);
  p.steps.push_back(std::move(s));
}

}  // namespace

Program draw_free_program(Rng& rng) {
  Program p;
  p.generator = "free";
  p.family = "free";
  // Extrudes: most free programs have a few; the tail reaches ten.
  static const std::vector<double> kCounts = {0.22, 0.2,  0.16, 0.12, 0.09,
                                              0.07, 0.05, 0.04, 0.03, 0.02};
  double x = rng.uniform();
  int n = 1;
  for (double w : kCounts) {
    if (x < w) break;
    x -= w;
    ++n;
  }
  n = std::min(n, 10);
  const int w = 256, h = 4 * rng.integer(16, 64);
  SketchProfile base = single(outline(rng, w, h, kBaseSize, /*base=*/true));
  check_profile(base);
  if (rng.chance(0.35)) add_inner_loops(rng, base, w, h, kBaseSize);
  ProgramStep body = step_on(xy_at(0), {base}, Operation::kNewBody, "base");
  draw_extent(rng, body, steps_between(rng, 3, 96));
  p.steps = {body};
  Box box;
  const auto [lo, hi] = body.range();
  const auto [pmin, pmax] = profile_box(base);
  box.add({pmin.x, pmin.y, lo});
  box.add({pmax.x, pmax.y, hi});
  bool intersected = false;
  for (int i = 1; i < n; ++i) add_step(rng, p, box, intersected);
  return p;
}

void name_free_program(Program& p, const std::vector<std::pair<double, int>>& holes) {
  const ProgramStep& base = p.steps.front();
  const SketchLoop& outer = base.profiles.front().loops.front();
  const auto [lo, hi] = profile_box(base.profiles.front());
  const double bw = hi.x - lo.x, bh = hi.y - lo.y;
  const auto [r0, r1] = base.range();
  const double depth = r1 - r0;
  const bool flat = depth <= 0.3 * std::min(bw, bh), bar = depth >= 2.5 * std::max(bw, bh);
  std::string word, adjective;
  const std::string& shape = outer.shape;
  if (shape == "rectangle" || shape == "square" || shape == "rounded rectangle" ||
      shape == "quadrilateral") {
    word = flat ? "plate" : bar ? "bar" : "block";
    adjective = shape == "rounded rectangle" ? "rounded"
                : shape == "square"          ? "square"
                                             : "rectangular";
  } else if (shape == "circle") {
    word = flat ? "disc" : depth >= 2 * bw ? "rod" : "cylinder";
  } else if (shape == "slot") {
    word = flat ? "plate" : "block";
    adjective = "obround";
  } else if (shape == "L-shape") {
    word = flat ? "plate" : "block";
    adjective = "L-shaped";
  } else if (shape == "curved outline") {
    word = flat ? "plate" : "block";
    adjective = "curved";
  } else {
    word = flat ? "plate" : "prism";
    static const std::map<std::string, std::string> kAdj = {{"triangle", "triangular"},
                                                            {"pentagon", "pentagonal"},
                                                            {"hexagon", "hexagonal"},
                                                            {"heptagon", "seven-sided"},
                                                            {"octagon", "octagonal"}};
    const auto it = kAdj.find(shape);
    adjective = it == kAdj.end() ? "polygonal" : it->second;
  }
  int joins = 0, cuts = 0;
  bool trimmed = false;
  for (size_t i = 1; i < p.steps.size(); ++i) {
    const Operation op = p.steps[i].operation;
    joins += op == Operation::kJoin || op == Operation::kNewBody;
    cuts += op == Operation::kCut;
    trimmed |= op == Operation::kIntersect;
  }
  const std::string base_name = adjective.empty() ? word : adjective + " " + word;
  // The family a caption states is the shape it names, so a free rectangular
  // plate is a "plate" like the plate family's, and the rest tells them apart.
  p.family = (adjective.empty() || adjective == "rectangular" ? "" : adjective + "_") + word;
  for (char& c : p.family) {
    if (c == ' ' || c == '-') c = '_';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (p.family == "l_shaped_block") p.family = "l_profile";
  if (joins && cuts) {
    p.names = {"machined " + base_name, base_name + " with raised and cut features",
               "multi-feature " + word, "complex " + base_name, "composite " + word};
  } else if (joins) {
    p.names = {base_name + " with protrusions", "stepped " + base_name,
               base_name + " with raised features", "built-up " + word, "compound " + word};
  } else if (cuts) {
    p.names = {base_name + " with cut-outs", "notched " + base_name, "cut " + base_name,
               base_name + " with recesses", "trimmed " + word};
  } else {
    p.names = {base_name, "simple " + base_name, "plain " + base_name, base_name + " shape",
               "solid " + word};
  }
  if (trimmed) {
    p.names[3] = "rounded " + base_name;
  }
  p.kind_word = word == "disc" || word == "cylinder" || word == "rod" ? "round part" : word;
  p.sizes = {{flat ? "thickness" : "depth", depth}};
  p.features.clear();
  p.holes.clear();
  if (joins)
    p.features.push_back(
        feature("raised features", joins, "join_count", {}, "raised feature", "raised features"));
  if (cuts) p.features.push_back(feature("cuts", cuts, "cut_count", {}, "cut", "cuts"));
  // Round holes as measured: the largest group states its count and diameter.
  const std::pair<double, int>* most = nullptr;
  for (const auto& hole : holes)
    if (!most || hole.second > most->second) most = &hole;
  if (most) add_holes(p, most->second, most->first, "");
}

}  // namespace cadclip::synth
