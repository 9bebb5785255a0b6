// Long profiles of `cadclip synth`: T-slot profiles, keyed shafts and angle bars.
#include <algorithm>
#include <cmath>

#include "synth/family.h"

namespace cadclip::synth {

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

}  // namespace cadclip::synth
