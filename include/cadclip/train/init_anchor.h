// L2-SP (Li, Grandvalet and Davoine 2018, "Explicit inductive bias for
// transfer learning with convolutional networks"), decoupled from the
// gradient as AdamW's weight decay is: after each step every trainable tensor
// of the model moves toward its value in the --init checkpoint,
//
//   theta <- theta - lr * strength * (theta - theta_init),
//
// lr being its group's rate at that step. A fine-tune then learns new data
// without forgetting what the starting model knew: Adam's steps are about lr
// each, so a tensor whose update keeps one sign settles about 1/strength from
// where it started, and one whose update changes sign stays nearer.
#pragma once

#include <string>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace cadclip::train {

class InitAnchor {
 public:
  // `start`: the --init checkpoint's model, whose every tensor of `model`'s
  // trainable ones (by name) is copied to `model`'s device. Throws when one is
  // missing or of another shape, unless `may_start_fresh` says its name may
  // (a new text head, --init-new-text-head): that tensor has no anchor.
  // strength must be positive.
  InitAnchor(torch::nn::Module& model, const torch::nn::Module& start, double strength,
             bool (*may_start_fresh)(const std::string& name) = nullptr);

  // After optimizer.step(): moves each anchored tensor of the optimizer's
  // groups toward its start by its group's lr times the strength (at most all
  // the way). Tensors without an anchor (SigLIP's bias) are left alone.
  void pull(torch::optim::Optimizer& optimizer) const;

  // Root mean square of (theta - theta_init) over every anchored element.
  double rms_drift() const;

  int64_t tensors() const { return static_cast<int64_t>(anchors_.size()); }

 private:
  struct Anchor {
    at::Tensor parameter, start;
  };
  std::unordered_map<const c10::TensorImpl*, Anchor> anchors_;
  double strength_;
};

}  // namespace cadclip::train
