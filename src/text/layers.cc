#include "layers.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <limits>
#include <string_view>
#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/log.h"
#include "cadclip/text/matmul_precision.h"

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

namespace {

using PointwiseFn = at::Tensor(const at::Tensor&, const at::Tensor&,
                               const std::optional<at::Tensor>&, std::string_view,
                               c10::List<std::optional<at::Scalar>>,
                               std::optional<std::string_view>);
using BinaryFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const std::optional<at::Tensor>&, std::string_view);

// oneDNN's inference linear ops from LibTorch's "mkldnn" operator library,
// when this LibTorch was built with oneDNN (the x86 wheels are).
struct OneDnn {
  std::optional<c10::TypedOperatorHandle<PointwiseFn>> pointwise;  // linear + activation
  std::optional<c10::TypedOperatorHandle<BinaryFn>> binary;        // linear + other tensor
  std::optional<c10::OperatorHandle> reorder;                      // weight -> oneDNN layout
};

const OneDnn& onednn() {
  static const OneDnn ops = [] {
    OneDnn found;
    if (!at::hasMKLDNN()) return found;
    auto& dispatcher = c10::Dispatcher::singleton();
    const auto pointwise = dispatcher.findSchema({"mkldnn::_linear_pointwise", ""});
    const auto binary = dispatcher.findSchema({"mkldnn::_linear_pointwise", "binary"});
    const auto reorder = dispatcher.findSchema({"mkldnn::_reorder_linear_weight", ""});
    if (!pointwise || !binary || !reorder) return found;
    try {
      found.pointwise = pointwise->typed<PointwiseFn>();
      found.binary = binary->typed<BinaryFn>();
      found.reorder = *reorder;
    } catch (const c10::Error& e) {
      // Another LibTorch with other signatures: at::linear still works.
      log::debug("text", "oneDNN linear ops not usable ({}); using at::linear",
                 e.what_without_backtrace());
      return OneDnn{};
    }
    return found;
  }();
  return ops;
}

// oneDNN's names (attr, algorithm) for our activations.
std::pair<std::string_view, std::string_view> onednn_activation(std::optional<Activation> a) {
  if (!a) return {"none", ""};
  switch (*a) {
    case Activation::kGeluErf:
      return {"gelu", "none"};
    case Activation::kGeluTanh:
      return {"gelu", "tanh"};
    case Activation::kRelu:
      return {"relu", ""};
    case Activation::kSilu:
      return {"swish", ""};
    case Activation::kTanh:
      return {"tanh", ""};
  }
  CADCLIP_CHECK(false, "unknown activation {}", static_cast<int>(*a));
}

c10::List<std::optional<at::Scalar>> no_scalars() { return c10::List<std::optional<at::Scalar>>(); }

std::optional<at::Tensor> optional_bias(const torch::Tensor& bias) {
  return bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt;
}

torch::Tensor reorder_for_onednn(const torch::Tensor& weight) {
  torch::jit::Stack stack{weight, c10::IValue()};  // batch_size: none
  onednn().reorder->callBoxed(&stack);
  return stack.at(0).toTensor();
}

// One of the layers' tensors (weight or bias), the layers' stacked along
// the output dimension.
torch::Tensor concatenated(const std::vector<torch::nn::Linear*>& layers,
                           torch::Tensor torch::nn::LinearImpl::*member) {
  // One layer needs no copy unless it is reordered.
  if (layers.size() == 1) return (**layers.front()).*member;
  std::vector<torch::Tensor> parts;
  for (auto* layer : layers) parts.push_back((**layer).*member);
  return at::cat(parts, 0);
}

// Whether this thread's TextMatmulScope asks for bfloat16 GEMMs and x suits them.
bool bf16_requested(const torch::Tensor& x) {
  return current_matmul_precision() == MatmulPrecision::kBFloat16 && x.device().is_cpu() &&
         x.scalar_type() == at::kFloat;
}

std::vector<int64_t> out_sizes(const std::vector<torch::nn::Linear*>& layers) {
  std::vector<int64_t> sizes;
  for (auto* layer : layers) sizes.push_back((*layer)->weight.size(0));
  return sizes;
}

}  // namespace

bool onednn_linear_available() { return onednn().reorder.has_value(); }

FusedLinear::Cached FusedLinear::cached(const std::vector<torch::nn::Linear*>& layers,
                                        bool want_bf16) {
  std::vector<std::tuple<const void*, const void*, int64_t>> stamp;
  stamp.reserve(2 * layers.size());
  const bool biased = (*layers.front())->bias.defined();
  for (auto* layer : layers) {
    CADCLIP_CHECK((*layer)->bias.defined() == biased,
                  "FusedLinear needs layers that all have biases or all have none");
    for (const torch::Tensor& t : {(*layer)->weight, (*layer)->bias}) {
      if (!t.defined()) continue;
      stamp.emplace_back(t.unsafeGetTensorImpl(), t.data_ptr(), static_cast<int64_t>(t._version()));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (stamp != stamp_) {
    Cached fresh;
    fresh.sizes = out_sizes(layers);
    fresh.weight = concatenated(layers, &torch::nn::LinearImpl::weight);
    if (biased) fresh.bias = concatenated(layers, &torch::nn::LinearImpl::bias);
    if (onednn().reorder && fresh.weight.device().is_cpu() &&
        fresh.weight.scalar_type() == at::kFloat) {
      fresh.weight = reorder_for_onednn(fresh.weight);
      fresh.packed = true;
    }
    cached_ = std::move(fresh);
    stamp_ = std::move(stamp);
  }
  if (want_bf16 && cached_.packed && !cached_.weight_bf16.defined()) {
    cached_.weight_bf16 =
        reorder_for_onednn(concatenated(layers, &torch::nn::LinearImpl::weight).to(at::kBFloat16));
    if (biased)
      cached_.bias_bf16 = concatenated(layers, &torch::nn::LinearImpl::bias).to(at::kBFloat16);
  }
  Cached out = cached_;
  if (!want_bf16) out.weight_bf16 = out.bias_bf16 = torch::Tensor();
  return out;
}

torch::Tensor FusedLinear::packed_linear(const Cached& c, const torch::Tensor& x,
                                         std::optional<Activation> activation) {
  const auto [attr, algorithm] = onednn_activation(activation);
  if (c.weight_bf16.defined()) {
    return onednn()
        .pointwise
        ->call(x.to(at::kBFloat16), c.weight_bf16, optional_bias(c.bias_bf16), attr, no_scalars(),
               algorithm)
        .to(at::kFloat);
  }
  return onednn().pointwise->call(x, c.weight, optional_bias(c.bias), attr, no_scalars(),
                                  algorithm);
}

std::vector<torch::Tensor> FusedLinear::forward(const torch::Tensor& x,
                                                const std::vector<torch::nn::Linear*>& layers) {
  std::vector<torch::Tensor> out;
  if (torch::GradMode::is_enabled()) {
    for (auto* layer : layers) out.push_back((*layer)(x));
    return out;
  }
  const Cached c = cached(layers, bf16_requested(x));
  const torch::Tensor y =
      c.packed ? packed_linear(c, x, std::nullopt) : at::linear(x, c.weight, optional_bias(c.bias));
  return y.split_with_sizes(c.sizes, -1);
}

torch::Tensor FusedLinear::forward_cat(const torch::Tensor& x,
                                       const std::vector<torch::nn::Linear*>& layers,
                                       std::optional<Activation> activation) {
  if (torch::GradMode::is_enabled()) {
    std::vector<torch::Tensor> outs;
    for (auto* layer : layers) outs.push_back((*layer)(x));
    const torch::Tensor y = outs.size() == 1 ? outs[0] : at::cat(outs, -1);
    return activation ? activate(y, *activation) : y;
  }
  const Cached c = cached(layers, bf16_requested(x));
  if (c.packed) return packed_linear(c, x, activation);
  const torch::Tensor y = at::linear(x, c.weight, optional_bias(c.bias));
  return activation ? activate(y, *activation) : y;
}

torch::Tensor FusedLinear::forward_add(const torch::Tensor& x, torch::nn::Linear& layer,
                                       const torch::Tensor& residual) {
  if (torch::GradMode::is_enabled()) return layer(x) + residual;
  const Cached c = cached({&layer}, bf16_requested(x));
  // The residual stream stays float32: only the GEMM runs in bfloat16.
  if (c.weight_bf16.defined()) return packed_linear(c, x, std::nullopt) + residual;
  if (c.packed)
    return onednn().binary->call(x, residual.contiguous(), c.weight, optional_bias(c.bias), "add");
  return at::linear(x, c.weight, optional_bias(c.bias)) + residual;
}

DenseNorm::DenseNorm(int64_t in, int64_t out, double eps) {
  dense = register_module("dense", torch::nn::Linear(in, out));
  norm = register_module("LayerNorm",
                         torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}).eps(eps)));
}

torch::Tensor DenseNorm::forward(const torch::Tensor& x, const torch::Tensor& residual,
                                 double dropout) {
  const bool drop = is_training() && dropout > 0;
  if (!drop && !torch::GradMode::is_enabled()) return norm(fast.forward_add(x, dense, residual));
  torch::Tensor h = dense(x);
  if (drop) h = at::dropout(h, dropout, true);
  return norm(h + residual);
}

Intermediate::Intermediate(int64_t in, int64_t out, Activation act) : activation(act) {
  dense = register_module("dense", torch::nn::Linear(in, out));
}

torch::Tensor Intermediate::forward(const torch::Tensor& x) {
  if (!torch::GradMode::is_enabled()) return fast.forward_cat(x, {&dense}, activation);
  return activate(dense(x), activation);
}

torch::Tensor key_padding_bias(const torch::Tensor& mask) {
  const torch::Tensor padding = mask.eq(0).to(at::kFloat);
  return (padding * std::numeric_limits<float>::lowest()).view({mask.size(0), 1, 1, mask.size(1)});
}

}  // namespace cadclip::text::detail
