#include "cadclip/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/train/checkpointer.h"
#include "cadclip/train/init_anchor.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/momentum_encoders.h"
#include "cadclip/train/optimizer.h"
#include "cadclip/train/sampler.h"
#include "cadclip/train/schedule.h"
#include "cadclip/train/source_mix.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/step_loader.h"
#include "cadclip/train/text_cache.h"
#include "cadclip/train/train_reporter.h"
#include "cadclip/train/train_step.h"
#include "cadclip/train/training_plan.h"
#include "cadclip/train/validator.h"
#include "train/training_data.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

// Refuses options that cannot make a run, before anything is read or written.
void check_options(const TrainOptions& options, const Communicator& comm) {
  if (options.data.empty()) throw Error("train needs --data, a prepared dataset folder");
  if (options.loader_threads < 0)
    throw Error(
        format("--loader-threads {} must be 0 (inside the step) or more", options.loader_threads));
  if (options.pairwise_cache_mb < 0)
    throw Error(
        format("--pairwise-cache-mb {} must be 0 (keep none) or more", options.pairwise_cache_mb));
  if (options.out.empty()) throw Error("train needs --out, a folder for the run");
  if (options.epochs < 1) throw Error(format("--epochs {} must be at least 1", options.epochs));
  if (options.model.text.max_length < 2)
    throw Error(format("--max-text-length {} leaves no room for [CLS] and [SEP]",
                       options.model.text.max_length));
  if (options.text_train_layers > 0 && options.text_lr == 0)
    throw Error(
        format("--text-train-layers {} trains text layers, but --text-lr is 0 (the tower "
               "frozen): give the layers a rate, e.g. --text-lr 3e-5",
               options.text_train_layers));
  if (!(options.init_anchor >= 0 && std::isfinite(options.init_anchor)))
    throw Error(format("--init-anchor {} must be 0 (off) or positive", options.init_anchor));
  if (options.init_anchor > 0 && options.init.empty())
    throw Error(
        format("--init-anchor {} pulls the weights toward the --init checkpoint's, but no "
               "--init is given: name the checkpoint to start from, or leave --init-anchor out",
               options.init_anchor));
  if (options.init_new_text_head && options.init.empty())
    throw Error(
        "--init-new-text-head keeps an --init checkpoint's weights under a new text head, but "
        "no --init is given: name the checkpoint to start from, or leave the flag out");
  if (options.queue < 0)
    throw Error(format("--queue {} must be 0 (off) or positive", options.queue));
  if (options.queue > 0 && comm.world_size() > 1)
    throw Error(
        format("--queue is a single-process feature: this run has {} processes. The queue's "
               "negatives would differ between ranks; use --queue 0 with several processes, "
               "or one process with the queue",
               comm.world_size()));
  if (options.queue > 0 && !(options.queue_momentum >= 0 && options.queue_momentum < 1))
    throw Error(format("--queue-momentum {} must be in [0, 1)", options.queue_momentum));
}

void set_threads(const TrainOptions& o, const Communicator& comm) {
  const int threads =
      o.threads > 0
          ? o.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / comm.world_size());
  at::set_num_threads(threads);
  if (o.deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
    // Deterministic mode would also fill every new tensor with NaN, a large cost
    // on CPU that buys nothing for determinism.
    at::globalContext().setDeterministicFillUninitializedMemory(false);
  }
}

// Whether the run continues from <out>/checkpoints/last.json; then writes
// <out>/options.json. A checkpoint's model is what goes on training: options
// that would build another one are refused, not ignored (nor written).
bool open_run_folder(const TrainOptions& o, const fs::path& last, bool leader) {
  const bool resuming = o.resume && fs::exists(last);
  if (resuming) {
    const std::vector<std::string> conflicts = resume_conflicts(o.model, checkpoint_config(last));
    if (!conflicts.empty()) {
      throw Error(
          format("--resume: {} holds a model made with other options: {}. Resume with the "
                 "checkpoint's values (see {}), or train a new model into another --out",
                 last.string(), join(conflicts), (fs::path(o.out) / "options.json").string()));
    }
  } else if (fs::exists(last) && leader) {
    log::warn("train",
              "{} already holds a run (checkpoints/last.json): training from scratch replaces "
              "its checkpoints and metrics; stop now and pass --resume to continue it instead",
              o.out);
  }
  if (leader) {
    fs::create_directories(o.out);
    write_text_atomic(fs::path(o.out) / "options.json", nlohmann::json(o).dump(2) + "\n");
  }
  return resuming;
}

// The tensors --init-new-text-head lets start fresh: the text head's and the
// quantity branch's (model::TwoTowerImpl's text_hidden, text_head, quantity).
bool in_text_head(const std::string& name) {
  return name.starts_with("text_hidden.") || name.starts_with("text_head.") ||
         name.starts_with("quantity.");
}

// One run: the parts are built in the constructor, in an order that keeps the
// torch RNG where a resumed run expects it; run() is the loop over the plan.
class Trainer {
 public:
  Trainer(const TrainOptions& options, Communicator& comm);
  TrainSummary run();

 private:
  void build_model();
  // The optimizer and loss scaler, and the checkpointer that restores their state.
  std::unique_ptr<Checkpointer> build_optimizer();
  // --init: the weights of another checkpoint, whose model must be this one's;
  // returns that checkpoint's model.
  model::BuiltModel start_from(const std::string& checkpoint);
  // --text-train-layers: every text tower tensor outside its last `layers` layers stays fixed.
  void freeze_text_below(int64_t layers);
  void build_sampling();
  void build_validation();
  // The reporter, which saves checkpoints through `checkpointer`.
  void build_reporter(std::unique_ptr<Checkpointer> checkpointer);
  void build_text_inputs();
  void build_step();
  // The training samples of `positions` of the epoch (through the source mix, if any).
  std::vector<int64_t> samples_at(int64_t epoch, std::vector<int64_t> positions) const;
  // Validation on rank 0, then the checkpoints every rank takes part in.
  void end_epoch(int64_t epoch);
  void set_modes();
  void save(const std::string& name, int64_t epoch, int64_t step_in_epoch);
  TrainSummary finish(bool stopped_early);

  const TrainOptions& o_;
  Communicator& comm_;
  const bool leader_;
  const c10::Device device_;
  const fs::path out_, last_;
  const bool resuming_;
  const bool frozen_text_;  // --text-lr 0: the text tower stays in eval mode, its features cached
  const AdamWSettings adamw_;
  TrainingData data_;
  model::TrainingState state_;
  model::BuiltModel built_;
  std::vector<at::Tensor> parameters_;  // every trainable tensor, SigLIP's bias included
  at::Tensor siglip_bias_;
  std::unique_ptr<MomentumEncoders> momentum_;
  std::optional<InitAnchor> anchor_;  // --init-anchor: the --init weights each step pulls toward
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<DynamicLossScaler> scaler_;
  std::optional<SourceMix> mix_;  // --share: each epoch's weighted draw of samples
  std::optional<EpochSampler> sampler_;
  std::optional<LearningRateSchedule> schedule_;
  std::optional<Validation> validation_;
  std::unique_ptr<TrainReporter> reporter_;
  std::unique_ptr<model::TextEmbedder> text_;  // the model's text path, counting cut captions
  std::unique_ptr<data::PairwiseCache> pairwise_;
  std::optional<StepInputMaker> inputs_;
  std::optional<TextFeatureCache> text_cache_;
  std::optional<TextHiddenCache> hidden_cache_;  // --text-train-layers: below the trained layers
  std::optional<TrainingPlan> plan_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<StepLoader> loader_;
  double best_validation_ = -1;
};

Trainer::Trainer(const TrainOptions& options, Communicator& comm)
    : o_(options),
      comm_(comm),
      leader_(comm.rank() == 0),
      device_(options.device),
      out_(options.out),
      last_(out_ / "checkpoints" / "last.json"),
      resuming_(open_run_folder(options, last_, leader_)),
      frozen_text_(options.text_lr == 0),
      adamw_{options.lr, options.text_lr, options.weight_decay},
      data_(read_training_data(options, leader_)) {
  build_model();
  std::unique_ptr<Checkpointer> checkpointer = build_optimizer();
  build_sampling();
  build_validation();
  build_reporter(std::move(checkpointer));
  build_text_inputs();
  plan_.emplace(PlanOptions{o_.epochs, sampler_->steps_per_epoch(), o_.stop_after_steps,
                            o_.max_nonfinite_steps, o_.checkpoint_every, last_},
                RunPosition{state_.epoch, state_.step_in_epoch, state_.global_step,
                            state_.best_metric, state_.extra.value("skipped", int64_t{0}),
                            state_.extra.value("consecutive_nonfinite", int64_t{0})});
  build_step();
}

// The model (from the last checkpoint when resuming), its trainable tensors
// the same on every rank, SigLIP's bias, and the momentum side.
void Trainer::build_model() {
  std::optional<model::BuiltModel> init;  // the --init checkpoint's model, once read
  if (resuming_) {
    built_ = model::load_model_from_checkpoint(last_);
    state_ = model::load_training_state(last_);
    if (leader_)
      log::info("train", "resuming from {} at epoch {} step {}", last_.string(), state_.epoch,
                state_.step_in_epoch);
  } else {
    if (o_.resume && leader_)
      log::warn("train", "--resume: no {} yet, starting from scratch", last_.string());
    torch::manual_seed(o_.seed);
    built_ = model::build_model(o_.model);
    if (!o_.init.empty()) init.emplace(start_from(o_.init));
  }
  built_.model->to(device_);
  if (frozen_text_)
    for (auto& p : built_.model->text()->parameters()) p.requires_grad_(false);
  else if (o_.text_train_layers > 0)
    freeze_text_below(o_.text_train_layers);
  set_modes();
  if (o_.init_anchor > 0) {
    // A resumed run continues from its last checkpoint; its anchor is still --init's.
    if (!init) init.emplace(model::load_model_from_checkpoint(o_.init));
    anchor_.emplace(*built_.model, *init->model, o_.init_anchor,
                    o_.init_new_text_head ? in_text_head : nullptr);
    if (leader_)
      log::info("train", "anchored to {}: {} tensors pulled back by lr x {} each step", o_.init,
                anchor_->tensors(), o_.init_anchor);
  }
  for (const auto& p : built_.model->parameters())
    if (p.requires_grad()) parameters_.push_back(p);
  broadcast_from_rank0(comm_, parameters_);
  if (o_.loss == LossKind::kSigLip) {
    siglip_bias_ = at::full({}, -10.0, at::TensorOptions().device(device_)).set_requires_grad(true);
    if (auto it = state_.tensors.find("siglip.bias"); it != state_.tensors.end())
      siglip_bias_.detach().copy_(it->second);
    parameters_.push_back(siglip_bias_);
  }
  if (o_.queue > 0) {
    momentum_ = std::make_unique<MomentumEncoders>(
        built_, state_, o_.resume && state_.global_step > 0, last_,
        MomentumOptions{o_.queue, o_.queue_momentum, o_.model.two_tower.embed_dim, device_});
    if (leader_)
      log::info("train",
                "momentum queue: {} rows per modality ({} filled), momentum {}, {} momentum "
                "tensors",
                o_.queue, momentum_->queue().size(), o_.queue_momentum, momentum_->tensor_count());
  }
}

model::BuiltModel Trainer::start_from(const std::string& checkpoint) {
  const model::ModelConfig saved = checkpoint_config(checkpoint);
  std::vector<std::string> conflicts;
  bool head_differs = false;
  // The length captions are cut to and the text precision do not shape a weight;
  // with --init-new-text-head the head's own options may differ too.
  for (const std::string& c : resume_conflicts(o_.model, saved)) {
    const bool head_option =
        c.starts_with("--text-head-hidden") || c.starts_with("--quantity-width");
    head_differs = head_differs || head_option;
    if (!c.starts_with("--max-text-length") && !c.starts_with("--precision") &&
        !c.starts_with("--brep-dropout") && !(head_option && o_.init_new_text_head))
      conflicts.push_back(c);
  }
  if (!conflicts.empty())
    throw Error(
        format("--init {} holds a model made with other options: {}. Start from it with its values "
               "(its config.json), or train without --init{}",
               checkpoint, join(conflicts),
               head_differs && !o_.init_new_text_head
                   ? " (--init-new-text-head lets the text head's options differ)"
                   : ""));
  model::BuiltModel from = model::load_model_from_checkpoint(checkpoint);
  const auto source = from.model->named_parameters();
  torch::NoGradGuard no_grad;
  int64_t copied = 0;
  std::vector<std::string> fresh;
  for (auto& item : built_.model->named_parameters()) {
    const at::Tensor* value = source.find(item.key());
    if (value == nullptr || value->sizes() != item.value().sizes()) {
      CADCLIP_CHECK(o_.init_new_text_head && in_text_head(item.key()),
                    "--init: tensor {} of the same configuration differs", item.key());
      fresh.push_back(item.key());
      continue;
    }
    item.value().copy_(*value);
    ++copied;
  }
  if (leader_) {
    log::info("train", "starting from the weights of {} ({} tensors, sha256 {})", checkpoint,
              copied, model::checkpoint_identity(checkpoint).substr(0, 12));
    if (saved.two_tower.size_bins_per_decade > 0)
      log::info("train",
                "{} has a size block; training leaves it out (fit one to the trained model with "
                "`cadclip fit-sizes`)",
                checkpoint);
    if (o_.init_new_text_head)
      log::info("train", "--init-new-text-head: {} tensors start fresh{}{}", fresh.size(),
                fresh.empty() ? "" : ": ", join(fresh));
  }
  return from;
}

void Trainer::freeze_text_below(int64_t layers) {
  // Layers are named "...layer.<i>." in both the BERT and the DeBERTa towers.
  auto layer_of = [](const std::string& name) -> int64_t {
    const size_t at = name.find(".layer.");
    if (at == std::string::npos) return -1;
    return std::strtoll(name.c_str() + at + 7, nullptr, 10);
  };
  int64_t count = 0;
  for (const auto& item : built_.model->text()->named_parameters())
    count = std::max(count, layer_of(item.key()) + 1);
  if (layers > count)
    throw Error(format("--text-train-layers {}: the text tower has {} layers", layers, count));
  int64_t trained = 0;
  for (auto& item : built_.model->text()->named_parameters()) {
    const bool trains = layer_of(item.key()) >= count - layers;
    item.value().requires_grad_(trains);
    trained += trains ? item.value().numel() : 0;
  }
  if (leader_)
    log::info("train", "text tower: the last {} of {} layers train ({} parameters)", layers, count,
              with_commas(trained));
}

std::unique_ptr<Checkpointer> Trainer::build_optimizer() {
  optimizer_ = std::make_unique<FusedAdamW>(adamw_groups(*built_.model, siglip_bias_, adamw_));
  scaler_ = std::make_unique<DynamicLossScaler>(o_.model.two_tower.text_precision == c10::kHalf,
                                                LossScalerOptions{}, device_);
  auto checkpointer = std::make_unique<Checkpointer>(
      out_, comm_, RunParts{built_, *optimizer_, siglip_bias_, *scaler_, momentum_.get()});
  checkpointer->restore(state_, last_);
  return checkpointer;
}

// Which samples each epoch and rank take, and the learning rate of each step.
void Trainer::build_sampling() {
  mix_ = make_source_mix(o_, data_, leader_);
  sampler_.emplace(mix_ ? mix_->samples_per_epoch() : static_cast<int64_t>(data_.set.models.size()),
                   o_.seed, comm_.rank(), comm_.world_size(), o_.batch_size);
  schedule_.emplace(adamw_, sampler_->steps_per_epoch() * o_.epochs, o_.warmup);
  if (leader_ && sampler_->dropped_per_epoch() > 0)
    log::info("train",
              "{} samples per epoch do not fill a last batch on every process and are "
              "left out of that epoch",
              sampler_->dropped_per_epoch());
}

void Trainer::build_validation() {
  eval::EvalOptions eval_options;
  eval_options.batch_size = o_.eval_batch_size;
  eval_options.split = o_.validation_split ? data::split_name(*o_.validation_split) : "";
  eval_options.levels = o_.levels;
  validation_.emplace(data_.dataset, data_.captions.captions, validation_sources(o_, data_),
                      eval_options, frozen_text_, o_.select_by);
}

void Trainer::build_reporter(std::unique_ptr<Checkpointer> checkpointer) {
  reporter_ = std::make_unique<TrainReporter>(out_, leader_, resuming_, state_.global_step,
                                              std::move(checkpointer));
  best_validation_ = state_.best_metric;
  if (!mix_ || resuming_) return;
  nlohmann::json sources;
  for (size_t s = 0; s < data_.source_names.size(); ++s)
    sources[data_.source_names[s]] = {{"share", o_.shares.at(data_.source_names[s])},
                                      {"draws_per_epoch", mix_->draws()[s]}};
  reporter_->sources(sources);
}

// Caption tokens (a tuned tower), the cached features (a frozen one), or the
// cached hidden states below the trained layers (a tower tuned in its last layers).
void Trainer::build_text_inputs() {
  text_ = std::make_unique<model::TextEmbedder>(*built_.model, *built_.text.tokenizer,
                                                o_.model.text.max_length);
  pairwise_ = std::make_unique<data::PairwiseCache>(data_.dataset.size(),
                                                    o_.pairwise_cache_mb * (int64_t{1} << 20));
  const bool split_tower = !frozen_text_ && o_.text_train_layers > 0 && o_.text_hidden_cache;
  StepInputOptions step_options{o_.seed, !frozen_text_ && !split_tower,
                                built_.model->reads_quantities(), device_};
  step_options.collate = true;
  step_options.pairwise = pairwise_.get();
  inputs_.emplace(data_.dataset, data_.captions.captions, data_.set, *text_, step_options);
  TextCacheOptions cache;
  cache.file = o_.text_cache;
  cache.chunk = o_.eval_batch_size;
  cache.leader = leader_;
  if (frozen_text_)
    text_cache_ =
        TextFeatureCache::build(built_, *text_, data_.captions.captions, data_.set, cache);
  else if (split_tower)
    hidden_cache_ =
        TextHiddenCache::build(built_, *text_, data_.captions.captions, data_.set,
                               built_.text.encoder->layer_count() - o_.text_train_layers, cache);
}

void Trainer::build_step() {
  LossOptions loss;
  loss.kind = o_.loss;
  loss.mask_false_negatives = o_.mask_false_negatives;
  step_ = std::make_unique<TrainStep>(
      StepParts{*built_.model, *text_, text_cache_ ? &*text_cache_ : nullptr,
                hidden_cache_ ? &*hidden_cache_ : nullptr, momentum_.get(), *optimizer_, *scaler_,
                *schedule_, parameters_, siglip_bias_, comm_, anchor_ ? &*anchor_ : nullptr},
      StepSettings{loss, o_.grad_clip, o_.debug_nan_at_step, o_.debug_nan_count});
}

std::vector<int64_t> Trainer::samples_at(int64_t epoch, std::vector<int64_t> positions) const {
  if (!mix_) return positions;
  const std::vector<int64_t> drawn = mix_->epoch_samples(epoch);
  for (int64_t& p : positions) p = drawn[static_cast<size_t>(p)];
  return positions;
}

void Trainer::set_modes() {
  built_.model->train();
  if (frozen_text_) built_.model->text()->eval();
}

void Trainer::save(const std::string& name, int64_t epoch, int64_t step_in_epoch) {
  reporter_->checkpoint(name, plan_->position(epoch, step_in_epoch, best_validation_));
}

TrainSummary Trainer::run() {
  reporter_->start(schedule_->total_steps() - plan_->global_step());
  // The plan's steps are made ahead of the one being taken, and no step the run will not take.
  loader_ = std::make_unique<StepLoader>(
      [this](int64_t epoch, int64_t step) {
        return inputs_->make(epoch, samples_at(epoch, sampler_->batch(epoch, step)));
      },
      plan_->steps(), o_.loader_threads);
  for (const EpochPlan& epoch : plan_->epochs()) {
    for (const int64_t step : epoch.steps) {
      const StepResult result = step_->update(*loader_, epoch.index, step, plan_->global_step());
      const AfterStep next = plan_->count(epoch.index, step, result.loss, result.skip_reason);
      reporter_->step(epoch.index, *plan_, result);
      if (next.save_last) save("last", epoch.index, step + 1);
      if (next.stop) {
        reporter_->stopped(plan_->taken() + plan_->skipped());
        return finish(/*stopped_early=*/true);
      }
    }
    end_epoch(epoch.index);
  }
  reporter_->done(*plan_, text_->truncated(), o_.model.text.max_length);
  return finish(/*stopped_early=*/false);
}

void Trainer::end_epoch(int64_t epoch) {
  double validation = -1;
  const bool validating = validation_->active();
  if (anchor_ && leader_)
    log::info("train", "epoch {}: the trained weights are {} (root mean square) from --init's",
              epoch + 1, fixed(anchor_->rms_drift(), 5));
  if (validating && leader_) {
    const ValidationReport report =
        validation_->run(*built_.model, *built_.text.tokenizer, o_.model.text.max_length);
    reporter_->validation(epoch, plan_->global_step(), report);
    validation = report.r1;
    set_modes();
  }
  // Every rank learns rank 0's verdict, so that all take the same checkpoint steps.
  std::vector<at::Tensor> shared = {at::full({1}, validation, at::kDouble)};
  comm_.broadcast(shared, 0);
  validation = shared[0].item<double>();
  const bool best = validating && validation > best_validation_;
  if (best) best_validation_ = validation;
  save("last", epoch + 1, 0);
  if (best) save("best", epoch + 1, 0);
}

TrainSummary Trainer::finish(bool stopped_early) {
  loader_.reset();  // the steps in flight read the embedder's count of cut captions
  reporter_->pairwise(pairwise_->stats(), o_.pairwise_cache_mb);
  TrainSummary summary;
  summary.steps = plan_->taken();
  summary.skipped = plan_->skipped();
  summary.truncated = text_->truncated();
  summary.last_loss = plan_->last_loss();
  summary.best_validation = best_validation_;
  summary.stopped_early = stopped_early;
  return summary;
}

}  // namespace

std::vector<std::string> source_names(const std::vector<std::string>& data) {
  std::vector<std::string> names;
  for (const std::string& entry : data) {
    fs::path path = fs::path(entry);
    if (!path.has_filename()) path = path.parent_path();  // "synth/" names "synth"
    std::string name = fs::is_directory(path) ? path.filename().string() : path.stem().string();
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw Error(
          format("two --data sources are both named '{}' ({}): a source is named by its "
                 "folder or file name, so give them folders of different names",
                 name, join(data)));
    names.push_back(std::move(name));
  }
  return names;
}

TrainSummary train(const TrainOptions& options, Communicator& communicator) {
  check_options(options, communicator);
  set_threads(options, communicator);
  return Trainer(options, communicator).run();
}

}  // namespace cadclip::train
