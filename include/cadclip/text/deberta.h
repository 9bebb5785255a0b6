// DeBERTa-v2/v3 encoder (Hugging Face DebertaV2Model): disentangled
// attention with relative positions (optionally log-bucketed), c2p and p2c
// terms, shared or separate position projections, normalised relative
// embeddings, the optional conv layer and embedding projection. Parameter
// names are the transformers ones (embeddings.word_embeddings.weight,
// encoder.layer.0.attention.self.query_proj.weight, encoder.rel_embeddings.weight, ...).
#pragma once

#include <torch/nn/modules/container/modulelist.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cadclip/text/encoder.h"

namespace cadclip::text {

// config.json of a DeBERTa-v2/v3 checkpoint; missing keys take the defaults
// of transformers' DebertaV2Config (so a v3 config must say
// relative_attention, position_buckets, share_att_key, norm_rel_ebd, ...).
struct DebertaV2Config {
  int64_t vocab_size = 128100;
  int64_t hidden_size = 1536;
  int64_t embedding_size = 0;  // 0: hidden_size (no embed_proj)
  int64_t num_hidden_layers = 24;
  int64_t num_attention_heads = 24;
  int64_t attention_head_size = 0;  // 0: hidden_size / num_attention_heads
  int64_t intermediate_size = 6144;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 0;
  double layer_norm_eps = 1e-7;
  std::string hidden_act = "gelu";
  bool relative_attention = false;
  int64_t max_relative_positions = -1;    // < 1: max_position_embeddings
  int64_t position_buckets = -1;          // > 0: log-bucketed relative positions
  bool position_biased_input = true;      // add absolute position embeddings
  bool share_att_key = false;             // position projections reuse query/key projections
  std::vector<std::string> pos_att_type;  // subset of {"c2p", "p2c"}
  bool norm_rel_ebd_layer_norm = false;   // norm_rel_ebd contains "layer_norm"
  int64_t conv_kernel_size = 0;           // > 0: the conv layer after layer 0
  int64_t conv_groups = 1;
  std::string conv_act = "tanh";
  double hidden_dropout_prob = 0.1;  // used in training mode only
  double attention_probs_dropout_prob = 0.1;

  bool c2p() const;
  bool p2c() const;
  // Rows of the relative embedding table / 2: position_buckets when > 0, else
  // max_relative_positions (resolved).
  int64_t attention_span() const;

  static DebertaV2Config from_file(const std::filesystem::path& config_json);
};

// The bucketed relative position of every (query i, key j) pair: i - j, or
// its log bucket when bucket_size > 0 (transformers' make_log_bucket_position).
// Returns [T, T] int64.
torch::Tensor relative_positions(int64_t length, int64_t bucket_size, int64_t max_position);

class DebertaV2Encoder final : public TextEncoder {
 public:
  explicit DebertaV2Encoder(const DebertaV2Config& config);

  int64_t layer_count() const override { return config_.num_hidden_layers; }

  int64_t hidden_size() const override { return config_.hidden_size; }
  int64_t vocab_size() const override { return config_.vocab_size; }
  // Relative attention has no length limit; absolute positions have.
  int64_t max_positions() const override {
    return config_.position_biased_input ? config_.max_position_embeddings : 0;
  }
  std::string_view architecture() const override { return "deberta-v2"; }
  const DebertaV2Config& config() const { return config_; }

 protected:
  torch::Tensor embed(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) override;
  torch::Tensor run_layers(torch::Tensor x, const torch::Tensor& attention_mask, int64_t begin,
                           int64_t end) override;

 private:
  struct Embeddings;
  struct Layer;
  struct Encoder;
  DebertaV2Config config_;
  std::shared_ptr<Embeddings> embeddings_;
  std::shared_ptr<Encoder> encoder_;
};

}  // namespace cadclip::text
