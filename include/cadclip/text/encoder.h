// The text encoder interface the model layer builds on: token ids in,
// contextual vectors out (Hugging Face parameter names), plus pooling.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace cadclip::text {

enum class Pooling { kCls, kMean };

std::string_view pooling_name(Pooling pooling);               // "cls", "mean"
std::optional<Pooling> parse_pooling(std::string_view name);  // inverse of pooling_name

// hidden: [B, T, H]; attention_mask: [B, T], 1 on tokens, 0 on padding.
// kCls takes row 0; kMean is sentence-transformers' sum(h*m) / max(sum(m), 1e-9).
// Returns [B, H].
torch::Tensor pool(const torch::Tensor& hidden, const torch::Tensor& attention_mask,
                   Pooling pooling);

class TextEncoder : public torch::nn::Module {
 public:
  // input_ids: [B, T] int64; attention_mask: [B, T] (any integer or float
  // type), 1 on tokens, 0 on padding, padding on the right or anywhere.
  // Returns the last hidden states [B, T, hidden_size()] in float32; rows at
  // padded positions hold unspecified values.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);

  // The tower split before layer `first` (0 <= first <= layer_count(); throws
  // cadclip::Error otherwise), so that a run training only its last layers
  // computes the frozen ones once: forward(ids, mask) is
  // forward_from(hidden_before(ids, mask, first), mask, first).
  // hidden_before returns the hidden states entering layer `first` [B, T,
  // hidden_size()] (first = 0: the embeddings' output); forward_from runs
  // them through layers first.. to the last hidden states.
  torch::Tensor hidden_before(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                              int64_t first);
  torch::Tensor forward_from(const torch::Tensor& hidden, const torch::Tensor& attention_mask,
                             int64_t first);
  virtual int64_t layer_count() const = 0;

  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // The longest input the position tables allow (0: no limit).
  virtual int64_t max_positions() const = 0;
  virtual std::string_view architecture() const = 0;  // "bert", "deberta-v2"

  // When on (and grad mode is on), each layer keeps only its inputs and is
  // recomputed during backward: less memory, identical gradients.
  void set_activation_checkpointing(bool on) { checkpointing_ = on; }
  bool activation_checkpointing() const { return checkpointing_; }

 protected:
  // input_ids [B, T] -> the embeddings' output [B, T, H] (dropout in training mode).
  virtual torch::Tensor embed(const torch::Tensor& input_ids,
                              const torch::Tensor& attention_mask) = 0;
  // Layers [begin, end) over x [B, T, H].
  virtual torch::Tensor run_layers(torch::Tensor x, const torch::Tensor& attention_mask,
                                   int64_t begin, int64_t end) = 0;
  bool checkpointing_ = false;

 private:
  void check_split(int64_t first) const;
};

}  // namespace cadclip::text
