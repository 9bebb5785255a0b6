// The training data path against the training step: how many samples per
// second the trainer's own input code (train::StepInputMaker through the
// train::StepLoader, as src/train/trainer.cc runs it) delivers, at 1 and 2
// loader threads, with the pairwise inputs recomputed at every step (as
// before data::PairwiseCache) and kept; the stages one by one; and the
// default model's training step on the same batches. Method and figures:
// docs/PERFORMANCE.md, "Training data path".
//
//   data_path_bench replicate SRC OUT N
//       OUT: a prepared folder of N models, SRC's graphs again and again
//       under new ids (r<k>-<id>), with their captions; splits by id hash.
//   data_path_bench run DATA TEXT_MODEL [--batch 64] [--steps 40]
//       [--threads 1,2] [--cache-mb 4096] [--train-steps 2] [--fill]
//       DATA: prepared folders (several: repeat, comma-separated). --fill
//       also makes a whole epoch's pairwise inputs, for the cache's memory.
#include <ATen/ATen.h>
#include <sys/resource.h>
#include <torch/nn/utils/clip_grad.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../common/bench_util.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/pairwise.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/model_config.h"
#include "cadclip/text/tokenizer.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss.h"
#include "cadclip/train/optimizer.h"
#include "cadclip/train/sampler.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/step_loader.h"

namespace {

using namespace cadclip;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double rss_gib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // KiB -> GiB
}

int replicate(const fs::path& source, const fs::path& out, int64_t count) {
  const data::PreparedData src = data::open_prepared({source});
  std::map<std::string, std::vector<const data::Caption*>> captions;
  for (const data::Caption& c : src.captions.captions) captions[c.id].push_back(&c);
  fs::create_directories(out / "shards");
  data::ShardWriter writer;
  std::vector<data::Caption> out_captions;
  std::vector<std::string> ids;
  nlohmann::json shards = nlohmann::json::array();
  auto flush = [&] {
    const std::string name = format("shards/shard-{}.safetensors", shards.size());
    shards.push_back({{"file", name}, {"models", writer.size()}});
    writer.write(out / name);
  };
  const int64_t n = src.dataset.size();
  for (int64_t k = 0; k < count; ++k) {
    data::BRepGraph g = src.dataset.graph(k % n);
    const std::string original = g.id;
    g.id = format("r{}-{}", k / n, original);
    writer.add(g);
    ids.push_back(g.id);
    for (const data::Caption* c : captions[original])
      out_captions.push_back({g.id, c->level, c->text, c->facts});
    if (writer.size() == 4096) flush();
  }
  if (writer.size() > 0) flush();
  std::stable_sort(out_captions.begin(), out_captions.end(),
                   [](const data::Caption& a, const data::Caption& b) { return a.id < b.id; });
  data::write_captions_jsonl(out / "captions.jsonl", out_captions);
  data::write_splits(out / "splits.json", data::split_by_hash(ids, {0.05, 0.05}));
  write_text_atomic(
      out / "manifest.json",
      nlohmann::json{{"format", "cadclip.prepared"},
                     {"manifest_version", 1},
                     {"shard_schema_version", data::kShardSchemaVersion},
                     {"counts", {{"inputs", count}, {"prepared", count}, {"failed", 0}}},
                     {"replicated_from", fs::absolute(source).string()},
                     {"shards", shards}}
          .dump(1));
  std::printf("wrote %lld models (%lld of %s, again and again) in %zu shards to %s\n",
              static_cast<long long>(count), static_cast<long long>(n), source.c_str(),
              shards.size(), out.c_str());
  return 0;
}

struct RunOptions {
  std::vector<std::string> data;
  std::string text_model;
  int64_t batch = 64;
  int64_t steps = 40;
  std::vector<int> threads = {1, 2};
  int64_t cache_mb = 4096;
  int64_t train_steps = 2;
  bool fill = false;
};

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

class DataPath {
 public:
  DataPath(const RunOptions& o)
      : o_(o),
        data_(data::open_prepared(data::dataset_folders(o.data))),
        tokenizer_(text::load_tokenizer(o.text_model)),
        captions_(*tokenizer_, 128),
        set_(train::training_set(data_.dataset, data_.captions.captions, data_.splits.train, {})),
        sampler_(static_cast<int64_t>(set_.models.size()), /*seed=*/0, 0, 1, o.batch) {
    int64_t faces = 0, largest = 0, squares = 0;
    for (const int64_t m : set_.models) {
      const int64_t f = data_.dataset.num_faces(m);
      faces += f;
      squares += f * f;
      largest = std::max(largest, f);
    }
    const double n = static_cast<double>(set_.models.size());
    std::printf(
        "data: %lld models, %lld in the train split with captions; faces per model mean %.1f, "
        "largest %lld, mean F^2 %.0f\n",
        static_cast<long long>(data_.dataset.size()), static_cast<long long>(set_.models.size()),
        static_cast<double>(faces) / n, static_cast<long long>(largest),
        static_cast<double>(squares) / n);
    std::printf("%lld steps of %lld samples per measurement; the sampler's order of epoch 0\n",
                static_cast<long long>(o.steps), static_cast<long long>(o.batch));
  }

  int64_t models() const { return data_.dataset.size(); }

  // samples/s of taking o.steps steps of `epoch` through the loader.
  double delivered(int threads, data::PairwiseCache* cache, int64_t epoch) {
    const train::StepInputMaker maker = make_maker(cache, /*collate=*/true);
    std::vector<std::pair<int64_t, int64_t>> plan;
    for (int64_t s = 0; s < o_.steps; ++s) plan.emplace_back(epoch, s);
    int64_t samples = 0;
    const double seconds = bench::seconds_of([&] {
      train::StepLoader loader(
          [&](int64_t e, int64_t s) { return maker.make(e, sampler_.batch(e, s)); }, plan, threads);
      for (const auto& [e, s] : plan) samples += loader.take(e, s).brep.num_graphs();
    });
    return static_cast<double>(samples) / seconds;
  }

  // Seconds per batch of each stage, one thread, over the first o.steps steps.
  void stages() {
    double read = 0, text = 0, pairwise = 0, collate = 0;
    const train::StepInputMaker maker = make_maker(nullptr, /*collate=*/false);
    for (int64_t s = 0; s < o_.steps; ++s) {
      const std::vector<int64_t> batch = sampler_.batch(0, s);
      std::vector<data::BRepGraph> graphs;
      read += bench::seconds_of([&] {
        for (const int64_t i : batch)
          graphs.push_back(data_.dataset.graph(set_.models[static_cast<size_t>(i)]));
      });
      // The whole maker (reads again) less the reads: caption, tokens, keys.
      text += bench::seconds_of([&] { (void)maker.make(0, batch); });
      std::vector<data::PairwiseInputs> computed;
      pairwise += bench::seconds_of([&] {
        for (const data::BRepGraph& g : graphs) computed.push_back(data::pairwise_inputs(g));
      });
      std::vector<const data::BRepGraph*> pointers;
      std::vector<const data::PairwiseInputs*> kept;
      for (size_t i = 0; i < graphs.size(); ++i) {
        pointers.push_back(&graphs[i]);
        kept.push_back(&computed[i]);
      }
      collate += bench::seconds_of([&] { (void)data::collate_groups(pointers, kept); });
    }
    text -= read;
    const double steps = static_cast<double>(o_.steps), b = static_cast<double>(o_.batch);
    std::printf("\nstage (1 thread)                        ms/batch   samples/s\n");
    for (const auto& [name, seconds] :
         std::vector<std::pair<const char*, double>>{{"shard read (Dataset::graph)", read},
                                                     {"caption, tokens, keys", text},
                                                     {"pairwise inputs", pairwise},
                                                     {"collation in size groups", collate}})
      std::printf("%-38s %9.2f %11.0f\n", name, 1e3 * seconds / steps, b * steps / seconds);
  }

  // Seconds per training step of the default model (MiniLM fine-tuned, fp32)
  // on the first batches, their inputs made beforehand.
  double step_seconds(int threads) {
    bench::set_threads(threads);
    torch::manual_seed(0);
    model::ModelConfig config;
    config.text_folder = o_.text_model;
    config.text.max_length = 128;
    model::BuiltModel built = model::build_model(config);
    built.model->train();
    std::vector<at::Tensor> parameters;
    for (const auto& p : built.model->parameters())
      if (p.requires_grad()) parameters.push_back(p);
    train::FusedAdamW optimizer(train::adamw_groups(*built.model, {}, {5e-4, 3e-5, 0.05}));
    auto comm = train::make_single_process_communicator();
    data::PairwiseCache cache(data_.dataset.size(), 0);
    const train::StepInputMaker maker = make_maker(&cache, /*collate=*/true);
    std::vector<double> seconds;
    for (int64_t s = 0; s < o_.train_steps + 1; ++s) {
      const train::StepInputs in = maker.make(0, sampler_.batch(0, s));
      const double t = bench::seconds_of([&] {
        optimizer.zero_grad();
        const auto [ids, mask] = captions_.pad(in.tokens, at::kCPU);
        train::ContrastivePairs pairs{built.model->encode_text(ids, mask, in.quantities),
                                      built.model->encode_brep(in.brep), in.caption_keys,
                                      in.geometry_keys};
        train::LossResult loss = train::contrastive_loss(*comm, pairs, built.model->logit_scale(),
                                                         at::Tensor(), train::LossOptions{});
        (void)loss.loss.item<double>();
        loss.loss.backward();
        torch::nn::utils::clip_grad_norm_(parameters, 1.0);
        optimizer.step();
      });
      if (s > 0) seconds.push_back(t);  // the first warms up
    }
    bench::set_threads(1);
    return bench::summarize(seconds).median;
  }

  void fill(int threads) {
    data::PairwiseCache cache(data_.dataset.size(), o_.cache_mb << 20);
    const train::StepInputMaker maker = make_maker(&cache, /*collate=*/true);
    std::vector<std::pair<int64_t, int64_t>> plan;
    for (int64_t s = 0; s < sampler_.steps_per_epoch(); ++s) plan.emplace_back(0, s);
    const double seconds = bench::seconds_of([&] {
      train::StepLoader loader(
          [&](int64_t e, int64_t s) { return maker.make(e, sampler_.batch(e, s)); }, plan, threads);
      for (const auto& [e, s] : plan) (void)loader.take(e, s);
    });
    const data::PairwiseCache::Stats stats = cache.stats();
    std::printf(
        "\nwhole epoch (%lld steps, %d loader threads, pairwise inputs kept as they come): "
        "%.1f s, %.0f samples/s\n"
        "pairwise cache: %lld models kept, %.1f MiB (%.1f KiB a model), %lld not kept for "
        "lack of budget (%lld MiB); peak RSS %.2f GiB\n",
        static_cast<long long>(sampler_.steps_per_epoch()), threads, seconds,
        static_cast<double>(sampler_.steps_per_epoch() * o_.batch) / seconds,
        static_cast<long long>(stats.kept), static_cast<double>(stats.bytes) / (1 << 20),
        stats.kept > 0 ? static_cast<double>(stats.bytes) / 1024.0 / static_cast<double>(stats.kept)
                       : 0.0,
        static_cast<long long>(stats.not_kept), static_cast<long long>(o_.cache_mb), rss_gib());
  }

 private:
  train::StepInputMaker make_maker(data::PairwiseCache* cache, bool collate) {
    train::StepInputOptions options;
    options.collate = collate;
    options.pairwise = cache;
    options.quantities = false;  // the default model's quantity branch is off for the step above
    return train::StepInputMaker(data_.dataset, data_.captions.captions, set_, captions_, options);
  }

  const RunOptions& o_;
  data::PreparedData data_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  train::CaptionTokenizer captions_;
  train::TrainingSet set_;
  train::EpochSampler sampler_;
};

int run(const RunOptions& o) {
  bench::set_threads(1);
  std::printf("data_path_bench: matmul %.1f GFLOP/s (1 thread)\n", bench::matmul_gflops());
  const auto opened = Clock::now();
  DataPath path(o);
  std::printf("opened in %.2f s\n", std::chrono::duration<double>(Clock::now() - opened).count());
  path.stages();

  std::printf("\nloader threads   pairwise inputs                            samples/s\n");
  for (const int threads : o.threads) {
    std::printf("%14d   recomputed at every step (before)      %10.0f\n", threads,
                path.delivered(threads, nullptr, 0));
    data::PairwiseCache cache(path.models(), o.cache_mb << 20);
    std::printf("%14d   computed and kept (a model's first use) %9.0f\n", threads,
                path.delivered(threads, &cache, 0));
    std::printf("%14d   kept (every later epoch)                %9.0f\n", threads,
                path.delivered(threads, &cache, 0));
  }
  if (o.train_steps > 0) {
    const double step = path.step_seconds(/*threads=*/1);
    std::printf(
        "\ntraining step, default model (MiniLM fine-tuned, fp32), 1 intra-op thread, median of "
        "%lld: %.2f s = %.1f samples/s\n",
        static_cast<long long>(o.train_steps), step, static_cast<double>(o.batch) / step);
  }
  if (o.fill) path.fill(o.threads.empty() ? 1 : o.threads.back());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "replicate")
    return replicate(argv[2], argv[3], std::atoll(argv[4]));
  if (argc < 4 || std::string(argv[1]) != "run") {
    std::fprintf(stderr,
                 "usage: data_path_bench replicate SRC OUT N\n"
                 "       data_path_bench run DATA TEXT_MODEL [--batch 64] [--steps 40] "
                 "[--threads 1,2] [--cache-mb 4096] [--train-steps 2] [--fill]\n");
    return 2;
  }
  RunOptions o;
  std::stringstream folders(argv[2]);
  for (std::string f; std::getline(folders, f, ',');) o.data.push_back(f);
  o.text_model = argv[3];
  for (int i = 4; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "--fill") {
      o.fill = true;
      continue;
    }
    ++i;
    if (flag == "--batch")
      o.batch = std::atoll(value);
    else if (flag == "--steps")
      o.steps = std::atoll(value);
    else if (flag == "--threads")
      o.threads = int_list(value);
    else if (flag == "--cache-mb")
      o.cache_mb = std::atoll(value);
    else if (flag == "--train-steps")
      o.train_steps = std::atoll(value);
    else {
      std::fprintf(stderr, "data_path_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  return run(o);
}
