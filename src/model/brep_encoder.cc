#include "cadclip/model/brep_encoder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>

#include "cadclip/core/error.h"
#include "cadclip/core/size_groups.h"
#include "cadclip/model/autocast.h"

namespace cadclip::model {

namespace nn = torch::nn;
namespace F = torch::nn::functional;

namespace {

constexpr int64_t kFaceTypeWidth = 32;
constexpr int64_t kFaceAttrWidth = 32;
constexpr int64_t kEdgeTypeWidth = 16;
constexpr int64_t kConvexityWidth = 8;
constexpr int64_t kPairHidden = 16;  // hidden width of the angle and distance MLPs

// A small MLP whose output starts near zero: the bias terms begin as a mild
// perturbation of plain attention.
nn::Sequential bias_mlp(int64_t in, int64_t hidden, int64_t heads, double init_std) {
  nn::Sequential mlp(nn::Linear(in, hidden), nn::GELU(), nn::Linear(hidden, heads));
  auto last = mlp[2]->as<nn::Linear>();
  torch::NoGradGuard no_grad;
  nn::init::normal_(last->weight, 0.0, init_std);
  nn::init::zeros_(last->bias);
  return mlp;
}

// Rows of a tensor of `row_values` values per row to compute at once: about
// `budget` values, whole rows, at least one.
int64_t rows_per_block(int64_t row_values, int64_t budget) {
  return std::max<int64_t>(1, budget / std::max<int64_t>(1, row_values));
}

}  // namespace

void BRepEncoderOptions::validate() const {
  auto require = [](bool ok, const char* field, auto value, const std::string& rule) {
    if (!ok) {
      throw Error(
          format("BRepEncoderOptions.{} = {} is invalid: it must be {}", field, value, rule));
    }
  };
  require(width > 0, "width", width, "positive");
  require(layers > 0, "layers", layers, "positive");
  require(heads > 0 && width % heads == 0, "heads", heads,
          "positive and divide width (" + std::to_string(width) + ")");
  require(ffn_hidden > 0, "ffn_hidden", ffn_hidden, "positive");
  require(face_channels >= 2 && face_channels % 2 == 0, "face_channels", face_channels,
          "an even number >= 2");
  require(edge_width > 0, "edge_width", edge_width, "positive");
  require(max_hops >= 1, "max_hops", max_hops, ">= 1");
  require(dropout >= 0 && dropout < 1, "dropout", dropout, "in [0, 1)");
  require(attention_bias_init >= 0, "attention_bias_init", attention_bias_init, ">= 0");
}

BiasedAttentionImpl::BiasedAttentionImpl(int64_t width, int64_t heads)
    : width_(width), heads_(heads) {
  qkv = register_module("qkv", nn::Linear(width, 3 * width));
  out = register_module("out", nn::Linear(width, width));
}

torch::Tensor BiasedAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& bias,
                                           const TokenLayout& layout, int64_t scores_per_block) {
  const int64_t b = layout.graphs, s = layout.slots, head_width = width_ / heads_;
  // Only attention needs the padded layout; projections run on packed tokens.
  torch::Tensor padded = at::zeros({b * s, 3 * width_}, x.options())
                             .index_copy(0, layout.token_slot, qkv(x))
                             .view({b, s, 3, heads_, head_width})
                             .permute({2, 0, 3, 1, 4});  // [3, B, H, S, dh]
  const torch::Tensor q = padded[0].to(at::kFloat);
  const torch::Tensor k_t = padded[1].to(at::kFloat).transpose(-2, -1);
  const torch::Tensor v = padded[2].to(at::kFloat);
  // Query rows a block at a time.
  const int64_t rows = rows_per_block(b * heads_ * s, scores_per_block);
  std::vector<torch::Tensor> blocks;
  for (int64_t r0 = 0; r0 < s; r0 += rows) {
    const int64_t r1 = std::min(s, r0 + rows);
    torch::Tensor scores = at::matmul(q.slice(2, r0, r1), k_t);  // [B, H, rows, S]
    scores =
        scores.mul_(1.0 / std::sqrt(static_cast<double>(head_width))).add_(bias.slice(2, r0, r1));
    blocks.push_back(at::matmul(at::softmax(scores, -1), v));  // [B, H, rows, dh]
  }
  torch::Tensor heads_out = blocks.size() == 1 ? blocks[0] : at::cat(blocks, 2);  // [B, H, S, dh]
  heads_out = heads_out.permute({0, 2, 1, 3}).reshape({b * s, width_});
  return out(heads_out.index_select(0, layout.token_slot));
}

SwiGluImpl::SwiGluImpl(int64_t width, int64_t hidden) {
  w13 = register_module("w13", nn::Linear(nn::LinearOptions(width, 2 * hidden).bias(false)));
  w2 = register_module("w2", nn::Linear(nn::LinearOptions(hidden, width).bias(false)));
}

torch::Tensor SwiGluImpl::forward(const torch::Tensor& x) {
  const std::vector<torch::Tensor> gate_value = w13(x).chunk(2, -1);
  return w2(at::silu(gate_value[0]) * gate_value[1]);
}

BRepLayerImpl::BRepLayerImpl(int64_t width, int64_t heads, int64_t ffn_hidden, double dropout)
    : dropout_(dropout) {
  norm1 = register_module("norm1", nn::LayerNorm(nn::LayerNormOptions({width})));
  attention = register_module("attention", BiasedAttention(width, heads));
  norm2 = register_module("norm2", nn::LayerNorm(nn::LayerNormOptions({width})));
  ffn = register_module("ffn", SwiGlu(width, ffn_hidden));
}

torch::Tensor BRepLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& bias,
                                     const TokenLayout& layout) {
  const auto drop = [&](const torch::Tensor& t) {
    return F::dropout(t, F::DropoutFuncOptions().p(dropout_).training(is_training()));
  };
  const torch::Tensor h = x + drop(attention(norm1(x), bias, layout));
  return h + drop(ffn(norm2(h)));
}

BRepEncoderImpl::BRepEncoderImpl(const BRepEncoderOptions& options) : options_(options) {
  options_.validate();
  const int64_t d = options_.width, heads = options_.heads, c = options_.face_channels;
  const double init_std = options_.attention_bias_init;

  face_cnn = register_module(
      "face_cnn",
      nn::Sequential(nn::Conv2d(nn::Conv2dOptions(data::kFaceChannels, c / 2, 3).padding(1)),
                     nn::GELU(), nn::Conv2d(nn::Conv2dOptions(c / 2, c, 3).stride(2).padding(1)),
                     nn::GELU(), nn::Conv2d(nn::Conv2dOptions(c, 2 * c, 3).padding(1)),
                     nn::GELU()));
  face_type = register_module(
      "face_type", nn::Embedding(static_cast<int64_t>(data::SurfaceType::kCount), kFaceTypeWidth));
  face_attr_mlp = register_module(
      "face_attr_mlp", nn::Sequential(nn::Linear(data::kFaceAttrs, kFaceAttrWidth), nn::GELU(),
                                      nn::Linear(kFaceAttrWidth, kFaceAttrWidth)));
  face_proj = register_module("face_proj", nn::Linear(2 * c + kFaceTypeWidth + kFaceAttrWidth, d));

  const int64_t e = options_.edge_width;
  edge_cnn = register_module(
      "edge_cnn",
      nn::Sequential(nn::Conv1d(nn::Conv1dOptions(data::kEdgeChannels, e / 2, 3).padding(1)),
                     nn::GELU(), nn::Conv1d(nn::Conv1dOptions(e / 2, e, 3).padding(1)),
                     nn::GELU()));
  edge_type = register_module(
      "edge_type", nn::Embedding(static_cast<int64_t>(data::CurveType::kCount), kEdgeTypeWidth));
  edge_convexity = register_module(
      "edge_convexity",
      nn::Embedding(static_cast<int64_t>(data::Convexity::kCount), kConvexityWidth));
  edge_mlp = register_module(
      "edge_mlp",
      bias_mlp(e + kEdgeTypeWidth + kConvexityWidth + data::kEdgeAttrs, e, heads, init_std));
  no_edge_bias = register_parameter("no_edge_bias", at::zeros({heads}));

  hop_bias = register_module("hop_bias", nn::Embedding(options_.max_hops + 2, heads));
  angle_mlp = register_module("angle_mlp", bias_mlp(2, kPairHidden, heads, init_std));
  distance_mlp = register_module("distance_mlp", bias_mlp(1, kPairHidden, heads, init_std));

  global_token = register_parameter("global_token", at::zeros({d}));
  graph_mlp =
      register_module("graph_mlp", nn::Sequential(nn::Linear(data::kGraphAttrs, kFaceAttrWidth),
                                                  nn::GELU(), nn::Linear(kFaceAttrWidth, d)));
  global_bias = register_parameter("global_bias", at::zeros({2, heads}));

  layers = register_module("layers", nn::ModuleList());
  for (int64_t i = 0; i < options_.layers; ++i) {
    layers->push_back(BRepLayer(d, heads, options_.ffn_hidden, options_.dropout));
  }
  final_norm = register_module("final_norm", nn::LayerNorm(nn::LayerNormOptions({d})));

  torch::NoGradGuard no_grad;
  nn::init::normal_(hop_bias->weight, 0.0, init_std);
  nn::init::normal_(global_token, 0.0, 0.02);
}

torch::Tensor BRepEncoderImpl::attention_bias(const data::BRepBatch& batch,
                                              int64_t pairs_per_block) {
  NoAutocast fp32;
  const int64_t b = batch.num_graphs(), m = batch.max_faces(), heads = options_.heads;

  // Edge features, averaged over the edges that join the same ordered pair.
  const torch::Tensor curve = edge_cnn->forward(batch.edge_grids.to(at::kFloat)).mean(2);  // [E, e]
  const torch::Tensor edge_values = edge_mlp->forward(
      at::cat({curve, edge_type(batch.edge_types), edge_convexity(batch.edge_convexity),
               batch.edge_attrs.to(at::kFloat)},
              1));  // [E, H]
  // edge_pair = (graph * M + row) * M + column
  const torch::Tensor edge_row = at::floor_divide(batch.edge_pair, m).remainder(m);
  const torch::Tensor edge_graph = at::floor_divide(batch.edge_pair, m * m);
  const torch::Tensor edge_column = batch.edge_pair.remainder(m);

  // bias: [B, H, S, S], S = M + 1. The global token: row 0 (it attends to
  // faces) and column 0 (faces attend to it); the face pairs below them a
  // block of rows at a time.
  torch::Tensor bias = at::empty({b, heads, m + 1, m + 1}, edge_values.options());
  bias.select(2, 0).copy_(global_bias[0].view({1, heads, 1}).expand({b, heads, m + 1}));
  bias.slice(2, 1).select(3, 0).copy_(global_bias[1].view({1, heads, 1}).expand({b, heads, m}));
  const int64_t rows = rows_per_block(b * m, pairs_per_block);
  for (int64_t r0 = 0; r0 < m; r0 += rows) {
    const int64_t r1 = std::min(m, r0 + rows), c = r1 - r0;
    const torch::Tensor hops = batch.hops.slice(1, r0, r1);  // [B, c, M]
    const torch::Tensor hop_index =
        at::where(hops < 0, options_.max_hops + 1, hops.clamp_max(options_.max_hops));
    torch::Tensor pair = hop_bias(hop_index);  // [B, c, M, H]
    pair =
        pair + angle_mlp->forward(at::stack({batch.normal_angle.slice(1, r0, r1).to(at::kFloat),
                                             batch.angle_defined.slice(1, r0, r1).to(at::kFloat)},
                                            -1));
    pair = pair + distance_mlp->forward(
                      batch.centroid_distance.slice(1, r0, r1).to(at::kFloat).unsqueeze(-1));

    const torch::Tensor in_block = (edge_row >= r0).logical_and_(edge_row < r1);
    const torch::Tensor edges = in_block.nonzero().squeeze(1);
    const torch::Tensor local =
        (edge_graph.index_select(0, edges) * c + edge_row.index_select(0, edges) - r0) * m +
        edge_column.index_select(0, edges);
    const torch::Tensor sums = at::zeros({b * c * m, heads}, pair.options())
                                   .index_add(0, local, edge_values.index_select(0, edges));
    const torch::Tensor counts =
        at::zeros({b * c * m, 1}, pair.options())
            .index_add(0, local, at::ones({edges.size(0), 1}, pair.options()));
    const torch::Tensor edge_bias =
        at::where(counts > 0, sums / counts.clamp_min(1), no_edge_bias.view({1, heads}));
    pair = pair + edge_bias.view({b, c, m, heads});
    bias.slice(2, 1 + r0, 1 + r1).slice(3, 1).copy_(pair.permute({0, 3, 1, 2}));  // [B, H, c, M]
  }

  const torch::Tensor padded_key =
      at::cat({at::zeros({b, 1}, batch.padding_mask.options()), batch.padding_mask}, 1)
          .view({b, 1, 1, m + 1});
  return bias.masked_fill_(padded_key, -std::numeric_limits<float>::infinity());
}

torch::Tensor BRepEncoderImpl::forward(const data::BRepBatch& batch) {
  NoAutocast fp32;
  const int64_t b = batch.num_graphs(), m = batch.max_faces();
  const torch::Tensor grids = batch.face_grids.to(at::kFloat);
  if (grids.dim() != 4 || grids.size(1) != data::kFaceChannels ||
      grids.size(2) != data::kUvGridSize || grids.size(3) != data::kUvGridSize) {
    throw Error(
        format("BRepEncoder: face_grids has shape {}, expected [N, {}, {}, {}]; build "
               "batches with data::collate",
               grids.sizes(), data::kFaceChannels, data::kUvGridSize, data::kUvGridSize));
  }

  const torch::Tensor face_features = face_cnn->forward(grids).mean({2, 3});  // [N, 2c]
  const torch::Tensor faces =
      face_proj(at::cat({face_features, face_type(batch.face_types),
                         face_attr_mlp->forward(batch.face_attrs.to(at::kFloat))},
                        1));  // [N, d]
  const torch::Tensor globals =
      global_token.unsqueeze(0) + graph_mlp->forward(batch.graph_attrs.to(at::kFloat));  // [B, d]

  TokenLayout layout;
  layout.graphs = b;
  layout.slots = m + 1;
  layout.token_slot = at::cat(
      {at::arange(b, batch.face_slot.options()) * (m + 1), batch.face_slot + batch.face_graph + 1});

  const torch::Tensor bias = attention_bias(batch);
  torch::Tensor x = at::cat({globals, faces}, 0);  // [T, d], the B global tokens first
  for (const auto& layer : *layers) x = layer->as<BRepLayer>()->forward(x, bias, layout);
  return final_norm(x.slice(0, 0, b));
}

torch::Tensor BRepEncoderImpl::forward_graphs(std::span<const data::BRepGraph* const> graphs,
                                              c10::Device device, int64_t group_overhead) {
  if (graphs.empty()) throw Error("BRepEncoder::forward_graphs: no graphs; pass at least one");
  // Collated a group at a time, so that only one group's pairwise inputs
  // (20 bytes a pair) exist at once: two large parts of one batch are never
  // held together.
  std::vector<int64_t> faces;
  faces.reserve(graphs.size());
  for (const data::BRepGraph* g : graphs) faces.push_back(g->num_faces());
  std::vector<int64_t> row_of(graphs.size());
  std::vector<torch::Tensor> parts;
  int64_t row = 0;
  for (const std::vector<int64_t>& group :
       group_by_size(faces, group_overhead, data::kMaxGroupPairs)) {
    std::vector<const data::BRepGraph*> members;
    for (const int64_t i : group) {
      members.push_back(graphs[static_cast<size_t>(i)]);
      row_of[static_cast<size_t>(i)] = row++;
    }
    parts.push_back(forward(data::collate(members).to(device)));
  }
  return at::cat(parts).index_select(0, at::tensor(row_of).to(device));
}

torch::Tensor BRepEncoderImpl::forward_grouped(const data::GroupedBatch& batch,
                                               c10::Device device) {
  if (batch.groups.empty())
    throw Error("BRepEncoder::forward_grouped: no graphs; pass at least one");
  std::vector<torch::Tensor> parts;
  parts.reserve(batch.groups.size());
  for (const data::BRepBatch& group : batch.groups) parts.push_back(forward(group.to(device)));
  return at::cat(parts).index_select(0, at::tensor(batch.row_of).to(device));
}

}  // namespace cadclip::model
