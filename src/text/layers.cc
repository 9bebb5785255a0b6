#include "layers.h"

#include <ATen/ATen.h>

#include <limits>

#include "cadclip/core/error.h"

namespace cadclip::text::detail {

Activation parse_activation(const std::string& name, const std::string& source) {
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "tanh") return Activation::kTanh;
  throw Error(
      format("{}: activation '{}' is not supported; cadclip has gelu, gelu_new, "
             "gelu_pytorch_tanh, relu, silu, swish and tanh",
             source, name));
}

torch::Tensor activate(const torch::Tensor& x, Activation activation) {
  switch (activation) {
    case Activation::kGeluErf:
      return at::gelu(x);
    case Activation::kGeluTanh:
      return at::gelu(x, "tanh");
    case Activation::kRelu:
      return at::relu(x);
    case Activation::kSilu:
      return at::silu(x);
    case Activation::kTanh:
      return at::tanh(x);
  }
  CADCLIP_CHECK(false, "unknown activation {}", static_cast<int>(activation));
}

DenseNorm::DenseNorm(int64_t in, int64_t out, double eps) {
  dense = register_module("dense", torch::nn::Linear(in, out));
  norm = register_module("LayerNorm",
                         torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}).eps(eps)));
}

torch::Tensor DenseNorm::forward(const torch::Tensor& x, const torch::Tensor& residual,
                                 double dropout) {
  torch::Tensor h = dense(x);
  if (is_training() && dropout > 0) h = at::dropout(h, dropout, true);
  return norm(h + residual);
}

Intermediate::Intermediate(int64_t in, int64_t out, Activation act) : activation(act) {
  dense = register_module("dense", torch::nn::Linear(in, out));
}

torch::Tensor Intermediate::forward(const torch::Tensor& x) {
  return activate(dense(x), activation);
}

torch::Tensor key_padding_bias(const torch::Tensor& mask) {
  const torch::Tensor padding = mask.eq(0).to(at::kFloat);
  return (padding * std::numeric_limits<float>::lowest()).view({mask.size(0), 1, 1, mask.size(1)});
}

}  // namespace cadclip::text::detail
