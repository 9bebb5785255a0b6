// One training step as an object: both towers encode the step's inputs (a
// frozen text tower's pooled features come from the feature cache), the
// momentum side follows the online weights, the contrastive loss is taken
// over the global batch, and then either the update is applied (gradients
// averaged and clipped, AdamW, the logit scale clamped, the queue fed) or,
// for a non-finite loss or gradients, nothing is, and the reason is returned.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cadclip/model/text_embedding.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/init_anchor.h"
#include "cadclip/train/loss.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/momentum_encoders.h"
#include "cadclip/train/schedule.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/step_loader.h"
#include "cadclip/train/text_cache.h"

namespace cadclip::train {

// What a step updates and reads; every part outlives the step.
struct StepParts {
  model::TwoTowerImpl& model;
  const model::TextEmbedder& text;      // the model's text path
  const TextFeatureCache* frozen_text;  // a frozen tower's caption features; null: tokens
  const TextHiddenCache* frozen_below;  // hidden states below the trained layers; null: tokens
  MomentumEncoders* momentum;           // null without a queue
  torch::optim::Optimizer& optimizer;   // made from adamw_groups
  DynamicLossScaler& scaler;
  const LearningRateSchedule& schedule;
  const std::vector<at::Tensor>& parameters;  // every trainable tensor, SigLIP's bias included
  const at::Tensor& siglip_bias;              // undefined without SigLIP
  Communicator& comm;
  const InitAnchor* anchor = nullptr;  // --init-anchor: pulls each taken step back; null = off
};

struct StepSettings {
  LossOptions loss;
  double grad_clip = 1.0;          // max global gradient norm; 0 = no clipping
  int64_t debug_nan_at_step = -1;  // poison the loss with NaN from this global step
  int64_t debug_nan_count = 1;     // ... for this many steps
};

struct StepResult {
  double loss = 0;
  std::string skip_reason;  // why nothing was applied; empty when the update was
  double lr = 0;            // the new modules' learning rate of the step
  double logit_scale = 0;
  double seconds = 0;        // from asking for the inputs to the end of the update
  int64_t samples = 0;       // pairs in the global batch
  int64_t masked_pairs = 0;  // off-diagonal pairs kept out as false negatives
  int64_t masked_queue = 0;  // (batch row, queue row) pairs kept out
  int64_t queue_rows = 0;    // momentum queue rows after the step
};

// A step's text embeddings [B, embed_dim], unit rows: the cached pooled
// features of its captions (`frozen`, a frozen tower), their cached hidden
// states through the trained layers (`below`, a tower trained in its last
// layers), or their tokens through the tower, then the text head, through
// `embedder`.
at::Tensor step_text_embeddings(const model::TextEmbedder& embedder, const StepInputs& in,
                                const TextFeatureCache* frozen,
                                const TextHiddenCache* below = nullptr);

class TrainStep {
 public:
  TrainStep(StepParts parts, StepSettings settings);
  // Takes the inputs of (epoch, step) from `loader` and updates once;
  // `global_step` is the step's index over the whole run.
  StepResult update(StepLoader& loader, int64_t epoch, int64_t step, int64_t global_step);

 private:
  struct Forward;
  Forward forward(const StepInputs& in, int64_t global_step);
  std::string backward(const at::Tensor& loss, double value);
  void apply(const Forward& f);

  StepParts parts_;
  StepSettings settings_;
  std::unique_ptr<model::TextEmbedder> momentum_text_;  // the momentum model's text path
};

}  // namespace cadclip::train
