// What a part's B-Rep graph tells beyond its embedding, for search filters
// and duplicate finding: its round holes (count and diameters) and a shape
// signature that tells a part from its mirror image. Read from the graph's
// face grids alone, so prepared folders give it as well as CAD files.
#pragma once

#include <array>
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

struct PartFacts {
  // One per round hole, ascending: cylindrical faces whose normals point at
  // their axis (material outside), grouped by axis line, radius and place
  // along the axis, whose faces sweep a full turn together (a fillet sweeps
  // a quarter turn; a counterbore is two holes, as in `cadclip synth`'s measure).
  std::vector<double> hole_diameters_mm;
  ShapeSignature shape;
};

PartFacts part_facts(const BRepGraph& graph);

// True when `a` and `b` are the signatures of mirror images: the same
// spreads and skews, and opposite handedness (neither 0).
bool mirror_images(const ShapeSignature& a, const ShapeSignature& b);

}  // namespace cadclip::data
