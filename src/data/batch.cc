#include "cadclip/data/batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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

constexpr int kPoints = kUvGridSize * kUvGridSize;

// The sizes of a batch: n faces and e edges in all, m faces in the largest graph.
struct BatchSizes {
  int64_t n = 0, e = 0, m = 0;
};

BatchSizes check_batch(std::span<const BRepGraph* const> graphs,
                       std::span<const PairwiseInputs* const> pairwise) {
  if (graphs.empty()) throw Error("collate: the batch holds no graphs; pass at least one");
  if (pairwise.size() != graphs.size()) {
    throw Error(format("collate: {} graphs but {} pairwise inputs; pass one per graph",
                       graphs.size(), pairwise.size()));
  }
  BatchSizes sizes;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const BRepGraph& g = *graphs[i];
    require_valid(g, i);
    if (pairwise[i]->num_faces != g.num_faces()) {
      throw Error(
          format("collate: the pairwise inputs of graph {} ('{}') are for {} faces, but the "
                 "graph has {}; recompute them with pairwise_inputs",
                 i, g.id, pairwise[i]->num_faces, g.num_faces()));
    }
    sizes.n += g.num_faces();
    sizes.e += g.num_edges();
    sizes.m = std::max(sizes.m, g.num_faces());
  }
  return sizes;
}

// The batch's tensors, written graph after graph in place: faces and edges as
// rows of the whole batch, pairwise terms in [b, m, m] blocks padded to the
// largest graph.
class BatchWriter {
 public:
  BatchWriter(int64_t b_count, const BatchSizes& sizes) : m_(sizes.m) {
    // Grids in the shard's channels-last layout until finish().
    out_.face_grids = at::empty({sizes.n, kPoints, kFaceChannels}, at::kFloat);
    out_.face_types = at::empty({sizes.n}, at::kLong);
    out_.face_attrs = at::empty({sizes.n, kFaceAttrs}, at::kFloat);
    out_.face_graph = at::empty({sizes.n}, at::kLong);
    out_.face_slot = at::empty({sizes.n}, at::kLong);
    out_.edge_grids = at::empty({sizes.e, kCurveSamples, kEdgeChannels}, at::kFloat);
    out_.edge_types = at::empty({sizes.e}, at::kLong);
    out_.edge_convexity = at::empty({sizes.e}, at::kLong);
    out_.edge_attrs = at::empty({sizes.e, kEdgeAttrs}, at::kFloat);
    out_.edge_pair = at::empty({sizes.e}, at::kLong);
    out_.graph_attrs = at::empty({b_count, kGraphAttrs}, at::kFloat);
    out_.hops = at::full({b_count, m_, m_}, int64_t{kUnreachableHops}, at::kLong);
    out_.normal_angle = at::zeros({b_count, m_, m_}, at::kFloat);
    out_.angle_defined = at::zeros({b_count, m_, m_}, at::kFloat);
    out_.centroid_distance = at::zeros({b_count, m_, m_}, at::kFloat);
    out_.padding_mask = at::ones({b_count, m_}, at::kBool);
  }

  // Graph `b` of the batch, after graphs 0 .. b-1.
  void add(int64_t b, const BRepGraph& g, const PairwiseInputs& p) {
    out_.ids.push_back(g.id);
    write_faces(b, g);
    write_edges(b, g);
    float* graph_row = out_.graph_attrs.data_ptr<float>() + b * kGraphAttrs;
    graph_row[0] = std::log1p(std::max(g.scale_mm, 0.f));
    for (int axis = 0; axis < 3; ++axis) {
      graph_row[1 + axis] = std::log1p(std::max(g.bbox_mm[3 + axis] - g.bbox_mm[axis], 0.f));
    }
    write_pairwise(b, g.num_faces(), p);
    face_offsets_.push_back(face_offsets_.back() + g.num_faces());
    edge_offsets_.push_back(edge_offsets_.back() + g.num_edges());
  }

  BRepBatch finish() {
    // The shard layout is channels-last; the encoder's convolutions want
    // channels first.
    const int64_t n = out_.face_grids.size(0);
    out_.face_grids = out_.face_grids.transpose(1, 2)
                          .reshape({n, kFaceChannels, kUvGridSize, kUvGridSize})
                          .contiguous();
    out_.edge_grids = out_.edge_grids.transpose(1, 2).contiguous();
    out_.face_offsets = long_tensor(face_offsets_);
    out_.edge_offsets = long_tensor(edge_offsets_);
    return std::move(out_);
  }

 private:
  void write_faces(int64_t b, const BRepGraph& g) {
    const int64_t first = face_offsets_.back();
    std::memcpy(out_.face_grids.data_ptr<float>() + first * kPoints * kFaceChannels,
                g.face_grids.data(), g.face_grids.size() * sizeof(float));
    auto types = out_.face_types.accessor<int64_t, 1>();
    auto attrs = out_.face_attrs.accessor<float, 2>();
    auto graph = out_.face_graph.accessor<int64_t, 1>();
    auto slot = out_.face_slot.accessor<int64_t, 1>();
    auto padding = out_.padding_mask.accessor<bool, 2>();
    for (int64_t i = 0; i < g.num_faces(); ++i) {
      const int64_t row = first + i;
      types[row] = g.face_types[i];
      attrs[row][0] = std::log1p(std::max(g.face_areas[i], 0.f));
      for (int axis = 0; axis < 3; ++axis) attrs[row][1 + axis] = g.face_centroids[i * 3 + axis];
      attrs[row][4] = g.face_rational[i] ? 1.f : 0.f;
      attrs[row][5] = std::log1p(static_cast<float>(std::max(g.face_loops[i], 0)));
      graph[row] = b;
      slot[row] = b * m_ + i;
      padding[b][i] = false;
    }
  }

  void write_edges(int64_t b, const BRepGraph& g) {
    const int64_t first = edge_offsets_.back();
    std::memcpy(out_.edge_grids.data_ptr<float>() + first * kCurveSamples * kEdgeChannels,
                g.edge_grids.data(), g.edge_grids.size() * sizeof(float));
    int64_t* types = out_.edge_types.data_ptr<int64_t>() + first;
    int64_t* convexity = out_.edge_convexity.data_ptr<int64_t>() + first;
    float* lengths = out_.edge_attrs.data_ptr<float>() + first;
    int64_t* pair = out_.edge_pair.data_ptr<int64_t>() + first;
    for (int64_t k = 0; k < g.num_edges(); ++k) {
      types[k] = g.edge_types[k];
      convexity[k] = g.edge_convexity[k];
      lengths[k] = std::log1p(std::max(g.edge_lengths[k], 0.f));
      pair[k] = b * m_ * m_ + int64_t{g.edge_src[k]} * m_ + g.edge_dst[k];
    }
  }

  // Rows i < f of graph b's [m, m] blocks; the rest keeps the padding values.
  void write_pairwise(int64_t b, int64_t f, const PairwiseInputs& p) {
    const int64_t block = b * m_ * m_;
    int64_t* hops = out_.hops.data_ptr<int64_t>() + block;
    float* angle = out_.normal_angle.data_ptr<float>() + block;
    float* defined = out_.angle_defined.data_ptr<float>() + block;
    float* distance = out_.centroid_distance.data_ptr<float>() + block;
    for (int64_t i = 0; i < f; ++i) {
      for (int64_t j = 0; j < f; ++j) {
        hops[i * m_ + j] = p.hops[i * f + j];
        angle[i * m_ + j] = p.normal_angle[i * f + j];
        defined[i * m_ + j] = (p.normal_defined[i] && p.normal_defined[j]) ? 1.f : 0.f;
        distance[i * m_ + j] = p.centroid_distance[i * f + j];
      }
    }
  }

  int64_t m_;
  BRepBatch out_;
  std::vector<int64_t> face_offsets_{0}, edge_offsets_{0};
};

}  // namespace

BRepBatch collate(std::span<const BRepGraph* const> graphs,
                  std::span<const PairwiseInputs* const> pairwise) {
  const BatchSizes sizes = check_batch(graphs, pairwise);
  BatchWriter writer(static_cast<int64_t>(graphs.size()), sizes);
  for (size_t b = 0; b < graphs.size(); ++b)
    writer.add(static_cast<int64_t>(b), *graphs[b], *pairwise[b]);
  return writer.finish();
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
