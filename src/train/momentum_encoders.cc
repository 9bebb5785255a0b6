#include "cadclip/train/momentum_encoders.h"

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/model/two_tower.h"

namespace cadclip::train {

MomentumEncoders::MomentumEncoders(model::BuiltModel& online, const model::TrainingState& state,
                                   bool resumed, const std::filesystem::path& checkpoint,
                                   const MomentumOptions& options)
    : options_(options) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor rng = generator.get_state();
  copy_ = model::build_model(online.config);
  generator.set_state(rng);
  copy_.model->to(options.device);
  copy_.model->eval();
  std::map<std::string, at::Tensor> copies;
  for (const auto& item : copy_.model->named_parameters()) {
    item.value().requires_grad_(false);
    copies[item.key()] = item.value();
  }
  at::NoGradGuard no_grad;
  for (const auto& item : online.model->named_parameters()) {
    if (!item.value().requires_grad()) continue;  // frozen: the copy is the same weights
    at::Tensor target = copies.at(item.key());
    const auto saved = state.tensors.find("momentum." + item.key());
    if (resumed && saved == state.tensors.end())
      throw Error(
          format("{}: the checkpoint has no momentum weights ('momentum.{}'): it was "
                 "trained without --queue; resume with the options it was trained with",
                 checkpoint.string(), item.key()));
    target.copy_(saved != state.tensors.end() ? saved->second : item.value());
    targets_.push_back(target);
    online_.push_back(item.value());
    names_.push_back(item.key());
  }
  queue_ = std::make_unique<EmbeddingQueue>(options.rows, options.embed_dim, options.device);
  // A resumed run must find its queue: load_state throws, naming what is missing.
  if (state.tensors.contains("queue.position") || resumed) queue_->load_state(state.tensors);
}

void MomentumEncoders::follow_online() { momentum_update(targets_, online_, options_.momentum); }

void MomentumEncoders::add_state(std::map<std::string, at::Tensor>& tensors) const {
  for (auto& [k, v] : queue_->state()) tensors[k] = v;
  for (size_t i = 0; i < targets_.size(); ++i)
    tensors["momentum." + names_[i]] = targets_[i].detach().cpu();
}

}  // namespace cadclip::train
