#include "layers.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

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

std::vector<torch::Tensor> FusedLinear::forward(const torch::Tensor& x,
                                                const std::vector<torch::nn::Linear*>& layers) {
  std::vector<torch::Tensor> out;
  if (torch::GradMode::is_enabled()) {
    for (auto* layer : layers) out.push_back((*layer)(x));
    return out;
  }
  std::vector<std::tuple<const void*, const void*, int64_t>> stamp;
  for (auto* layer : layers) {
    for (const torch::Tensor& t : {(*layer)->weight, (*layer)->bias}) {
      CADCLIP_CHECK(t.defined(), "FusedLinear needs layers with biases");
      stamp.emplace_back(t.unsafeGetTensorImpl(), t.data_ptr(), static_cast<int64_t>(t._version()));
    }
  }
  torch::Tensor weight, bias;
  std::vector<int64_t> sizes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stamp != stamp_) {
      std::vector<torch::Tensor> weights, biases;
      sizes_.clear();
      for (auto* layer : layers) {
        weights.push_back((*layer)->weight);
        biases.push_back((*layer)->bias);
        sizes_.push_back((*layer)->weight.size(0));
      }
      weight_ = at::cat(weights, 0);
      bias_ = at::cat(biases, 0);
      stamp_ = std::move(stamp);
    }
    weight = weight_;
    bias = bias_;
    sizes = sizes_;
  }
  return at::linear(x, weight, bias).split_with_sizes(sizes, -1);
}

torch::Tensor key_padding_bias(const torch::Tensor& mask) {
  const torch::Tensor padding = mask.eq(0).to(at::kFloat);
  return (padding * std::numeric_limits<float>::lowest()).view({mask.size(0), 1, 1, mask.size(1)});
}

}  // namespace cadclip::text::detail
