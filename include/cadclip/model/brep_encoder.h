// The B-Rep encoder (BRepFormer-style): face tokens from a CNN over the UV
// grids plus face attributes; a graph transformer whose attention bias comes
// from edge features, hop counts, normal angles and centroid distances; the
// output is a global token per solid. Always fp32, permutation-invariant in
// the faces (no position code over face order).
#pragma once

#include <cstdint>
#include <span>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "cadclip/data/batch.h"

namespace cadclip::model {

// Defaults give 5,293,272 parameters (brep_encoder_test pins it).
struct BRepEncoderOptions {
  int64_t width = 256;         // d, the token width and the output size
  int64_t layers = 6;          // transformer layers
  int64_t heads = 8;           // attention heads; width must be a multiple
  int64_t ffn_hidden = 768;    // SwiGLU hidden width (3 * width, as 8/3 * width rounded up)
  int64_t face_channels = 64;  // channels of the face CNN's middle layer (2x at its last)
  int64_t edge_width = 64;     // width of the edge features before the per-head bias
  int64_t max_hops = 16;       // hop counts >= this share one embedding
  double dropout = 0.1;        // on the attention weights' output and the feed-forward output
  double attention_bias_init = 0.02;  // std of the bias embeddings' initial values

  // Throws cadclip::Error naming the field when a value is out of range.
  void validate() const;
};

// Large graphs are computed a block of rows at a time, so that the pairwise
// tensors of one never exist all at once (docs/INGEST.md, "The ingest
// limits"): attention scores per block of query rows (16 MiB), and face
// pairs per block of the attention bias, whose pair MLPs hold 16 hidden
// values a pair (64 MiB). A batch of 64 graphs of 60 faces is one block of
// each; a 5,000-face graph alone is blocks of 104 and 209 rows.
inline constexpr int64_t kScoresPerBlock = int64_t{1} << 22;
inline constexpr int64_t kPairsPerBlock = int64_t{1} << 20;

// Where each packed token sits in the padded attention layout [B, S, d],
// S = 1 + M (slot 0 is the graph's global token).
struct TokenLayout {
  int64_t graphs = 0;        // B
  int64_t slots = 0;         // S = 1 + max faces
  torch::Tensor token_slot;  // [T] int64 row of each packed token in [B * S]; T = B + N
};

// Multi-head self-attention over packed tokens with an additive per-head
// bias; scores and softmax in fp32. No dropout inside: the layer drops out
// on its residual paths only, as the reference encoder does.
class BiasedAttentionImpl : public torch::nn::Module {
 public:
  BiasedAttentionImpl(int64_t width, int64_t heads);
  // x: [T, d] packed tokens; bias: [B, heads, S, S] fp32, -inf at padded keys.
  // Returns [T, d]. Scores are made about scores_per_block at a time.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias,
                        const TokenLayout& layout, int64_t scores_per_block = kScoresPerBlock);

  torch::nn::Linear qkv{nullptr}, out{nullptr};

 private:
  int64_t width_, heads_;
};
TORCH_MODULE(BiasedAttention);

// SwiGLU feed-forward: w2(silu(x W1) * (x W3)), W1 and W3 fused in w13.
class SwiGluImpl : public torch::nn::Module {
 public:
  SwiGluImpl(int64_t width, int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x);  // x: [T, d] -> [T, d]

  torch::nn::Linear w13{nullptr}, w2{nullptr};
};
TORCH_MODULE(SwiGlu);

// One pre-norm layer, each sub-block applied exactly once:
//   h = x + dropout(attention(norm1(x)));  y = h + dropout(ffn(norm2(h)))
class BRepLayerImpl : public torch::nn::Module {
 public:
  BRepLayerImpl(int64_t width, int64_t heads, int64_t ffn_hidden, double dropout);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias,
                        const TokenLayout& layout);  // x: [T, d] -> [T, d]

  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  BiasedAttention attention{nullptr};
  SwiGlu ffn{nullptr};

 private:
  double dropout_;
};
TORCH_MODULE(BRepLayer);

class BRepEncoderImpl : public torch::nn::Module {
 public:
  explicit BRepEncoderImpl(const BRepEncoderOptions& options = {});

  // batch: collated graphs on this module's device. Returns the global
  // tokens' embeddings [B, d], fp32, even inside an autocast region.
  torch::Tensor forward(const data::BRepBatch& batch);
  // graphs -> [B, d] in the given order: forward(collate(graphs)) computed
  // group by group (group_by_size, at most data::kMaxGroupPairs pairs a group
  // unless alone), each collated in turn, on `device`, so that small graphs
  // are not padded to the largest one and large ones are encoded alone; the
  // same function, less work and bounded memory.
  torch::Tensor forward_graphs(std::span<const data::BRepGraph* const> graphs, c10::Device device,
                               int64_t group_overhead = 16384);
  // The same from the groups collated beforehand (data::collate_groups), each
  // moved to `device` here: [B, d] in the graphs' order.
  torch::Tensor forward_grouped(const data::GroupedBatch& batch, c10::Device device);

  // The per-head attention bias [B, heads, S, S] of a batch, -inf at padded
  // keys (exposed for tests and diagnostics).
  torch::Tensor attention_bias(const data::BRepBatch& batch,
                               int64_t pairs_per_block = kPairsPerBlock);

  const BRepEncoderOptions& options() const { return options_; }

  // Face tokens.
  torch::nn::Sequential face_cnn{nullptr};       // [N, 7, 10, 10] -> [N, 2c, 5, 5]
  torch::nn::Embedding face_type{nullptr};       // SurfaceType -> 32
  torch::nn::Sequential face_attr_mlp{nullptr};  // kFaceAttrs -> 32
  torch::nn::Linear face_proj{nullptr};          // 2c + 64 -> d
  // Edge features -> per-head bias of the face pair they join.
  torch::nn::Sequential edge_cnn{nullptr};       // [E, 12, 10] -> [E, edge_width, 10]
  torch::nn::Embedding edge_type{nullptr};       // CurveType -> 16
  torch::nn::Embedding edge_convexity{nullptr};  // Convexity -> 8
  torch::nn::Sequential edge_mlp{nullptr};       // edge_width + 16 + 8 + kEdgeAttrs -> heads
  torch::Tensor no_edge_bias;                    // [heads] pairs that no edge joins
  // Pairwise terms.
  torch::nn::Embedding hop_bias{nullptr};       // max_hops + 2 rows (last: unreachable) -> heads
  torch::nn::Sequential angle_mlp{nullptr};     // (angle, defined) -> heads
  torch::nn::Sequential distance_mlp{nullptr};  // centroid distance -> heads
  // The global token.
  torch::Tensor global_token;                // [d]
  torch::nn::Sequential graph_mlp{nullptr};  // kGraphAttrs -> d, added to the global token
  torch::Tensor global_bias;                 // [2, heads] global->face, face->global (and self)
  // The transformer.
  torch::nn::ModuleList layers{nullptr};  // of BRepLayer
  torch::nn::LayerNorm final_norm{nullptr};

 private:
  BRepEncoderOptions options_;
};
TORCH_MODULE(BRepEncoder);

}  // namespace cadclip::model
