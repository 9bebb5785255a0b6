// BRepGraph: one solid as the B-Rep encoder sees it (UV-Net face grids,
// BRepNet/BRepFormer attributes). Plain arrays, no LibTorch: the cad layer
// fills it, shards store it, collation turns batches of it into tensors.
// The field layout is the shard schema; see docs/FORMATS.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cadclip::data {

inline constexpr int kUvGridSize = 10;    // samples per side of a face's UV grid
inline constexpr int kFaceChannels = 7;   // x, y, z, nx, ny, nz, inside mask
inline constexpr int kCurveSamples = 10;  // samples along an edge's curve
inline constexpr int kEdgeChannels = 12;  // x, y, z, tx, ty, tz, left nx, ny, nz, right nx, ny, nz

// BRepAdaptor_Surface::GetType order is not relied on; these values are the
// stored ones.
enum class SurfaceType : uint8_t {
  kPlane,
  kCylinder,
  kCone,
  kSphere,
  kTorus,
  kBezier,
  kBSpline,
  kRevolution,
  kExtrusion,
  kOffset,
  kOther,
  kCount
};
enum class CurveType : uint8_t {
  kLine,
  kCircle,
  kEllipse,
  kHyperbola,
  kParabola,
  kBezier,
  kBSpline,
  kOffset,
  kOther,
  kCount
};
enum class Convexity : uint8_t { kConcave, kConvex, kSmooth, kCount };

struct BRepGraph {
  std::string id;  // the model's id (file stem, Text2CAD uid, synthetic id)

  // Faces, F of them, in a stable order. Coordinates are normalised: centred
  // on the bounding box, scaled by 2 / longest side (so they lie in [-1, 1]).
  std::vector<float> face_grids;       // [F, 10, 10, 7]; normals outward, (0,0,0) where undefined
  std::vector<uint8_t> face_types;     // [F] SurfaceType
  std::vector<float> face_areas;       // [F] mm^2
  std::vector<float> face_centroids;   // [F, 3] normalised coordinates
  std::vector<uint8_t> face_rational;  // [F] 1 if a rational B-spline/Bezier surface
  std::vector<int32_t> face_loops;     // [F] wire count (1 + holes)

  // Directed face-adjacency edges, E of them: both directions of each
  // manifold B-Rep edge.
  std::vector<int32_t> edge_src;    // [E] face index
  std::vector<int32_t> edge_dst;    // [E] face index
  std::vector<float> edge_grids;    // [E, 10, 12] normalised points, unit tangents, face normals
  std::vector<uint8_t> edge_types;  // [E] CurveType
  std::vector<float> edge_lengths;  // [E] mm
  std::vector<uint8_t> edge_convexity;  // [E] Convexity

  // The model.
  std::array<float, 6> bbox_mm{};  // xmin, ymin, zmin, xmax, ymax, zmax in millimetres
  float scale_mm = 0;              // longest side of the bounding box, mm
  std::string unit;                // where millimetres came from: "file:MM", "assumed:inch", ...
  int32_t solid_count = 0;         // solids in the source (see docs/INGEST.md for the rule)
  bool closed = false;             // every kept shell closed
  std::string geometry_hash;       // hex; equal for a moved or re-exported part

  int64_t num_faces() const { return static_cast<int64_t>(face_types.size()); }
  int64_t num_edges() const { return static_cast<int64_t>(edge_src.size()); }
};

}  // namespace cadclip::data
