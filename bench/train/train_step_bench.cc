// One training step of cadclip's two-tower model on the CPU (default B-Rep
// encoder + the pretrained MiniLM text tower, fine-tuned; linear heads,
// learnable temperature, symmetric InfoNCE, AdamW), driven through a pipe by
// bench/train/run.py, which times the same model written in PyTorch-Python
// against it in the same run.
//   train_step_bench DATA TEXT_MODEL [threads=2] [batch=64] [seed=0]
// DATA is a prepared folder (cadclip prepare); the batch is its first `batch`
// training models, each with one caption (levels taken in turn). The step is
// the trainer's own calls (src/train/trainer.cc): encode_brep(graphs),
// encode_text, logit_scale, contrastive_loss, loss.item(), backward,
// average_gradients, the loss scaler's non-finite check, clip_grad_norm_,
// AdamW::step, clamp_logit_scale_. It runs with the cadclip binary's heap
// settings (mallopt). The dump's size groups come from group_by_size
// with its default overhead, the one BRepEncoder::forward_graphs uses.
// Commands on stdin, one answer line each on stdout:
//   step          one training step; answers its wall and CPU seconds
//   collate       collation of the step's size groups alone (inside step); seconds
//   profile PATH  one step under LibTorch's Kineto profiler, Chrome trace to PATH; seconds
//   dump PATH     eval mode (no dropout), no optimizer step: weights, batches, tokens,
//                 both towers' embeddings, the loss and the gradients to PATH; "ok"
//   quit
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <malloc.h>
#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../tests/model/reference_dump.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/size_groups.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/optimizer.h"

namespace {

using namespace cadclip;
namespace fs = std::filesystem;

constexpr int64_t kMaxTextLength = 128;  // the trainer's default --max-text-length
constexpr double kLr = 5e-4;             // the trainer's defaults: new modules ...
constexpr double kTextLr = 3e-5;         // ... and the pretrained text tower
constexpr double kWeightDecay = 0.05;
constexpr double kGradClip = 1.0;

void add_batch(SafetensorsWriter& file, const std::string& prefix, const data::BRepBatch& batch) {
  for (const auto& [name, tensor] : batch.named_tensors())
    data::add_tensor(file, prefix + name, tensor);
}

class StepBench {
 public:
  StepBench(const fs::path& data_folder, const std::string& text_model, int64_t batch_size,
            uint64_t seed)
      : comm_(train::make_single_process_communicator()),
        scaler_(/*enabled=*/false, {}, c10::Device(c10::kCPU)) {
    // The batch: the first `batch_size` training models with a caption.
    const data::Dataset dataset = data::Dataset::open(data_folder);
    data::CaptionOptions caption_options;
    caption_options.format = "jsonl";
    const data::CaptionFile captions =
        data::read_captions(data_folder / "captions.jsonl", caption_options);
    const data::Splits splits = data::read_splits(data_folder / "splits.json");
    std::map<std::string, std::vector<const data::Caption*>> by_id;
    for (const auto& c : captions.captions) by_id[c.id].push_back(&c);
    std::vector<std::vector<int64_t>> rows;
    for (const auto& id : splits.train) {
      if (static_cast<int64_t>(graphs_.size()) == batch_size) break;
      const auto index = dataset.find(id);
      const auto it = by_id.find(id);
      if (!index || it == by_id.end()) continue;
      const auto i = static_cast<int64_t>(graphs_.size());
      graphs_.push_back(dataset.graph(*index));
      const data::Caption& caption = *it->second[static_cast<size_t>(i) % it->second.size()];
      texts_.push_back(caption.text);
      // The trainer's keys: equal keys = false negatives, kept out of the negatives.
      caption_keys_.push_back(train::caption_key(caption.text, caption.facts));
      geometry_keys_.push_back(train::geometry_key(graphs_.back().geometry_hash, -1 - i));
    }
    if (static_cast<int64_t>(graphs_.size()) < batch_size) {
      std::fprintf(stderr,
                   "train_step_bench: %s has %zu training models with captions, fewer than the "
                   "batch of %lld; prepare more parts (cadclip synth --count 200)\n",
                   data_folder.c_str(), graphs_.size(), static_cast<long long>(batch_size));
      std::exit(2);
    }

    torch::manual_seed(seed);
    model::ModelConfig config;
    config.text_folder = text_model;
    config.text.max_length = kMaxTextLength;
    config.two_tower.text_head_hidden = 0;  // the reference step's linear head, no quantities
    config.two_tower.quantity_width = 0;
    built_ = model::build_model(config);
    const text::Tokenizer& tokenizer = *built_.text.tokenizer;
    int64_t width = 0;
    for (const auto& text : texts_) {
      std::vector<int64_t> ids = tokenizer.encode(text);
      if (static_cast<int64_t>(ids.size()) > kMaxTextLength) {  // the trainer's truncation
        ids.resize(static_cast<size_t>(kMaxTextLength - 1));
        ids.push_back(tokenizer.sep_id());
      }
      width = std::max<int64_t>(width, static_cast<int64_t>(ids.size()));
      rows.push_back(std::move(ids));
    }
    input_ids_ = at::full({batch_size, width}, tokenizer.pad_id(), at::kLong);
    attention_ = at::zeros_like(input_ids_);
    for (int64_t r = 0; r < batch_size; ++r) {
      const auto n = static_cast<int64_t>(rows[static_cast<size_t>(r)].size());
      input_ids_[r].narrow(0, 0, n).copy_(at::tensor(rows[static_cast<size_t>(r)]));
      attention_[r].narrow(0, 0, n).fill_(1);
    }
    caption_key_ = at::tensor(caption_keys_);
    geometry_key_ = at::tensor(geometry_keys_);

    built_.model->train();
    for (const auto& p : built_.model->parameters())
      if (p.requires_grad()) parameters_.push_back(p);
    // The trainer's four AdamW groups: text / new modules, with / without decay.
    auto groups = train::adamw_groups(*built_.model, {}, {kLr, kTextLr, kWeightDecay});
    optimizer_ = std::make_unique<train::FusedAdamW>(std::move(groups));
    // The same groups stepped by LibTorch's per-tensor AdamW (`step-per-tensor`),
    // for the before/after figure of the fused step; each keeps its own state.
    per_tensor_ = std::make_unique<torch::optim::AdamW>(
        train::adamw_groups(*built_.model, {}, {kLr, kTextLr, kWeightDecay}));

    std::vector<int64_t> face_counts;
    for (const auto& g : graphs_) face_counts.push_back(g.num_faces());
    size_groups_ = group_by_size(face_counts);
    int64_t faces = 0, largest = 0, tokens = attention_.sum().item<int64_t>();
    for (int64_t n : face_counts) faces += n, largest = std::max(largest, n);
    std::fprintf(stderr,
                 "train_step_bench: %lld graphs (%lld faces, largest %lld) in %zu size groups, "
                 "%lld captions of %lld tokens in all, padded to %lld\n",
                 static_cast<long long>(batch_size), static_cast<long long>(faces),
                 static_cast<long long>(largest), size_groups_.size(),
                 static_cast<long long>(batch_size), static_cast<long long>(tokens),
                 static_cast<long long>(width));
  }

  // Returns the loss. The "phase:" scopes cost nothing unless a profiler
  // listens; run.py reads them from the traces for the per-phase split.
  double step(bool per_tensor_adamw = false) {
    torch::optim::AdamW& optimizer = per_tensor_adamw ? *per_tensor_ : *optimizer_;
    optimizer.zero_grad();
    model::TwoTowerOutput output;
    {
      RECORD_USER_SCOPE("phase:brep forward");
      output.brep = built_.model->encode_brep(graphs_);
    }
    {
      RECORD_USER_SCOPE("phase:text forward");
      output.text = built_.model->encode_text(input_ids_, attention_);
    }
    double loss_value = 0;
    train::LossResult result;
    {
      RECORD_USER_SCOPE("phase:loss");
      output.logit_scale = built_.model->logit_scale();
      result = loss(output);
      loss_value = result.loss.item<double>();
    }
    {
      RECORD_USER_SCOPE("phase:backward");
      scaler_.scale(result.loss).backward();
    }
    {
      RECORD_USER_SCOPE("phase:check and clip");
      train::average_gradients(*comm_, parameters_);
      if (scaler_.unscale_and_check(parameters_)) {
        std::fprintf(stderr, "train_step_bench: non-finite gradients\n");
        std::exit(3);
      }
      torch::nn::utils::clip_grad_norm_(parameters_, kGradClip);
    }
    {
      RECORD_USER_SCOPE("phase:optimizer");
      optimizer.step();
      built_.model->clamp_logit_scale_();
      scaler_.update(false);
    }
    return loss_value;
  }

  // Collates the size groups as encode_brep(graphs) does; returns the graph
  // count so that the work cannot be dropped.
  double collate() {
    double sum = 0;
    for (const auto& group : size_groups_) {
      std::vector<const data::BRepGraph*> members;
      for (int64_t i : group) members.push_back(&graphs_[static_cast<size_t>(i)]);
      sum += data::collate(members).num_graphs();
    }
    return sum;
  }

  void dump(const std::string& path) {
    built_.model->eval();
    optimizer_->zero_grad();
    const model::TwoTowerOutput output = forward();
    const train::LossResult result = loss(output);
    result.loss.backward();
    SafetensorsWriter file;
    for (const auto& p : built_.model->named_parameters()) {
      data::add_tensor(file, "param." + p.key(), p.value().detach());
      if (p.value().grad().defined()) data::add_tensor(file, "grad." + p.key(), p.value().grad());
    }
    for (size_t g = 0; g < size_groups_.size(); ++g) {
      std::vector<const data::BRepGraph*> members;
      for (int64_t i : size_groups_[g]) members.push_back(&graphs_[static_cast<size_t>(i)]);
      const std::string prefix = "group" + std::to_string(g) + ".";
      add_batch(file, prefix, data::collate(members));
      data::add_tensor(file, prefix + "positions", at::tensor(size_groups_[g]));
    }
    add_batch(file, "full.", data::collate(graphs_));
    data::add_tensor(file, "input_ids", input_ids_);
    data::add_tensor(file, "attention_mask", attention_);
    data::add_tensor(file, "caption_key", caption_key_);
    data::add_tensor(file, "geometry_key", geometry_key_);
    data::add_tensor(file, "output.brep", output.brep.detach());
    data::add_tensor(file, "output.text", output.text.detach());
    data::add_tensor(file, "output.logit_scale", output.logit_scale.detach());
    data::add_tensor(file, "output.loss", result.loss.detach());
    const model::BRepEncoderOptions& o = built_.config.brep;
    cadclip::testing::add_brep_options(file, o);
    file.set_metadata("groups", std::to_string(size_groups_.size()));
    file.set_metadata("max_logit_scale", std::to_string(built_.config.two_tower.max_logit_scale));
    file.set_metadata("lr", std::to_string(kLr));
    file.set_metadata("text_lr", std::to_string(kTextLr));
    file.set_metadata("weight_decay", std::to_string(kWeightDecay));
    file.set_metadata("grad_clip", std::to_string(kGradClip));
    file.write(path);
    optimizer_->zero_grad();
    built_.model->train();
  }

 private:
  // The trainer's forward (fine-tuned text tower): B-Rep graphs encoded by size group.
  model::TwoTowerOutput forward() {
    model::TwoTowerOutput output;
    output.brep = built_.model->encode_brep(graphs_);
    output.text = built_.model->encode_text(input_ids_, attention_);
    output.logit_scale = built_.model->logit_scale();
    return output;
  }

  train::LossResult loss(const model::TwoTowerOutput& output) {
    train::ContrastivePairs pairs;
    pairs.text = output.text;
    pairs.cad = output.brep;
    pairs.caption_key = caption_key_;
    pairs.geometry_key = geometry_key_;
    train::LossOptions options;  // the trainer's default: InfoNCE, false negatives masked
    return train::contrastive_loss(*comm_, pairs, output.logit_scale, at::Tensor(), options);
  }

  std::unique_ptr<train::Communicator> comm_;
  train::DynamicLossScaler scaler_;
  model::BuiltModel built_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;   // the trainer's: train::FusedAdamW
  std::unique_ptr<torch::optim::AdamW> per_tensor_;  // LibTorch's, for comparison
  std::vector<at::Tensor> parameters_;
  std::vector<data::BRepGraph> graphs_;
  std::vector<std::string> texts_;
  std::vector<int64_t> caption_keys_, geometry_keys_;
  std::vector<std::vector<int64_t>> size_groups_;
  at::Tensor input_ids_, attention_, caption_key_, geometry_key_;
};

// CPU time of this process (user + system, all threads), seconds: on a loaded
// machine it says what a step costs better than the wall clock does.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: train_step_bench DATA TEXT_MODEL [threads=2] [batch=64] [seed=0]\n");
    return 2;
  }
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const int64_t batch_size = argc > 4 ? std::atoll(argv[4]) : 64;
  const uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0;
  // The heap settings of the cadclip binary (apps/cadclip/main.cc), so that the
  // step runs as it does in `cadclip train`: large activation buffers stay in
  // the heap instead of being mapped and faulted in afresh every step.
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  at::set_num_threads(threads);
  // The trainer's default (--deterministic): deterministic kernels, no NaN fill.
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setDeterministicFillUninitializedMemory(false);

  StepBench bench(argv[1], argv[2], batch_size, seed);
  std::printf("ready threads=%d\n", at::get_num_threads());
  std::fflush(stdout);
  std::string command;
  while (std::cin >> command) {
    if (command == "quit") break;
    if (command == "step" || command == "step-per-tensor") {
      const double cpu_before = cpu_seconds();
      const double wall = seconds_of([&] { bench.step(command == "step-per-tensor"); });
      std::printf("%.6f %.6f\n", wall, cpu_seconds() - cpu_before);
    } else if (command == "collate") {
      std::printf("%.6f\n", seconds_of([&] { bench.collate(); }));
    } else if (command == "dump") {
      std::string path;
      std::cin >> path;
      bench.dump(path);
      std::printf("ok\n");
    } else if (command == "profile") {
      std::string path;
      std::cin >> path;
      namespace prof = torch::autograd::profiler;
      namespace impl = torch::profiler::impl;
      const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
      const std::set<impl::ActivityType> activities = {impl::ActivityType::CPU};
      prof::prepareProfiler(config, activities);
      prof::enableProfiler(config, activities);
      const double seconds = seconds_of([&] {
        RECORD_USER_SCOPE("train_step");
        bench.step();
      });
      prof::disableProfiler()->save(path);
      std::printf("%.6f\n", seconds);
    } else {
      std::fprintf(stderr, "train_step_bench: unknown command '%s'\n", command.c_str());
      return 2;
    }
    std::fflush(stdout);
  }
  return 0;
}
