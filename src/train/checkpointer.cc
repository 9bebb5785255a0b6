#include "cadclip/train/checkpointer.h"

#include <ATen/ATen.h>

#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/model/two_tower.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

std::map<std::string, at::Tensor> optimizer_state(torch::optim::AdamW& optimizer,
                                                  torch::nn::Module& model,
                                                  const at::Tensor& extra) {
  std::map<std::string, at::Tensor> out;
  auto save = [&](const std::string& name, const at::Tensor& p) {
    const auto it = optimizer.state().find(p.unsafeGetTensorImpl());
    if (it == optimizer.state().end()) return;
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
    out["optim." + name + ".exp_avg"] = s.exp_avg();
    out["optim." + name + ".exp_avg_sq"] = s.exp_avg_sq();
    out["optim." + name + ".step"] = at::full({}, s.step(), at::kLong);
  };
  for (const auto& item : model.named_parameters()) save(item.key(), item.value());
  if (extra.defined()) save("siglip.bias", extra);
  return out;
}

void load_optimizer_state(torch::optim::AdamW& optimizer, torch::nn::Module& model,
                          const at::Tensor& extra, const std::map<std::string, at::Tensor>& state) {
  auto load = [&](const std::string& name, const at::Tensor& p) {
    const auto avg = state.find("optim." + name + ".exp_avg");
    if (avg == state.end()) return;  // never stepped (e.g. frozen), keeps no state
    auto s = std::make_unique<torch::optim::AdamWParamState>();
    s->exp_avg(avg->second.to(p.device()).clone());
    s->exp_avg_sq(state.at("optim." + name + ".exp_avg_sq").to(p.device()).clone());
    s->step(state.at("optim." + name + ".step").item<int64_t>());
    optimizer.state()[p.unsafeGetTensorImpl()] = std::move(s);
  };
  for (const auto& item : model.named_parameters()) load(item.key(), item.value());
  if (extra.defined()) load("siglip.bias", extra);
}

}  // namespace

Checkpointer::Checkpointer(fs::path run_folder, Communicator& comm, RunParts parts)
    : out_(std::move(run_folder)), comm_(comm), parts_(parts) {}

void Checkpointer::save(const std::string& name, const RunPosition& position) const {
  model::TrainingState s;
  s.epoch = position.epoch;
  s.step_in_epoch = position.step_in_epoch;
  s.global_step = position.global_step;
  s.best_metric = position.best_validation;
  s.tensors = optimizer_state(parts_.optimizer, *parts_.built.model, parts_.siglip_bias);
  for (auto& [k, v] : parts_.scaler.state()) s.tensors[k] = v;
  const at::Tensor rng = at::detail::getDefaultCPUGenerator().get_state();  // [n] uint8
  const at::Tensor every_rng = comm_.all_gather(rng.unsqueeze(0));          // [world, n]
  s.tensors["rng.cpu"] = rng;  // this rank's (rank 0's where it is written)
  for (int r = 0; r < comm_.world_size(); ++r)
    s.tensors[format("rng.cpu.rank{}", r)] = every_rng[r].clone();
  if (parts_.siglip_bias.defined()) s.tensors["siglip.bias"] = parts_.siglip_bias.detach().cpu();
  if (parts_.momentum) parts_.momentum->add_state(s.tensors);
  s.extra = {{"skipped", position.skipped},
             {"consecutive_nonfinite", position.consecutive_nonfinite},
             {"world_size", comm_.world_size()}};
  if (comm_.rank() == 0) model::save_checkpoint(out_, name, parts_.built, s);
  comm_.barrier();
}

void Checkpointer::restore(const model::TrainingState& state, const fs::path& checkpoint) const {
  load_optimizer_state(parts_.optimizer, *parts_.built.model, parts_.siglip_bias, state.tensors);
  parts_.scaler.load_state(state.tensors);
  // Every rank's own RNG state (dropout): ranks draw different amounts when
  // their shares of a batch differ, so rank 0's state is not theirs. The
  // sampler and caption choice are stateless (seed, epoch, step), the same step
  // on every rank: nothing else of a rank's position needs saving.
  if (state.tensors.empty()) return;
  const int64_t saved_world = state.extra.value("world_size", int64_t{1});
  if (saved_world != comm_.world_size() && state.step_in_epoch != 0)
    throw Error(
        format("{} was written by a run of {} processes in the middle of epoch {}: resume it "
               "with {} processes (the epoch's batches depend on the process count), or from "
               "a checkpoint at the end of an epoch",
               checkpoint.string(), saved_world, state.epoch + 1, saved_world));
  if (saved_world != comm_.world_size() && comm_.rank() == 0)
    log::warn("train",
              "resuming a checkpoint of {} processes with {}: the data order goes on exactly, "
              "the dropout streams of the ranks do not",
              saved_world, comm_.world_size());
  auto it = state.tensors.find(format("rng.cpu.rank{}", comm_.rank()));
  if (it == state.tensors.end()) it = state.tensors.find("rng.cpu");  // older checkpoints
  if (it != state.tensors.end()) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(it->second);
  }
}

std::vector<std::string> resume_conflicts(const model::ModelConfig& asked,
                                          const model::ModelConfig& saved) {
  std::vector<std::string> conflicts;
  auto check = [&](const char* flag, const auto& given, const auto& kept) {
    if (given != kept)
      conflicts.push_back(format("{} {} (the checkpoint has {})", flag, given, kept));
  };
  check("--brep-width", asked.brep.width, saved.brep.width);
  check("--brep-layers", asked.brep.layers, saved.brep.layers);
  check("--brep-heads", asked.brep.heads, saved.brep.heads);
  check("--brep-ffn", asked.brep.ffn_hidden, saved.brep.ffn_hidden);
  check("--brep-dropout", asked.brep.dropout, saved.brep.dropout);
  check("B-Rep face_channels", asked.brep.face_channels, saved.brep.face_channels);
  check("B-Rep edge_width", asked.brep.edge_width, saved.brep.edge_width);
  check("B-Rep max_hops", asked.brep.max_hops, saved.brep.max_hops);
  check("--embed-dim", asked.two_tower.embed_dim, saved.two_tower.embed_dim);
  check("--text-head-hidden", asked.two_tower.text_head_hidden, saved.two_tower.text_head_hidden);
  check("--quantity-width", asked.two_tower.quantity_width, saved.two_tower.quantity_width);
  check("--text-space", model::text_space_name(asked.two_tower.text_space),
        model::text_space_name(saved.two_tower.text_space));
  check("--max-text-length", asked.text.max_length, saved.text.max_length);
  check("--precision", model::text_precision_name(asked.two_tower.text_precision),
        model::text_precision_name(saved.two_tower.text_precision));
  return conflicts;
}

model::ModelConfig checkpoint_config(const fs::path& pointer) {
  const fs::path folder = model::resolve_checkpoint(pointer);
  return model::read_model_config(folder / "config.json");
}

}  // namespace cadclip::train
