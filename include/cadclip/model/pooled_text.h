// The text tower as the two-tower model uses it: a Hugging Face-compatible
// encoder followed by its pooling, token ids in, [B, H] out.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "cadclip/text/encoder.h"

namespace cadclip::model {

class PooledTextImpl : public torch::nn::Module {
 public:
  // Registers `encoder` as the submodule "encoder", so its parameters keep
  // their Hugging Face names under the prefix "text.encoder.".
  PooledTextImpl(std::shared_ptr<text::TextEncoder> encoder, text::Pooling pooling);

  // input_ids, attention_mask: [B, T] int64 -> pooled [B, hidden].
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);
  // The encoder split before layer `first` (text::TextEncoder::hidden_before):
  // forward(ids, mask) is forward_from(hidden_before(ids, mask, first), mask, first).
  torch::Tensor hidden_before(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                              int64_t first);
  // Hidden states entering layer `first` [B, T, H] -> pooled [B, hidden].
  torch::Tensor forward_from(const torch::Tensor& hidden, const torch::Tensor& attention_mask,
                             int64_t first);

  const std::shared_ptr<text::TextEncoder>& encoder() const { return encoder_; }

 private:
  std::shared_ptr<text::TextEncoder> encoder_;
  text::Pooling pooling_;
};
TORCH_MODULE(PooledText);

}  // namespace cadclip::model
