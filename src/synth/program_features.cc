// Program families built from a base and features on it: bosses on plates,
// pockets in blocks, ribs on plates; and one-sketch families with a
// recognisable outline: polygon prisms, links, frames and tubes of rectangular
// section, and bodies trimmed by an intersection. Same conventions as
// program_families.cc (XY plane, 256-level sketch grid, +z extrusion).
#include <algorithm>
#include <cmath>

#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

constexpr double kPi = 3.14159265358979323846;
const double S = kBaseSize;
double g(int k) { return grid_steps(k); }
Pt P(double kx, double ky, double size = kBaseSize) { return sp(kx, ky, size); }
double u(double k, double size = kBaseSize) { return sk(k, size); }

// A rectangle (or rounded rectangle) base of 256 × W local steps, `t` model
// steps thick with a drawn extent; returns the top and bottom heights.
std::pair<double, double> base_block(Rng& rng, Program& p, int W, int t, int corner = 0) {
  ProgramStep body = step_on(xy_at(0),
                             {single(corner ? rounded_rectangle_loop(P(0, 0), P(256, W), u(corner))
                                            : rectangle_loop(P(0, 0), P(256, W)))},
                             Operation::kNewBody, "base");
  draw_extent(rng, body, t);
  const auto [low, high] = body.range();
  p.steps.push_back(body);
  return {high, low};
}

}  // namespace

Program draw_boss_plate(Rng& rng) {
  Program p;
  p.generator = "boss_plate";
  const int W = 4 * rng.integer(24, 64), t = steps_between(rng, 3, 20);
  const auto [top, bottom] = base_block(rng, p, W, t, rng.chance(0.3) ? rng.integer(6, 20) : 0);
  const int n = std::vector<int>{1, 1, 2, 2, 3, 4}[static_cast<size_t>(rng.integer(0, 5))];
  std::vector<Pt> centres;
  int rb = 0;
  if (n == 1) {
    rb = rng.integer(16, std::min(W / 2 - 12, 96));
    centres = {{128, W / 2.0}};
  } else if (n == 2 || n == 3) {
    rb = rng.integer(10, std::max(10, std::min(W / 2 - 12, 256 / (2 * n) - 8)));
    for (int i = 0; i < n; ++i) centres.push_back({std::round(256.0 * (i + 0.5) / n), W / 2.0});
  } else {
    rb = rng.integer(10, std::max(10, std::min(W / 4 - 8, 40)));
    const double m = rb + 12;
    centres = {{m, m}, {256 - m, m}, {256 - m, W - m}, {m, W - m}};
  }
  std::vector<SketchProfile> bosses;
  for (const Pt& c : centres) bosses.push_back(single(circle_loop(P(c.x, c.y), u(rb))));
  const int h = rng.integer(4, 48);
  p.steps.push_back(join_up(rng, top, bosses, h, "bosses"));
  const bool drilled = rng.chance(0.45) && rb >= 12;
  const int rh = drilled ? rng.integer(4, rb - 6) : 0;
  if (drilled) {
    std::vector<SketchProfile> holes;
    for (const Pt& c : centres) holes.push_back(single(circle_loop(P(c.x, c.y), u(rh))));
    const double depth = top + g(h) - bottom + (rng.chance(0.5) ? 0 : g(2));
    p.steps.push_back(cut_down(rng, top + g(h), std::move(holes), depth, "holes"));
  }
  p.family = "boss_plate";
  p.names = n == 1 ? std::vector<std::string>{"plate with a boss", "base plate with a round boss",
                                              "plate with a cylindrical boss",
                                              "mounting plate with a boss", "plate with a hub"}
                   : std::vector<std::string>{"plate with bosses", "base plate with round bosses",
                                              "plate with cylindrical bosses",
                                              "mounting plate with studs", "plate with posts"};
  p.kind_word = "plate";
  p.sizes = {{"thickness", top - bottom}};
  p.features.push_back(feature("bosses", n, "boss_count",
                               {{"boss_diameter", u(2 * rb)}, {"boss_height", g(h)}}, "boss",
                               "bosses", "on the top face"));
  p.features.back().named = true;
  if (drilled) add_holes(p, n, u(2 * rh), n == 1 ? "through the boss" : "through the bosses");
  return p;
}

Program draw_pocket_block(Rng& rng) {
  Program p;
  p.generator = "pocket_block";
  const int W = 4 * rng.integer(24, 64), t = rng.integer(12, 64);
  const auto [top, bottom] = base_block(rng, p, W, t);
  const double T = top - bottom;
  const int kind = rng.integer(0, 9);  // 0-5 rectangle, 6-7 rounded rectangle, 8-9 circle
  const int depth = rng.integer(2, t - 2);
  SketchProfile pocket;
  double pl = 0, pw = 0;
  int wall = 0;
  if (kind < 8) {
    wall = rng.integer(8, std::max(8, W / 4));
    pl = 256 - 2 * wall;
    pw = W - 2 * wall;
    const int corner = kind >= 6 ? rng.integer(4, std::max(4, static_cast<int>(pw) / 4)) : 0;
    pocket =
        single(corner ? rounded_rectangle_loop(P(wall, wall), P(256 - wall, W - wall), u(corner))
                      : rectangle_loop(P(wall, wall), P(256 - wall, W - wall)));
  } else {
    const int r = rng.integer(12, W / 2 - 10);
    pocket = single(circle_loop(P(128, W / 2.0), u(r)));
    pl = pw = 2 * r;
  }
  p.steps.push_back(cut_down(rng, top, {pocket}, g(depth), "pocket"));
  const bool tray = kind < 8 && wall <= 20 && g(depth) >= 0.5 * T && t >= 16;
  p.family = tray ? "tray" : kind < 8 ? "pocket_block" : "round_pocket_block";
  p.names = tray       ? std::vector<std::string>{"open box", "tray", "rectangular tray",
                                                  "box with an open top", "shallow container"}
            : kind < 8 ? std::vector<std::string>{"rectangular block with a pocket",
                                                  "block with a rectangular recess",
                                                  "cuboid with a pocket", "pocketed block",
                                                  "block with a cavity"}
                       : std::vector<std::string>{
                             "block with a round recess",
                             "rectangular block with a circular pocket", "block with a blind hole",
                             "cuboid with a round pocket", "block with a round cavity"};
  p.kind_word = tray ? "box" : "block";
  p.sizes = {{"thickness", T}};
  if (kind < 8) {
    p.features.push_back(
        feature("pocket", 1, "",
                {{"pocket_length", u(pl)}, {"pocket_width", u(pw)}, {"pocket_depth", g(depth)}},
                "rectangular pocket", "rectangular pockets", "in the top face"));
    p.features.back().named = true;
  } else {
    p.features.push_back(feature("pocket", 1, "",
                                 {{"pocket_diameter", u(pl)}, {"pocket_depth", g(depth)}},
                                 "round pocket", "round pockets", "in the top face"));
    p.features.back().named = true;
    p.holes.push_back({"", "pocket_diameter", 1, u(pl)});
  }
  return p;
}

Program draw_ribbed_plate(Rng& rng) {
  Program p;
  p.generator = "ribbed_plate";
  const int W = 4 * rng.integer(24, 64), t = steps_between(rng, 2, 10);
  const auto [top, bottom] = base_block(rng, p, W, t);
  const int n = rng.integer(1, 5), rw = rng.integer(4, 12), h = rng.integer(4, 32);
  const int inset = rng.chance(0.5) ? 0 : rng.integer(8, 32);
  if (W / (n + 1) < rw + 8) throw Reject("ribbed plate: the ribs do not fit side by side");
  std::vector<SketchProfile> ribs;
  for (int i = 0; i < n; ++i) {
    const double y = std::round(W * (i + 1.0) / (n + 1) - rw / 2.0);
    ribs.push_back(single(rectangle_loop(P(inset, y), P(256 - inset, y + rw))));
  }
  p.steps.push_back(join_up(rng, top, std::move(ribs), h, "ribs"));
  p.family = "ribbed_plate";
  p.names = {"ribbed plate", "plate with ribs", "stiffened plate", "base plate with parallel ribs",
             "plate with raised ribs"};
  p.kind_word = "plate";
  p.sizes = {{"thickness", top - bottom}};
  p.features.push_back(feature("ribs", n, "rib_count", {{"rib_width", u(rw)}, {"rib_height", g(h)}},
                               "rib", "ribs", "along the length"));
  p.features.back().named = true;
  return p;
}

Program draw_prism(Rng& rng) {
  Program p;
  p.generator = "prism";
  const int sides = std::vector<int>{3, 5, 6, 6, 6, 8}[static_cast<size_t>(rng.integer(0, 5))];
  const double turn = rng.chance(0.5) ? 0 : kPi / sides;
  std::vector<Pt> pts;
  for (int i = 0; i < sides; ++i) {
    const double a = turn + 2 * kPi * i / sides - kPi / 2;
    pts.push_back(P(std::round(128 + 128 * std::cos(a)), std::round(128 + 128 * std::sin(a))));
  }
  static const std::vector<std::string> kShapes = {"",         "",        "", "triangle", "",
                                                   "pentagon", "hexagon", "", "octagon"};
  SketchProfile profile = single(polygon_loop(pts, kShapes[static_cast<size_t>(sides)]));
  const double inradius = 128 * std::cos(kPi / sides);
  const bool hole = rng.chance(0.45);
  const int r = rng.integer(20, std::max(20, static_cast<int>(0.6 * inradius)));
  if (hole) profile.loops.push_back(circle_loop(P(128, 128), u(r)));
  const int h = rng.integer(6, 96);
  ProgramStep body = step_on(xy_at(0), {profile}, Operation::kNewBody, "base");
  draw_extent(rng, body, h);
  const auto [low, high] = body.range();
  p.steps = {body};
  const bool nut = sides == 6 && hole && high - low < 0.6 * S;
  static const std::vector<std::vector<std::string>> kNames = {
      {"triangular prism", "triangular plate", "three-sided block", "triangular block",
       "triangular slab"},
      {"pentagonal prism", "pentagonal plate", "five-sided block", "pentagonal block",
       "pentagonal slab"},
      {"hexagonal prism", "hexagonal block", "hex bar", "six-sided prism", "hexagonal plate"},
      {"octagonal prism", "octagonal plate", "eight-sided block", "octagonal block",
       "octagonal slab"}};
  const size_t which = sides == 3 ? 0 : sides == 5 ? 1 : sides == 6 ? 2 : 3;
  if (nut) {
    p.family = "hex_nut";
    p.names = {"hexagonal nut", "hex nut", "six-sided nut", "hexagonal ring", "hex collar"};
  } else {
    static const std::vector<std::string> kFamilies = {"triangular_prism", "pentagonal_prism",
                                                       "hexagonal_prism", "octagonal_prism"};
    p.family = kFamilies[which];
    p.names = kNames[which];
  }
  p.kind_word = "prism";
  p.sizes = {{"depth", high - low}};
  p.features.push_back(feature("sides", sides, "side_count", {}, "side", "sides"));
  p.features.back().named = true;
  if (hole) {
    p.features.push_back(feature("bore", 1, "", {{"bore_diameter", u(2 * r)}}, "central hole",
                                 "central holes", "through the middle"));
    p.holes.push_back({"", "bore_diameter", 1, u(2 * r)});
  }
  return p;
}

Program draw_link(Rng& rng) {
  Program p;
  p.generator = "link";
  const int R = rng.integer(24, 96);
  SketchProfile profile = single(slot_loop(P(R, R), P(256 - R, R), u(R)));
  // Holes clear of the outline and of each other.
  const int rh = rng.integer(8, std::max(8, std::min(R - 10, 128 - R - 6)));
  profile.loops.push_back(circle_loop(P(R, R), u(rh)));
  profile.loops.push_back(circle_loop(P(256 - R, R), u(rh)));
  const int sr = rng.integer(4, std::max(4, R / 2)), from = R + rh + sr + 8;
  const bool middle_slot = rng.chance(0.2) && 256 - 2 * from >= 8;
  if (middle_slot) profile.loops.push_back(slot_loop(P(from, R), P(256 - from, R), u(sr)));
  ProgramStep body = step_on(xy_at(0), {profile}, Operation::kNewBody, "base");
  draw_extent(rng, body, steps_between(rng, 3, 24));
  const auto [low, high] = body.range();
  p.steps = {body};
  p.family = "link";
  p.names = {"link", "connecting link", "link arm", "obround plate", "lever arm"};
  p.kind_word = "bar";
  p.sizes = {{"thickness", high - low}, {"centre_distance", u(256 - 2 * R)}};
  add_holes(p, 2, u(2 * rh), "at both ends");
  if (middle_slot)
    p.features.push_back(feature("slots", 1, "slot_count", {{"slot_width", u(2 * sr)}}, "slot",
                                 "slots", "between them"));
  return p;
}

Program draw_frame(Rng& rng) {
  Program p;
  p.generator = "frame";
  const bool tube = rng.chance(0.4);
  const double size = tube ? g(rng.integer(16, 64)) : S;
  const int W = 4 * rng.integer(24, 64), wall = rng.integer(8, std::max(8, W / 5));
  const int corner = rng.chance(0.3) ? rng.integer(4, std::max(4, (W - 2 * wall) / 4)) : 0;
  SketchProfile profile = single(rectangle_loop(P(0, 0, size), P(256, W, size)));
  profile.loops.push_back(
      corner ? rounded_rectangle_loop(P(wall, wall, size), P(256 - wall, W - wall, size),
                                      u(corner, size))
             : rectangle_loop(P(wall, wall, size), P(256 - wall, W - wall, size)));
  ProgramStep body = step_on(xy_at(0), {profile}, Operation::kNewBody, "base", size);
  draw_extent(rng, body, tube ? 96 : steps_between(rng, 3, 24));
  const auto [low, high] = body.range();
  p.steps = {body};
  p.family = tube ? "rectangular_tube" : "rectangular_frame";
  p.names =
      tube ? std::vector<std::string>{"rectangular tube", "box section", "hollow rectangular bar",
                                      "rectangular pipe", "square tube"}
           : std::vector<std::string>{"rectangular frame", "open frame", "rectangular ring",
                                      "window frame", "picture frame"};
  p.kind_word = tube ? "tube" : "frame";
  p.sizes = {{"depth", high - low}, {"wall_thickness", u(wall, size)}};
  return p;
}

Program draw_intersection(Rng& rng) {
  Program p;
  p.generator = "intersection";
  if (rng.chance(0.5)) {
    // A block trimmed by a cylinder along x whose axis lies at or below the
    // base: a rounded top. The trim's sketch box is twice the base's (so the
    // circle fits), on the plane x = 0: sketch x along y, sketch y along z.
    const int W = 4 * rng.integer(16, 40), H = rng.integer(16, 64);
    ProgramStep body = step_on(xy_at(0), {single(rectangle_loop(P(0, 0), P(256, W)))},
                               Operation::kNewBody, "base");
    body.e1 = g(H);
    p.steps = {body};
    const double size = 2 * S, step = sk(1, size);  // 3 model steps are 4 of its grid steps
    const double drop = g(3 * rng.integer(0, 4));   // the axis below the base
    const double reach = std::hypot(u(W) / 2, g(H) + drop);
    const double radius = rng.uniform(std::max(0.7 * reach, drop + u(12)), reach - u(4));
    const int r_steps = static_cast<int>(std::round(radius / step));
    const double R = r_steps * step;
    for (double edge : {u(W) / 2, g(H) + drop, std::hypot(u(W) / 2, drop), reach})
      if (std::abs(R - edge) < u(3)) throw Reject("intersection: the trim grazes an edge");
    auto up_to_grid = [](double v) { return g(3 * static_cast<int>(std::ceil(v / g(3)))); };
    const double below = up_to_grid(r_steps * step) + g(3);  // origin below the axis
    const double aside = up_to_grid(std::max(0.0, r_steps * step - u(W) / 2)) + g(3);
    Frame side;
    side.origin = {-g(2), -aside, -drop - below};
    side.x = {0, 1, 0};
    side.y = {0, 0, 1};
    side.z = {1, 0, 0};
    const Pt centre{std::round((aside + u(W) / 2) / step), std::round(below / step)};
    ProgramStep trim =
        step_on(side, {single(circle_loop(sp(centre.x, centre.y, size), sk(r_steps, size)))},
                Operation::kIntersect, "trim", size);
    trim.e1 = S + g(4);
    p.steps.push_back(trim);
    p.family = "rounded_block";
    p.names = {"block with a rounded top", "rounded bar", "bar with a curved top", "arched block",
               "half-round bar"};
    p.kind_word = "block";
    p.features.push_back(feature("curved top", 1, "", {{"top_radius", sk(r_steps, size)}},
                                 "curved top face", "curved top faces"));
    p.features.back().named = true;
    return p;
  }
  // A disc trimmed by a rectangle: two flat sides.
  // The disc stays inside the box's sides, so that the rectangle crosses it cleanly.
  const int h = rng.integer(6, 64), flat = rng.integer(40, 104);
  ProgramStep body =
      step_on(xy_at(0), {single(circle_loop(P(128, 128), u(120)))}, Operation::kNewBody, "base");
  body.e1 = g(h);
  p.steps = {body};
  ProgramStep trim =
      step_on(xy_at(0), {single(rectangle_loop(P(0, 128 - flat), P(256, 128 + flat)))},
              Operation::kIntersect, "trim");
  trim.extent = Extent::kSymmetric;
  trim.e1 = g(h + 2);
  p.steps.push_back(trim);
  p.family = "flatted_disc";
  p.names = {"disc with two flats", "cylinder with flat sides", "flatted round plate",
             "round plate with two flat edges", "double-D disc"};
  p.kind_word = "round part";
  p.sizes = {{"diameter", u(240)}, {"flat_distance", u(2 * flat)}, {"depth", g(h)}};
  return p;
}

}  // namespace cadclip::synth
