#include "cadclip/model/quantity_encoder.h"

#include <cmath>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"

namespace cadclip::model {

QuantityEncoderImpl::QuantityEncoderImpl(int64_t width) : width_(width) {
  if (width <= 0) {
    throw Error(format("QuantityEncoder: width = {} is invalid; it must be positive", width));
  }
  in = register_module("in", torch::nn::Linear(kFeatures, width));
  hidden = register_module("hidden", torch::nn::Linear(width, width));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({2 * width})));
}

torch::Tensor QuantityEncoderImpl::features(const text::QuantityBatch& q) {
  // log10 of the value; zero and tiny values sit at -3 (a micrometre).
  const at::Tensor x = q.values.to(at::kFloat).clamp_min(1e-3).log10();  // [B, Q]
  const at::Tensor k = at::arange(kFrequencies, x.options());
  const at::Tensor angle = x.unsqueeze(-1) * (M_PI / 4) * at::pow(2.0, k);  // [B, Q, F]
  const int64_t b = x.size(0), n = x.size(1);
  const at::Tensor kind =
      at::one_hot(q.kinds.clamp(0, text::kQuantityKinds - 1), text::kQuantityKinds).to(at::kFloat);
  const at::Tensor place =
      at::one_hot(at::arange(n, q.kinds.options()).clamp_max(kPlaces - 1), kPlaces)
          .to(at::kFloat)
          .unsqueeze(0)
          .expand({b, n, kPlaces});
  return at::cat({(x / 3).unsqueeze(-1), angle.sin(), angle.cos(), kind, place}, -1);
}

torch::Tensor QuantityEncoderImpl::forward(const text::QuantityBatch& q) {
  if (!q.defined() || q.values.dim() != 2 || q.kinds.sizes() != q.values.sizes() ||
      q.mask.sizes() != q.values.sizes()) {
    throw Error(
        "QuantityEncoder: quantities must be defined, with values, kinds and mask all [B, Q] "
        "(text::quantity_batch builds them)");
  }
  const at::Tensor h = at::gelu(hidden(at::gelu(in(features(q)))));  // [B, Q, w]
  const at::Tensor mask = q.mask.unsqueeze(-1);                      // [B, Q, 1]
  const at::Tensor sum = h.masked_fill(mask.logical_not(), 0).sum(1);
  // A text without numbers pools to zeros, not to -inf.
  const at::Tensor max = h.masked_fill(mask.logical_not(), -INFINITY).amax(1);
  const at::Tensor any = q.mask.any(1, /*keepdim=*/true);
  return norm(at::cat({sum, at::where(any, max, at::zeros_like(max))}, -1));
}

}  // namespace cadclip::model
