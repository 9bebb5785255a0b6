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

}  // namespace cadclip::model
