// Internal to the synthetic-data generator: sketch-and-extrude programs in
// DeepCAD's form (sketches of lines, arcs and circles on planes, extruded and
// combined), drawn on DeepCAD's quantisation grid in normalised units, written
// as DeepCAD JSON in metres, and described for the caption writer
// (docs/SYNTHETIC.md, "Programs").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/synth/synth.h"
#include "synth/model.h"

namespace cadclip::synth {

// The model grid: sketch origins, sketch sizes and extrude distances are
// multiples of 1/128 unit (DeepCAD's 256 levels over [-1, 1]); sketch
// coordinates are multiples of size/256 within the sketch's box [0, size]².
inline constexpr double kModelStep = 1.0 / 128;
inline constexpr int kSketchLevels = 256;
// The size of a base sketch: Text2CAD's normalised parts are about 0.75 units.
inline constexpr double kBaseSize = 0.75;

struct Pt {
  double x = 0, y = 0;
};
struct V3 {
  double x = 0, y = 0, z = 0;
};

// One sketch curve, in sketch coordinates (units), in the loop's order of travel.
struct SketchCurve {
  enum Kind { kLine, kArc, kCircle } kind = kLine;
  Pt start, end;         // line, arc: where travel starts and ends
  Pt centre;             // arc, circle
  double radius = 0;     // arc, circle
  bool ccw = true;       // arc: travelled counterclockwise from start to end
  double sweep() const;  // arc: the angle it turns through, radians in (0, 2π)
  Pt mid() const;        // arc: the point halfway along it
};

struct SketchLoop {
  std::vector<SketchCurve> curves;  // chained: each curve ends where the next starts
  std::string shape;                // "rectangle", "circle", "slot", "L-shape", ... for captions
};

struct SketchProfile {
  std::vector<SketchLoop> loops;  // loops[0] is the outer boundary; the others are holes in it
};

struct Frame {
  V3 origin;                              // units
  V3 x{1, 0, 0}, y{0, 1, 0}, z{0, 0, 1};  // z = x × y, the extrusion direction
};

enum class Operation { kNewBody, kJoin, kCut, kIntersect };
enum class Extent { kOneSide, kSymmetric, kTwoSides };

// A sketch and the extrude that uses all its profiles (DeepCAD's Sketch +
// ExtrudeFeature pair).
struct ProgramStep {
  Frame frame;
  double size = kBaseSize;  // the sketch box's side (Text2CAD's sketch scale)
  std::vector<SketchProfile> profiles;
  Operation operation = Operation::kNewBody;
  Extent extent = Extent::kOneSide;
  double e1 = 0;     // OneSide: signed distance along the normal; Symmetric: each side; TwoSides: +
  double e2 = 0;     // TwoSides: distance against the normal
  std::string role;  // what the step makes ("base", "bosses", "holes", "pocket", ...): manifest
  // The range [low, high] along the normal that the step fills.
  std::pair<double, double> range() const;
};

// A detail of the result that captions name, with its sizes in units (fact
// key, value); `where` is a phrase of placement ("near the corners", "").
struct ProgramFeature {
  std::string kind;  // "holes", "bore", "boss", "pocket", "slot", "ribs", "steps", "cut-out", ...
  int count = 1;
  std::string count_key;  // "" when captions state no count
  std::vector<std::pair<std::string, double>> sizes;
  std::string where;
  std::string noun;    // "hole", "boss", ...: singular noun for captions
  std::string plural;  // "holes", "bosses"
  bool named = false;  // the family's names already say it ("plate with bosses"): captions
                       // state its sizes in a sentence of their own, never "with" it again
};

struct Program {
  std::string generator;           // the key of program_families() that drew it ("free", ...)
  std::string family;              // what captions call it, as a fact key ("plate", "ring", ...)
  std::vector<std::string> names;  // what captions call the result
  std::string kind_word;           // a vague noun for noisy captions ("plate", "part")
  std::vector<ProgramStep> steps;
  std::vector<ProgramFeature> features;
  // Sizes of the whole that are not bounding-box extents (fact key, units): "diameter",
  // "thickness".
  std::vector<std::pair<std::string, double>> sizes;
  // Round holes the result must show (diameter in units), as families' HoleSet.
  std::vector<HoleSet> holes;
};

struct ProgramFamily {
  std::string key;
  double weight = 1;          // relative share among programs
  std::string confused_with;  // the family whose name a noisy caption may use instead
  Program (*draw)(Rng& rng);
};
const std::vector<ProgramFamily>& program_families();
const ProgramFamily& program_family(const std::string& key);
// The family of program part `index`: a fixed function of (seed, index).
const ProgramFamily& program_family_for(uint64_t seed, uint64_t index);

// ---- Profiles and frames (program_profiles.cc); coordinates in units.
SketchLoop rectangle_loop(Pt min, Pt max);
SketchLoop rounded_rectangle_loop(Pt min, Pt max, double radius);
SketchLoop circle_loop(Pt centre, double radius);
// A slot (obround): two half circles of `radius` around `a` and `b`, joined by lines.
SketchLoop slot_loop(Pt a, Pt b, double radius);
// A closed polygon through `points`; `shape` names it for captions.
SketchLoop polygon_loop(const std::vector<Pt>& points, const std::string& shape);
// The loop with its line `edge` replaced by an arc of `sweep` radians (< π)
// between the same ends, bulging out of the loop or into it (loops run
// counterclockwise).
SketchLoop with_arc(SketchLoop loop, size_t edge, double sweep, bool outward);
// The loop as points along it (arcs and circles sampled), for the 2-D checks.
std::vector<Pt> polyline(const SketchLoop& loop);
// Throws Reject when a loop crosses itself, two loops touch or cross, or a
// hole is not inside the outer loop (a valid profile face needs none of that).
void check_profile(const SketchProfile& profile);
// Extent of a profile's outer loop in sketch coordinates: min and max corners.
std::pair<Pt, Pt> profile_box(const SketchProfile& profile);
// A sketch coordinate on the grid of a sketch of side `size`: k · size / 256.
double on_grid(double size, double k);
// Rounds to the model grid (multiples of kModelStep).
double model_grid(double value);
// A rigid turn of the whole program (about the origin), applied to every frame.
void turn_program(Program& program, const double rotation[3][3]);
// Moves every frame by `offset` (units).
void move_program(Program& program, const V3& offset);
V3 frame_point(const Frame& frame, Pt p);  // sketch point -> model point

// ---- The named families (program_families.cc) and free programs (program_free.cc).
Program draw_free_program(Rng& rng);
// Names a free program for its captions by rules over its steps and the
// measured solid's round holes (diameter in units, count).
void name_free_program(Program& program, const std::vector<std::pair<double, int>>& holes);
// Turns the whole program (drawn on the XY plane) onto a principal or oblique
// plane and moves it, as DeepCAD's sketch planes are spread.
void orient_program(Rng& rng, Program& program);
// Helpers the families and free programs share (program_steps.cc).
double grid_steps(int k);  // k model steps, units
// k sketch-grid steps of a sketch box of side `size`, units; a point of them.
inline double sk(double k, double size = kBaseSize) { return on_grid(size, k); }
inline Pt sp(double kx, double ky, double size = kBaseSize) {
  return {on_grid(size, kx), on_grid(size, ky)};
}
// An integer drawn log-uniformly in [lo, hi] (thicknesses and depths in model steps).
int steps_between(Rng& rng, int lo, int hi);
// Sets the step's extent so that it fills `total` model steps along its normal:
// one-sided (either way), symmetric or two-sided.
void draw_extent(Rng& rng, ProgramStep& step, int total);
// The profile mirrored across the sketch box's middle line y = size/2 (for a
// sketch on the same plane seen from the other side).
SketchProfile mirrored(const SketchProfile& profile, double size);
SketchProfile single(SketchLoop loop);
Frame xy_at(double z);  // the XY plane at height z, normal +z
ProgramStep step_on(const Frame& frame, std::vector<SketchProfile> profiles, Operation op,
                    const std::string& role, double size = kBaseSize);
// A join standing on the plane z = `top`, `h` model steps high.
ProgramStep join_up(Rng& rng, double top, std::vector<SketchProfile> profiles, int h,
                    const std::string& role, double size = kBaseSize);
// A cut from the plane z = `top` down by `depth` units: sketched looking up with
// the distance against the normal, looking down (a mirrored frame), or two-sided
// from just above the face.
ProgramStep cut_down(Rng& rng, double top, std::vector<SketchProfile> profiles, double depth,
                     const std::string& role, double size = kBaseSize);
ProgramFeature feature(const std::string& kind, int count, const std::string& count_key,
                       std::vector<std::pair<std::string, double>> sizes, const std::string& noun,
                       const std::string& plural, const std::string& where = "");
// A set of `n` round holes of diameter `d` (units) that captions state and the solid must show.
void add_holes(Program& program, int n, double d, const std::string& where);

// The families (program_families.cc, program_features.cc).
Program draw_plate(Rng& rng);
Program draw_disc(Rng& rng);
Program draw_stepped_cylinder(Rng& rng);
Program draw_profile(Rng& rng);
Program draw_bracket(Rng& rng);
Program draw_boss_plate(Rng& rng);
Program draw_pocket_block(Rng& rng);
Program draw_ribbed_plate(Rng& rng);
Program draw_prism(Rng& rng);
Program draw_link(Rng& rng);
Program draw_frame(Rng& rng);
Program draw_intersection(Rng& rng);

// ---- DeepCAD JSON and summaries (program_json.cc).
// The program as DeepCAD JSON with lengths in metres (units times
// `metres_per_unit`); `bbox_mm` (xmin, ymin, zmin, xmax, ymax, zmax), when
// given, fills properties.bounding_box.
std::string program_json(const Program& program, double metres_per_unit,
                         const double* bbox_mm = nullptr);
// The program in units as canonical text: equal for equal programs.
std::string program_signature(const Program& program);
// Euler angles in degrees (a, b, c) with [x y z] = Rz(c)·Ry(b)·Rx(a), rounded to 0.1°.
V3 euler_degrees(const Frame& frame);
// Counts for the distribution table: extrudes, curves by type, operations,
// extents, sketch planes; and each step's role.
nlohmann::json program_summary(const Program& program);
std::string operation_name(Operation op);  // "NewBodyFeatureOperation", ...
std::string extent_name(Extent extent);    // "OneSideFeatureExtentType", ...

// ---- Captions (program_captions.cc) and their noise (program_noise.cc).
enum class CaptionUnits { kUnits, kMillimetres };

// What captions are written from: the program, the measured solid, the unit.
struct ProgramDescription {
  const Program* program = nullptr;
  double extent[3] = {0, 0, 0};  // measured bounding-box sides x, y, z, units
  double mm_per_unit = 1;        // real millimetres per unit
  CaptionUnits units = CaptionUnits::kUnits;
};

// Sentence structures and synonym sets: a fifth of each is held out.
enum class Phrasing { kSeen, kHeldOut };

struct ProgramCaption {
  std::string text;
  nlohmann::json facts;
  nlohmann::json noise;  // null when clean
  nlohmann::json truth;  // the exact values behind every fact the clean text would state
  int decimals = 4;      // how the text rounds its numbers (in its unit)
};

// One caption of `level` (0..4, kCaptionLevels) in the given phrasing; noise with probability
// `noise`.
ProgramCaption write_program_caption(const ProgramDescription& desc, int level, Phrasing phrasing,
                                     uint64_t seed, uint64_t index, double noise);

// The phrases a held-out caption may use and a seen one never does, per
// level (marker texts of held-out structures and held-out synonyms): for tests.
std::vector<std::string> heldout_markers(int level);

// ---- A program part (program_part.cc): drawn, written as JSON, built through
// deepcad_to_shape, measured, hashed and captioned; redrawn on any failure.
SynthPart make_program_part(const SynthOptions& options, int64_t index, int first_attempt);
// The largest side of the box of everything a program adds (units).
double nominal_extent(const Program& program);

}  // namespace cadclip::synth
