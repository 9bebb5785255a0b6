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
//       [--threads 1,2] [--cache-mb 4096] [--train-steps 2] [--cold-steps 0]
//       [--evict] [--fill]
//       DATA: prepared folders (several: comma-separated). --cold-steps N
//       adds a table of reads whose pages are not in memory (--evict drops the
//       shards from the page cache first), before and after the read advice;
//       --fill makes a whole epoch's pairwise inputs, for the cache's memory.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <torch/nn/utils/clip_grad.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
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
#include "cadclip/model/text_embedding.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss.h"
#include "cadclip/train/optimizer.h"
#include "cadclip/train/sampler.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/step_loader.h"
#include "cadclip/train/train_step.h"

namespace {

using namespace cadclip;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// CPU seconds of this process (user + system, all threads): on a loaded
// machine it says what the work costs better than the wall clock does.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// CPU seconds of `work` on this thread.
double thread_cpu_of(const std::function<void()>& work) {
  auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double start = now();
  work();
  return now() - start;
}

// Samples per second of wall time and per second of CPU time.
struct Rate {
  double wall = 0, cpu = 0;
};

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
  int64_t cold_steps = 0;  // steps per row of the cold-read table; 0 = no table
  bool evict = false;      // drop the shards from the page cache first (posix_fadvise)
  bool fill = false;
};

// Asks the kernel to drop the shards' pages from its page cache (only these
// files, and only pages no process maps).
void evict(const std::vector<std::string>& data) {
  int64_t files = 0;
  for (const fs::path& folder : data::dataset_folders(data)) {
    const nlohmann::json manifest = nlohmann::json::parse(read_text_file(folder / "manifest.json"));
    for (const auto& shard : manifest.at("shards")) {
      const fs::path file = folder / shard.at("file").get<std::string>();
      const int fd = ::open(file.c_str(), O_RDONLY);
      if (fd < 0) continue;
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
      ++files;
    }
  }
  std::printf("evicted %lld shard files from the page cache\n", static_cast<long long>(files));
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

// The default model with this text tower, cutting captions at 128 tokens as the trainer does.
model::ModelConfig default_model(const std::string& text_model) {
  model::ModelConfig config;
  config.text_folder = text_model;
  config.text.max_length = 128;
  return config;
}

class DataPath {
 public:
  DataPath(const RunOptions& o)
      : o_(o),
        data_(data::open_prepared(data::dataset_folders(o.data))),
        built_(model::build_model(default_model(o.text_model))),
        text_(built_),
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
  // (the first o.steps steps of epoch 0 unless told which).
  Rate delivered(int threads, data::PairwiseCache* cache, int64_t first_step = 0, int64_t steps = 0,
                 bool shuffled_reads = true) {
    if (!shuffled_reads) data_.dataset.advise(data::Dataset::Access::kSequential);
    const train::StepInputMaker maker = make_maker(cache, /*collate=*/true, shuffled_reads);
    std::vector<std::pair<int64_t, int64_t>> plan;
    for (int64_t s = first_step; s < first_step + (steps > 0 ? steps : o_.steps); ++s)
      plan.emplace_back(0, s);
    int64_t samples = 0;
    const double cpu = cpu_seconds();
    const double seconds = bench::seconds_of([&] {
      train::StepLoader loader(
          [&](int64_t e, int64_t s) { return maker.make(e, sampler_.batch(e, s)); }, plan, threads);
      for (const auto& [e, s] : plan) samples += loader.take(e, s).brep.num_graphs();
    });
    const double n = static_cast<double>(samples);
    return {n / seconds, n / (cpu_seconds() - cpu)};
  }

  // CPU seconds per batch of each stage on this thread, over the first o.steps
  // steps: the shard read at its first touch in this process (the memory map's
  // page faults: the first epoch's cost) and once more.
  void stages() {
    double first = 0, cached = 0, text = 0, pairwise = 0, collate = 0;
    const train::StepInputMaker maker = make_maker(nullptr, /*collate=*/false);
    for (int64_t s = 0; s < o_.steps; ++s) {
      const std::vector<int64_t> batch = sampler_.batch(0, s);
      auto read = [&] {
        std::vector<data::BRepGraph> graphs;
        for (const int64_t i : batch)
          graphs.push_back(data_.dataset.graph(set_.models[static_cast<size_t>(i)]));
        return graphs;
      };
      first += thread_cpu_of([&] { (void)read(); });
      std::vector<data::BRepGraph> graphs;
      cached += thread_cpu_of([&] { graphs = read(); });
      // The whole maker (a cached read again) less a cached read: the caption
      // drawn, its tokens and quantities, the false-negative keys.
      text += thread_cpu_of([&] { (void)maker.make(0, batch); });
      std::vector<data::PairwiseInputs> computed;
      pairwise += thread_cpu_of([&] {
        for (const data::BRepGraph& g : graphs) computed.push_back(data::pairwise_inputs(g));
      });
      std::vector<const data::BRepGraph*> pointers;
      std::vector<const data::PairwiseInputs*> kept;
      for (size_t i = 0; i < graphs.size(); ++i) {
        pointers.push_back(&graphs[i]);
        kept.push_back(&computed[i]);
      }
      collate += thread_cpu_of([&] { (void)data::collate_groups(pointers, kept); });
    }
    text -= cached;
    const double steps = static_cast<double>(o_.steps), b = static_cast<double>(o_.batch);
    std::printf(
        "\nstage (one thread, CPU time)                ms/batch   samples per CPU-second\n");
    for (const auto& [name, seconds] : std::vector<std::pair<const char*, double>>{
             {"shard read, first touch (page faults)", first},
             {"shard read again (pages mapped)", cached},
             {"caption, tokens, quantities, keys", text},
             {"pairwise inputs", pairwise},
             {"collation in size groups", collate}})
      std::printf("%-42s %9.2f %14.0f\n", name, 1e3 * seconds / steps, b * steps / seconds);
  }

  // Seconds per training step of the default model (MiniLM fine-tuned, fp32)
  // on the first batches, their inputs made beforehand.
  // Median wall and CPU seconds of a step.
  std::pair<double, double> step_seconds(int threads) {
    bench::set_threads(threads);
    torch::manual_seed(0);
    model::BuiltModel built = model::build_model(default_model(o_.text_model));
    const model::TextEmbedder text(built);
    built.model->train();
    std::vector<at::Tensor> parameters;
    for (const auto& p : built.model->parameters())
      if (p.requires_grad()) parameters.push_back(p);
    train::FusedAdamW optimizer(train::adamw_groups(*built.model, {}, {5e-4, 3e-5, 0.05}));
    auto comm = train::make_single_process_communicator();
    data::PairwiseCache cache(data_.dataset.size(), 0);
    const train::StepInputMaker maker = make_maker(&cache, /*collate=*/true);
    std::vector<double> seconds, cpu;
    for (int64_t s = 0; s < o_.train_steps + 1; ++s) {
      const train::StepInputs in = maker.make(0, sampler_.batch(0, s));
      const double cpu_before = cpu_seconds();
      const double t = bench::seconds_of([&] {
        optimizer.zero_grad();
        train::ContrastivePairs pairs{train::step_text_embeddings(text, in, nullptr),
                                      built.model->encode_brep(in.brep), in.caption_keys,
                                      in.geometry_keys};
        train::LossResult loss = train::contrastive_loss(*comm, pairs, built.model->logit_scale(),
                                                         at::Tensor(), train::LossOptions{});
        (void)loss.loss.item<double>();
        loss.loss.backward();
        torch::nn::utils::clip_grad_norm_(parameters, 1.0);
        optimizer.step();
      });
      if (s > 0) {  // the first warms up
        seconds.push_back(t);
        cpu.push_back(cpu_seconds() - cpu_before);
      }
    }
    bench::set_threads(1);
    return {bench::summarize(seconds).median, bench::summarize(cpu).median};
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
  train::StepInputMaker make_maker(data::PairwiseCache* cache, bool collate,
                                   bool shuffled_reads = true) {
    train::StepInputOptions options;
    options.collate = collate;
    options.pairwise = cache;
    options.shuffled_reads = shuffled_reads;
    options.quantities = true;  // the default model reads the numbers of its captions
    return train::StepInputMaker(data_.dataset, data_.captions.captions, set_, text_, options);
  }

  const RunOptions& o_;
  data::PreparedData data_;
  model::BuiltModel built_;  // its text path tokenizes the captions
  model::TextEmbedder text_;
  train::TrainingSet set_;
  train::EpochSampler sampler_;
};

int run(const RunOptions& o) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (o.evict) evict(o.data);
  bench::set_threads(1);
  std::printf("data_path_bench: matmul %.1f GFLOP/s (1 thread)\n", bench::matmul_gflops());
  const auto opened = Clock::now();
  DataPath path(o);
  std::printf("opened in %.2f s\n", std::chrono::duration<double>(Clock::now() - opened).count());
  path.stages();

  // Every row below reads the same steps' shards from the page cache (the
  // stage table read them).
  std::printf(
      "\nloader threads   pairwise inputs                           samples/s   per CPU-second\n");
  auto row = [](int threads, const char* what, Rate rate) {
    std::printf("%14d   %-40s %9.0f %16.0f\n", threads, what, rate.wall, rate.cpu);
  };
  for (const int threads : o.threads) {
    row(threads, "recomputed at every step (before)", path.delivered(threads, nullptr));
    data::PairwiseCache cache(path.models(), o.cache_mb << 20);
    row(threads, "computed and kept (a model's first use)", path.delivered(threads, &cache));
    row(threads, "kept (every later epoch)", path.delivered(threads, &cache));
  }
  if (o.cold_steps > 0) {
    // Steps no row above read, each row its own: their shard pages were
    // evicted at start (--evict) or never read, as in an epoch over a set
    // larger than the page cache.
    std::printf(
        "\nshards not in memory: loader threads, reads               samples/s   per "
        "CPU-second\n");
    int64_t first = 100;
    for (const int threads : o.threads) {
      for (const bool shuffled : {false, true}) {
        const Rate rate = path.delivered(threads, nullptr, first, o.cold_steps, shuffled);
        std::printf("%14d   %-40s %9.0f %16.0f\n", threads,
                    shuffled ? "advised random, batch prefetched (after)"
                             : "default read-around, one by one (before)",
                    rate.wall, rate.cpu);
        first += o.cold_steps;
      }
    }
  }
  if (o.train_steps > 0) {
    const auto [wall, cpu] = path.step_seconds(/*threads=*/1);
    std::printf(
        "\ntraining step, default model (MiniLM fine-tuned, fp32), 1 intra-op thread, median of "
        "%lld: %.2f s wall = %.1f samples/s; %.2f s CPU = %.1f samples per CPU-second\n",
        static_cast<long long>(o.train_steps), wall, static_cast<double>(o.batch) / wall, cpu,
        static_cast<double>(o.batch) / cpu);
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
                 "[--threads 1,2] [--cache-mb 4096] [--train-steps 2] [--cold-steps 0] "
                 "[--evict] [--fill]\n");
    return 2;
  }
  RunOptions o;
  std::stringstream folders(argv[2]);
  for (std::string f; std::getline(folders, f, ',');) o.data.push_back(f);
  o.text_model = argv[3];
  for (int i = 4; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "--fill" || flag == "--evict") {
      (flag == "--fill" ? o.fill : o.evict) = true;
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
    else if (flag == "--cold-steps")
      o.cold_steps = std::atoll(value);
    else {
      std::fprintf(stderr, "data_path_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  return run(o);
}
