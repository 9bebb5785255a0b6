// The post-norm transformer layer BERT and DeBERTa share around a self-attention
// of their own, with the module names of transformers (attention.self,
// attention.output, intermediate, output), so checkpoints load by name.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <utility>

#include "layers.h"

namespace cadclip::text::detail {

// The sizes of one layer from the family's config.
struct LayerShape {
  int64_t context = 0;       // the self-attention's output width (heads x head size)
  int64_t hidden = 0;        // hidden_size
  int64_t intermediate = 0;  // intermediate_size
  double eps = 0;            // layer_norm_eps
  Activation activation = Activation::kGeluErf;  // hidden_act
  double dropout = 0;                            // hidden_dropout_prob, in training mode only
};

// attention.self and attention.output: BertAttention, DebertaV2Attention.
template <class SelfAttention>
struct Attention : torch::nn::Module {
  Attention(std::shared_ptr<SelfAttention> attend, const LayerShape& shape) {
    self = register_module("self", std::move(attend));
    output = register_module("output",
                             std::make_shared<DenseNorm>(shape.context, shape.hidden, shape.eps));
  }
  std::shared_ptr<SelfAttention> self;
  std::shared_ptr<DenseNorm> output;
};

// BertLayer and DebertaV2Layer: the self-attention, its output projection
// with residual and LayerNorm, then the feed-forward block (intermediate,
// output) with residual and LayerNorm.
template <class SelfAttention>
struct TransformerLayer : torch::nn::Module {
  TransformerLayer(std::shared_ptr<SelfAttention> attend, const LayerShape& shape)
      : dropout(shape.dropout) {
    attention = register_module(
        "attention", std::make_shared<Attention<SelfAttention>>(std::move(attend), shape));
    intermediate = register_module(
        "intermediate",
        std::make_shared<Intermediate>(shape.hidden, shape.intermediate, shape.activation));
    output = register_module(
        "output", std::make_shared<DenseNorm>(shape.intermediate, shape.hidden, shape.eps));
  }
  // x: [B, T, hidden]; `inputs` are what the self-attention takes after x
  // (masks, relative positions) -> [B, T, hidden]
  template <class... Inputs>
  torch::Tensor forward(const torch::Tensor& x, const Inputs&... inputs) {
    const torch::Tensor context = attention->self->forward(x, inputs...);
    const torch::Tensor attended = attention->output->forward(context, x, dropout);
    return output->forward(intermediate->forward(attended), attended, dropout);
  }
  double dropout;
  std::shared_ptr<Attention<SelfAttention>> attention;
  std::shared_ptr<Intermediate> intermediate;
  std::shared_ptr<DenseNorm> output;
};

}  // namespace cadclip::text::detail
