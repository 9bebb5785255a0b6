// More negatives on one device (MoCo-style): a first-in-first-out queue of
// both modalities' embeddings of earlier batches, made by momentum copies of
// the trainable parts of the towers, with their caption and geometry keys for
// false-negative masking. Part of the training state: saved in and restored
// from checkpoints, so that a resumed run is bitwise the same.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cadclip/train/loss.h"

namespace cadclip::train {

class EmbeddingQueue {
 public:
  // capacity: rows per modality (> 0); dim: embedding size. Starts empty: only
  // filled rows are ever used as negatives (MoCo's random start is noise).
  EmbeddingQueue(int64_t capacity, int64_t dim, c10::Device device);

  // text, cad: [b, dim] (no gradient is kept); caption_key, geometry_key: [b]
  // int64. Replaces the oldest rows; with b > capacity only the last
  // `capacity` rows are kept. Throws cadclip::Error, and changes nothing, when
  // any embedding is NaN/Inf or a shape is wrong.
  void enqueue(const at::Tensor& text, const at::Tensor& cad, const at::Tensor& caption_key,
               const at::Tensor& geometry_key);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return filled_; }  // rows filled so far (<= capacity)
  // The filled rows ([size, dim] and [size]); empty tensors when size is 0.
  QueueNegatives negatives() const;

  // "queue.text", "queue.cad" [capacity, dim] fp32, "queue.caption_key",
  // "queue.geometry_key" [capacity] int64, "queue.position" [2] int64 (next
  // row to write, rows filled).
  std::map<std::string, at::Tensor> state() const;
  // Restores state(); throws cadclip::Error when the saved queue has another
  // capacity or dimension (a resumed run must keep --queue and --embed-dim),
  // or holds NaN/Inf.
  void load_state(const std::map<std::string, at::Tensor>& state);

 private:
  int64_t capacity_;
  int64_t dim_;
  int64_t next_ = 0;                       // row written next
  int64_t filled_ = 0;                     // rows holding embeddings
  at::Tensor text_, cad_;                  // [capacity, dim] fp32
  at::Tensor caption_key_, geometry_key_;  // [capacity] int64
};

// momentum <- m * momentum + (1 - m) * online, element-wise, without
// gradient; the two lists pair up by position and shape.
void momentum_update(const std::vector<at::Tensor>& momentum, const std::vector<at::Tensor>& online,
                     double m);

}  // namespace cadclip::train
