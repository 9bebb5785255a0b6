// The B-Rep encoder: permutation invariance, batch = single, fp32 inside
// autocast, and the pinned layer structure and parameter count.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/nn/modules/linear.h>

#include "cadclip/core/error.h"
#include "cadclip/data/batch.h"
#include "cadclip/model/autocast.h"
#include "cadclip/model/brep_encoder.h"
#include "random_graph.h"

namespace cadclip::model {
namespace {

BRepEncoderOptions tiny_options() {
  BRepEncoderOptions o;
  o.width = 32;
  o.layers = 2;
  o.heads = 4;
  o.ffn_hidden = 48;
  o.face_channels = 8;
  o.edge_width = 8;
  o.max_hops = 4;
  // Larger bias terms than the default so that the tests see them matter.
  o.attention_bias_init = 0.5;
  return o;
}

BRepEncoder tiny_encoder(uint64_t seed = 0) {
  torch::manual_seed(seed);
  BRepEncoder encoder(tiny_options());
  encoder->eval();
  return encoder;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(BRepEncoder, IsInvariantToTheOrderOfFacesAndEdges) {
  BRepEncoder encoder = tiny_encoder();
  torch::NoGradGuard no_grad;
  for (uint32_t seed : {11u, 12u, 13u}) {
    const data::BRepGraph g = testing::random_graph(12, seed);
    const data::BRepGraph p = testing::permute_graph(g, seed + 100);
    ASSERT_NE(g.face_grids, p.face_grids);
    const at::Tensor a = encoder->forward(data::collate(std::vector{g}));
    const at::Tensor b = encoder->forward(data::collate(std::vector{p}));
    EXPECT_LT(max_abs_diff(a, b), 1e-5) << "seed " << seed;
  }
}

TEST(BRepEncoder, InputsChangeTheEmbedding) {
  // The invariance test would pass for an encoder that ignores its input.
  BRepEncoder encoder = tiny_encoder();
  torch::NoGradGuard no_grad;
  const data::BRepGraph g = testing::random_graph(10, 21);
  const at::Tensor base = encoder->forward(data::collate(std::vector{g}));
  data::BRepGraph moved = g;
  // One edge rewired to another face changes the bias of two pairs.
  int32_t to = (g.edge_dst[0] + 1) % 10;
  if (to == g.edge_src[0]) to = (to + 1) % 10;
  moved.edge_dst[0] = to;
  EXPECT_GT(max_abs_diff(base, encoder->forward(data::collate(std::vector{moved}))), 1e-4);
  data::BRepGraph grid = g;
  for (int k = 0; k < 10 * 10 * 7; k += 7) grid.face_grids[k] += 0.5f;  // face 0 moves along x
  EXPECT_GT(max_abs_diff(base, encoder->forward(data::collate(std::vector{grid}))), 1e-4);
  data::BRepGraph bigger = g;
  bigger.scale_mm *= 3;
  EXPECT_GT(max_abs_diff(base, encoder->forward(data::collate(std::vector{bigger}))), 1e-4);
}

TEST(BRepEncoder, AGraphEmbedsTheSameInABatchAsAlone) {
  BRepEncoder encoder = tiny_encoder();
  torch::NoGradGuard no_grad;
  const std::vector<data::BRepGraph> graphs = {
      testing::random_graph(7, 31), testing::random_graph(15, 32), testing::random_graph(1, 33),
      testing::random_graph(11, 34)};
  const at::Tensor batched = encoder->forward(data::collate(graphs));
  ASSERT_EQ(batched.sizes(), (at::IntArrayRef{4, 32}));
  for (size_t i = 0; i < graphs.size(); ++i) {
    const at::Tensor alone = encoder->forward(data::collate(std::vector{graphs[i]}));
    EXPECT_LT(max_abs_diff(batched[i], alone[0]), 1e-5) << "graph " << i;
  }
  EXPECT_TRUE(batched.isfinite().all().item<bool>());
}

TEST(BRepEncoder, StaysFp32InsideAnAutocastRegion) {
  BRepEncoder encoder = tiny_encoder();
  torch::NoGradGuard no_grad;
  const data::BRepBatch batch =
      data::collate(std::vector{testing::random_graph(9, 41), testing::random_graph(4, 42)});
  const at::Tensor reference = encoder->forward(batch);
  at::Tensor mixed, control;
  {
    AutocastGuard bf16(c10::DeviceType::CPU, /*enabled=*/true, at::kBFloat16);
    mixed = encoder->forward(batch);
    // The region is real: a plain linear layer inside it runs in bf16.
    control = torch::nn::Linear(4, 4)->forward(at::ones({2, 4}));
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(control.scalar_type(), at::kBFloat16);
  EXPECT_EQ(mixed.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(mixed, reference));
}

TEST(BRepEncoder, GradientsReachEveryParameter) {
  torch::manual_seed(0);
  BRepEncoder encoder(tiny_options());
  encoder->train();
  const at::Tensor out = encoder->forward(
      data::collate(std::vector{testing::random_graph(6, 51), testing::random_graph(8, 52)}));
  out.pow(2).sum().backward();
  for (const auto& p : encoder->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
}

// SwiGLU and attention parameters of one layer, from the options alone.
int64_t layer_parameters(int64_t d, int64_t hidden) {
  const int64_t norms = 2 * 2 * d;
  const int64_t attention = d * 3 * d + 3 * d + d * d + d;
  const int64_t ffn = d * 2 * hidden + hidden * d;
  return norms + attention + ffn;
}

TEST(BRepEncoder, DefaultSizeAndLayerStructureArePinned) {
  BRepEncoder encoder;
  const BRepEncoderOptions& o = encoder->options();
  EXPECT_EQ(o.width, 256);
  EXPECT_EQ(o.layers, 6);
  EXPECT_EQ(o.heads, 8);
  EXPECT_EQ(o.ffn_hidden, 768);

  int64_t total = 0;
  for (const at::Tensor& p : encoder->parameters()) total += p.numel();
  EXPECT_EQ(total, 5'293'272);

  ASSERT_EQ(encoder->layers->size(), 6u);
  int64_t in_layers = 0;
  for (const auto& module : *encoder->layers) {
    const auto layer = module->as<BRepLayer>();
    ASSERT_NE(layer, nullptr);
    std::vector<std::string> children;
    for (const auto& child : layer->named_children()) children.push_back(child.key());
    EXPECT_EQ(children, (std::vector<std::string>{"norm1", "attention", "norm2", "ffn"}));
    EXPECT_EQ(layer->ffn->w13->weight.sizes(), (at::IntArrayRef{2 * 768, 256}));
    EXPECT_EQ(layer->ffn->w2->weight.sizes(), (at::IntArrayRef{256, 768}));
    for (const at::Tensor& p : layer->parameters()) in_layers += p.numel();
  }
  EXPECT_EQ(in_layers, 6 * layer_parameters(256, 768));
  // No complex tensors anywhere in the state.
  for (const auto& p : encoder->named_parameters()) EXPECT_FALSE(p.value().is_complex()) << p.key();
  for (const auto& b : encoder->named_buffers()) EXPECT_FALSE(b.value().is_complex()) << b.key();
}

TEST(BRepLayer, AppliesAttentionThenTheFeedForwardOnceEach) {
  // The origin system applied its feed-forward twice; this pins the formula.
  torch::manual_seed(3);
  BRepEncoder encoder = tiny_encoder(3);
  torch::NoGradGuard no_grad;
  const data::BRepBatch batch =
      data::collate(std::vector{testing::random_graph(5, 61), testing::random_graph(3, 62)});
  const int64_t b = 2, m = 5;
  TokenLayout layout;
  layout.graphs = b;
  layout.slots = m + 1;
  layout.token_slot =
      at::cat({at::arange(b, at::kLong) * (m + 1), batch.face_slot + batch.face_graph + 1});
  const at::Tensor bias = encoder->attention_bias(batch);
  const at::Tensor x = at::randn({b + 8, 32});
  auto layer = encoder->layers[0]->as<BRepLayer>();
  const at::Tensor h = x + layer->attention->forward(layer->norm1(x), bias, layout);
  const at::Tensor expected = h + layer->ffn->forward(layer->norm2(h));
  EXPECT_LT(max_abs_diff(layer->forward(x, bias, layout), expected), 1e-6);
  const at::Tensor twice =
      h + layer->ffn->forward(layer->norm2(h + layer->ffn->forward(layer->norm2(h))));
  EXPECT_GT(max_abs_diff(layer->forward(x, bias, layout), twice), 1e-4);
}

TEST(BRepEncoder, AttentionBiasMasksPaddingAndMarksPairsWithoutEdges) {
  BRepEncoder encoder = tiny_encoder();
  torch::NoGradGuard no_grad;
  const data::BRepBatch batch =
      data::collate(std::vector{testing::random_graph(6, 71), testing::random_graph(2, 72)});
  const at::Tensor bias = encoder->attention_bias(batch);  // [2, 4, 7, 7]
  ASSERT_EQ(bias.sizes(), (at::IntArrayRef{2, 4, 7, 7}));
  // Graph 1 has 2 faces: keys 3.. (faces 2..) are padding.
  EXPECT_TRUE(bias[1].slice(2, 3).isneginf().all().item<bool>());
  EXPECT_TRUE(bias[1].slice(2, 0, 3).isfinite().all().item<bool>());
  EXPECT_TRUE(bias[0].isfinite().all().item<bool>());
}

TEST(BRepEncoder, HopCountsBeyondTheLimitShareOneBiasAndUnreachableHasItsOwn) {
  BRepEncoder encoder = tiny_encoder();  // max_hops = 4
  torch::NoGradGuard no_grad;
  // Leave only the hop term: zero the last layers of the other bias MLPs.
  for (auto* mlp : {&encoder->angle_mlp, &encoder->distance_mlp, &encoder->edge_mlp}) {
    for (auto& p : (*mlp)[2]->parameters()) p.zero_();
  }
  encoder->no_edge_bias.zero_();
  // A path 0-1-2-3-4-5-6 and a lone face 7.
  data::BRepGraph g = testing::random_graph(8, 91);
  const int64_t kCurve = 10 * 12;
  g.edge_grids.resize(12 * kCurve);
  g.edge_src.clear();
  g.edge_dst.clear();
  for (int i = 0; i < 6; ++i) {
    g.edge_src.insert(g.edge_src.end(), {i, i + 1});
    g.edge_dst.insert(g.edge_dst.end(), {i + 1, i});
  }
  g.edge_types.assign(12, 0);
  g.edge_lengths.assign(12, 1.f);
  g.edge_convexity.assign(12, 1);
  const at::Tensor bias = encoder->attention_bias(data::collate(std::vector{g}))[0];  // [H, 9, 9]
  const at::Tensor table = encoder->hop_bias->weight;                                 // [6, H]
  auto pair = [&](int i, int j) { return bias.select(1, 1 + i).select(1, 1 + j); };   // [H]
  EXPECT_TRUE(at::allclose(pair(0, 0), table[0]));
  EXPECT_TRUE(at::allclose(pair(0, 3), table[3]));
  EXPECT_TRUE(at::allclose(pair(0, 4), table[4]));
  EXPECT_TRUE(at::allclose(pair(0, 6), table[4]));  // 6 hops, clamped to 4
  EXPECT_TRUE(at::allclose(pair(2, 7), table[5]));  // unreachable
  EXPECT_FALSE(at::allclose(table[4], table[5]));
}

TEST(BRepEncoderOptions, RejectsBadValues) {
  BRepEncoderOptions o;
  o.heads = 7;
  EXPECT_THROW(o.validate(), Error);
  o = {};
  o.dropout = 1.0;
  EXPECT_THROW(BRepEncoder{o}, Error);
}

}  // namespace
}  // namespace cadclip::model
