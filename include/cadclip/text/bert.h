// BERT encoder (Hugging Face BertModel without pooler): absolute positions,
// token types, post-norm layers. Parameter names are the transformers ones
// (embeddings.word_embeddings.weight, encoder.layer.0.attention.self.query.weight, ...).
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <filesystem>
#include <string>

#include "cadclip/text/encoder.h"

namespace cadclip::text {

// config.json of a BERT checkpoint; missing keys take transformers' defaults.
struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  std::string hidden_act = "gelu";   // gelu (erf), gelu_new, gelu_pytorch_tanh, relu, silu
  double hidden_dropout_prob = 0.1;  // used in training mode only
  double attention_probs_dropout_prob = 0.1;

  // Throws cadclip::Error naming the file for a bad value or an unsupported
  // option (position_embedding_type other than "absolute").
  static BertConfig from_file(const std::filesystem::path& config_json);
};

class BertEncoder final : public TextEncoder {
 public:
  explicit BertEncoder(const BertConfig& config);

  int64_t layer_count() const override { return config_.num_hidden_layers; }

  int64_t hidden_size() const override { return config_.hidden_size; }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t max_positions() const override { return config_.max_position_embeddings; }
  std::string_view architecture() const override { return "bert"; }
  const BertConfig& config() const { return config_; }

 protected:
  torch::Tensor embed(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) override;
  torch::Tensor run_layers(torch::Tensor x, const torch::Tensor& attention_mask, int64_t begin,
                           int64_t end) override;

 private:
  struct Embeddings;
  struct Layer;
  BertConfig config_;
  std::shared_ptr<Embeddings> embeddings_;
  std::shared_ptr<torch::nn::Module> encoder_;
  torch::nn::ModuleList layers_{nullptr};
};

}  // namespace cadclip::text
