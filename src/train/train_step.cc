#include "cadclip/train/train_step.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "cadclip/core/format.h"

namespace cadclip::train {

at::Tensor step_text_embeddings(const model::TextEmbedder& embedder, const StepInputs& in,
                                const TextFeatureCache* frozen, const TextHiddenCache* below) {
  if (frozen != nullptr)
    return embedder.project(frozen->rows(in.captions).to(embedder.device()), in.quantities);
  if (below != nullptr) {
    const TextHiddenCache::Rows rows = below->rows(in.captions);
    return embedder.project(embedder.pool_batch_from(rows.hidden, rows.mask, below->first()),
                            in.quantities);
  }
  return embedder.project(embedder.pool_batch(in.tokens), in.quantities);
}

// The step's embeddings and loss before anything is applied.
struct TrainStep::Forward {
  ContrastivePairs pairs;
  at::Tensor logit_scale;
  at::Tensor momentum_text, momentum_cad;  // undefined without a queue
  LossResult loss;
};

TrainStep::TrainStep(StepParts parts, StepSettings settings) : parts_(parts), settings_(settings) {
  if (parts_.momentum != nullptr)
    momentum_text_ = std::make_unique<model::TextEmbedder>(
        parts_.momentum->model(), parts_.text.tokenizer(), parts_.text.max_length());
}

StepResult TrainStep::update(StepLoader& loader, int64_t epoch, int64_t step, int64_t global_step) {
  const auto started = std::chrono::steady_clock::now();
  const StepInputs in = loader.take(epoch, step);
  const Forward f = forward(in, global_step);
  StepResult result;
  result.loss = f.loss.loss.item<double>();
  parts_.schedule.apply(parts_.optimizer, global_step);
  parts_.optimizer.zero_grad();
  result.skip_reason = backward(f.loss.loss, result.loss);
  if (result.skip_reason.empty())
    apply(f);
  else
    parts_.optimizer.zero_grad();
  result.lr = parts_.schedule.new_modules_rate(global_step);
  result.logit_scale = f.logit_scale.item<double>();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.samples = f.loss.global_count;
  result.masked_pairs = f.loss.masked_pairs;
  result.masked_queue = f.loss.masked_queue;
  result.queue_rows = parts_.momentum != nullptr ? parts_.momentum->queue().size() : 0;
  return result;
}

TrainStep::Forward TrainStep::forward(const StepInputs& in, int64_t global_step) {
  Forward f;
  const at::Tensor cad = parts_.model.encode_brep(in.brep);
  const at::Tensor text =
      step_text_embeddings(parts_.text, in, parts_.frozen_text, parts_.frozen_below);
  f.logit_scale = parts_.model.logit_scale();
  f.pairs = {text, cad, in.caption_keys, in.geometry_keys};
  // Momentum encoders: one EMA step towards the online weights, then this
  // batch's momentum embeddings (enqueued after the step). The loss sees
  // only earlier batches in the queue: this batch is already in the batch.
  QueueNegatives negatives;
  if (parts_.momentum != nullptr) {
    at::NoGradGuard no_grad;
    parts_.momentum->follow_online();
    f.momentum_cad = parts_.momentum->model().encode_brep(in.brep);
    f.momentum_text =
        step_text_embeddings(*momentum_text_, in, parts_.frozen_text, parts_.frozen_below);
    negatives = parts_.momentum->queue().negatives();
  }
  f.loss = contrastive_loss(parts_.comm, f.pairs, f.logit_scale, parts_.siglip_bias, settings_.loss,
                            parts_.momentum != nullptr ? &negatives : nullptr);
  if (settings_.debug_nan_at_step >= 0 && global_step >= settings_.debug_nan_at_step &&
      global_step < settings_.debug_nan_at_step + settings_.debug_nan_count)
    f.loss.loss = f.loss.loss * std::numeric_limits<double>::quiet_NaN();
  return f;
}

// Gradients of a finite loss, averaged over the ranks and unscaled; the
// reason the step must be skipped, or "".
std::string TrainStep::backward(const at::Tensor& loss, double value) {
  // Caught before backward: nothing is applied, and it is said out loud.
  if (!std::isfinite(value)) return format("loss is {}", value);
  parts_.scaler.scale(loss).backward();
  average_gradients(parts_.comm, parts_.parameters);
  if (!parts_.scaler.unscale_and_check(parts_.parameters)) return "";
  std::string reason =
      format("gradients hold NaN/Inf at loss scale {}", parts_.scaler.current_scale());
  parts_.scaler.update(true);
  return reason;
}

void TrainStep::apply(const Forward& f) {
  if (settings_.grad_clip > 0)
    torch::nn::utils::clip_grad_norm_(parts_.parameters, settings_.grad_clip);
  parts_.optimizer.step();
  if (parts_.anchor != nullptr) parts_.anchor->pull(parts_.optimizer);
  parts_.model.clamp_logit_scale_();
  parts_.scaler.update(false);
  // Only a step that was taken feeds the queue; enqueue refuses NaN/Inf loudly.
  if (parts_.momentum != nullptr)
    parts_.momentum->queue().enqueue(f.momentum_text, f.momentum_cad, f.pairs.caption_key,
                                     f.pairs.geometry_key);
}

}  // namespace cadclip::train
