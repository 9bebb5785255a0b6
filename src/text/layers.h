// Building blocks shared by the BERT and DeBERTa encoders, named as in
// transformers so that named_parameters() gives the checkpoint's names.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace cadclip::text::detail {

enum class Activation { kGeluErf, kGeluTanh, kRelu, kSilu, kTanh };

// transformers' ACT2FN names; throws cadclip::Error naming `source` otherwise.
Activation parse_activation(const std::string& name, const std::string& source);
torch::Tensor activate(const torch::Tensor& x, Activation activation);

// Several Linear layers on the same input as one GEMM, for inference: the
// concatenated weights are built on first use and rebuilt whenever a source
// parameter is replaced, moved (its data pointer changes) or modified in
// place (its version counter moves). On the CPU, when LibTorch has oneDNN,
// the cached weight is also reordered once into oneDNN's blocked layout
// (mkldnn::_linear_pointwise, what torch.compile's CPU freezing uses): MKL's
// sgemm behind at::linear copies the whole weight into its own layout on
// every call, which was a third of MiniLM's batch-1 time here.
// Inside a TextMatmulScope asking for bfloat16 (matmul_precision.h), a
// second copy of the weight in bfloat16 is cached and the GEMM runs in
// bfloat16 with float32 on both sides of it.
// With grad mode on it runs the layers one by one, so autograd sees the
// parameters themselves. Safe to call from several threads.
class FusedLinear {
 public:
  // x: [..., in] -> one [..., out_i] per layer
  std::vector<torch::Tensor> forward(const torch::Tensor& x,
                                     const std::vector<torch::nn::Linear*>& layers);
  // x: [..., in] -> activation([..., sum of out_i]); the activation runs
  // inside the GEMM where oneDNN can.
  torch::Tensor forward_cat(const torch::Tensor& x, const std::vector<torch::nn::Linear*>& layers,
                            std::optional<Activation> activation = std::nullopt);
  // x: [..., in], residual: [..., out] -> layer(x) + residual (one layer),
  // the addition inside the GEMM where oneDNN can.
  torch::Tensor forward_add(const torch::Tensor& x, torch::nn::Linear& layer,
                            const torch::Tensor& residual);

 private:
  struct Cached {
    torch::Tensor weight, bias;  // [sum out_i, in], [sum out_i] (undefined without biases)
    bool packed = false;         // weight is a oneDNN tensor for mkldnn::_linear_pointwise
    torch::Tensor weight_bf16, bias_bf16;  // packed bfloat16 copies, built on first ask
    std::vector<int64_t> sizes;            // out_i
  };
  // With want_bf16, also the bfloat16 copies when oneDNN has them (they
  // stay undefined in the answer otherwise).
  Cached cached(const std::vector<torch::nn::Linear*>& layers, bool want_bf16);
  // [..., in] -> activation([..., sum of out_i]) in float32 through oneDNN,
  // for a packed c; the GEMM runs in bfloat16 when c has its copies.
  static torch::Tensor packed_linear(const Cached& c, const torch::Tensor& x,
                                     std::optional<Activation> activation);

  std::mutex mutex_;
  std::vector<std::tuple<const void*, const void*, int64_t>> stamp_;
  Cached cached_;
};

// "dense" then residual and "LayerNorm": BertSelfOutput, BertOutput and the
// DeBERTa equivalents.
struct DenseNorm : torch::nn::Module {
  DenseNorm(int64_t in, int64_t out, double eps);
  // x: [..., in], residual: [..., out] -> [..., out]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual, double dropout);
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  FusedLinear fast;  // dense for no-grad runs
};

// "dense" then the activation: BertIntermediate.
struct Intermediate : torch::nn::Module {
  Intermediate(int64_t in, int64_t out, Activation activation);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear dense{nullptr};
  Activation activation;
  FusedLinear fast;  // dense (and the activation) for no-grad runs
};

// True when LibTorch has oneDNN's linear ops (packed float32 and bfloat16
// GEMMs); at::linear runs otherwise.
bool onednn_linear_available();

// mask: [B, T] -> additive key bias [B, 1, 1, T]: 0 on tokens, the lowest
// float on padding (what masked_fill with finfo.min does to a softmax).
torch::Tensor key_padding_bias(const torch::Tensor& mask);

}  // namespace cadclip::text::detail
