// What a part's B-Rep graph tells beyond its embedding, for search filters,
// the facts a query states, and duplicate finding: its round holes (count and
// diameters), its round shafts (diameters and where they run along their
// axes), its repeated faces (teeth, spokes, slots), and a shape signature that tells a part from
// its mirror image. Read from the graph's face grids alone, so prepared folders give it as well as
// CAD files.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "cadclip/data/brep_graph.h"

namespace cadclip::data {

// Second and third moments of the part's surface about its centroid, in its
// principal frame. Equal (within rounding) for a part, a moved copy and a
// mirror image; `handedness` tells the mirror image apart.
struct ShapeSignature {
  std::array<double, 3> spread_mm{};  // root of each principal second moment, descending
  std::array<double, 3> skew{};       // |normalised third moment| along each principal axis
  int handedness = 0;  // +1 or -1, opposite for mirror images; 0 = cannot tell (the part is
                       // symmetric enough that its principal frame has no orientation)
};

// A full-turn convex cylinder: a shaft, pin, boss or the outside of a ring.
// Shafts of one part on one axis line share `axis`, and their from/to are
// measured along it the same way, so a stepped shaft's pieces join up (a
// partly threaded bolt: the shank at d, the thread at the minor diameter).
struct Shaft {
  double diameter_mm = 0;
  double from_mm = 0, to_mm = 0;  // where it runs along its axis
  int axis = 0;                   // 0, 1, ...: the part's distinct axis lines
  bool operator==(const Shaft&) const = default;
};

struct PartFacts {
  // One per round hole, ascending: cylindrical faces whose normals point at
  // their axis (material outside), grouped by axis line, radius and place
  // along the axis, whose faces sweep a full turn together (a fillet sweeps
  // a quarter turn; a counterbore is two holes, as in `cadclip synth`'s measure).
  std::vector<double> hole_diameters_mm;
  std::vector<Shaft> shafts;  // ordered by axis, then by where they start
  ShapeSignature shape;
  // The distinct sizes, ascending, of the sets of 3 or more congruent faces
  // spaced about the part's centre (same surface type, area within 1%,
  // centroid as far from the centre): a gear of 24 teeth has a set of 24.
  std::vector<int64_t> repeats;
};

PartFacts part_facts(const BRepGraph& graph);

// The part's central bore: the smallest round hole (as in
// PartFacts::hole_diameters_mm) whose axis line passes through the centre of
// the bounding box and that runs along at least half the part's extent on
// that axis, in mm; nullopt when none does. The bore of a bearing,
// washer, nut, collar, pulley or gear, where the box alone cannot tell two
// sizes apart (DIN 705 A 14 and A 15 share a box); a set screw's radial hole
// or a bolt circle's holes are off the centre.
std::optional<double> central_bore_mm(const BRepGraph& graph);

// True when `a` and `b` are the signatures of mirror images: the same
// spreads and skews, and opposite handedness (neither 0).
bool mirror_images(const ShapeSignature& a, const ShapeSignature& b);

}  // namespace cadclip::data
