// Blocks and enclosures of `cadclip synth`: a machined block with a pocket,
// a slot or holes, and an open-top enclosure.
#include <algorithm>
#include <cmath>

#include "synth/family.h"

namespace cadclip::synth {

namespace {

// A block's drawn parameters: its box, and a pocket, a slot and holes in it.
struct BlockPlan {
  double L = 0, W = 0, H = 0;  // length, width, height
  bool pocket = false, slot = false;
  int nh = 0;                             // holes: 0, 2 (at the ends) or 4 (at the corners)
  double d = 0, m = 0;                    // hole diameter; hole centres from the edges
  double pl = 0, pw = 0, pd = 0, pr = 0;  // pocket length, width, depth, corner radius
  double px = 0;                          // pocket centre along x
  double sl = 0, sw = 0, sx = 0;          // slot length, width, centre along x
};

// Draws the pocket into `b`: its size and where it sits between x0 and x1.
void draw_pocket(Rng& rng, BlockPlan& b, double x0, double x1, double mid, double ymax) {
  const double span = b.slot ? mid - 2 - x0 : x1 - x0;
  b.pl = rng.step(std::ceil(0.4 * span), std::floor(0.9 * span), 1);
  b.pw = rng.step(std::ceil(0.3 * ymax), std::floor(0.8 * ymax), 1);
  b.pd = rng.step(1, std::max(1.0, 0.6 * b.H), 0.5);
  b.pr = rng.chance(0.5) ? rng.step(1, std::max(1.0, std::min(b.pl, b.pw) / 4), 0.5) : 0;
  if (b.pl < 4 || b.pw < 4) throw Reject("block: pocket too small");
  b.px = x0 + span / 2;
}

// Draws the round-ended slot into `b`: beside the pocket when there is one.
void draw_slot(Rng& rng, BlockPlan& b, double x0, double x1, double mid, double ymax) {
  const double start = b.pocket ? mid + 2 : x0;
  const double span = x1 - start;
  b.sw = rng.step(3, std::max(3.0, std::min(0.6 * ymax, 30.0)), 0.5);
  if (span < 2 * b.sw + 1) throw Reject("block: slot does not fit");
  b.sl = rng.step(2 * b.sw, span, 1);
  b.sx = start + span / 2;
}

BlockPlan draw_block(Rng& rng) {
  BlockPlan b;
  b.L = rng.step(30, 200, 5), b.W = rng.step(20, 150, 5), b.H = rng.step(10, 80, 5);
  b.pocket = rng.chance(0.6), b.slot = rng.chance(0.5);
  b.nh = std::vector<int>{0, 2, 4, 4}[rng.integer(0, 3)];
  if (!b.pocket && !b.slot && b.nh == 0) b.pocket = true;
  if (b.nh) {
    b.d = pick_hole(rng, 3, std::min({14.0, b.W / 5, b.L / 6}));
    b.m = std::round(1.2 * b.d + 2);
  }
  const double e = b.nh ? b.m + b.d / 2 + 3 : 4;
  const double x0 = e, x1 = b.L - e;
  if (x1 - x0 < 12) throw Reject("block: no room for features");
  const double mid = (x0 + x1) / 2;
  const double ymax = (b.nh == 4) ? b.W - 2 * (b.m + b.d / 2 + 2) : b.W - 8;
  if (ymax < 6) throw Reject("block: too narrow for features");
  if (b.pocket) draw_pocket(rng, b, x0, x1, mid, ymax);
  if (b.slot) draw_slot(rng, b, x0, x1, mid, ymax);
  if (b.nh && 2 * b.m + b.d > b.W) throw Reject("block: holes do not fit");
  return b;
}

// The block: a box less the pocket (from the top), the slot and the holes (through).
TopoDS_Shape block_shape(const BlockPlan& b) {
  const double L = b.L, W = b.W, H = b.H, m = b.m;
  std::vector<TopoDS_Shape> tools;
  if (b.pocket) {
    const double px = b.px, pl = b.pl, pw = b.pw, pr = b.pr;
    std::vector<P2> rect = {{px - pl / 2, W / 2 - pw / 2, 0, pr},
                            {px + pl / 2, W / 2 - pw / 2, 0, pr},
                            {px + pl / 2, W / 2 + pw / 2, 0, pr},
                            {px - pl / 2, W / 2 + pw / 2, 0, pr}};
    tools.push_back(
        extrude(profile_face(rect, gp_Pnt(0, 0, H - b.pd), kX, kY), gp_Vec(0, 0, b.pd + 1)));
  }
  if (b.slot) {
    const double a = b.sx - b.sl / 2 + b.sw / 2, c = b.sx + b.sl / 2 - b.sw / 2;
    tools.push_back(box(a, W / 2 - b.sw / 2, -1, c - a, b.sw, H + 2));
    tools.push_back(cylinder(gp_Pnt(a, W / 2, -1), kZ, b.sw / 2, H + 2));
    tools.push_back(cylinder(gp_Pnt(c, W / 2, -1), kZ, b.sw / 2, H + 2));
  }
  std::vector<gp_Pnt> holes;
  if (b.nh == 2) holes = {{m, W / 2, -1}, {L - m, W / 2, -1}};
  if (b.nh == 4) holes = {{m, m, -1}, {L - m, m, -1}, {L - m, W - m, -1}, {m, W - m, -1}};
  for (const gp_Pnt& p : holes) tools.push_back(cylinder(p, kZ, b.d / 2, H + 2));
  return cut(box(0, 0, 0, L, W, H), tools);
}

// The block's pocket, slot and holes as caption features.
void describe_block_features(const BlockPlan& b, Description& desc) {
  const double pl = b.pl, pw = b.pw, pd = b.pd, pr = b.pr, sl = b.sl, sw = b.sw, d = b.d;
  const int nh = b.nh;
  if (b.pocket)
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
  if (b.slot)
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
}

// The block's construction steps: the box, then each cut.
void describe_block_steps(const BlockPlan& b, Description& desc) {
  const double L = b.L, W = b.W, H = b.H, pl = b.pl, pw = b.pw, pd = b.pd, sl = b.sl, sw = b.sw,
               d = b.d;
  const int nh = b.nh;
  desc.steps.push_back([=](CaptionWriter& w) {
    return w.pick({"make a box ", "sketch a rectangle and extrude it into a box "}) +
           w.opt("", "length", L, " long, ") + w.opt("", "width", W, " wide and ") +
           w.opt("", "height", H, " high");
  });
  if (b.pocket)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "cut a pocket" + w.opt(" ", "pocket_length", pl, "") +
             w.opt(" by ", "pocket_width", pw, "") + w.opt(" to a depth of ", "pocket_depth", pd) +
             " from the top";
    });
  if (b.slot)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "cut a round-ended slot" + w.opt(" ", "slot_length", sl, " long") +
             w.opt(" and ", "slot_width", sw, " wide") + " through the block";
    });
  if (nh)
    desc.steps.push_back([=](CaptionWriter& w) {
      return "drill " + holes_text(w, "hole_count", nh, "hole_diameter", d, "through", "");
    });
}

}  // namespace

Built block(Rng& rng) {
  const BlockPlan p = draw_block(rng);
  Built b;
  b.shape = block_shape(p);
  b.params = {{"length", p.L},
              {"width", p.W},
              {"height", p.H},
              {"holes", p.nh},
              {"hole_diameter", p.d},
              {"pocket", p.pocket ? nlohmann::json{p.pl, p.pw, p.pd, p.pr} : nlohmann::json()},
              {"slot", p.slot ? nlohmann::json{p.sl, p.sw} : nlohmann::json()}};
  if (p.nh) b.holes = {{"hole_count", "hole_diameter", p.nh, p.d}};
  Description& desc = b.desc;
  desc.family = "block";
  desc.names = {"block", "rectangular block", "machined block", "solid block", "cuboid block"};
  desc.dims = {dim_length(p.L), dim_width(p.W), dim_height(p.H)};
  desc.kind_word = "block";
  desc.vague_feature = "a cut-out";
  describe_block_features(p, desc);
  describe_block_steps(p, desc);
  return b;
}

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

}  // namespace cadclip::synth
