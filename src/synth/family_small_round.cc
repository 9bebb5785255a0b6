// Small round parts of `cadclip synth`: spacers and standoffs.
#include <algorithm>
#include <cmath>

#include "synth/family.h"

namespace cadclip::synth {

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

}  // namespace cadclip::synth
