#include "cadclip/data/batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/size_groups.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::data {

namespace {

void require_valid(const BRepGraph& graph, size_t position) {
  if (Status status = validate_graph(graph); !status) {
    throw Error(
        format("collate: graph {} ('{}') of the batch is invalid: {}; re-prepare the "
               "dataset",
               position, graph.id, status.reason()));
  }
  if (graph.num_faces() == 0) {
    throw Error(
        format("collate: graph {} ('{}') of the batch has no faces; the B-Rep encoder needs "
               "at least one. Drop the model from the dataset or re-ingest its file",
               position, graph.id));
  }
}

at::Tensor long_tensor(const std::vector<int64_t>& values) { return at::tensor(values, at::kLong); }

}  // namespace

BRepBatch collate(std::span<const BRepGraph* const> graphs,
                  std::span<const PairwiseInputs* const> pairwise) {
  if (graphs.empty()) throw Error("collate: the batch holds no graphs; pass at least one");
  if (pairwise.size() != graphs.size()) {
    throw Error(format("collate: {} graphs but {} pairwise inputs; pass one per graph",
                       graphs.size(), pairwise.size()));
  }
  const int64_t b_count = static_cast<int64_t>(graphs.size());
  int64_t n = 0, e = 0, m = 0;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const BRepGraph& g = *graphs[i];
    require_valid(g, i);
    if (pairwise[i]->num_faces != g.num_faces()) {
      throw Error(
          format("collate: the pairwise inputs of graph {} ('{}') are for {} faces, but the "
                 "graph has {}; recompute them with pairwise_inputs",
                 i, g.id, pairwise[i]->num_faces, g.num_faces()));
    }
    n += g.num_faces();
    e += g.num_edges();
    m = std::max(m, g.num_faces());
  }

  BRepBatch out;
  constexpr int kPoints = kUvGridSize * kUvGridSize;
  at::Tensor face_grids = at::empty({n, kPoints, kFaceChannels}, at::kFloat);
  at::Tensor face_types = at::empty({n}, at::kLong);
  at::Tensor face_attrs = at::empty({n, kFaceAttrs}, at::kFloat);
  at::Tensor face_graph = at::empty({n}, at::kLong);
  at::Tensor face_slot = at::empty({n}, at::kLong);
  at::Tensor edge_grids = at::empty({e, kCurveSamples, kEdgeChannels}, at::kFloat);
  at::Tensor edge_types = at::empty({e}, at::kLong);
  at::Tensor edge_convexity = at::empty({e}, at::kLong);
  at::Tensor edge_attrs = at::empty({e, kEdgeAttrs}, at::kFloat);
  at::Tensor edge_pair = at::empty({e}, at::kLong);
  at::Tensor graph_attrs = at::empty({b_count, kGraphAttrs}, at::kFloat);
  at::Tensor hops = at::full({b_count, m, m}, int64_t{kUnreachableHops}, at::kLong);
  at::Tensor angle = at::zeros({b_count, m, m}, at::kFloat);
  at::Tensor defined = at::zeros({b_count, m, m}, at::kFloat);
  at::Tensor distance = at::zeros({b_count, m, m}, at::kFloat);
  at::Tensor padding = at::ones({b_count, m}, at::kBool);
  std::vector<int64_t> face_offsets{0}, edge_offsets{0};

  float* fg = face_grids.data_ptr<float>();
  int64_t* ft = face_types.data_ptr<int64_t>();
  float* fa = face_attrs.data_ptr<float>();
  int64_t* fgr = face_graph.data_ptr<int64_t>();
  int64_t* fs = face_slot.data_ptr<int64_t>();
  float* eg = edge_grids.data_ptr<float>();
  int64_t* et = edge_types.data_ptr<int64_t>();
  int64_t* ec = edge_convexity.data_ptr<int64_t>();
  float* ea = edge_attrs.data_ptr<float>();
  int64_t* ep = edge_pair.data_ptr<int64_t>();
  float* ga = graph_attrs.data_ptr<float>();
  int64_t* hp = hops.data_ptr<int64_t>();
  float* an = angle.data_ptr<float>();
  float* df = defined.data_ptr<float>();
  float* ds = distance.data_ptr<float>();
  bool* pd = padding.data_ptr<bool>();

  int64_t face_at = 0, edge_at = 0;
  for (int64_t b = 0; b < b_count; ++b) {
    const BRepGraph& g = *graphs[b];
    const PairwiseInputs& p = *pairwise[b];
    const int64_t f = g.num_faces();
    out.ids.push_back(g.id);

    std::memcpy(fg + face_at * kPoints * kFaceChannels, g.face_grids.data(),
                g.face_grids.size() * sizeof(float));
    for (int64_t i = 0; i < f; ++i) {
      const int64_t row = face_at + i;
      ft[row] = g.face_types[i];
      float* attrs = fa + row * kFaceAttrs;
      attrs[0] = std::log1p(std::max(g.face_areas[i], 0.f));
      attrs[1] = g.face_centroids[i * 3];
      attrs[2] = g.face_centroids[i * 3 + 1];
      attrs[3] = g.face_centroids[i * 3 + 2];
      attrs[4] = g.face_rational[i] ? 1.f : 0.f;
      attrs[5] = std::log1p(static_cast<float>(std::max(g.face_loops[i], 0)));
      fgr[row] = b;
      fs[row] = b * m + i;
      pd[b * m + i] = false;
    }

    std::memcpy(eg + edge_at * kCurveSamples * kEdgeChannels, g.edge_grids.data(),
                g.edge_grids.size() * sizeof(float));
    for (int64_t k = 0; k < g.num_edges(); ++k) {
      const int64_t row = edge_at + k;
      et[row] = g.edge_types[k];
      ec[row] = g.edge_convexity[k];
      ea[row] = std::log1p(std::max(g.edge_lengths[k], 0.f));
      ep[row] = b * m * m + int64_t{g.edge_src[k]} * m + g.edge_dst[k];
    }

    float* graph_row = ga + b * kGraphAttrs;
    graph_row[0] = std::log1p(std::max(g.scale_mm, 0.f));
    for (int axis = 0; axis < 3; ++axis) {
      graph_row[1 + axis] = std::log1p(std::max(g.bbox_mm[3 + axis] - g.bbox_mm[axis], 0.f));
    }

    for (int64_t i = 0; i < f; ++i) {
      const int64_t dst = (b * m + i) * m;
      for (int64_t j = 0; j < f; ++j) {
        hp[dst + j] = p.hops[i * f + j];
        an[dst + j] = p.normal_angle[i * f + j];
        df[dst + j] = (p.normal_defined[i] && p.normal_defined[j]) ? 1.f : 0.f;
        ds[dst + j] = p.centroid_distance[i * f + j];
      }
    }

    face_at += f;
    edge_at += g.num_edges();
    face_offsets.push_back(face_at);
    edge_offsets.push_back(edge_at);
  }

  // The shard layout is channels-last; the encoder's convolutions want
  // channels first.
  out.face_grids =
      face_grids.transpose(1, 2).reshape({n, kFaceChannels, kUvGridSize, kUvGridSize}).contiguous();
  out.edge_grids = edge_grids.transpose(1, 2).contiguous();
  out.face_types = face_types;
  out.face_attrs = face_attrs;
  out.face_graph = face_graph;
  out.face_slot = face_slot;
  out.face_offsets = long_tensor(face_offsets);
  out.edge_types = edge_types;
  out.edge_convexity = edge_convexity;
  out.edge_attrs = edge_attrs;
  out.edge_pair = edge_pair;
  out.edge_offsets = long_tensor(edge_offsets);
  out.graph_attrs = graph_attrs;
  out.hops = hops;
  out.normal_angle = angle;
  out.angle_defined = defined;
  out.centroid_distance = distance;
  out.padding_mask = padding;
  return out;
}

BRepBatch collate(std::span<const BRepGraph* const> graphs) {
  std::vector<PairwiseInputs> pairwise;
  pairwise.reserve(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    require_valid(*graphs[i], i);
    pairwise.push_back(pairwise_inputs(*graphs[i]));
  }
  std::vector<const PairwiseInputs*> pointers;
  for (const PairwiseInputs& p : pairwise) pointers.push_back(&p);
  return collate(graphs, pointers);
}

BRepBatch collate(const std::vector<BRepGraph>& graphs) {
  std::vector<const BRepGraph*> pointers;
  pointers.reserve(graphs.size());
  for (const BRepGraph& g : graphs) pointers.push_back(&g);
  return collate(std::span<const BRepGraph* const>(pointers));
}

GroupedBatch collate_groups(std::span<const BRepGraph* const> graphs,
                            std::span<const PairwiseInputs* const> pairwise,
                            int64_t group_overhead) {
  if (graphs.empty()) throw Error("collate: the batch holds no graphs; pass at least one");
  if (!pairwise.empty() && pairwise.size() != graphs.size())
    throw Error(format("collate: {} graphs but {} pairwise inputs; pass one per graph, or none",
                       graphs.size(), pairwise.size()));
  std::vector<int64_t> face_counts;
  face_counts.reserve(graphs.size());
  for (const BRepGraph* g : graphs) face_counts.push_back(g->num_faces());
  GroupedBatch out;
  out.row_of.resize(graphs.size());
  int64_t row = 0;
  for (const std::vector<int64_t>& group :
       group_by_size(face_counts, group_overhead, kMaxGroupPairs)) {
    std::vector<const BRepGraph*> members;
    std::vector<const PairwiseInputs*> member_pairwise;
    for (const int64_t i : group) {
      members.push_back(graphs[static_cast<size_t>(i)]);
      if (!pairwise.empty()) member_pairwise.push_back(pairwise[static_cast<size_t>(i)]);
      out.row_of[static_cast<size_t>(i)] = row++;
    }
    out.groups.push_back(pairwise.empty() ? collate(members) : collate(members, member_pairwise));
  }
  return out;
}

std::vector<std::pair<std::string, at::Tensor>> BRepBatch::named_tensors() const {
  return {{"face_grids", face_grids},
          {"face_types", face_types},
          {"face_attrs", face_attrs},
          {"face_graph", face_graph},
          {"face_slot", face_slot},
          {"edge_grids", edge_grids},
          {"edge_types", edge_types},
          {"edge_convexity", edge_convexity},
          {"edge_attrs", edge_attrs},
          {"edge_pair", edge_pair},
          {"graph_attrs", graph_attrs},
          {"hops", hops},
          {"normal_angle", normal_angle},
          {"angle_defined", angle_defined},
          {"centroid_distance", centroid_distance},
          {"padding_mask", padding_mask}};
}

BRepBatch BRepBatch::to(c10::Device device) const {
  BRepBatch out;
  out.ids = ids;
  auto move = [&](const at::Tensor& t) {
    return t.to(device, /*non_blocking=*/t.is_pinned(), /*copy=*/false);
  };
  out.face_grids = move(face_grids);
  out.face_types = move(face_types);
  out.face_attrs = move(face_attrs);
  out.face_graph = move(face_graph);
  out.face_slot = move(face_slot);
  out.face_offsets = move(face_offsets);
  out.edge_grids = move(edge_grids);
  out.edge_types = move(edge_types);
  out.edge_convexity = move(edge_convexity);
  out.edge_attrs = move(edge_attrs);
  out.edge_pair = move(edge_pair);
  out.edge_offsets = move(edge_offsets);
  out.graph_attrs = move(graph_attrs);
  out.hops = move(hops);
  out.normal_angle = move(normal_angle);
  out.angle_defined = move(angle_defined);
  out.centroid_distance = move(centroid_distance);
  out.padding_mask = move(padding_mask);
  return out;
}

}  // namespace cadclip::data
