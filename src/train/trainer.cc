#include "cadclip/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
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
#include "cadclip/train/source_mix.h"
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
  if (options.text_train_layers > 0 && options.text_lr == 0)
    throw Error(
        format("--text-train-layers {} trains text layers, but --text-lr is 0 (the tower "
               "frozen): give the layers a rate, e.g. --text-lr 3e-5",
               options.text_train_layers));
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

// The prepared dataset and its captions and splits, and the source (one
// --data entry) each model comes from.
struct TrainingData {
  data::Dataset dataset;
  data::CaptionFile captions;
  data::Splits splits;
  TrainingSet set;
  std::vector<std::string> source_names;  // one per --data entry
  std::vector<int64_t> source_end;        // dataset index one past each source's last model

  int source_of(int64_t model) const {
    return static_cast<int>(std::upper_bound(source_end.begin(), source_end.end(), model) -
                            source_end.begin());
  }
};

TrainingData read_training_data(const TrainOptions& o, bool leader) {
  data::PreparedData prepared = data::open_prepared(data::dataset_folders(o.data));
  TrainingData d{std::move(prepared.dataset), std::move(prepared.captions),
                 std::move(prepared.splits),  {},
                 source_names(o.data),        {}};
  // The dataset numbers models folder after folder, so each source is a range.
  int64_t end = 0;
  for (const std::string& entry : o.data) {
    end += data::Dataset::open(data::dataset_folders({entry})).size();
    d.source_end.push_back(end);
  }
  CADCLIP_CHECK(end == d.dataset.size(), "sources hold {} models, the dataset {}", end,
                d.dataset.size());
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

// The weighted draw of each epoch's samples (--share), or none.
std::optional<SourceMix> make_source_mix(const TrainOptions& o, const TrainingData& d,
                                         bool leader) {
  if (o.shares.empty()) return std::nullopt;
  std::vector<double> shares;
  for (const std::string& name : d.source_names) {
    const auto it = o.shares.find(name);
    if (it == o.shares.end())
      throw Error(
          format("--share names {} of the sources {}, not '{}': give every source a "
                 "share (--share {}=0.5), or none",
                 o.shares.size(), join(d.source_names), name, name));
    shares.push_back(it->second);
  }
  for (const auto& [name, share] : o.shares)
    if (std::find(d.source_names.begin(), d.source_names.end(), name) == d.source_names.end())
      throw Error(format("--share {}={}: no source is named '{}'; the sources are {}", name, share,
                         name, join(d.source_names)));
  std::vector<int> source_of_sample;
  std::vector<int64_t> models(d.source_names.size(), 0);
  for (const int64_t model : d.set.models) {
    source_of_sample.push_back(d.source_of(model));
    ++models[static_cast<size_t>(source_of_sample.back())];
  }
  SourceMix mix(std::move(source_of_sample), shares, o.seed);
  if (leader)
    for (size_t s = 0; s < shares.size(); ++s)
      log::info(
          "train", "source {}: {} training models, {} draws per epoch (share {})",
          d.source_names[s], with_commas(models[s]), with_commas(mix.draws()[s]),
          fixed(static_cast<double>(mix.draws()[s]) / static_cast<double>(mix.samples_per_epoch()),
                3));
  return mix;
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
  // --init: the weights of another checkpoint, whose model must be this one's.
  void start_from(const std::string& checkpoint);
  // --text-train-layers: every text tower tensor outside its last `layers` layers stays fixed.
  void freeze_text_below(int64_t layers);
  void build_text_inputs();
  void build_validators();
  // The training samples of `positions` of the epoch (through the source mix, if any).
  std::vector<int64_t> samples_at(int64_t epoch, std::vector<int64_t> positions) const;
  // One optimizer step (or a skipped one); true when the run is to stop here.
  bool take_step(int64_t epoch, int64_t step);
  void end_epoch(int64_t epoch);
  // Validates every source, writes the metrics line; the R@1 that picks `best`.
  double validate(int64_t epoch);
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
  std::optional<SourceMix> mix_;  // --share: each epoch's weighted draw of samples
  std::optional<EpochSampler> sampler_;
  std::optional<LearningRateSchedule> schedule_;
  // One per source with validation models, in source order (all of them
  // when there is one source), and the one whose R@1 picks `best` (-1: the mean).
  std::vector<std::pair<std::string, std::unique_ptr<Validator>>> validators_;
  int selected_validator_ = -1;
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
  mix_ = make_source_mix(o_, data_, leader_);
  sampler_.emplace(mix_ ? mix_->samples_per_epoch() : static_cast<int64_t>(data_.set.models.size()),
                   o_.seed, comm_.rank(), comm_.world_size(), o_.batch_size);
  schedule_.emplace(AdamWSettings{o_.lr, o_.text_lr, o_.weight_decay},
                    sampler_->steps_per_epoch() * o_.epochs, o_.warmup);
  if (leader_ && sampler_->dropped_per_epoch() > 0)
    log::info("train",
              "{} samples per epoch do not fill a last batch on every process and are "
              "left out of that epoch",
              sampler_->dropped_per_epoch());
  build_validators();
  if (leader_ && resuming_) keep_metrics_through(out_ / "metrics.jsonl", state_.global_step);
  metrics_ = std::make_unique<MetricsLog>(out_, leader_, /*append=*/resuming_);
  if (mix_ && !resuming_) {
    nlohmann::json sources = {{"kind", "sources"}, {"step", 0}};
    for (size_t s = 0; s < data_.source_names.size(); ++s)
      sources["sources"][data_.source_names[s]] = {{"share", o_.shares.at(data_.source_names[s])},
                                                   {"draws_per_epoch", mix_->draws()[s]}};
    metrics_->write(sources, 0);
  }
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
    if (!o_.init.empty()) start_from(o_.init);
  }
  built_.model->to(device_);
  if (frozen_text_)
    for (auto& p : built_.model->text()->parameters()) p.requires_grad_(false);
  else if (o_.text_train_layers > 0)
    freeze_text_below(o_.text_train_layers);
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

void Trainer::start_from(const std::string& checkpoint) {
  const model::ModelConfig saved = checkpoint_config(checkpoint);
  std::vector<std::string> conflicts;
  // The length captions are cut to and the text precision do not shape a weight.
  for (const std::string& c : resume_conflicts(o_.model, saved))
    if (!c.starts_with("--max-text-length") && !c.starts_with("--precision") &&
        !c.starts_with("--brep-dropout"))
      conflicts.push_back(c);
  if (!conflicts.empty())
    throw Error(
        format("--init {} holds a model made with other options: {}. Start from it with "
               "its values (its config.json), or train without --init",
               checkpoint, join(conflicts)));
  const model::BuiltModel from = model::load_model_from_checkpoint(checkpoint);
  const auto source = from.model->named_parameters();
  torch::NoGradGuard no_grad;
  int64_t copied = 0;
  for (auto& item : built_.model->named_parameters()) {
    const at::Tensor* value = source.find(item.key());
    CADCLIP_CHECK(value != nullptr && value->sizes() == item.value().sizes(),
                  "--init: tensor {} of the same configuration differs", item.key());
    item.value().copy_(*value);
    ++copied;
  }
  if (leader_)
    log::info("train", "starting from the weights of {} ({} tensors, sha256 {})", checkpoint,
              copied, model::checkpoint_identity(checkpoint).substr(0, 12));
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

// The validation split of each source apart, so that a checkpoint can be
// chosen by one source (a real fold) rather than by the largest gallery.
void Trainer::build_validators() {
  eval::EvalOptions eval_options;
  eval_options.batch_size = o_.eval_batch_size;
  eval_options.split = o_.validation_split ? data::split_name(*o_.validation_split) : "";
  eval_options.levels = o_.levels;
  const std::vector<std::string> ids =
      o_.validation_split ? data_.splits.of(*o_.validation_split) : std::vector<std::string>{};
  std::vector<std::vector<std::string>> per_source(data_.source_names.size());
  if (data_.source_names.size() == 1) {
    per_source[0] = ids;
  } else {
    for (const std::string& id : ids)
      if (const std::optional<int64_t> model = data_.dataset.find(id))
        per_source[static_cast<size_t>(data_.source_of(*model))].push_back(id);
  }
  for (size_t s = 0; s < per_source.size(); ++s) {
    if (per_source[s].empty() && data_.source_names.size() > 1) continue;
    if (data_.source_names[s] == o_.select_by)
      selected_validator_ = static_cast<int>(validators_.size());
    validators_.emplace_back(
        data_.source_names[s],
        std::make_unique<Validator>(data_.dataset, data_.captions.captions,
                                    std::move(per_source[s]), eval_options, frozen_text_));
  }
  if (o_.select_by != "mean" && selected_validator_ < 0)
    throw Error(
        format("--select-by {}: no source of that name has validation models; the "
               "sources are {} (or use --select-by mean)",
               o_.select_by, join(data_.source_names)));
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
        return inputs_->make(epoch, samples_at(epoch, sampler_->batch(epoch, step)));
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
  const bool validating = !validators_.empty() && validators_.front().second->active();
  if (validating && leader_) {
    validation = validate(epoch);
    set_modes();
  }
  // Every rank learns rank 0's verdict, so that all take the same checkpoint steps.
  std::vector<at::Tensor> shared = {at::full({1}, validation, at::kDouble)};
  comm_.broadcast(shared, 0);
  validation = shared[0].item<double>();
  const bool best = validating && validation > summary_.best_validation;
  if (best) summary_.best_validation = validation;
  save("last", epoch + 1, 0);
  if (best) save("best", epoch + 1, 0);
}

double Trainer::validate(int64_t epoch) {
  const int64_t max_length = o_.model.text.max_length;
  if (validators_.size() == 1) {
    ValidationResult result =
        validators_[0].second->run(*built_.model, *built_.text.tokenizer, max_length);
    result.record["kind"] = "validation";
    result.record["step"] = state_.global_step;
    result.record["epoch"] = epoch;
    metrics_->write(result.record, state_.global_step);
    log::info("train", "epoch {}: validation text->CAD R@1 {}% (gallery {})", epoch + 1,
              fixed(100 * result.mean_r1, 2), result.record["gallery"].get<int64_t>());
    return result.mean_r1;
  }
  nlohmann::json record = {{"kind", "validation"},
                           {"step", state_.global_step},
                           {"epoch", epoch},
                           {"select_by", o_.select_by}};
  double sum = 0, selected = 0;
  int64_t gallery = 0;
  std::string line;
  for (size_t v = 0; v < validators_.size(); ++v) {
    const auto& [name, validator] = validators_[v];
    const ValidationResult result =
        validator->run(*built_.model, *built_.text.tokenizer, max_length);
    record["sources"][name] = result.record;
    record[name + "_text_to_cad_r1"] = result.mean_r1;  // a TensorBoard curve per source
    sum += result.mean_r1;
    gallery += result.record["gallery"].get<int64_t>();
    if (static_cast<int>(v) == selected_validator_) selected = result.mean_r1;
    line += format("{}{} {}% (gallery {})", line.empty() ? "" : ", ", name,
                   fixed(100 * result.mean_r1, 2), result.record["gallery"].get<int64_t>());
  }
  const double mean = sum / static_cast<double>(validators_.size());
  const double chosen = selected_validator_ >= 0 ? selected : mean;
  record["text_to_cad_r1"] = chosen;
  record["gallery"] = gallery;
  metrics_->write(record, state_.global_step);
  log::info("train", "epoch {}: validation text->CAD R@1 {}; {} {}%", epoch + 1, line, o_.select_by,
            fixed(100 * chosen, 2));
  return chosen;
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
