// Collation: a batch of BRepGraphs as the tensors the B-Rep encoder reads.
// Faces and edges are packed (no padding); only the pairwise attention inputs
// are padded, to M = the batch's largest face count.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "cadclip/data/brep_graph.h"
#include "cadclip/data/pairwise.h"

namespace cadclip::data {

// Columns of BRepBatch::face_attrs and edge_attrs, graph_attrs.
inline constexpr int kFaceAttrs = 6;   // log1p(area mm^2), centroid x, y, z, rational, log1p(loops)
inline constexpr int kEdgeAttrs = 1;   // log1p(length mm)
inline constexpr int kGraphAttrs = 4;  // log1p(scale mm), log1p(bbox size x, y, z mm)

// B graphs, N faces and E directed edges in all, M faces in the largest graph.
// Every tensor is on the same device; floats are fp32, indices int64.
struct BRepBatch {
  std::vector<std::string> ids;  // [B] graph ids

  at::Tensor face_grids;    // [N, 7, 10, 10] channels x, y, z, nx, ny, nz, inside mask
  at::Tensor face_types;    // [N] int64 SurfaceType
  at::Tensor face_attrs;    // [N, kFaceAttrs] see kFaceAttrs
  at::Tensor face_graph;    // [N] int64 graph index b of each face
  at::Tensor face_slot;     // [N] int64 b * M + local face index: the face's row in [B * M]
  at::Tensor face_offsets;  // [B + 1] int64: graph b owns faces face_offsets[b] .. [b + 1]

  at::Tensor edge_grids;      // [E, 12, 10] channels x, y, z, tx, ty, tz, left n, right n
  at::Tensor edge_types;      // [E] int64 CurveType
  at::Tensor edge_convexity;  // [E] int64 Convexity
  at::Tensor edge_attrs;      // [E, kEdgeAttrs] see kEdgeAttrs
  at::Tensor edge_pair;       // [E] int64 b * M * M + src * M + dst (local face indices):
                              // the edge's face pair in a flattened [B, M, M]
  at::Tensor edge_offsets;    // [B + 1] int64: graph b owns edges edge_offsets[b] .. [b + 1]

  at::Tensor graph_attrs;  // [B, kGraphAttrs] see kGraphAttrs

  at::Tensor hops;               // [B, M, M] int64 hop count; kUnreachableHops where no path
                                 // exists and on padding
  at::Tensor normal_angle;       // [B, M, M] radians between mean face normals; 0 where undefined
  at::Tensor angle_defined;      // [B, M, M] 1.0 where both faces' mean normals are defined
  at::Tensor centroid_distance;  // [B, M, M] normalised coordinates; 0 on padding
  at::Tensor padding_mask;       // [B, M] bool, true at padding (slots beyond a graph's faces)

  int64_t num_graphs() const { return static_cast<int64_t>(ids.size()); }
  int64_t max_faces() const { return padding_mask.size(1); }

  // A copy with every tensor on `device` (non_blocking where the source is pinned).
  BRepBatch to(c10::Device device) const;
  // The tensors the encoder reads, each with its field name ("face_grids", ...):
  // what dumps for the Python reference store (face_offsets and edge_offsets,
  // which the encoder does not read, are left out).
  std::vector<std::pair<std::string, at::Tensor>> named_tensors() const;
};

// Collates graphs in the given order; each graph's pairwise inputs are
// computed here. Throws cadclip::Error naming the graph when one is invalid
// (validate_graph) or has no faces, or when `graphs` is empty.
BRepBatch collate(std::span<const BRepGraph* const> graphs);
BRepBatch collate(const std::vector<BRepGraph>& graphs);

// The same with pairwise inputs computed beforehand (a cache); pairwise[i]
// belongs to graphs[i].
BRepBatch collate(std::span<const BRepGraph* const> graphs,
                  std::span<const PairwiseInputs* const> pairwise);

// A batch cut into size groups (core/size_groups.h, group_by_size over the
// face counts), each collated on its own, so that small graphs are not padded
// to the largest: what the B-Rep encoder computes on (forward_graphs), made
// ahead of the step (by a loader thread) when the trainer asks for it.
struct GroupedBatch {
  std::vector<BRepBatch> groups;  // smallest graphs first
  std::vector<int64_t> row_of;    // [B] row_of[i]: graph i's row in the groups' rows, in order
  int64_t num_graphs() const { return static_cast<int64_t>(row_of.size()); }
};

// Face pairs (graphs x (largest + 1)^2) that one group of several graphs
// holds at most: the B-Rep encoder's memory grows with them (about 40 bytes
// a pair without gradients, docs/INGEST.md), so two large parts, or one and
// many small ones, never share a pass; a graph over it is a group alone.
// 2^24 = one 4,095-face graph, or 256 graphs of 255 faces.
inline constexpr int64_t kMaxGroupPairs = int64_t{1} << 24;

// `pairwise`: one per graph (a cache's), or empty to compute them here.
// Groups hold at most kMaxGroupPairs pairs unless alone. Throws as collate does.
GroupedBatch collate_groups(std::span<const BRepGraph* const> graphs,
                            std::span<const PairwiseInputs* const> pairwise = {},
                            int64_t group_overhead = 16384);

}  // namespace cadclip::data
