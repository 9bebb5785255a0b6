// The pairwise face terms of the B-Rep encoder's attention bias
// (BRepFormer-style), derived from a BRepGraph at load time rather than
// stored: hop distance over the face-adjacency graph, angle between mean face
// normals, and centroid distance.
#pragma once

#include <cstdint>
#include <vector>

#include "cadclip/data/brep_graph.h"

namespace cadclip::data {

inline constexpr int32_t kUnreachableHops = -1;  // faces in different connected pieces

struct PairwiseInputs {
  int64_t num_faces = 0;                // F
  std::vector<int32_t> hops;            // [F, F] fewest adjacency edges from i to j; 0 on the
                                        // diagonal; kUnreachableHops when no path exists
  std::vector<float> normal_angle;      // [F, F] radians in [0, pi] between the mean normals of the
                                        // two faces; 0 where either normal is undefined
  std::vector<uint8_t> normal_defined;  // [F] 1 when the face's mean normal is defined (see below)
  std::vector<float> centroid_distance;  // [F, F] Euclidean, in the graph's normalised coordinates
};

// The mean normal of a face averages the grid normals at points inside the
// face (mask > 0.5) whose normal is defined (non-zero); BRepFormer's code
// averaged masked-out points too, which skews faces trimmed from a larger
// surface. A face whose in-face normals cancel (a full cylinder) or that has
// none has no defined mean normal. Edges are followed in both directions.
PairwiseInputs pairwise_inputs(const BRepGraph& graph);

}  // namespace cadclip::data
