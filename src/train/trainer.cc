#include "cadclip/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <numbers>
#include <numeric>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/text_model.h"
#include "cadclip/train/checkpoint.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/momentum_queue.h"
#include "cadclip/train/optimizer.h"
#include "cadclip/train/sampler.h"
#include "cadclip/train/tensorboard.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

nlohmann::json options_json(const TrainOptions& o) {
  return {{"data", o.data},
          {"out", o.out},
          {"text_model", o.text_model},
          {"levels", o.levels},
          {"max_text_length", o.max_text_length},
          {"epochs", o.epochs},
          {"batch_size", o.batch_size},
          {"lr", o.lr},
          {"text_lr", o.text_lr},
          {"weight_decay", o.weight_decay},
          {"warmup", o.warmup},
          {"grad_clip", o.grad_clip},
          {"precision", o.precision},
          {"device", o.device},
          {"threads", o.threads},
          {"seed", o.seed},
          {"loss", o.loss},
          {"mask_false_negatives", o.mask_false_negatives},
          {"queue", o.queue},
          {"queue_momentum", o.queue_momentum},
          {"text_cache", o.text_cache},
          {"max_nonfinite_steps", o.max_nonfinite_steps},
          {"checkpoint_every", o.checkpoint_every},
          {"stop_after_steps", o.stop_after_steps},
          {"resume", o.resume},
          {"validation_split", o.validation_split},
          {"eval_batch_size", o.eval_batch_size},
          {"embed_dim", o.embed_dim},
          {"text_head_hidden", o.text_head_hidden},
          {"quantity_width", o.quantity_width},
          {"deterministic", o.deterministic},
          {"brep",
           {{"width", o.brep.width},
            {"layers", o.brep.layers},
            {"heads", o.brep.heads},
            {"ffn_hidden", o.brep.ffn_hidden},
            {"dropout", o.brep.dropout}}}};
}

// The training split: dataset indices with at least one caption of a chosen level.
struct TrainingSet {
  std::vector<int64_t> models;                 // dataset index per sample
  std::vector<std::vector<int64_t>> captions;  // caption indices per sample
  int64_t without_caption = 0;                 // split models with no usable caption
  int64_t missing = 0;                         // split ids not in the dataset
};

TrainingSet training_set(const data::Dataset& dataset, const std::vector<data::Caption>& captions,
                         const std::vector<std::string>& ids,
                         const std::vector<std::string>& levels) {
  std::map<std::string, std::vector<int64_t>> by_id;
  for (size_t i = 0; i < captions.size(); ++i) {
    const auto& c = captions[i];
    if (!levels.empty() && std::find(levels.begin(), levels.end(), c.level) == levels.end())
      continue;
    by_id[c.id].push_back(static_cast<int64_t>(i));
  }
  TrainingSet set;
  for (const auto& id : ids) {
    const auto index = dataset.find(id);
    if (!index) {
      ++set.missing;
      continue;
    }
    const auto it = by_id.find(id);
    if (it == by_id.end()) {
      ++set.without_caption;
      continue;
    }
    set.models.push_back(*index);
    set.captions.push_back(it->second);
  }
  return set;
}

double learning_rate_factor(int64_t step, int64_t total, int64_t warmup) {
  if (warmup > 0 && step < warmup) return static_cast<double>(step + 1) / warmup;
  const double progress =
      total > warmup ? static_cast<double>(step - warmup) / static_cast<double>(total - warmup) : 1;
  return 0.5 * (1 + std::cos(std::numbers::pi * std::min(progress, 1.0)));
}

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

// The options that fix a model's shape and numerics, which a checkpoint
// already has: each one that differs, as "--flag given (the checkpoint has saved)".
std::vector<std::string> resume_conflicts(const TrainOptions& o, const model::ModelConfig& c) {
  std::vector<std::string> conflicts;
  auto check = [&](const char* flag, const auto& given, const auto& saved) {
    if (given != saved)
      conflicts.push_back(format("{} {} (the checkpoint has {})", flag, given, saved));
  };
  check("--brep-width", o.brep.width, c.brep.width);
  check("--brep-layers", o.brep.layers, c.brep.layers);
  check("--brep-heads", o.brep.heads, c.brep.heads);
  check("--brep-ffn", o.brep.ffn_hidden, c.brep.ffn_hidden);
  check("--brep-dropout", o.brep.dropout, c.brep.dropout);
  check("B-Rep face_channels", o.brep.face_channels, c.brep.face_channels);
  check("B-Rep edge_width", o.brep.edge_width, c.brep.edge_width);
  check("B-Rep max_hops", o.brep.max_hops, c.brep.max_hops);
  check("--embed-dim", o.embed_dim, c.two_tower.embed_dim);
  check("--text-head-hidden", o.text_head_hidden, c.two_tower.text_head_hidden);
  check("--quantity-width", o.quantity_width, c.two_tower.quantity_width);
  check("--max-text-length", o.max_text_length, c.text.max_length);
  const c10::ScalarType saved = c.two_tower.text_precision;
  const std::string saved_name = saved == c10::kBFloat16 ? "bf16"
                                 : saved == c10::kHalf   ? "fp16"
                                                         : "fp32";
  check("--precision", o.precision, saved_name);
  return conflicts;
}

// The model config of the checkpoint `pointer` names (its config.json only).
model::ModelConfig checkpoint_config(const fs::path& pointer) {
  const fs::path folder = resolve_checkpoint(pointer);
  try {
    return model::model_config_from_json(
        nlohmann::json::parse(read_text_file(folder / "config.json")));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{}: config.json is not valid JSON: {}", folder.string(), e.what()));
  }
}

// Keeps the records of metrics.jsonl up to `step` (what the checkpoint being
// resumed had seen), so that the steps run again are not listed twice; a
// line cut short by a crash goes too.
void keep_metrics_through(const fs::path& file, int64_t step) {
  if (!fs::exists(file)) return;
  const std::string text = read_text_file(file);
  std::string kept;
  int64_t dropped = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", int64_t{-1}) <= step) {
      kept += line + "\n";
    } else {
      ++dropped;
    }
  }
  if (dropped == 0) return;
  log::info("train", "{}: dropped {} records after step {}, which this run takes again",
            file.string(), dropped, step);
  write_text_atomic(file, kept);
}

class MetricsLog {
 public:
  // `append`: go on with the records there (a resumed run); else start anew.
  MetricsLog(const fs::path& out, bool active, bool append) : active_(active) {
    if (!active) return;
    file_.open(out / "metrics.jsonl", append ? std::ios::app : std::ios::trunc);
    if (!file_) throw Error(format("cannot append to {}", (out / "metrics.jsonl").string()));
    board_ = std::make_unique<TensorBoardWriter>(out / "tensorboard");
  }
  void write(const nlohmann::json& record, int64_t step) {
    if (!active_) return;
    file_ << record.dump() << "\n";
    file_.flush();
    for (const auto& [key, value] : record.items())
      if (value.is_number() && key != "step" && key != "epoch")
        board_->add_scalar(record.value("kind", "train") + "/" + key, value.get<double>(), step);
    board_->flush();
  }

 private:
  bool active_;
  std::ofstream file_;
  std::unique_ptr<TensorBoardWriter> board_;
};

}  // namespace

TrainSummary train(const TrainOptions& options, Communicator& comm) {
  const bool leader = comm.rank() == 0;
  if (options.data.empty()) throw Error("train needs --data, a prepared dataset folder");
  if (options.out.empty()) throw Error("train needs --out, a folder for the run");
  if (options.epochs < 1) throw Error(format("--epochs {} must be at least 1", options.epochs));
  if (options.max_text_length < 2)
    throw Error(
        format("--max-text-length {} leaves no room for [CLS] and [SEP]", options.max_text_length));
  const LossKind loss_kind =
      options.loss == "siglip" ? LossKind::kSigLip
      : options.loss == "infonce"
          ? LossKind::kInfoNce
          : throw Error(format("--loss {} is not infonce or siglip", options.loss));
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
  const c10::Device device(options.device);
  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / comm.world_size());
  at::set_num_threads(threads);
  if (options.deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
    // Deterministic mode would also fill every new tensor with NaN, a large cost
    // on CPU that buys nothing for determinism.
    at::globalContext().setDeterministicFillUninitializedMemory(false);
  }
  const fs::path out(options.out);
  const fs::path last = out / "checkpoints" / "last.json";
  const bool resuming = options.resume && fs::exists(last);
  if (resuming) {
    // The checkpoint's model is what goes on training: options that would
    // build another one are refused, not ignored (nor written to options.json).
    const std::vector<std::string> conflicts = resume_conflicts(options, checkpoint_config(last));
    if (!conflicts.empty()) {
      std::string list;
      for (const std::string& c : conflicts) list += (list.empty() ? "" : ", ") + c;
      throw Error(
          format("--resume: {} holds a model made with other options: {}. Resume with the "
                 "checkpoint's values (see {}), or train a new model into another --out",
                 last.string(), list, (out / "options.json").string()));
    }
  } else if (fs::exists(last) && leader) {
    log::warn("train",
              "{} already holds a run (checkpoints/last.json): training from scratch replaces "
              "its checkpoints and metrics; stop now and pass --resume to continue it instead",
              out.string());
  }
  if (leader) {
    fs::create_directories(out);
    write_text_atomic(out / "options.json", options_json(options).dump(2) + "\n");
  }

  // Data.
  const fs::path data_folder(options.data);
  const data::Dataset dataset = data::Dataset::open(data_folder);
  data::CaptionOptions caption_options;
  caption_options.format = "jsonl";
  const data::CaptionFile caption_file =
      data::read_captions(data_folder / "captions.jsonl", caption_options);
  const data::Splits splits = data::read_splits(data_folder / "splits.json");
  const TrainingSet set =
      training_set(dataset, caption_file.captions, splits.train, options.levels);
  if (set.models.empty())
    throw Error(format("{}: the train split has no model with a caption of the chosen levels",
                       data_folder.string()));
  if (leader)
    log::info("train",
              "{} training models ({} without a caption of the chosen levels, {} not "
              "prepared), {} captions",
              with_commas(static_cast<int64_t>(set.models.size())), set.without_caption,
              set.missing, with_commas(static_cast<int64_t>(caption_file.captions.size())));

  // Model (from the last checkpoint when resuming).
  TrainingState state;
  model::BuiltModel built;
  if (resuming) {
    built = load_model_from_checkpoint(last);
    state = load_training_state(last);
    if (leader)
      log::info("train", "resuming from {} at epoch {} step {}", last.string(), state.epoch,
                state.step_in_epoch);
  } else {
    if (options.resume && leader)
      log::warn("train", "--resume: no {} yet, starting from scratch", last.string());
    torch::manual_seed(options.seed);
    model::ModelConfig config;
    config.brep = options.brep;
    config.two_tower.embed_dim = options.embed_dim;
    config.two_tower.text_head_hidden = options.text_head_hidden;
    config.two_tower.quantity_width = options.quantity_width;
    config.two_tower.text_precision = model::parse_text_precision(options.precision);
    config.text_folder = options.text_model;
    config.text.max_length = options.max_text_length;
    built = model::build_model(config);
  }
  built.model->to(device);
  // --text-lr 0 freezes the pretrained text tower (LiT-style): it stays in eval
  // mode, and its pooled features are computed once and cached.
  const bool frozen_text = options.text_lr == 0;
  eval::PooledTextCache validation_text;  // with a frozen tower: validation captions pooled once
  auto set_modes = [&] {
    built.model->train();
    if (frozen_text) built.model->text()->eval();
  };
  if (frozen_text)
    for (auto& p : built.model->text()->parameters()) p.requires_grad_(false);
  set_modes();
  std::vector<at::Tensor> parameters;
  for (const auto& p : built.model->parameters())
    if (p.requires_grad()) parameters.push_back(p);
  broadcast_from_rank0(comm, parameters);
  at::Tensor siglip_bias;
  if (loss_kind == LossKind::kSigLip) {
    siglip_bias = at::full({}, -10.0, at::TensorOptions().device(device)).set_requires_grad(true);
    if (auto it = state.tensors.find("siglip.bias"); it != state.tensors.end())
      siglip_bias.detach().copy_(it->second);
    parameters.push_back(siglip_bias);
  }

  // Momentum copies of the trainable parts and the queue (--queue N). The copy
  // is a second model of the same config: building it must not move the RNG,
  // or a run with the queue would not resume like one without.
  model::BuiltModel momentum;
  std::vector<at::Tensor> momentum_parameters, online_parameters;
  std::vector<std::string> momentum_names;
  std::unique_ptr<EmbeddingQueue> queue;
  if (options.queue > 0) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    const at::Tensor rng = generator.get_state();
    momentum = model::build_model(built.config);
    generator.set_state(rng);
    momentum.model->to(device);
    // Eval mode: the momentum targets carry no dropout noise and draw no random numbers.
    momentum.model->eval();
    std::map<std::string, at::Tensor> copies;
    for (const auto& item : momentum.model->named_parameters()) {
      item.value().requires_grad_(false);
      copies[item.key()] = item.value();
    }
    at::NoGradGuard no_grad;
    for (const auto& item : built.model->named_parameters()) {
      if (!item.value().requires_grad()) continue;  // frozen: the copy is the same weights
      at::Tensor target = copies.at(item.key());
      const auto saved = state.tensors.find("momentum." + item.key());
      if (options.resume && state.global_step > 0 && saved == state.tensors.end())
        throw Error(
            format("{}: the checkpoint has no momentum weights ('momentum.{}'): it was "
                   "trained without --queue; resume with the options it was trained with",
                   last.string(), item.key()));
      target.copy_(saved != state.tensors.end() ? saved->second : item.value());
      momentum_parameters.push_back(target);
      online_parameters.push_back(item.value());
      momentum_names.push_back(item.key());
    }
    queue = std::make_unique<EmbeddingQueue>(options.queue, options.embed_dim, device);
    if (state.tensors.contains("queue.position")) {
      queue->load_state(state.tensors);
    } else if (options.resume && state.global_step > 0) {
      queue->load_state(state.tensors);  // throws, naming what is missing
    }
    if (leader)
      log::info("train",
                "momentum queue: {} rows per modality ({} filled), momentum {}, {} momentum "
                "tensors",
                options.queue, queue->size(), options.queue_momentum, momentum_parameters.size());
  }

  // Optimizer and schedule.
  const AdamWSettings adamw{options.lr, options.text_lr, options.weight_decay};
  const std::vector<double> base_lr = adamw_base_lr(adamw);
  std::vector<torch::optim::OptimizerParamGroup> param_groups =
      adamw_groups(*built.model, siglip_bias, adamw);
  torch::optim::AdamW optimizer(param_groups);
  load_optimizer_state(optimizer, *built.model, siglip_bias, state.tensors);
  DynamicLossScaler scaler(options.precision == "fp16", {}, device);
  scaler.load_state(state.tensors);
  // Every rank's own RNG state (dropout): ranks draw different amounts when
  // their shares of a batch differ, so rank 0's state is not theirs. The
  // sampler and caption choice are stateless (seed, epoch, step), the same step
  // on every rank: nothing else of a rank's position needs saving.
  if (!state.tensors.empty()) {
    const int64_t saved_world = state.extra.value("world_size", int64_t{1});
    if (saved_world != comm.world_size() && state.step_in_epoch != 0)
      throw Error(
          format("{} was written by a run of {} processes in the middle of epoch {}: resume it "
                 "with {} processes (the epoch's batches depend on the process count), or from "
                 "a checkpoint at the end of an epoch",
                 last.string(), saved_world, state.epoch + 1, saved_world));
    if (saved_world != comm.world_size() && leader)
      log::warn("train",
                "resuming a checkpoint of {} processes with {}: the data order goes on exactly, "
                "the dropout streams of the ranks do not",
                saved_world, comm.world_size());
    auto it = state.tensors.find(format("rng.cpu.rank{}", comm.rank()));
    if (it == state.tensors.end()) it = state.tensors.find("rng.cpu");  // older checkpoints
    if (it != state.tensors.end()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(it->second);
    }
  }

  const EpochSampler sampler(static_cast<int64_t>(set.models.size()), options.seed, comm.rank(),
                             comm.world_size(), options.batch_size);
  const int64_t total_steps = sampler.steps_per_epoch() * options.epochs;
  const int64_t warmup_steps = static_cast<int64_t>(options.warmup * total_steps);
  if (leader && sampler.dropped_per_epoch() > 0)
    log::info("train",
              "{} samples per epoch do not fill a last batch on every process and are "
              "left out of that epoch",
              sampler.dropped_per_epoch());

  std::vector<std::string> validation_ids;
  if (options.validation_split == "validation")
    validation_ids = splits.validation;
  else if (options.validation_split == "test")
    validation_ids = splits.test;
  else if (options.validation_split == "train")
    validation_ids = splits.train;
  else if (!options.validation_split.empty())
    throw Error(format("--validation-split {} is not train, validation, test or empty",
                       options.validation_split));

  if (leader && resuming) keep_metrics_through(out / "metrics.jsonl", state.global_step);
  MetricsLog metrics(out, leader, /*append=*/resuming);
  LossOptions loss_options;
  loss_options.kind = loss_kind;
  loss_options.mask_false_negatives = options.mask_false_negatives;
  const text::Tokenizer& tokenizer = *built.text.tokenizer;

  TrainSummary summary;
  summary.best_validation = state.best_metric;

  // Tokenizes one caption, cut to max_text_length as transformers' truncation does.
  auto tokenize = [&](const std::string& text) {
    std::vector<int64_t> ids = tokenizer.encode(text);
    if (static_cast<int64_t>(ids.size()) > options.max_text_length) {
      ids.resize(static_cast<size_t>(options.max_text_length - 1));
      ids.push_back(tokenizer.sep_id());
      ++summary.truncated;
    }
    return ids;
  };
  // Pads token rows into ids and mask [B, L].
  auto pad = [&](const std::vector<std::vector<int64_t>>& rows) {
    int64_t width = 0;
    for (const auto& row : rows) width = std::max<int64_t>(width, row.size());
    at::Tensor ids =
        at::full({static_cast<int64_t>(rows.size()), width}, tokenizer.pad_id(), at::kLong);
    at::Tensor mask = at::zeros_like(ids);
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto n = static_cast<int64_t>(rows[r].size());
      ids[static_cast<int64_t>(r)].narrow(0, 0, n).copy_(at::tensor(rows[r]));
      mask[static_cast<int64_t>(r)].narrow(0, 0, n).fill_(1);
    }
    return std::make_pair(ids.to(device), mask.to(device));
  };

  // Frozen text tower: every training caption's pooled features, once.
  at::Tensor text_cache;           // [captions used, text width]
  std::vector<int64_t> cache_row;  // caption index -> row of text_cache (-1: unused)
  if (frozen_text) {
    cache_row.assign(caption_file.captions.size(), -1);
    std::vector<int64_t> used;
    for (const auto& choices : set.captions)
      for (int64_t c : choices)
        if (cache_row[static_cast<size_t>(c)] < 0) {
          cache_row[static_cast<size_t>(c)] = static_cast<int64_t>(used.size());
          used.push_back(c);
        }
    std::vector<std::vector<int64_t>> rows;
    for (int64_t c : used)
      rows.push_back(tokenize(caption_file.captions[static_cast<size_t>(c)].text));
    // Short captions together, so that batches carry little padding.
    std::vector<int64_t> order(rows.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return rows[a].size() < rows[b].size(); });
    // --text-cache FILE: the same features from an earlier run, when the key
    // (text weights and tokenizer files, pooling, length, precision, chunk
    // size, and every caption's text in row order) matches; bitwise what this
    // run would compute, so a run with the cache trains exactly like one without.
    std::string cache_key;
    if (!options.text_cache.empty()) {
      Sha256 key;
      key.update(model::to_json(built.config).at("text").at("pooling").dump());
      key.update_value(options.max_text_length);
      key.update_value(options.eval_batch_size);
      key.update(options.precision);
      for (const char* file :
           {"config.json", "tokenizer.json", "vocab.txt", "spm.model", "model.safetensors"}) {
        const fs::path path = fs::path(built.config.text_folder) / file;
        key.update(fs::exists(path) ? sha256_file_hex(path) : std::string("-"));
      }
      for (int64_t c : used) {
        key.update(caption_file.captions[static_cast<size_t>(c)].text);
        key.update(std::string_view("\0", 1));
      }
      cache_key = key.hex_digest();
      if (fs::exists(options.text_cache)) {
        const SafetensorsReader file = SafetensorsReader::open(options.text_cache);
        const auto it = file.metadata().find("key");
        if (it != file.metadata().end() && it->second == cache_key &&
            file.find("features") != nullptr) {
          text_cache = data::read_tensor(file, file.at("features"));
          if (leader)
            log::info("train", "text features of {} captions read from {}",
                      with_commas(static_cast<int64_t>(used.size())), options.text_cache);
        } else if (leader) {
          log::info("train", "{} was made for other captions or another text model: recomputing",
                    options.text_cache);
        }
      }
    }
    std::vector<at::Tensor> pooled(rows.size());
    at::NoGradGuard no_grad;
    std::unique_ptr<Progress> caching;
    if (leader && !text_cache.defined()) {
      ProgressOptions p;
      p.total = static_cast<int64_t>(rows.size());
      p.unit = "captions";
      caching = std::make_unique<Progress>("text-cache", p);
    }
    const int64_t chunk = options.eval_batch_size;
    for (size_t begin = 0; !text_cache.defined() && begin < order.size(); begin += chunk) {
      std::vector<std::vector<int64_t>> batch_rows;
      const size_t end = std::min(order.size(), begin + static_cast<size_t>(chunk));
      for (size_t i = begin; i < end; ++i) batch_rows.push_back(rows[order[i]]);
      const auto [ids, mask] = pad(batch_rows);
      const at::Tensor features = built.model->pool_text(ids, mask);
      for (size_t i = begin; i < end; ++i)
        pooled[order[i]] = features[static_cast<int64_t>(i - begin)];
      if (caching) caching->advance(static_cast<int64_t>(end - begin));
    }
    if (!text_cache.defined()) {
      text_cache = at::stack(pooled).to(at::kFloat);
      if (!cache_key.empty() && leader) {
        SafetensorsWriter writer;
        data::add_tensor(writer, "features", text_cache);
        writer.set_metadata("key", cache_key);
        writer.write(options.text_cache);
      }
    }
    if (leader)
      log::info("train",
                "text tower frozen (--text-lr 0): {} captions encoded once, {} cut to {} "
                "tokens",
                with_commas(static_cast<int64_t>(used.size())), summary.truncated,
                options.max_text_length);
  }
  int64_t consecutive_nonfinite = state.extra.value("consecutive_nonfinite", int64_t{0});
  summary.skipped = state.extra.value("skipped", int64_t{0});

  auto checkpoint = [&](const std::string& name, int64_t epoch, int64_t step_in_epoch) {
    TrainingState s;
    s.epoch = epoch;
    s.step_in_epoch = step_in_epoch;
    s.global_step = state.global_step;
    s.best_metric = summary.best_validation;
    s.tensors = optimizer_state(optimizer, *built.model, siglip_bias);
    for (auto& [k, v] : scaler.state()) s.tensors[k] = v;
    const at::Tensor rng = at::detail::getDefaultCPUGenerator().get_state();  // [n] uint8
    const at::Tensor every_rng = comm.all_gather(rng.unsqueeze(0));           // [world, n]
    s.tensors["rng.cpu"] = rng;  // this rank's (rank 0's where it is written)
    for (int r = 0; r < comm.world_size(); ++r)
      s.tensors[format("rng.cpu.rank{}", r)] = every_rng[r].clone();
    if (siglip_bias.defined()) s.tensors["siglip.bias"] = siglip_bias.detach().cpu();
    if (queue) {
      for (auto& [k, v] : queue->state()) s.tensors[k] = v;
      for (size_t i = 0; i < momentum_parameters.size(); ++i)
        s.tensors["momentum." + momentum_names[i]] = momentum_parameters[i].detach().cpu();
    }
    s.extra = {{"skipped", summary.skipped},
               {"consecutive_nonfinite", consecutive_nonfinite},
               {"world_size", comm.world_size()}};
    if (leader) save_checkpoint(out, name, built, s);
    comm.barrier();
  };

  ProgressOptions progress_options;
  progress_options.total = total_steps - state.global_step;
  progress_options.unit = "steps";
  std::unique_ptr<Progress> progress;
  if (leader) progress = std::make_unique<Progress>("train", progress_options);

  for (int64_t epoch = state.epoch; epoch < options.epochs; ++epoch) {
    const int64_t first_step = epoch == state.epoch ? state.step_in_epoch : 0;
    for (int64_t step = first_step; step < sampler.steps_per_epoch(); ++step) {
      const auto started = std::chrono::steady_clock::now();
      const std::vector<int64_t> samples = sampler.batch(epoch, step);
      std::vector<data::BRepGraph> graphs;
      std::vector<std::vector<int64_t>> token_rows;
      std::vector<int64_t> cached_rows;
      std::vector<int64_t> caption_keys, geometry_keys;
      std::vector<std::vector<text::Quantity>> quantity_rows;
      for (int64_t sample : samples) {
        graphs.push_back(dataset.graph(set.models[static_cast<size_t>(sample)]));
        const auto& choices = set.captions[static_cast<size_t>(sample)];
        // Stateless choice: the same caption whether or not the run was interrupted.
        const uint64_t pick = mix_hash(options.seed, static_cast<uint64_t>(epoch),
                                       static_cast<uint64_t>(sample), 0xca9);
        const int64_t chosen = choices[pick % choices.size()];
        const data::Caption& caption = caption_file.captions[static_cast<size_t>(chosen)];
        if (frozen_text) {
          cached_rows.push_back(cache_row[static_cast<size_t>(chosen)]);
        } else {
          token_rows.push_back(tokenize(caption.text));
        }
        if (built.model->reads_quantities())
          quantity_rows.push_back(text::extract_quantities(caption.text));
        caption_keys.push_back(caption_key(caption.text, caption.facts));
        geometry_keys.push_back(geometry_key(graphs.back().geometry_hash, -1 - sample));
      }
      const text::QuantityBatch quantities = built.model->reads_quantities()
                                                 ? text::quantity_batch(quantity_rows).to(device)
                                                 : text::QuantityBatch{};
      model::TwoTowerOutput output;
      if (frozen_text) {
        output.brep = built.model->encode_brep(graphs);
        output.text = built.model->project_text(
            text_cache.index_select(0, at::tensor(cached_rows)).to(device), quantities);
        output.logit_scale = built.model->logit_scale();
      } else {
        const auto [input_ids, attention] = pad(token_rows);
        output.brep = built.model->encode_brep(graphs);
        output.text = built.model->encode_text(input_ids, attention, quantities);
        output.logit_scale = built.model->logit_scale();
      }
      ContrastivePairs pairs;
      pairs.text = output.text;
      pairs.cad = output.brep;
      pairs.caption_key = at::tensor(caption_keys).to(device);
      pairs.geometry_key = at::tensor(geometry_keys).to(device);
      // Momentum encoders: one EMA step towards the online weights, then this
      // batch's momentum embeddings (enqueued after the step). The loss sees
      // only earlier batches in the queue: this batch is already in the batch.
      at::Tensor momentum_text, momentum_cad;
      QueueNegatives negatives;
      if (queue) {
        at::NoGradGuard no_grad;
        momentum_update(momentum_parameters, online_parameters, options.queue_momentum);
        momentum_cad = momentum.model->encode_brep(graphs);
        momentum_text =
            frozen_text
                ? momentum.model->project_text(
                      text_cache.index_select(0, at::tensor(cached_rows)).to(device), quantities)
                : [&] {
                    const auto [input_ids, attention] = pad(token_rows);
                    return momentum.model->encode_text(input_ids, attention, quantities);
                  }();
        negatives = queue->negatives();
      }
      LossResult result = contrastive_loss(comm, pairs, output.logit_scale, siglip_bias,
                                           loss_options, queue ? &negatives : nullptr);
      if (options.debug_nan_at_step >= 0 && state.global_step >= options.debug_nan_at_step &&
          state.global_step < options.debug_nan_at_step + options.debug_nan_count) {
        result.loss = result.loss * std::numeric_limits<double>::quiet_NaN();
      }
      const double loss_value = result.loss.item<double>();

      for (size_t g = 0; g < param_groups.size(); ++g) {
        auto& group_options =
            static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups()[g].options());
        group_options.lr(base_lr[g] *
                         learning_rate_factor(state.global_step, total_steps, warmup_steps));
      }
      optimizer.zero_grad();
      std::string skip_reason;
      if (!std::isfinite(loss_value)) {
        // Caught before backward: nothing is applied, and it is said out loud.
        skip_reason = format("loss is {}", loss_value);
      } else {
        scaler.scale(result.loss).backward();
        average_gradients(comm, parameters);
        if (scaler.unscale_and_check(parameters)) {
          skip_reason = format("gradients hold NaN/Inf at loss scale {}", scaler.current_scale());
          scaler.update(true);
        }
      }
      if (!skip_reason.empty()) {
        ++summary.skipped;
        ++consecutive_nonfinite;
        log::warn("train",
                  "step {} (epoch {}, step {}): {}; step skipped ({} skipped in all, {} "
                  "in a row, the run stops at {})",
                  state.global_step, epoch, step, skip_reason, summary.skipped,
                  consecutive_nonfinite, options.max_nonfinite_steps);
        optimizer.zero_grad();
        if (consecutive_nonfinite >= options.max_nonfinite_steps) {
          throw Error(
              format("stopping: {} non-finite steps in a row (last: {}). No checkpoint was "
                     "written after them; lower the learning rate or use fp32/bf16, and "
                     "resume from {}",
                     consecutive_nonfinite, skip_reason, last.string()));
        }
      } else {
        if (options.grad_clip > 0) torch::nn::utils::clip_grad_norm_(parameters, options.grad_clip);
        optimizer.step();
        built.model->clamp_logit_scale_();
        scaler.update(false);
        // Only a step that was taken feeds the queue; enqueue refuses NaN/Inf loudly.
        if (queue)
          queue->enqueue(momentum_text, momentum_cad, pairs.caption_key, pairs.geometry_key);
        consecutive_nonfinite = 0;
        ++summary.steps;
        summary.last_loss = loss_value;
      }
      ++state.global_step;

      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double lr_now =
          base_lr[2] * learning_rate_factor(state.global_step - 1, total_steps, warmup_steps);
      if (leader) {
        progress->advance(1, {{"loss", fixed(loss_value, 4)},
                              {"lr", format("{}", lr_now)},
                              {"skipped", std::to_string(summary.skipped)},
                              {"samples/s", fixed(result.global_count / seconds, 1)},
                              {"epoch", std::to_string(epoch + 1)}});
        metrics.write({{"kind", "train"},
                       {"step", state.global_step},
                       {"epoch", epoch},
                       {"loss", loss_value},
                       {"lr", lr_now},
                       {"logit_scale", output.logit_scale.item<double>()},
                       {"skipped", summary.skipped},
                       {"samples_per_s", result.global_count / seconds},
                       {"masked_pairs", result.masked_pairs},
                       {"queue_rows", queue ? queue->size() : 0},
                       {"masked_queue_pairs", result.masked_queue}},
                      state.global_step);
      }
      const bool stop = options.stop_after_steps > 0 &&
                        summary.steps + summary.skipped >= options.stop_after_steps;
      if (stop ||
          (options.checkpoint_every > 0 && state.global_step % options.checkpoint_every == 0)) {
        checkpoint("last", epoch, step + 1);
      }
      if (stop) {
        summary.stopped_early = true;
        if (leader) {
          progress->finish();
          log::info("train", "stopped after {} steps as asked; resume with --resume",
                    summary.steps + summary.skipped);
        }
        return summary;
      }
    }

    // End of epoch: validation, then checkpoints.
    double validation = -1;
    if (!validation_ids.empty() && leader) {
      eval::EvalOptions eval_options;
      eval_options.batch_size = options.eval_batch_size;
      eval_options.max_text_length = options.max_text_length;
      eval_options.split = options.validation_split;
      eval_options.levels = options.levels;
      // A frozen tower pools each validation caption once per run.
      if (frozen_text) eval_options.pooled_text_cache = &validation_text;
      const eval::EvalReport report =
          eval::evaluate(*built.model, tokenizer, options.max_text_length, dataset,
                         caption_file.captions, validation_ids, eval_options);
      set_modes();
      validation = eval::mean_text_to_cad_r1(report);
      nlohmann::json record = {{"kind", "validation"},
                               {"step", state.global_step},
                               {"epoch", epoch},
                               {"text_to_cad_r1", validation},
                               {"gallery", report.gallery}};
      for (const auto& level : report.levels) {
        record[level.level + "_text_to_cad_r1"] = level.text_to_cad.r1;
        record[level.level + "_text_to_cad_mrr"] = level.text_to_cad.mrr;
      }
      metrics.write(record, state.global_step);
      log::info("train", "epoch {}: validation text->CAD R@1 {}% (gallery {})", epoch + 1,
                fixed(100 * validation, 2), report.gallery);
    }
    // Every rank learns rank 0's verdict, so that all take the same checkpoint steps.
    std::vector<at::Tensor> shared = {at::full({1}, validation, at::kDouble)};
    comm.broadcast(shared, 0);
    validation = shared[0].item<double>();
    const bool best = !validation_ids.empty() && validation > summary.best_validation;
    if (best) summary.best_validation = validation;
    checkpoint("last", epoch + 1, 0);
    if (best) checkpoint("best", epoch + 1, 0);
  }
  if (leader) {
    progress->finish();
    log::info("train",
              "done: {} steps, {} skipped, {} captions truncated to {} tokens, last loss {}",
              summary.steps, summary.skipped, summary.truncated, options.max_text_length,
              fixed(summary.last_loss, 4));
  }
  return summary;
}

}  // namespace cadclip::train
