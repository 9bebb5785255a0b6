// Building blocks shared by the BERT and DeBERTa encoders, named as in
// transformers so that named_parameters() gives the checkpoint's names.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace cadclip::text::detail {

enum class Activation { kGeluErf, kGeluTanh, kRelu, kSilu, kTanh };

// transformers' ACT2FN names; throws cadclip::Error naming `source` otherwise.
Activation parse_activation(const std::string& name, const std::string& source);
torch::Tensor activate(const torch::Tensor& x, Activation activation);

// "dense" then residual and "LayerNorm": BertSelfOutput, BertOutput and the
// DeBERTa equivalents.
struct DenseNorm : torch::nn::Module {
  DenseNorm(int64_t in, int64_t out, double eps);
  // x: [..., in], residual: [..., out] -> [..., out]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual, double dropout);
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

// "dense" then the activation: BertIntermediate.
struct Intermediate : torch::nn::Module {
  Intermediate(int64_t in, int64_t out, Activation activation);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear dense{nullptr};
  Activation activation;
};

// Several Linear layers on the same input as one GEMM, for inference: the
// concatenated weights are built on first use and rebuilt whenever a source
// parameter is replaced, moved (its data pointer changes) or modified in
// place (its version counter moves).
// With grad mode on it runs the layers one by one, so autograd sees the
// parameters themselves. Safe to call from several threads.
class FusedLinear {
 public:
  // x: [..., in] -> one [..., out_i] per layer
  std::vector<torch::Tensor> forward(const torch::Tensor& x,
                                     const std::vector<torch::nn::Linear*>& layers);

 private:
  std::mutex mutex_;
  std::vector<std::tuple<const void*, const void*, int64_t>> stamp_;
  torch::Tensor weight_, bias_;
  std::vector<int64_t> sizes_;
};

// mask: [B, T] -> additive key bias [B, 1, 1, T]: 0 on tokens, the lowest
// float on padding (what masked_fill with finfo.min does to a softmax).
torch::Tensor key_padding_bias(const torch::Tensor& mask);

}  // namespace cadclip::text::detail
