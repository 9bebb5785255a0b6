// What the program families share: steps on the XY plane, joins on a face and
// cuts into it, extents of the three kinds, the family registry, and the turn
// of a whole program onto its sketch plane.
#include <algorithm>
#include <cmath>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {

double grid_steps(int k) { return k * kModelStep; }

int steps_between(Rng& rng, int lo, int hi) {
  const double v = std::exp(rng.uniform(std::log(lo), std::log(hi + 1.0)));
  return std::clamp(static_cast<int>(v), lo, hi);
}

void draw_extent(Rng& rng, ProgramStep& step, int total) {
  const double r = rng.uniform();
  step.e2 = 0;
  if (r < 0.65 || total < 2) {
    step.extent = Extent::kOneSide;
    step.e1 = grid_steps(total);
  } else if (r < 0.75) {
    step.extent = Extent::kOneSide;
    step.e1 = -grid_steps(total);
  } else if (r < 0.9 && total % 2 == 0) {
    step.extent = Extent::kSymmetric;
    step.e1 = grid_steps(total / 2);
  } else {
    step.extent = Extent::kTwoSides;
    const int a = rng.integer(1, total - 1);
    step.e1 = grid_steps(a);
    step.e2 = grid_steps(total - a);
  }
}

SketchProfile mirrored(const SketchProfile& profile, double size) {
  SketchProfile out = profile;
  auto flip = [&](Pt& p) { p.y = size - p.y; };
  for (SketchLoop& loop : out.loops) {
    for (SketchCurve& c : loop.curves) {
      flip(c.start);
      flip(c.end);
      flip(c.centre);
      c.ccw = !c.ccw;
    }
  }
  return out;
}

SketchProfile single(SketchLoop loop) { return SketchProfile{{std::move(loop)}}; }

Frame xy_at(double z) {
  Frame f;
  f.origin = {0, 0, z};
  return f;
}

ProgramStep step_on(const Frame& frame, std::vector<SketchProfile> profiles, Operation op,
                    const std::string& role, double size) {
  ProgramStep step;
  step.frame = frame;
  step.size = size;
  step.profiles = std::move(profiles);
  step.operation = op;
  step.role = role;
  return step;
}

ProgramStep join_up(Rng& rng, double top, std::vector<SketchProfile> profiles, int h,
                    const std::string& role, double size) {
  ProgramStep step = step_on(xy_at(top), std::move(profiles), Operation::kJoin, role, size);
  step.e1 = grid_steps(h);
  if (rng.chance(0.2)) {  // starting a little inside the body, as an offset plane does
    step.extent = Extent::kTwoSides;
    step.e2 = grid_steps(1);
  }
  return step;
}

ProgramStep cut_down(Rng& rng, double top, std::vector<SketchProfile> profiles, double depth,
                     const std::string& role, double size) {
  const double r = rng.uniform();
  if (r < 0.4) {
    ProgramStep step = step_on(xy_at(top), std::move(profiles), Operation::kCut, role, size);
    step.e1 = -depth;
    return step;
  }
  if (r < 0.8) {
    Frame f;
    f.origin = {0, size, top};
    f.y = {0, -1, 0};
    f.z = {0, 0, -1};
    for (SketchProfile& p : profiles) p = mirrored(p, size);
    ProgramStep step = step_on(f, std::move(profiles), Operation::kCut, role, size);
    step.e1 = depth;
    return step;
  }
  ProgramStep step = step_on(xy_at(top), std::move(profiles), Operation::kCut, role, size);
  step.extent = Extent::kTwoSides;
  step.e1 = grid_steps(rng.integer(1, 3));
  step.e2 = depth;
  return step;
}

ProgramFeature feature(const std::string& kind, int count, const std::string& count_key,
                       std::vector<std::pair<std::string, double>> sizes, const std::string& noun,
                       const std::string& plural, const std::string& where) {
  ProgramFeature f;
  f.kind = kind;
  f.count = count;
  f.count_key = count_key;
  f.sizes = std::move(sizes);
  f.noun = noun;
  f.plural = plural;
  f.where = where;
  return f;
}

void add_holes(Program& p, int n, double d, const std::string& where) {
  p.features.push_back(
      feature("holes", n, "hole_count", {{"hole_diameter", d}}, "hole", "holes", where));
  p.holes.push_back({"hole_count", "hole_diameter", n, d});
}

// ------------------------------------------------------------ the registry

const std::vector<ProgramFamily>& program_families() {
  // Weights: the named families about 70% of programs, free programs 30%.
  static const std::vector<ProgramFamily> kFamilies = {
      {"plate", 1.6, "pocket_block", draw_plate},
      {"disc", 1.6, "stepped_cylinder", draw_disc},
      {"stepped_cylinder", 0.8, "disc", draw_stepped_cylinder},
      {"profile", 0.9, "bracket", draw_profile},
      {"bracket", 0.8, "profile", draw_bracket},
      {"boss_plate", 0.8, "ribbed_plate", draw_boss_plate},
      {"pocket_block", 0.8, "frame", draw_pocket_block},
      {"ribbed_plate", 0.6, "boss_plate", draw_ribbed_plate},
      {"prism", 0.6, "disc", draw_prism},
      {"link", 0.6, "plate", draw_link},
      {"frame", 0.5, "pocket_block", draw_frame},
      {"intersection", 0.4, "profile", draw_intersection},
      {"free", 4.2, "plate", draw_free_program},
  };
  return kFamilies;
}

const ProgramFamily& program_family(const std::string& key) {
  for (const ProgramFamily& f : program_families())
    if (f.key == key) return f;
  throw Error(format("unknown program family '{}'", key));
}

const ProgramFamily& program_family_for(uint64_t seed, uint64_t index) {
  Rng rng(seed, index, kTagFamily);
  double total = 0;
  for (const ProgramFamily& f : program_families()) total += f.weight;
  double x = rng.uniform() * total;
  for (const ProgramFamily& f : program_families()) {
    if (x < f.weight) return f;
    x -= f.weight;
  }
  return program_families().back();
}

// ------------------------------------------------------------ orientation

void orient_program(Rng& rng, Program& program) {
  // The 24 turns that map axes onto axes: sketch planes on XY, XZ and YZ.
  double r[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const double pick = rng.uniform();
  if (pick >= 0.4) {
    static const int kPerms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                     {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    for (;;) {
      const int* perm = kPerms[rng.integer(0, 5)];
      const int signs = rng.integer(0, 7);
      double m[3][3] = {};
      for (int i = 0; i < 3; ++i) m[i][perm[i]] = (signs >> i) & 1 ? -1 : 1;
      const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
      if (det > 0) {
        std::copy(&m[0][0], &m[0][0] + 9, &r[0][0]);
        break;
      }
    }
  }
  turn_program(program, r);
  if (pick >= 0.85) {
    // Oblique: a turn about x or y by an angle on DeepCAD's angle grid (256
    // levels of a full turn), never a multiple of 90°.
    int k = rng.integer(4, 60);
    if (rng.chance(0.5)) k = -k;
    const double a = k * 2 * 3.14159265358979323846 / 256, c = std::cos(a), s = std::sin(a);
    const double about_x[3][3] = {{1, 0, 0}, {0, c, -s}, {0, s, c}};
    const double about_y[3][3] = {{c, 0, s}, {0, 1, 0}, {-s, 0, c}};
    turn_program(program, rng.chance(0.5) ? about_x : about_y);
  }
  if (rng.chance(0.5)) {
    auto offset = [&] { return rng.chance(0.4) ? 0.0 : grid_steps(rng.integer(-48, 48)); };
    const double dx = offset(), dy = offset(), dz = offset();
    move_program(program, {dx, dy, dz});
  }
}

}  // namespace cadclip::synth
