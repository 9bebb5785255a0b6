#include "cadclip/model/pooled_text.h"

namespace cadclip::model {

PooledTextImpl::PooledTextImpl(std::shared_ptr<text::TextEncoder> encoder, text::Pooling pooling)
    : encoder_(std::move(encoder)), pooling_(pooling) {
  register_module("encoder", encoder_);
}

torch::Tensor PooledTextImpl::forward(const torch::Tensor& input_ids,
                                      const torch::Tensor& attention_mask) {
  return text::pool(encoder_->forward(input_ids, attention_mask), attention_mask, pooling_);
}

torch::Tensor PooledTextImpl::hidden_before(const torch::Tensor& input_ids,
                                            const torch::Tensor& attention_mask, int64_t first) {
  return encoder_->hidden_before(input_ids, attention_mask, first);
}

torch::Tensor PooledTextImpl::forward_from(const torch::Tensor& hidden,
                                           const torch::Tensor& attention_mask, int64_t first) {
  return text::pool(encoder_->forward_from(hidden, attention_mask, first), attention_mask,
                    pooling_);
}

}  // namespace cadclip::model
