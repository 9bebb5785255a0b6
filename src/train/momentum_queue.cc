#include "cadclip/train/momentum_queue.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "cadclip/core/error.h"

namespace cadclip::train {

EmbeddingQueue::EmbeddingQueue(int64_t capacity, int64_t dim, c10::Device device)
    : capacity_(capacity), dim_(dim) {
  if (capacity < 1) throw Error(format("--queue {} must be positive (0 = no queue)", capacity));
  const auto options = at::TensorOptions().device(device);
  text_ = at::zeros({capacity, dim}, options.dtype(at::kFloat));
  cad_ = at::zeros({capacity, dim}, options.dtype(at::kFloat));
  caption_key_ = at::zeros({capacity}, options.dtype(at::kLong));
  geometry_key_ = at::zeros({capacity}, options.dtype(at::kLong));
}

void EmbeddingQueue::enqueue(const at::Tensor& text, const at::Tensor& cad,
                             const at::Tensor& caption_key, const at::Tensor& geometry_key) {
  const int64_t b = text.size(0);
  CADCLIP_CHECK(text.dim() == 2 && text.size(1) == dim_ && cad.sizes() == text.sizes() &&
                    caption_key.dim() == 1 && caption_key.size(0) == b && geometry_key.dim() == 1 &&
                    geometry_key.size(0) == b,
                "queue: embeddings [{}, {}] and keys of {} and {} rows do not fit a queue of "
                "dimension {}",
                b, text.dim() == 2 ? text.size(1) : -1, caption_key.size(0), geometry_key.size(0),
                dim_);
  at::NoGradGuard no_grad;
  // The pitfall of queues: one bad batch would poison every later step's negatives.
  const int64_t bad_text = (~at::isfinite(text)).sum().item<int64_t>();
  const int64_t bad_cad = (~at::isfinite(cad)).sum().item<int64_t>();
  if (bad_text + bad_cad > 0)
    throw Error(
        format("refusing to enqueue momentum embeddings holding NaN/Inf ({} text and {} CAD "
               "values of {} rows): the momentum encoder has diverged; resume from an earlier "
               "checkpoint with a lower learning rate or a smaller --queue-momentum",
               bad_text, bad_cad, b));
  const int64_t keep = std::min(b, capacity_);
  const int64_t skip = b - keep;
  for (int64_t written = 0; written < keep;) {
    const int64_t run = std::min(keep - written, capacity_ - next_);
    const int64_t from = skip + written;
    text_.narrow(0, next_, run).copy_(text.narrow(0, from, run).to(at::kFloat));
    cad_.narrow(0, next_, run).copy_(cad.narrow(0, from, run).to(at::kFloat));
    caption_key_.narrow(0, next_, run).copy_(caption_key.narrow(0, from, run));
    geometry_key_.narrow(0, next_, run).copy_(geometry_key.narrow(0, from, run));
    written += run;
    next_ = (next_ + run) % capacity_;
  }
  filled_ = std::min(capacity_, filled_ + keep);
}

QueueNegatives EmbeddingQueue::negatives() const {
  QueueNegatives q;
  q.text = text_.narrow(0, 0, filled_);
  q.cad = cad_.narrow(0, 0, filled_);
  q.caption_key = caption_key_.narrow(0, 0, filled_);
  q.geometry_key = geometry_key_.narrow(0, 0, filled_);
  return q;
}

std::map<std::string, at::Tensor> EmbeddingQueue::state() const {
  return {{"queue.text", text_.cpu()},
          {"queue.cad", cad_.cpu()},
          {"queue.caption_key", caption_key_.cpu()},
          {"queue.geometry_key", geometry_key_.cpu()},
          {"queue.position", at::tensor(std::vector<int64_t>{next_, filled_}, at::kLong)}};
}

void EmbeddingQueue::load_state(const std::map<std::string, at::Tensor>& state) {
  const char* names[] = {"queue.text", "queue.cad", "queue.caption_key", "queue.geometry_key",
                         "queue.position"};
  for (const char* name : names)
    if (!state.contains(name))
      throw Error(
          format("the training state has no '{}': the checkpoint was written without --queue; "
                 "resume with the options it was trained with",
                 name));
  const at::Tensor& text = state.at("queue.text");
  if (text.dim() != 2 || text.size(0) != capacity_ || text.size(1) != dim_)
    throw Error(format(
        "the checkpoint's queue is [{}, {}], this run's is [{}, {}]: resume with "
        "the same --queue and --embed-dim",
        text.dim() == 2 ? text.size(0) : -1, text.dim() == 2 ? text.size(1) : -1, capacity_, dim_));
  const at::Tensor position = state.at("queue.position");
  CADCLIP_CHECK(position.numel() == 2, "queue.position must hold 2 values");
  const int64_t next = position[0].item<int64_t>(), filled = position[1].item<int64_t>();
  if (next < 0 || next >= capacity_ || filled < 0 || filled > capacity_)
    throw Error(format("the checkpoint's queue position ({}, {}) does not fit its capacity {}",
                       next, filled, capacity_));
  if (!at::isfinite(text).all().item<bool>() ||
      !at::isfinite(state.at("queue.cad")).all().item<bool>())
    throw Error("the checkpoint's queue holds NaN/Inf; it cannot be resumed");
  at::NoGradGuard no_grad;
  text_.copy_(text);
  cad_.copy_(state.at("queue.cad"));
  caption_key_.copy_(state.at("queue.caption_key"));
  geometry_key_.copy_(state.at("queue.geometry_key"));
  next_ = next;
  filled_ = filled;
}

void momentum_update(const std::vector<at::Tensor>& momentum, const std::vector<at::Tensor>& online,
                     double m) {
  CADCLIP_CHECK(momentum.size() == online.size(), "momentum update: {} vs {} tensors",
                momentum.size(), online.size());
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < momentum.size(); ++i) {
    const at::Tensor& target = momentum[i];  // updated in place
    target.mul_(m).add_(online[i].detach(), 1 - m);
  }
}

}  // namespace cadclip::train
