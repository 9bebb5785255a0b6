#include "cadclip/text/deberta.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <algorithm>
#include <cmath>

#include "cadclip/core/error.h"
#include "cadclip/text/checkpoint.h"
#include "json_config.h"
#include "layers.h"
#include "transformer_layer.h"

namespace cadclip::text {

using detail::value_or;

bool DebertaV2Config::c2p() const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), "c2p") != pos_att_type.end();
}
bool DebertaV2Config::p2c() const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), "p2c") != pos_att_type.end();
}
int64_t DebertaV2Config::attention_span() const {
  if (position_buckets > 0) return position_buckets;
  return max_relative_positions < 1 ? max_position_embeddings : max_relative_positions;
}

namespace {

std::vector<std::string> split_bar(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('|', start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    std::transform(part.begin(), part.end(), part.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (!part.empty()) parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

}  // namespace

DebertaV2Config DebertaV2Config::from_file(const std::filesystem::path& config_json) {
  const nlohmann::json doc = detail::read_json(config_json);
  const auto& p = config_json;
  DebertaV2Config c;
  c.vocab_size = value_or<int64_t>(doc, "vocab_size", c.vocab_size, p);
  c.hidden_size = value_or<int64_t>(doc, "hidden_size", c.hidden_size, p);
  c.embedding_size = value_or<int64_t>(doc, "embedding_size", c.hidden_size, p);
  c.num_hidden_layers = value_or<int64_t>(doc, "num_hidden_layers", c.num_hidden_layers, p);
  c.num_attention_heads = value_or<int64_t>(doc, "num_attention_heads", c.num_attention_heads, p);
  if (c.hidden_size <= 0 || c.num_attention_heads <= 0 || c.hidden_size % c.num_attention_heads)
    throw Error(format("{}: hidden_size {} is not a multiple of num_attention_heads {}", p.string(),
                       c.hidden_size, c.num_attention_heads));
  c.attention_head_size =
      value_or<int64_t>(doc, "attention_head_size", c.hidden_size / c.num_attention_heads, p);
  c.intermediate_size = value_or<int64_t>(doc, "intermediate_size", c.intermediate_size, p);
  c.max_position_embeddings =
      value_or<int64_t>(doc, "max_position_embeddings", c.max_position_embeddings, p);
  c.type_vocab_size = value_or<int64_t>(doc, "type_vocab_size", c.type_vocab_size, p);
  c.layer_norm_eps = value_or<double>(doc, "layer_norm_eps", c.layer_norm_eps, p);
  c.hidden_act = value_or<std::string>(doc, "hidden_act", c.hidden_act, p);
  c.relative_attention = value_or<bool>(doc, "relative_attention", c.relative_attention, p);
  c.max_relative_positions =
      value_or<int64_t>(doc, "max_relative_positions", c.max_relative_positions, p);
  if (c.max_relative_positions < 1) c.max_relative_positions = c.max_position_embeddings;
  c.position_buckets = value_or<int64_t>(doc, "position_buckets", c.position_buckets, p);
  c.position_biased_input =
      value_or<bool>(doc, "position_biased_input", c.position_biased_input, p);
  c.share_att_key = value_or<bool>(doc, "share_att_key", c.share_att_key, p);
  const auto pos_att = doc.find("pos_att_type");
  if (pos_att != doc.end() && !pos_att->is_null()) {
    if (pos_att->is_string()) {
      c.pos_att_type = split_bar(pos_att->get<std::string>());
    } else if (pos_att->is_array()) {
      for (const auto& item : *pos_att)
        for (auto& part : split_bar(item.get<std::string>())) c.pos_att_type.push_back(part);
    } else {
      throw Error(
          format("{}: pos_att_type must be a string like \"p2c|c2p\" or a list", p.string()));
    }
  }
  for (const auto& kind : c.pos_att_type)
    if (kind != "c2p" && kind != "p2c")
      throw Error(format("{}: pos_att_type '{}' is not supported; cadclip has c2p and p2c",
                         p.string(), kind));
  for (const auto& kind : split_bar(value_or<std::string>(doc, "norm_rel_ebd", "none", p))) {
    if (kind == "layer_norm")
      c.norm_rel_ebd_layer_norm = true;
    else if (kind != "none")
      throw Error(
          format("{}: norm_rel_ebd '{}' is not supported; cadclip has none and "
                 "layer_norm",
                 p.string(), kind));
  }
  c.conv_kernel_size = value_or<int64_t>(doc, "conv_kernel_size", c.conv_kernel_size, p);
  c.conv_groups = value_or<int64_t>(doc, "conv_groups", c.conv_groups, p);
  c.conv_act = value_or<std::string>(doc, "conv_act", c.conv_act, p);
  c.hidden_dropout_prob = value_or<double>(doc, "hidden_dropout_prob", c.hidden_dropout_prob, p);
  c.attention_probs_dropout_prob =
      value_or<double>(doc, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, p);
  detail::parse_activation(c.hidden_act, p.string());
  if (c.conv_kernel_size > 0) detail::parse_activation(c.conv_act, p.string());
  return c;
}

torch::Tensor relative_positions(int64_t length, int64_t bucket_size, int64_t max_position) {
  // The float32 arithmetic of transformers' make_log_bucket_position, step by
  // step, so that every bucket boundary falls where it does there.
  const torch::Tensor ids = at::arange(length, at::kLong);
  torch::Tensor rel = ids.unsqueeze(1) - ids.unsqueeze(0);
  if (bucket_size <= 0 || max_position <= 0) return rel;
  const int64_t mid = bucket_size / 2;
  const torch::Tensor sign = at::sign(rel);
  const torch::Tensor abs_pos =
      at::where(rel.lt(mid) & rel.gt(-mid), at::scalar_tensor(mid - 1, at::kLong), at::abs(rel));
  const torch::Tensor denominator = at::log(at::scalar_tensor(
      static_cast<double>(max_position - 1) / static_cast<double>(mid), at::kFloat));
  const torch::Tensor log_pos =
      at::ceil(at::log(abs_pos.to(at::kFloat) / static_cast<double>(mid)) / denominator *
               static_cast<double>(mid - 1)) +
      static_cast<double>(mid);
  return at::where(abs_pos.le(mid), rel.to(at::kFloat), log_pos * sign).to(at::kLong);
}

struct DebertaV2Encoder::Embeddings : torch::nn::Module {
  explicit Embeddings(const DebertaV2Config& c) {
    word = register_module("word_embeddings", torch::nn::Embedding(c.vocab_size, c.embedding_size));
    if (c.position_biased_input)
      position = register_module("position_embeddings",
                                 torch::nn::Embedding(c.max_position_embeddings, c.embedding_size));
    if (c.type_vocab_size > 0)
      token_type = register_module("token_type_embeddings",
                                   torch::nn::Embedding(c.type_vocab_size, c.embedding_size));
    if (c.embedding_size != c.hidden_size)
      proj = register_module(
          "embed_proj",
          torch::nn::Linear(torch::nn::LinearOptions(c.embedding_size, c.hidden_size).bias(false)));
    norm = register_module(
        "LayerNorm",
        torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  }
  torch::nn::Embedding word{nullptr}, position{nullptr}, token_type{nullptr};
  torch::nn::Linear proj{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

namespace {

struct DisentangledSelfAttention : torch::nn::Module {
  explicit DisentangledSelfAttention(const DebertaV2Config& c) : config(c) {
    const int64_t all = c.num_attention_heads * c.attention_head_size;
    query = register_module("query_proj", torch::nn::Linear(c.hidden_size, all));
    key = register_module("key_proj", torch::nn::Linear(c.hidden_size, all));
    value = register_module("value_proj", torch::nn::Linear(c.hidden_size, all));
    if (c.relative_attention && !c.share_att_key) {
      if (c.c2p()) pos_key = register_module("pos_key_proj", torch::nn::Linear(c.hidden_size, all));
      if (c.p2c())
        pos_query = register_module("pos_query_proj", torch::nn::Linear(c.hidden_size, all));
    }
  }

  // x: [B, T, H]; key_bias: [B, 1, 1, T]; rel: [2 * span, H] (undefined
  // without relative attention); c2p_index, p2c_index: [T, T].
  // Returns [B, T, heads * head_size].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_bias,
                        const torch::Tensor& rel, const torch::Tensor& c2p_index,
                        const torch::Tensor& p2c_index) {
    const int64_t b = x.size(0), t = x.size(1), heads = config.num_attention_heads;
    auto split = [&](const torch::Tensor& y) { return y.view({b, t, heads, -1}).transpose(1, 2); };
    const auto qkv = fused.forward(x, {&query, &key, &value});
    const torch::Tensor q = split(qkv[0]), k = split(qkv[1]), v = split(qkv[2]);
    const int64_t scale_factor = 1 + (config.c2p() ? 1 : 0) + (config.p2c() ? 1 : 0);
    // transformers computes sqrt in float32: torch.sqrt(tensor(d, float) * factor).
    const float scale = std::sqrt(static_cast<float>(config.attention_head_size) *
                                  static_cast<float>(scale_factor));
    torch::Tensor bias = key_bias;
    if (config.relative_attention && (config.c2p() || config.p2c())) {
      torch::Tensor r = rel;
      if (is_training() && config.hidden_dropout_prob > 0)
        r = at::dropout(r, config.hidden_dropout_prob, true);
      const int64_t rows = r.size(0);
      auto positions = [&](torch::nn::Linear& proj) {  // [heads, rows, d]
        return proj(r).view({rows, heads, -1}).transpose(0, 1);
      };
      torch::Tensor relative;
      if (config.c2p()) {
        const torch::Tensor pos_k = positions(config.share_att_key ? key : pos_key);
        const torch::Tensor c2p = at::matmul(q, pos_k.transpose(-1, -2));  // [B, h, T, rows]
        relative = at::gather(c2p, -1, c2p_index.expand({b, heads, t, t})) / scale;
      }
      if (config.p2c()) {
        const torch::Tensor pos_q = positions(config.share_att_key ? query : pos_query);
        const torch::Tensor p2c = at::matmul(k, pos_q.transpose(-1, -2));  // [B, h, T(key), rows]
        torch::Tensor term =
            at::gather(p2c, -1, p2c_index.expand({b, heads, t, t})).transpose(-1, -2) / scale;
        relative = relative.defined() ? relative + term : term;
      }
      bias = relative + key_bias;
    }
    const double dropout = is_training() ? config.attention_probs_dropout_prob : 0.0;
    const torch::Tensor context =
        at::scaled_dot_product_attention(q, k, v, bias, dropout, false, 1.0 / scale);
    return context.transpose(1, 2).reshape({b, t, -1});
  }

  DebertaV2Config config;
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  torch::nn::Linear pos_key{nullptr}, pos_query{nullptr};
  detail::FusedLinear fused;
};

struct ConvLayer : torch::nn::Module {
  explicit ConvLayer(const DebertaV2Config& c)
      : activation(detail::parse_activation(c.conv_act, "conv_act")),
        dropout(c.hidden_dropout_prob) {
    conv = register_module(
        "conv",
        torch::nn::Conv1d(torch::nn::Conv1dOptions(c.hidden_size, c.hidden_size, c.conv_kernel_size)
                              .padding((c.conv_kernel_size - 1) / 2)
                              .groups(c.conv_groups)));
    norm = register_module(
        "LayerNorm",
        torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  }
  // embedded, residual: [B, T, H]; mask: [B, T] -> [B, T, H]
  torch::Tensor forward(const torch::Tensor& embedded, const torch::Tensor& residual,
                        const torch::Tensor& mask) {
    torch::Tensor out = conv(embedded.permute({0, 2, 1})).permute({0, 2, 1});
    const torch::Tensor keep = mask.ne(0).unsqueeze(-1).to(out.dtype());
    out = out * keep;
    if (is_training() && dropout > 0) out = at::dropout(out, dropout, true);
    out = detail::activate(out, activation);
    return norm(residual + out) * keep;
  }
  detail::Activation activation;
  double dropout;
  torch::nn::Conv1d conv{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

detail::LayerShape layer_shape(const DebertaV2Config& c) {
  return {c.num_attention_heads * c.attention_head_size,
          c.hidden_size,
          c.intermediate_size,
          c.layer_norm_eps,
          detail::parse_activation(c.hidden_act, "config"),
          c.hidden_dropout_prob};
}

}  // namespace

struct DebertaV2Encoder::Layer : detail::TransformerLayer<DisentangledSelfAttention> {
  explicit Layer(const DebertaV2Config& c)
      : TransformerLayer(std::make_shared<DisentangledSelfAttention>(c), layer_shape(c)) {}
};

struct DebertaV2Encoder::Encoder : torch::nn::Module {
  explicit Encoder(const DebertaV2Config& c) {
    layers = register_module("layer", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(std::make_shared<Layer>(c));
    if (c.relative_attention)
      rel_embeddings = register_module("rel_embeddings",
                                       torch::nn::Embedding(2 * c.attention_span(), c.hidden_size));
    if (c.norm_rel_ebd_layer_norm)
      norm = register_module(
          "LayerNorm",
          torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
    if (c.conv_kernel_size > 0) conv = register_module("conv", std::make_shared<ConvLayer>(c));
  }
  torch::nn::ModuleList layers{nullptr};
  torch::nn::Embedding rel_embeddings{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  std::shared_ptr<ConvLayer> conv;
};

DebertaV2Encoder::DebertaV2Encoder(const DebertaV2Config& config) : config_(config) {
  embeddings_ = register_module("embeddings", std::make_shared<Embeddings>(config));
  encoder_ = register_module("encoder", std::make_shared<Encoder>(config));
}

torch::Tensor DebertaV2Encoder::embed(const torch::Tensor& input_ids,
                                      const torch::Tensor& attention_mask) {
  TORCH_CHECK(input_ids.dim() == 2 && input_ids.sizes() == attention_mask.sizes(),
              "DebertaV2Encoder: input_ids and attention_mask must both be [B, T]");
  const int64_t t = input_ids.size(1);
  if (config_.position_biased_input && t > config_.max_position_embeddings)
    throw Error(
        format("this DeBERTa takes at most {} tokens and got {}; truncate the texts "
               "(TextModelOptions::max_length)",
               config_.max_position_embeddings, t));
  torch::Tensor x = embeddings_->word(input_ids);
  if (embeddings_->position) x = x + embeddings_->position->weight.narrow(0, 0, t);
  if (embeddings_->token_type) x = x + embeddings_->token_type->weight[0];
  if (embeddings_->proj) x = embeddings_->proj(x);
  x = embeddings_->norm(x) * attention_mask.ne(0).unsqueeze(-1).to(x.dtype());
  if (is_training() && config_.hidden_dropout_prob > 0)
    x = at::dropout(x, config_.hidden_dropout_prob, true);
  return x;
}

torch::Tensor DebertaV2Encoder::run_layers(torch::Tensor x, const torch::Tensor& attention_mask,
                                           int64_t begin, int64_t end) {
  if (begin == end) return x;
  const int64_t t = x.size(1);
  const torch::Tensor key_bias = detail::key_padding_bias(attention_mask).to(x.dtype());
  torch::Tensor rel, c2p_index, p2c_index;
  if (config_.relative_attention) {
    rel = encoder_->rel_embeddings->weight;
    if (encoder_->norm) rel = encoder_->norm(rel);
    const int64_t span = config_.attention_span();
    const torch::Tensor positions =
        relative_positions(t, config_.position_buckets, config_.max_relative_positions)
            .to(x.device());
    c2p_index = at::clamp(positions + span, 0, 2 * span - 1);
    p2c_index = at::clamp(-positions + span, 0, 2 * span - 1);
  }
  // The conv layer after layer 0 reads the embeddings' output: x when the run starts there.
  const torch::Tensor embedded = x;
  for (int64_t i = begin; i < end; ++i) {
    auto layer = std::static_pointer_cast<Layer>(encoder_->layers->ptr(static_cast<size_t>(i)));
    if (checkpointing_) {
      x = checkpoint(
          [layer, key_bias, c2p_index, p2c_index](const std::vector<torch::Tensor>& in) {
            return layer->forward(in[0], key_bias, in[1], c2p_index, p2c_index);
          },
          {x, rel});
    } else {
      x = layer->forward(x, key_bias, rel, c2p_index, p2c_index);
    }
    if (i == 0 && encoder_->conv) x = encoder_->conv->forward(embedded, x, attention_mask);
  }
  return x;
}

}  // namespace cadclip::text
