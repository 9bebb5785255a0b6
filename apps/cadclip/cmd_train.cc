// cadclip train: contrastive training on a prepared dataset (one process, or
// one rank of a torchrun/SLURM launch).
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/model_config.h"
#include "cadclip/text/text_model.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/trainer.h"
#include "command.h"
#include "option_flags.h"

extern char** environ;

namespace cadclip::app {
namespace {

// A TCP port on 127.0.0.1 that is free right now, for rank 0's rendezvous.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw Error("--nproc: cannot find a free TCP port on 127.0.0.1 for the rendezvous");
  ::close(fd);
  return ntohs(address.sin_port);
}

// --nproc N: starts N fresh copies of this binary as ranks 0..N-1 (exec'd, not
// forked: forking a process that may run OpenMP threads is unsafe), waits for
// them and reports each exit. A rank that fails makes the others stop within
// their collective timeout.
int launch_local(int nproc, int argc, char** argv) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (a.starts_with("--nproc=")) continue;
    args.push_back(a);
  }
  args[0] = self;
  const int port = free_port();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> env = {"RANK=" + std::to_string(rank),
                                    "LOCAL_RANK=" + std::to_string(rank),
                                    "WORLD_SIZE=" + std::to_string(nproc), "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + std::to_string(port)};
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string v = *e;
      if (!v.starts_with("RANK=") && !v.starts_with("LOCAL_RANK=") &&
          !v.starts_with("WORLD_SIZE=") && !v.starts_with("MASTER_ADDR=") &&
          !v.starts_with("MASTER_PORT="))
        env.push_back(v);
    }
    std::vector<char*> envp, argp;
    for (auto& v : env) envp.push_back(v.data());
    envp.push_back(nullptr);
    for (auto& a : args) argp.push_back(a.data());
    argp.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argp.data(), envp.data()) != 0)
      throw Error(format("--nproc: cannot start rank {} ({})", rank, self));
    pids.push_back(pid);
  }
  log::info("launch", "started {} ranks on 127.0.0.1:{}", nproc, port);
  int failed = 0;
  for (size_t done = 0; done < pids.size(); ++done) {
    int status = 0;
    const pid_t pid = ::wait(&status);
    const auto it = std::find(pids.begin(), pids.end(), pid);
    const int rank = static_cast<int>(it - pids.begin());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      log::info("launch", "rank {} finished", rank);
      continue;
    }
    ++failed;
    if (WIFSIGNALED(status)) {
      log::error("launch", "rank {} was killed by signal {}", rank, WTERMSIG(status));
    } else {
      log::error("launch", "rank {} exited with status {}", rank, WEXITSTATUS(status));
    }
  }
  return failed == 0 ? kExitOk : kExitError;
}

// `device_given`: --device was on the command line; with NCCL each rank
// otherwise trains on its own GPU, cuda:LOCAL_RANK.
int run_train(train::TrainOptions options, const std::string& backend, double timeout_s,
              bool device_given) {
  train::ProcessGroupOptions group = train::process_group_from_environment();
  group.backend = backend;
  group.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  // First, before anything touches CUDA: NCCL loads LibTorch's CUDA libraries.
  auto communicator = train::make_communicator(group);
  if (backend == "nccl" && !device_given) options.device = format("cuda:{}", group.local_rank);
  const train::TrainSummary summary = train::train(options, *communicator);
  if (communicator->rank() == 0) {
    std::printf("steps %lld, skipped %lld, truncated captions %lld, last loss %.4f",
                static_cast<long long>(summary.steps), static_cast<long long>(summary.skipped),
                static_cast<long long>(summary.truncated), summary.last_loss);
    if (summary.best_validation >= 0)
      std::printf(", best validation text->CAD R@1 %.2f%%", 100 * summary.best_validation);
    std::printf("\n");
  }
  return kExitOk;
}

// --share SOURCE=FRACTION into o.shares.
void add_share(train::TrainOptions& o, const std::string& pair) {
  const size_t eq = pair.find('=');
  char* end = nullptr;
  const double share = eq == std::string::npos ? 0 : std::strtod(pair.c_str() + eq + 1, &end);
  if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0' || !(share > 0))
    throw Error(
        format("--share {}: write SOURCE=FRACTION with a positive fraction, e.g. --share "
               "real=0.3 (a source is named by its --data folder's name)",
               pair));
  o.shares[pair.substr(0, eq)] = share;
}

// What to train on and where to write: the data, its sources' shares, the
// start, the run folder, the text tower and its captions.
void add_data_options(CLI::App& command, const std::shared_ptr<train::TrainOptions>& o) {
  // Required, but possibly from --config: train() says when one is missing.
  add_repeated(command, "--data", *o, o->data);
  command
      .add_option_function<std::vector<std::string>>(
          "--share",
          [o](const std::vector<std::string>& pairs) {
            for (const std::string& pair : pairs) add_share(*o, pair);
          },
          help(*o, o->shares, "--share"))
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_field(command, "--select-by", *o, o->select_by)->capture_default_str();
  add_field(command, "--init", *o, o->init);
  add_field(command, "--init-anchor", *o, o->init_anchor)->capture_default_str();
  add_switch(command, "--init-new-text-head", *o, o->init_new_text_head);
  add_field(command, "--out", *o, o->out);
  add_field(command, "--text-model", o->model, o->model.text_folder)->capture_default_str();
  add_field(command, "--levels", *o, o->levels)->delimiter(',');
  add_field(command, "--max-text-length", o->model.text, o->model.text.max_length)
      ->capture_default_str();
}

// The optimisation: epochs, batch, learning rates and their schedule, precision.
void add_optimizer_options(CLI::App& command, const std::shared_ptr<train::TrainOptions>& o) {
  add_field(command, "--epochs", *o, o->epochs)->capture_default_str();
  add_field(command, "--batch-size", *o, o->batch_size)->capture_default_str();
  add_field(command, "--lr", *o, o->lr)->capture_default_str();
  add_field(command, "--text-lr", *o, o->text_lr)->capture_default_str();
  add_field(command, "--text-train-layers", *o, o->text_train_layers)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_switch(command, "!--no-text-hidden-cache", *o, o->text_hidden_cache);
  add_field(command, "--weight-decay", *o, o->weight_decay)->capture_default_str();
  add_field(command, "--warmup", *o, o->warmup)->capture_default_str();
  add_field(command, "--grad-clip", *o, o->grad_clip)->capture_default_str();
  model::TwoTowerOptions& towers = o->model.two_tower;
  command
      .add_option_function<std::string>(
          "--precision",
          [o](const std::string& name) {
            o->model.two_tower.text_precision = model::parse_text_precision(name);
          },
          help(towers, towers.text_precision, "--precision"))
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->default_str(model::text_precision_name(towers.text_precision));
}

// What one step does: device, threads, seed, the loss and its negatives.
// Returns --device, which the run needs to know was given.
CLI::Option* add_step_options(CLI::App& command, const std::shared_ptr<train::TrainOptions>& o) {
  CLI::Option* device = add_field(command, "--device", *o, o->device)->capture_default_str();
  add_field(command, "--threads", *o, o->threads)->capture_default_str();
  add_field(command, "--seed", *o, o->seed)->capture_default_str();
  command
      .add_option_function<std::string>(
          "--loss", [o](const std::string& name) { o->loss = train::parse_loss_kind(name); },
          help(*o, o->loss, "--loss"))
      ->check(CLI::IsMember({"infonce", "siglip"}))
      ->default_str(std::string(train::loss_kind_name(o->loss)));
  add_switch(command, "!--no-false-negative-mask", *o, o->mask_false_negatives);
  // `--queue` alone means 4096 rows; the option is off unless given.
  add_field(command, "--queue", *o, o->queue)->expected(0, 1)->default_str("4096");
  add_field(command, "--text-cache", *o, o->text_cache)->capture_default_str();
  add_field(command, "--queue-momentum", *o, o->queue_momentum)->capture_default_str();
  return device;
}

// When a run stops and what it keeps.
void add_checkpoint_options(CLI::App& command, train::TrainOptions& o) {
  add_field(command, "--max-nonfinite-steps", o, o.max_nonfinite_steps)->capture_default_str();
  add_field(command, "--checkpoint-every", o, o.checkpoint_every)->capture_default_str();
  add_field(command, "--stop-after-steps", o, o.stop_after_steps)->capture_default_str();
  add_switch(command, "--resume", o, o.resume);
}

// The input pipeline, memory, and validation.
void add_loader_options(CLI::App& command, const std::shared_ptr<train::TrainOptions>& o) {
  add_field(command, "--loader-threads", *o, o->loader_threads)
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  add_field(command, "--pairwise-cache-mb", *o, o->pairwise_cache_mb)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_switch(command, "--activation-checkpointing", o->model.text,
             o->model.text.activation_checkpointing);
  command
      .add_option_function<std::string>(
          "--validation-split",
          [o](const std::string& name) {
            o->validation_split =
                name.empty() ? std::nullopt : std::optional(data::parse_split(name));
          },
          help(*o, o->validation_split, "--validation-split"))
      ->default_str(std::string(data::split_name(*o->validation_split)));
  add_field(command, "--eval-batch-size", *o, o->eval_batch_size)->capture_default_str();
}

// The flags that size the model (and must match a checkpoint on --resume).
void add_model_size_options(CLI::App& command, model::ModelConfig& model) {
  model::TwoTowerOptions& towers = model.two_tower;
  add_field(command, "--embed-dim", towers, towers.embed_dim)->capture_default_str();
  add_field(command, "--text-head-hidden", towers, towers.text_head_hidden)->capture_default_str();
  add_field(command, "--quantity-width", towers, towers.quantity_width)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option_function<std::string>(
          "--text-space",
          [&towers](const std::string& name) { towers.text_space = model::parse_text_space(name); },
          help(towers, towers.text_space, "--text-space"))
      ->check(CLI::IsMember({"head", "locked", "residual"}))
      ->default_str(model::text_space_name(towers.text_space));
  model::BRepEncoderOptions& brep = model.brep;
  add_field(command, "--brep-width", brep, brep.width)->capture_default_str();
  add_field(command, "--brep-layers", brep, brep.layers)->capture_default_str();
  add_field(command, "--brep-heads", brep, brep.heads)->capture_default_str();
  add_field(command, "--brep-ffn", brep, brep.ffn_hidden)->capture_default_str();
  add_field(command, "--brep-dropout", brep, brep.dropout)->capture_default_str();
}

// Test hooks, in their own help group.
void add_debug_options(CLI::App& command, train::TrainOptions& o) {
  add_field(command, "--debug-nan-at-step", o, o.debug_nan_at_step)->group("Debugging");
  add_field(command, "--debug-nan-count", o, o.debug_nan_count)->group("Debugging");
}

// How the processes of a run start and talk: --nproc local ranks, the backend.
void add_launch_options(CLI::App& command, int& nproc, std::string& backend, double& timeout_s) {
  command.add_option("--nproc", nproc, "Start this many local processes, one rank each")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command
      .add_option("--dist-timeout", timeout_s,
                  "Seconds the rendezvous and each collective may wait for the other ranks "
                  "before this one stops with an error naming the collective")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--backend", backend,
                  "Collectives between processes: gloo (CPU tensors) or nccl (one CUDA device per "
                  "rank; also with one process)")
      ->check(CLI::IsMember({"gloo", "nccl"}))
      ->capture_default_str();
}

}  // namespace

void define_train(CLI::App& command, Runner& run) {
  auto o = std::make_shared<train::TrainOptions>();
  auto nproc = std::make_shared<int>(1);
  auto backend = std::make_shared<std::string>("gloo");
  auto timeout_s = std::make_shared<double>(
      std::chrono::duration<double>(train::ProcessGroupOptions{}.timeout).count());
  o->model.text_folder = text::default_text_model_folder().string();
  const ConfigFlags config(command, o, [o](const std::filesystem::path& file) {
    *o = train::read_train_options(file, *o);
  });
  add_data_options(command, o);
  add_optimizer_options(command, o);
  CLI::Option* device = add_step_options(command, o);
  add_checkpoint_options(command, *o);
  add_launch_options(command, *nproc, *backend, *timeout_s);
  add_loader_options(command, o);
  add_model_size_options(command, o->model);
  add_switch(command, "!--nondeterministic", *o, o->deterministic);
  add_debug_options(command, *o);
  command.footer(
      "Multi-process: start the same command under torchrun --no-python or SLURM (RANK, "
      "WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), on one node or several; "
      "docs/TRAINING.md.");
  run = config.or_print([o, nproc, backend, timeout_s, device] {
    if (*nproc > 1 && std::getenv("WORLD_SIZE") == nullptr)
      return launch_local(*nproc, command_line().argc, command_line().argv);
    return run_train(*o, *backend, *timeout_s, device->count() > 0);
  });
}

}  // namespace cadclip::app
