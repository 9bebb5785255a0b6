// The momentum side of --queue N (MoCo): a copy of the model whose trainable
// weights follow the online ones by an exponential moving average, and the
// queue of that copy's embeddings of earlier batches. Saved in checkpoints
// ("momentum.<name>", "queue.*"), so that a resumed run is bitwise the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/train/momentum_queue.h"

namespace cadclip::train {

struct MomentumOptions {
  int64_t rows = 0;         // queue rows per modality (> 0)
  double momentum = 0.995;  // EMA factor in [0, 1)
  int64_t embed_dim = 256;  // embedding size of the queue
  c10::Device device = at::kCPU;
};

class MomentumEncoders {
 public:
  // Copies `online` (a second model of the same config, built without moving
  // the torch RNG, so that a run with the queue resumes like one without), its
  // trainable weights from `state` when saved there. `resumed`: state is a
  // checkpoint's past step 0, which must then hold the momentum weights and the
  // queue; else cadclip::Error naming `checkpoint` and what is missing.
  MomentumEncoders(model::BuiltModel& online, const model::TrainingState& state, bool resumed,
                   const std::filesystem::path& checkpoint, const MomentumOptions& options);
  // One EMA step of the momentum weights towards the online ones.
  void follow_online();
  // The momentum model, in eval mode (no dropout noise, no random numbers).
  model::TwoTowerImpl& model() { return *copy_.model; }
  EmbeddingQueue& queue() { return *queue_; }
  // Adds the momentum weights and the queue to a checkpoint's tensors.
  void add_state(std::map<std::string, at::Tensor>& tensors) const;
  size_t tensor_count() const { return targets_.size(); }

 private:
  MomentumOptions options_;
  model::BuiltModel copy_;
  std::vector<at::Tensor> targets_, online_;  // paired by position
  std::vector<std::string> names_;
  std::unique_ptr<EmbeddingQueue> queue_;
};

}  // namespace cadclip::train
