#include "cadclip/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/train/checkpointer.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/metrics_log.h"
#include "cadclip/train/momentum_encoders.h"
#include "cadclip/train/optimizer.h"
#include "cadclip/train/sampler.h"
#include "cadclip/train/schedule.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/step_loader.h"
#include "cadclip/train/text_cache.h"
#include "cadclip/train/validator.h"

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

// The prepared dataset and its captions and splits.
struct TrainingData {
  data::Dataset dataset;
  data::CaptionFile captions;
  data::Splits splits;
  TrainingSet set;
};

TrainingData read_training_data(const TrainOptions& o, bool leader) {
  data::PreparedData prepared = data::open_prepared(data::dataset_folders(o.data));
  TrainingData d{
      std::move(prepared.dataset), std::move(prepared.captions), std::move(prepared.splits), {}};
  d.set = training_set(d.dataset, d.captions.captions, d.splits.train, o.levels);
  if (d.set.models.empty())
    throw Error(format("{}: the train split has no model with a caption of the chosen levels",
                       join(o.data)));
  if (leader)
    log::info("train",
              "{} training models ({} without a caption of the chosen levels, {} not "
              "prepared), {} captions",
              with_commas(static_cast<int64_t>(d.set.models.size())), d.set.without_caption,
              d.set.missing, with_commas(static_cast<int64_t>(d.captions.captions.size())));
  return d;
}

// One run: the parts are built in the constructor, in an order that keeps the
// torch RNG where a resumed run expects it; run() is the loop.
class Trainer {
 public:
  Trainer(const TrainOptions& options, Communicator& comm);
  TrainSummary run();

 private:
  void build_model();
  void build_optimizer();
  void build_text_inputs();
  // One optimizer step (or a skipped one); true when the run is to stop here.
  bool take_step(int64_t epoch, int64_t step);
  void end_epoch(int64_t epoch);
  at::Tensor text_embeddings(model::TwoTowerImpl& model, const StepInputs& in);
  void set_modes();
  void save(const std::string& name, int64_t epoch, int64_t step_in_epoch);
  TrainSummary finish();

  const TrainOptions& o_;
  Communicator& comm_;
  const bool leader_;
  const c10::Device device_;
  const fs::path out_, last_;
  const bool resuming_;
  const bool frozen_text_;  // --text-lr 0: the text tower stays in eval mode, its features cached
  TrainingData data_;
  model::TrainingState state_;
  model::BuiltModel built_;
  std::vector<at::Tensor> parameters_;  // every trainable tensor, SigLIP's bias included
  at::Tensor siglip_bias_;
  std::unique_ptr<MomentumEncoders> momentum_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<DynamicLossScaler> scaler_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::optional<EpochSampler> sampler_;
  std::optional<LearningRateSchedule> schedule_;
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<CaptionTokenizer> tokenizer_;
  std::unique_ptr<data::PairwiseCache> pairwise_;
  std::optional<StepInputMaker> inputs_;
  std::unique_ptr<StepLoader> loader_;
  std::optional<TextFeatureCache> text_cache_;
  std::unique_ptr<Progress> progress_;
  TrainSummary summary_;
  int64_t consecutive_nonfinite_ = 0;
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
      data_(read_training_data(options, leader_)) {
  build_model();
  build_optimizer();
  sampler_.emplace(static_cast<int64_t>(data_.set.models.size()), o_.seed, comm_.rank(),
                   comm_.world_size(), o_.batch_size);
  schedule_.emplace(AdamWSettings{o_.lr, o_.text_lr, o_.weight_decay},
                    sampler_->steps_per_epoch() * o_.epochs, o_.warmup);
  if (leader_ && sampler_->dropped_per_epoch() > 0)
    log::info("train",
              "{} samples per epoch do not fill a last batch on every process and are "
              "left out of that epoch",
              sampler_->dropped_per_epoch());
  eval::EvalOptions eval_options;
  eval_options.batch_size = o_.eval_batch_size;
  eval_options.split = o_.validation_split ? data::split_name(*o_.validation_split) : "";
  eval_options.levels = o_.levels;
  validator_ = std::make_unique<Validator>(
      data_.dataset, data_.captions.captions,
      o_.validation_split ? data_.splits.of(*o_.validation_split) : std::vector<std::string>{},
      eval_options, frozen_text_);
  if (leader_ && resuming_) keep_metrics_through(out_ / "metrics.jsonl", state_.global_step);
  metrics_ = std::make_unique<MetricsLog>(out_, leader_, /*append=*/resuming_);
  summary_.best_validation = state_.best_metric;
  build_text_inputs();
  consecutive_nonfinite_ = state_.extra.value("consecutive_nonfinite", int64_t{0});
  summary_.skipped = state_.extra.value("skipped", int64_t{0});
}

// The model (from the last checkpoint when resuming), its trainable tensors
// the same on every rank, SigLIP's bias, and the momentum side.
void Trainer::build_model() {
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
  }
  built_.model->to(device_);
  if (frozen_text_)
    for (auto& p : built_.model->text()->parameters()) p.requires_grad_(false);
  set_modes();
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

void Trainer::build_optimizer() {
  const AdamWSettings adamw{o_.lr, o_.text_lr, o_.weight_decay};
  optimizer_ = std::make_unique<FusedAdamW>(adamw_groups(*built_.model, siglip_bias_, adamw));
  scaler_ = std::make_unique<DynamicLossScaler>(o_.model.two_tower.text_precision == c10::kHalf,
                                                LossScalerOptions{}, device_);
  checkpointer_ = std::make_unique<Checkpointer>(
      out_, comm_, RunParts{built_, *optimizer_, siglip_bias_, *scaler_, momentum_.get()});
  checkpointer_->restore(state_, last_);
}

// Caption tokens (a tuned tower) or the cached features (a frozen one).
void Trainer::build_text_inputs() {
  tokenizer_ = std::make_unique<CaptionTokenizer>(*built_.text.tokenizer, o_.model.text.max_length);
  pairwise_ = std::make_unique<data::PairwiseCache>(data_.dataset.size(),
                                                    o_.pairwise_cache_mb * (int64_t{1} << 20));
  StepInputOptions step_options{o_.seed, !frozen_text_, built_.model->reads_quantities(), device_};
  step_options.collate = true;
  step_options.pairwise = pairwise_.get();
  inputs_.emplace(data_.dataset, data_.captions.captions, data_.set, *tokenizer_, step_options);
  if (!frozen_text_) return;
  TextCacheOptions cache;
  cache.file = o_.text_cache;
  cache.chunk = o_.eval_batch_size;
  cache.leader = leader_;
  cache.device = device_;
  text_cache_ =
      TextFeatureCache::build(built_, data_.captions.captions, data_.set, *tokenizer_, cache);
}

void Trainer::set_modes() {
  built_.model->train();
  if (frozen_text_) built_.model->text()->eval();
}

at::Tensor Trainer::text_embeddings(model::TwoTowerImpl& model, const StepInputs& in) {
  if (frozen_text_)
    return model.project_text(text_cache_->rows(in.captions).to(device_), in.quantities);
  const auto [ids, mask] = tokenizer_->pad(in.tokens, device_);
  return model.encode_text(ids, mask, in.quantities);
}

void Trainer::save(const std::string& name, int64_t epoch, int64_t step_in_epoch) {
  checkpointer_->save(name, {epoch, step_in_epoch, state_.global_step, summary_.best_validation,
                             summary_.skipped, consecutive_nonfinite_});
}

TrainSummary Trainer::run() {
  ProgressOptions progress_options;
  progress_options.total = schedule_->total_steps() - state_.global_step;
  progress_options.unit = "steps";
  if (leader_) progress_ = std::make_unique<Progress>("train", progress_options);
  // The steps this run takes, so that the loader makes no step it will not take.
  std::vector<std::pair<int64_t, int64_t>> plan;
  for (int64_t epoch = state_.epoch; epoch < o_.epochs; ++epoch)
    for (int64_t step = epoch == state_.epoch ? state_.step_in_epoch : 0;
         step < sampler_->steps_per_epoch(); ++step)
      if (o_.stop_after_steps == 0 ||
          static_cast<int64_t>(plan.size()) <
              std::max<int64_t>(1, o_.stop_after_steps - summary_.skipped))
        plan.emplace_back(epoch, step);
  loader_ = std::make_unique<StepLoader>(
      [this](int64_t epoch, int64_t step) {
        return inputs_->make(epoch, sampler_->batch(epoch, step));
      },
      std::move(plan), o_.loader_threads);
  for (int64_t epoch = state_.epoch; epoch < o_.epochs; ++epoch) {
    const int64_t first_step = epoch == state_.epoch ? state_.step_in_epoch : 0;
    for (int64_t step = first_step; step < sampler_->steps_per_epoch(); ++step)
      if (take_step(epoch, step)) {
        summary_.stopped_early = true;
        if (leader_) {
          progress_->finish();
          log::info("train", "stopped after {} steps as asked; resume with --resume",
                    summary_.steps + summary_.skipped);
        }
        return finish();
      }
    end_epoch(epoch);
  }
  if (leader_) {
    progress_->finish();
    log::info("train",
              "done: {} steps, {} skipped, {} captions truncated to {} tokens, last loss {}",
              summary_.steps, summary_.skipped, tokenizer_->truncated(), o_.model.text.max_length,
              fixed(summary_.last_loss, 4));
  }
  return finish();
}

TrainSummary Trainer::finish() {
  loader_.reset();  // the steps in flight read the tokenizer's count
  summary_.truncated = tokenizer_->truncated();
  const data::PairwiseCache::Stats kept = pairwise_->stats();
  if (leader_ && o_.pairwise_cache_mb == 0)
    log::info("train", "pairwise inputs recomputed at every step (--pairwise-cache-mb 0)");
  else if (leader_)
    log::info("train", "pairwise inputs of {} models kept in memory: {} (budget {} MiB){}",
              with_commas(kept.kept), human_bytes(static_cast<uint64_t>(kept.bytes)),
              o_.pairwise_cache_mb,
              kept.not_kept > 0
                  ? format("; {} computations were not kept for lack of budget: raise "
                           "--pairwise-cache-mb to save them",
                           with_commas(kept.not_kept))
                  : std::string());
  return summary_;
}

bool Trainer::take_step(int64_t epoch, int64_t step) {
  const auto started = std::chrono::steady_clock::now();
  const StepInputs in = loader_->take(epoch, step);
  model::TwoTowerOutput output;
  output.brep = built_.model->encode_brep(in.brep);
  output.text = text_embeddings(*built_.model, in);
  output.logit_scale = built_.model->logit_scale();
  ContrastivePairs pairs{output.text, output.brep, in.caption_keys, in.geometry_keys};
  // Momentum encoders: one EMA step towards the online weights, then this
  // batch's momentum embeddings (enqueued after the step). The loss sees
  // only earlier batches in the queue: this batch is already in the batch.
  at::Tensor momentum_text, momentum_cad;
  QueueNegatives negatives;
  if (momentum_) {
    at::NoGradGuard no_grad;
    momentum_->follow_online();
    momentum_cad = momentum_->model().encode_brep(in.brep);
    momentum_text = text_embeddings(momentum_->model(), in);
    negatives = momentum_->queue().negatives();
  }
  LossOptions loss_options;
  loss_options.kind = o_.loss;
  loss_options.mask_false_negatives = o_.mask_false_negatives;
  LossResult result = contrastive_loss(comm_, pairs, output.logit_scale, siglip_bias_, loss_options,
                                       momentum_ ? &negatives : nullptr);
  if (o_.debug_nan_at_step >= 0 && state_.global_step >= o_.debug_nan_at_step &&
      state_.global_step < o_.debug_nan_at_step + o_.debug_nan_count)
    result.loss = result.loss * std::numeric_limits<double>::quiet_NaN();
  const double loss_value = result.loss.item<double>();

  schedule_->apply(*optimizer_, state_.global_step);
  optimizer_->zero_grad();
  std::string skip_reason;
  if (!std::isfinite(loss_value)) {
    // Caught before backward: nothing is applied, and it is said out loud.
    skip_reason = format("loss is {}", loss_value);
  } else {
    scaler_->scale(result.loss).backward();
    average_gradients(comm_, parameters_);
    if (scaler_->unscale_and_check(parameters_)) {
      skip_reason = format("gradients hold NaN/Inf at loss scale {}", scaler_->current_scale());
      scaler_->update(true);
    }
  }
  if (!skip_reason.empty()) {
    ++summary_.skipped;
    ++consecutive_nonfinite_;
    log::warn("train",
              "step {} (epoch {}, step {}): {}; step skipped ({} skipped in all, {} "
              "in a row, the run stops at {})",
              state_.global_step, epoch, step, skip_reason, summary_.skipped,
              consecutive_nonfinite_, o_.max_nonfinite_steps);
    optimizer_->zero_grad();
    if (consecutive_nonfinite_ >= o_.max_nonfinite_steps)
      throw Error(
          format("stopping: {} non-finite steps in a row (last: {}). No checkpoint was "
                 "written after them; lower the learning rate or use fp32/bf16, and "
                 "resume from {}",
                 consecutive_nonfinite_, skip_reason, last_.string()));
  } else {
    if (o_.grad_clip > 0) torch::nn::utils::clip_grad_norm_(parameters_, o_.grad_clip);
    optimizer_->step();
    built_.model->clamp_logit_scale_();
    scaler_->update(false);
    // Only a step that was taken feeds the queue; enqueue refuses NaN/Inf loudly.
    if (momentum_)
      momentum_->queue().enqueue(momentum_text, momentum_cad, pairs.caption_key,
                                 pairs.geometry_key);
    consecutive_nonfinite_ = 0;
    ++summary_.steps;
    summary_.last_loss = loss_value;
  }
  ++state_.global_step;

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double lr_now = schedule_->new_modules_rate(state_.global_step - 1);
  if (leader_) {
    progress_->advance(1, {{"loss", fixed(loss_value, 4)},
                           {"lr", format("{}", lr_now)},
                           {"skipped", std::to_string(summary_.skipped)},
                           {"samples/s", fixed(result.global_count / seconds, 1)},
                           {"epoch", std::to_string(epoch + 1)}});
    metrics_->write({{"kind", "train"},
                     {"step", state_.global_step},
                     {"epoch", epoch},
                     {"loss", loss_value},
                     {"lr", lr_now},
                     {"logit_scale", output.logit_scale.item<double>()},
                     {"skipped", summary_.skipped},
                     {"samples_per_s", result.global_count / seconds},
                     {"masked_pairs", result.masked_pairs},
                     {"queue_rows", momentum_ ? momentum_->queue().size() : 0},
                     {"masked_queue_pairs", result.masked_queue}},
                    state_.global_step);
  }
  const bool stop =
      o_.stop_after_steps > 0 && summary_.steps + summary_.skipped >= o_.stop_after_steps;
  if (stop || (o_.checkpoint_every > 0 && state_.global_step % o_.checkpoint_every == 0))
    save("last", epoch, step + 1);
  return stop;
}

// Validation on rank 0, then the checkpoints every rank takes part in.
void Trainer::end_epoch(int64_t epoch) {
  double validation = -1;
  if (validator_->active() && leader_) {
    ValidationResult result =
        validator_->run(*built_.model, *built_.text.tokenizer, o_.model.text.max_length);
    set_modes();
    validation = result.mean_r1;
    result.record["kind"] = "validation";
    result.record["step"] = state_.global_step;
    result.record["epoch"] = epoch;
    metrics_->write(result.record, state_.global_step);
    log::info("train", "epoch {}: validation text->CAD R@1 {}% (gallery {})", epoch + 1,
              fixed(100 * validation, 2), result.record["gallery"].get<int64_t>());
  }
  // Every rank learns rank 0's verdict, so that all take the same checkpoint steps.
  std::vector<at::Tensor> shared = {at::full({1}, validation, at::kDouble)};
  comm_.broadcast(shared, 0);
  validation = shared[0].item<double>();
  const bool best = validator_->active() && validation > summary_.best_validation;
  if (best) summary_.best_validation = validation;
  save("last", epoch + 1, 0);
  if (best) save("best", epoch + 1, 0);
}

}  // namespace

TrainSummary train(const TrainOptions& options, Communicator& communicator) {
  check_options(options, communicator);
  set_threads(options, communicator);
  return Trainer(options, communicator).run();
}

}  // namespace cadclip::train
