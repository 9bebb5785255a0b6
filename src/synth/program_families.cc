// Program families with one main body: plates with holes and slots, discs,
// rings and tubes, stepped cylinders, L/T/U profiles and L-brackets. Each
// draws on the XY plane in its sketch box's 256-level grid (the base box spans
// [0, 0.75] units from its origin, extrusion along +z) and names what it made
// for the captions; orient_program then turns it onto its plane.
#include <algorithm>
#include <cmath>

#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

const double S = kBaseSize;
double g(int k) { return grid_steps(k); }
Pt P(double kx, double ky, double size = kBaseSize) { return sp(kx, ky, size); }
double u(double k, double size = kBaseSize) { return sk(k, size); }

// Hole centres (local steps) of a pattern in the rectangle [0, L] × [0, W].
struct Pattern {
  std::vector<Pt> centres;
  std::string where;
};

Pattern hole_pattern(Rng& rng, int L, int W, int r, int margin) {
  const Pattern centre{{{L / 2.0, W / 2.0}}, "in the centre"};
  const double x0 = margin, x1 = L - margin, y0 = margin, y1 = W - margin;
  const double gap = 2 * r + 8;  // centre spacing that leaves material between holes
  const bool wide = x1 - x0 >= gap, tall = y1 - y0 >= gap;
  Pattern out;
  switch (rng.integer(0, 4)) {
    case 0:
      return centre;
    case 1:
      if (!wide || !tall) return centre;
      return {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}, "near the corners"};
    case 2: {
      if (!wide) return centre;
      int n = rng.integer(2, 5);
      while (n > 2 && (x1 - x0) / (n - 1) < gap) --n;
      out.where = "in a row along the length";
      for (int i = 0; i < n; ++i)
        out.centres.push_back({std::round(x0 + (x1 - x0) * i / (n - 1)), W / 2.0});
      return out;
    }
    case 3:
      if (!wide) return centre;
      return {{{x0, W / 2.0}, {x1, W / 2.0}}, "at both ends"};
    default: {
      if (!wide || !tall) return centre;
      int nx = rng.integer(2, 4), ny = rng.integer(2, 3);
      while (nx > 2 && (x1 - x0) / (nx - 1) < gap) --nx;
      while (ny > 2 && (y1 - y0) / (ny - 1) < gap) --ny;
      out.where = format("in a {} by {} grid", nx, ny);
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i)
          out.centres.push_back({std::round(x0 + (x1 - x0) * i / (nx - 1)),
                                 std::round(y0 + (y1 - y0) * j / (ny - 1))});
      return out;
    }
  }
}

}  // namespace

// ------------------------------------------------------------------- plates

Program draw_plate(Rng& rng) {
  Program p;
  p.generator = "plate";
  const int L = 256, W = 4 * rng.integer(16, 64);
  const int rc = rng.chance(0.35) ? rng.integer(6, std::max(6, W / 5)) : 0;
  const int t = steps_between(rng, 2, 24);
  const int r = rng.integer(4, std::max(4, W / 9));
  Pattern pattern;
  if (rng.chance(0.85)) pattern = hole_pattern(rng, L, W, r, std::max(2 * r + 2, rc + r + 4));
  SketchProfile base = single(rc ? rounded_rectangle_loop(P(0, 0), P(L, W), u(rc))
                                 : rectangle_loop(P(0, 0), P(L, W)));
  std::vector<SketchLoop> cutouts;
  for (const Pt& c : pattern.centres) cutouts.push_back(circle_loop(P(c.x, c.y), u(r)));
  // Slots with a single centre hole (one on each side of it) or alone.
  int n_slots = 0, sr = 0, sl = 0;
  if (pattern.centres.size() <= 1 && W >= 64 && rng.chance(pattern.centres.empty() ? 0.8 : 0.4)) {
    n_slots = pattern.centres.empty() ? rng.integer(1, 2) : 2;
    sr = rng.integer(4, std::max(4, W / 12));
    sl = rng.integer(4 * sr, std::max(4 * sr, L / 3));
    for (int i = 0; i < n_slots; ++i) {
      const double y = n_slots == 1 ? W / 2.0 : (i ? std::round(0.8 * W) : std::round(0.2 * W));
      cutouts.push_back(slot_loop(P(L / 2.0 - sl / 2, y), P(L / 2.0 + sl / 2, y), u(sr)));
    }
  }
  ProgramStep body = step_on(xy_at(0), {}, Operation::kNewBody, "base");
  draw_extent(rng, body, t);
  const auto [low, high] = body.range();
  // Up to five inner loops per profile (DeepCAD keeps at most six loops);
  // more cut-outs, or a drawn choice, become a second sketch that is cut.
  if (cutouts.size() <= 5 && rng.chance(0.65)) {
    for (SketchLoop& loop : cutouts) base.loops.push_back(loop);
    body.profiles = {base};
    p.steps = {body};
  } else {
    body.profiles = {base};
    p.steps = {body};
    std::vector<SketchProfile> tools;
    for (SketchLoop& loop : cutouts) tools.push_back(single(loop));
    if (!tools.empty()) {
      const double depth = (high - low) + (rng.chance(0.5) ? 0 : g(rng.integer(1, 4)));
      p.steps.push_back(cut_down(rng, high, std::move(tools), depth, "holes"));
    }
  }
  p.family = W == L ? "square_plate" : "plate";
  p.names = W == L ? std::vector<std::string>{"square plate", "flat square plate", "square slab",
                                              "square panel", "square tile"}
                   : std::vector<std::string>{"rectangular plate", "flat plate", "rectangular slab",
                                              "plate", "rectangular panel"};
  p.kind_word = "plate";
  p.sizes = {{"thickness", high - low}};
  if (!pattern.centres.empty())
    add_holes(p, static_cast<int>(pattern.centres.size()), u(2 * r), pattern.where);
  if (n_slots)
    p.features.push_back(feature("slots", n_slots, "slot_count",
                                 {{"slot_length", u(sl + 2 * sr)}, {"slot_width", u(2 * sr)}},
                                 "slot", "slots"));
  if (rc)
    p.features.push_back(feature("rounded corners", 4, "", {{"corner_radius", u(rc)}},
                                 "rounded corner", "rounded corners"));
  return p;
}

// ------------------------------------------------------ discs, rings, tubes

Program draw_disc(Rng& rng) {
  Program p;
  p.generator = "disc";
  const bool flat = rng.chance(0.55);
  const double size = flat ? S : g(rng.integer(12, 90));
  const int h = flat ? steps_between(rng, 3, 64) : 96;
  const bool hole = rng.chance(0.55);
  const int ri = rng.integer(32, 112);
  SketchProfile profile = single(circle_loop(P(128, 128, size), u(128, size)));
  ProgramStep body = step_on(xy_at(0), {}, Operation::kNewBody, "base", size);
  draw_extent(rng, body, h);
  const auto [low, high] = body.range();
  const double D = size, H = high - low, d = u(2 * ri, size);
  if (hole && rng.chance(0.7)) {
    profile.loops.push_back(circle_loop(P(128, 128, size), u(ri, size)));
    body.profiles = {profile};
    p.steps = {body};
  } else {
    body.profiles = {profile};
    p.steps = {body};
    if (hole)
      p.steps.push_back(cut_down(rng, high, {single(circle_loop(P(128, 128, size), u(ri, size)))},
                                 H + (rng.chance(0.5) ? 0 : g(2)), "bore", size));
  }
  p.sizes = {{"diameter", D}, {"depth", H}};
  if (!hole) {
    if (H <= 0.35 * D) {
      p.family = "disc";
      p.names = {"disc", "circular plate", "round plate", "flat disc", "round slab"};
    } else if (H >= 2 * D) {
      p.family = "rod";
      p.names = {"rod", "cylindrical rod", "round bar", "pin", "long cylinder"};
    } else {
      p.family = "cylinder";
      p.names = {"cylinder", "solid cylinder", "round block", "cylindrical block",
                 "short cylinder"};
    }
    p.kind_word = "round part";
    return p;
  }
  p.sizes.push_back({"inner_diameter", d});
  p.holes.push_back({"", "inner_diameter", 1, d});
  if (H <= 0.35 * D) {
    p.family = "ring";
    p.names = {"ring", "washer", "flat ring", "annular disc", "circular ring"};
  } else if (H >= 1.5 * D) {
    p.family = "tube";
    p.names = {"tube", "pipe", "hollow cylinder", "cylindrical tube", "sleeve"};
  } else {
    p.family = "cylindrical_ring";
    p.names = {"cylindrical ring", "bushing", "thick ring", "collar", "hollow round block"};
  }
  p.kind_word = "ring";
  return p;
}

Program draw_stepped_cylinder(Rng& rng) {
  Program p;
  p.generator = "stepped_cylinder";
  const int n = rng.integer(2, 4);
  std::vector<int> radii = {128};
  for (int i = 1; i < n; ++i) {
    const int prev = radii.back();
    int r = rng.chance(0.75) ? rng.integer(std::max(16, prev / 3), std::max(16, prev - 12))
                             : rng.integer(24, 116);
    if (std::abs(r - prev) < 12) r = prev - 12;
    if (r < 16) throw Reject("stepped cylinder: the steps get too thin");
    radii.push_back(r);
  }
  double top = 0;
  int total = 0;
  for (int i = 0; i < n; ++i) {
    // Heights that leave room for the steps still to come in the 96-step box.
    const int h = rng.integer(4, std::max(4, std::min(40, 96 - total - 4 * (n - 1 - i))));
    total += h;
    const SketchProfile circle = single(circle_loop(P(128, 128), u(radii[static_cast<size_t>(i)])));
    if (i == 0) {
      ProgramStep base = step_on(xy_at(0), {circle}, Operation::kNewBody, "base");
      base.e1 = g(h);
      p.steps.push_back(base);
    } else {
      p.steps.push_back(join_up(rng, top, {circle}, h, "step"));
    }
    top += g(h);
  }
  if (total > 96) throw Reject("stepped cylinder: taller than the normalised box");
  const int smallest = *std::min_element(radii.begin(), radii.end());
  const int largest = *std::max_element(radii.begin(), radii.end());
  p.family = "stepped_cylinder";
  p.names =
      n == 2
          ? std::vector<std::string>{"stepped cylinder", "two-step cylinder", "shouldered cylinder",
                                     "stack of two cylinders", "tiered cylinder"}
          : std::vector<std::string>{"stepped cylinder", "stepped shaft", "multi-step cylinder",
                                     "stack of cylinders", "tiered cylinder"};
  p.kind_word = "round part";
  p.features.push_back(
      feature("steps", n, "step_count",
              {{"largest_diameter", u(2 * largest)}, {"smallest_diameter", u(2 * smallest)}},
              "step", "steps"));
  p.sizes = {{"total_height", top}};
  if (rng.chance(0.4) && smallest > 24) {
    const int rb = rng.integer(8, smallest - 10);
    p.steps.push_back(cut_down(rng, top, {single(circle_loop(P(128, 128), u(rb)))}, top, "bore"));
    p.features.push_back(feature("bore", 1, "", {{"bore_diameter", u(2 * rb)}}, "bore", "bores",
                                 "through the centre"));
    p.holes.push_back({"", "bore_diameter", 1, u(2 * rb)});
  }
  return p;
}

// ----------------------------------------------------------- L, T, U profiles

namespace {

struct Section {
  SketchLoop loop;
  int thickness = 0;  // local steps
};

Section section(Rng& rng, double size, int letter) {
  const int A = 256, B = rng.integer(16, 64) * 4;
  const int t = rng.integer(12, std::max(12, std::min(A, B) / 3));
  auto Q = [&](double x, double y) { return P(x, y, size); };
  if (letter == 0) {
    const int ri = rng.chance(0.3) ? rng.integer(4, t) : 0;
    std::vector<Pt> pts = {Q(0, 0), Q(A, 0), Q(A, t), Q(t + ri, t)};
    if (ri) pts.push_back(Q(t, t + ri));
    pts.insert(pts.end(), {Q(t, B), Q(0, B)});
    SketchLoop loop = polygon_loop(pts, "L-shape");
    if (ri) {  // the inside corner rounded: a quarter arc, clockwise about its centre
      SketchCurve& c = loop.curves[3];
      c.kind = SketchCurve::kArc;
      c.centre = Q(t + ri, t + ri);
      c.radius = u(ri, size);
      c.ccw = false;
    }
    return {loop, t};
  }
  if (letter == 1) {
    const int ts = 2 * rng.integer(6, std::max(6, A / 6)), c = 128;
    return {polygon_loop({Q(c - ts / 2, 0), Q(c + ts / 2, 0), Q(c + ts / 2, B - t), Q(A, B - t),
                          Q(A, B), Q(0, B), Q(0, B - t), Q(c - ts / 2, B - t)},
                         "T-shape"),
            t};
  }
  const int tb = rng.integer(8, std::max(8, B / 3));
  return {polygon_loop(
              {Q(0, 0), Q(A, 0), Q(A, B), Q(A - t, B), Q(A - t, tb), Q(t, tb), Q(t, B), Q(0, B)},
              "U-shape"),
          t};
}

}  // namespace

Program draw_profile(Rng& rng) {
  Program p;
  p.generator = "profile";
  const int letter = rng.integer(0, 2);
  const bool beam = rng.chance(0.4);
  const double size = beam ? g(rng.integer(16, 64)) : S;
  const Section sec = section(rng, size, letter);
  ProgramStep body = step_on(xy_at(0), {single(sec.loop)}, Operation::kNewBody, "base", size);
  draw_extent(rng, body, beam ? 96 : rng.integer(8, 64));
  const auto [low, high] = body.range();
  p.steps = {body};
  static const std::vector<std::string> kLetters = {"l", "t", "u"};
  static const std::vector<std::vector<std::string>> kShort = {
      {"L-shaped block", "angle bracket", "L-shaped part", "right-angle block", "corner piece"},
      {"T-shaped block", "T-shaped bracket", "T-shaped part", "T-section block", "tee piece"},
      {"U-shaped bracket", "U-channel", "U-shaped block", "channel bracket", "U-shaped clip"}};
  static const std::vector<std::vector<std::string>> kLong = {
      {"L-shaped beam", "angle bar", "L-profile", "angle iron", "L-section bar"},
      {"T-beam", "T-shaped bar", "T-profile", "T-section bar", "tee bar"},
      {"U-channel", "channel beam", "U-profile", "C-channel", "U-section bar"}};
  p.names = (beam ? kLong : kShort)[static_cast<size_t>(letter)];
  p.family = kLetters[static_cast<size_t>(letter)] + (beam ? "_beam" : "_profile");
  p.kind_word = beam ? "bar" : "block";
  p.sizes = {{"depth", high - low}, {"wall_thickness", u(sec.thickness, size)}};
  for (const SketchCurve& c : sec.loop.curves)
    if (c.kind == SketchCurve::kArc)
      p.features.push_back(feature("fillet", 1, "", {{"fillet_radius", c.radius}},
                                   "rounded inside corner", "rounded inside corners"));
  return p;
}

Program draw_bracket(Rng& rng) {
  Program p;
  p.generator = "bracket";
  const int A = 256, B = rng.integer(24, 64) * 4, t = rng.integer(12, 40);
  const int W = 2 * rng.integer(12, 48);  // model steps, even: a rib can sit in the middle
  const double Wu = g(W);
  ProgramStep body = step_on(
      xy_at(0),
      {single(polygon_loop({P(0, 0), P(A, 0), P(A, t), P(t, t), P(t, B), P(0, B)}, "L-shape"))},
      Operation::kNewBody, "base");
  body.e1 = Wu;
  p.steps = {body};
  const bool rib = rng.chance(0.35);
  const int rib_half = rng.integer(1, 3);
  if (rib) {
    const int a = rng.integer(A / 4, A / 2), b = rng.integer(B / 4, B / 2);
    ProgramStep gusset = step_on(
        xy_at(g(W / 2)),
        {single(polygon_loop({P(t - 2, t - 2), P(t + a, t - 2), P(t - 2, t + b)}, "triangle"))},
        Operation::kJoin, "rib");
    gusset.extent = Extent::kSymmetric;
    gusset.e1 = g(rib_half);
    p.steps.push_back(gusset);
  }
  // Holes through each leg, sketched on the leg's outer face: along the leg,
  // and across the depth where a rib leaves room.
  const int r = rng.integer(5, 16);
  const int depth_steps = static_cast<int>(std::floor(Wu / u(1)));
  std::vector<int> across;
  if (rib) {
    const int clear = static_cast<int>(std::ceil(g(rib_half) / u(1))) + r + 4;
    const int lo = r + 4, hi = depth_steps / 2 - clear;
    if (hi >= lo) across = {(lo + hi) / 2, depth_steps - (lo + hi) / 2};
  } else if (depth_steps >= 2 * r + 8) {
    across = {depth_steps / 2};
  }
  int n_base = 0, n_leg = 0;
  if (!across.empty()) {
    n_base = (A - t) >= 2 * (2 * r + 8) ? rng.integer(1, 2) : 1;
    n_leg = (B - t) >= 2 * r + 16 ? rng.integer(0, 2) : 0;
    if (n_leg == 2 && (B - t) < 2 * (2 * r + 8)) n_leg = 1;
    auto leg_holes = [&](int from, int to, int n) {
      std::vector<SketchProfile> tools;
      for (int i = 0; i < n; ++i) {
        const double along = std::round(from + (to - from) * (i + 1.0) / (n + 1));
        for (int v : across) tools.push_back(single(circle_loop(P(along, v), u(r))));
      }
      return tools;
    };
    // Base leg: outer face y = 0; the sketch's x runs along x, its y along z.
    Frame base_face;
    base_face.y = {0, 0, 1};
    base_face.z = {0, -1, 0};
    ProgramStep base_cut = step_on(base_face, leg_holes(t, A, n_base), Operation::kCut, "holes");
    base_cut.e1 = -(u(t) + g(rng.integer(0, 2)));
    p.steps.push_back(base_cut);
    if (n_leg) {
      // Upright leg: outer face x = 0; the sketch's x runs along y, its y along z.
      Frame leg_face;
      leg_face.x = {0, 1, 0};
      leg_face.y = {0, 0, 1};
      leg_face.z = {1, 0, 0};
      ProgramStep leg_cut = step_on(leg_face, leg_holes(t, B, n_leg), Operation::kCut, "holes");
      leg_cut.e1 = u(t) + g(rng.integer(0, 2));
      p.steps.push_back(leg_cut);
    }
  }
  const int n = (n_base + n_leg) * static_cast<int>(across.size());
  p.family = rib ? "gusset_bracket" : "l_bracket";
  p.names = rib ? std::vector<std::string>{"gusseted bracket", "L-bracket with a rib",
                                           "reinforced angle bracket", "braced L-bracket",
                                           "ribbed corner bracket"}
                : std::vector<std::string>{"L-shaped bracket", "angle bracket", "mounting bracket",
                                           "right-angle bracket", "corner bracket"};
  p.kind_word = "bracket";
  p.sizes = {{"wall_thickness", u(t)}, {"depth", Wu}};
  if (n) add_holes(p, n, u(2 * r), n_leg ? "through both legs" : "through the base leg");
  if (rib)
    p.features.push_back(feature("rib", 1, "", {{"rib_thickness", g(2 * rib_half)}},
                                 "triangular rib", "triangular ribs", "in the inside corner"));
  if (rib) p.features.back().named = true;
  return p;
}

}  // namespace cadclip::synth
