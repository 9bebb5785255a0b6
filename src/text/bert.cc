#include "cadclip/text/bert.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include "cadclip/core/error.h"
#include "cadclip/text/checkpoint.h"
#include "json_config.h"
#include "layers.h"
#include "transformer_layer.h"

namespace cadclip::text {

using detail::value_or;

BertConfig BertConfig::from_file(const std::filesystem::path& config_json) {
  const nlohmann::json doc = detail::read_json(config_json);
  BertConfig c;
  const auto& p = config_json;
  c.vocab_size = value_or<int64_t>(doc, "vocab_size", c.vocab_size, p);
  c.hidden_size = value_or<int64_t>(doc, "hidden_size", c.hidden_size, p);
  c.num_hidden_layers = value_or<int64_t>(doc, "num_hidden_layers", c.num_hidden_layers, p);
  c.num_attention_heads = value_or<int64_t>(doc, "num_attention_heads", c.num_attention_heads, p);
  c.intermediate_size = value_or<int64_t>(doc, "intermediate_size", c.intermediate_size, p);
  c.max_position_embeddings =
      value_or<int64_t>(doc, "max_position_embeddings", c.max_position_embeddings, p);
  c.type_vocab_size = value_or<int64_t>(doc, "type_vocab_size", c.type_vocab_size, p);
  c.layer_norm_eps = value_or<double>(doc, "layer_norm_eps", c.layer_norm_eps, p);
  c.hidden_act = value_or<std::string>(doc, "hidden_act", c.hidden_act, p);
  c.hidden_dropout_prob = value_or<double>(doc, "hidden_dropout_prob", c.hidden_dropout_prob, p);
  c.attention_probs_dropout_prob =
      value_or<double>(doc, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, p);
  const auto position = value_or<std::string>(doc, "position_embedding_type", "absolute", p);
  if (position != "absolute")
    throw Error(
        format("{}: position_embedding_type '{}' is not supported; cadclip's BERT has "
               "absolute positions (as transformers 5 has)",
               p.string(), position));
  if (c.hidden_size <= 0 || c.num_attention_heads <= 0 || c.hidden_size % c.num_attention_heads)
    throw Error(format("{}: hidden_size {} is not a multiple of num_attention_heads {}", p.string(),
                       c.hidden_size, c.num_attention_heads));
  if (c.type_vocab_size < 1)
    throw Error(format("{}: type_vocab_size {} must be at least 1 for BERT", p.string(),
                       c.type_vocab_size));
  detail::parse_activation(c.hidden_act, p.string());
  return c;
}

struct BertEncoder::Embeddings : torch::nn::Module {
  explicit Embeddings(const BertConfig& c) {
    word = register_module("word_embeddings", torch::nn::Embedding(c.vocab_size, c.hidden_size));
    position = register_module("position_embeddings",
                               torch::nn::Embedding(c.max_position_embeddings, c.hidden_size));
    token_type = register_module("token_type_embeddings",
                                 torch::nn::Embedding(c.type_vocab_size, c.hidden_size));
    norm = register_module(
        "LayerNorm",
        torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  }
  torch::nn::Embedding word{nullptr}, position{nullptr}, token_type{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

namespace {

struct SelfAttention : torch::nn::Module {
  SelfAttention(int64_t hidden, int64_t heads, double dropout) : heads(heads), dropout(dropout) {
    query = register_module("query", torch::nn::Linear(hidden, hidden));
    key = register_module("key", torch::nn::Linear(hidden, hidden));
    value = register_module("value", torch::nn::Linear(hidden, hidden));
  }
  // x: [B, T, H], bias: [B, 1, 1, T] -> [B, T, H]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias) {
    const int64_t b = x.size(0), t = x.size(1), h = x.size(2);
    auto split = [&](const torch::Tensor& y) { return y.view({b, t, heads, -1}).transpose(1, 2); };
    const auto qkv = fused.forward(x, {&query, &key, &value});
    // An undefined bias (no padding) lets SDPA take its unmasked kernel.
    const torch::Tensor context = at::scaled_dot_product_attention(
        split(qkv[0]), split(qkv[1]), split(qkv[2]),
        bias.defined() ? std::optional<torch::Tensor>(bias) : std::nullopt,
        is_training() ? dropout : 0.0);
    return context.transpose(1, 2).reshape({b, t, h});
  }
  int64_t heads;
  double dropout;  // attention_probs_dropout_prob, in training mode only
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  detail::FusedLinear fused;
};

detail::LayerShape layer_shape(const BertConfig& c) {
  return {c.hidden_size,
          c.hidden_size,
          c.intermediate_size,
          c.layer_norm_eps,
          detail::parse_activation(c.hidden_act, "config"),
          c.hidden_dropout_prob};
}

}  // namespace

struct BertEncoder::Layer : detail::TransformerLayer<SelfAttention> {
  explicit Layer(const BertConfig& c)
      : TransformerLayer(std::make_shared<SelfAttention>(c.hidden_size, c.num_attention_heads,
                                                         c.attention_probs_dropout_prob),
                         layer_shape(c)) {}
};

BertEncoder::BertEncoder(const BertConfig& config) : config_(config) {
  embeddings_ = register_module("embeddings", std::make_shared<Embeddings>(config));
  encoder_ = register_module("encoder", std::make_shared<torch::nn::Module>());
  layers_ = encoder_->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i)
    layers_->push_back(std::make_shared<Layer>(config));
}

torch::Tensor BertEncoder::embed(const torch::Tensor& input_ids,
                                 const torch::Tensor& attention_mask) {
  TORCH_CHECK(input_ids.dim() == 2 && input_ids.sizes() == attention_mask.sizes(),
              "BertEncoder: input_ids and attention_mask must both be [B, T]");
  const int64_t t = input_ids.size(1);
  if (t > config_.max_position_embeddings)
    throw Error(
        format("BERT takes at most {} tokens and got {}; truncate the texts "
               "(TextModelOptions::max_length)",
               config_.max_position_embeddings, t));
  // token_type_ids are all 0, as transformers assumes when they are not given.
  torch::Tensor x = embeddings_->word(input_ids) + embeddings_->token_type->weight[0] +
                    embeddings_->position->weight.narrow(0, 0, t);
  x = embeddings_->norm(x);
  if (is_training() && config_.hidden_dropout_prob > 0)
    x = at::dropout(x, config_.hidden_dropout_prob, true);
  return x;
}

torch::Tensor BertEncoder::run_layers(torch::Tensor x, const torch::Tensor& attention_mask,
                                      int64_t begin, int64_t end) {
  if (begin == end) return x;
  // Without padding there is nothing to mask.
  const bool padded = attention_mask.eq(0).any().item<bool>();
  const torch::Tensor bias =
      padded ? detail::key_padding_bias(attention_mask).to(x.dtype()) : torch::Tensor();
  for (int64_t i = begin; i < end; ++i) {
    auto layer = std::static_pointer_cast<Layer>(layers_->ptr(static_cast<size_t>(i)));
    if (checkpointing_) {
      x = checkpoint(
          [layer, bias](const std::vector<torch::Tensor>& in) {
            return layer->forward(in[0], bias);
          },
          {x});
    } else {
      x = layer->forward(x, bias);
    }
  }
  return x;
}

}  // namespace cadclip::text
