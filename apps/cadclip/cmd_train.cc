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

// The flags that size the model (and must match a checkpoint on --resume).
void add_model_size_options(CLI::App& command, model::ModelConfig& model) {
  command.add_option("--embed-dim", model.two_tower.embed_dim, "Shared embedding size")
      ->capture_default_str();
  command
      .add_option("--text-head-hidden", model.two_tower.text_head_hidden,
                  "Width of a hidden GELU layer in the text head (0 = linear head); helps a "
                  "frozen text tower")
      ->capture_default_str();
  command
      .add_option("--quantity-width", model.two_tower.quantity_width,
                  "Width of the quantity branch that reads the numbers in captions (sizes, "
                  "counts, angles) beside the text tower; 0 = none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option_function<std::string>(
          "--text-space",
          [&model](const std::string& name) {
            model.two_tower.text_space = model::parse_text_space(name);
          },
          "How texts land in the shared space: head (a trained head over the pooled "
          "features), locked (the pretrained sentence embedding itself; needs --embed-dim "
          "of the tower's width, 384 for MiniLM), residual (the pretrained embedding plus a "
          "trained correction that starts at zero; same width)")
      ->check(CLI::IsMember({"head", "locked", "residual"}))
      ->default_str(model::text_space_name(model.two_tower.text_space));
  command.add_option("--brep-width", model.brep.width, "B-Rep encoder width")
      ->capture_default_str();
  command.add_option("--brep-layers", model.brep.layers, "B-Rep encoder layers")
      ->capture_default_str();
  command.add_option("--brep-heads", model.brep.heads, "B-Rep encoder heads")
      ->capture_default_str();
  command.add_option("--brep-ffn", model.brep.ffn_hidden, "B-Rep SwiGLU hidden width")
      ->capture_default_str();
  command.add_option("--brep-dropout", model.brep.dropout, "B-Rep dropout")->capture_default_str();
}

// Test hooks, in their own help group.
void add_debug_options(CLI::App& command, train::TrainOptions& o) {
  command
      .add_option("--debug-nan-at-step", o.debug_nan_at_step,
                  "Debug: poison the loss with NaN from this step")
      ->group("Debugging");
  command.add_option("--debug-nan-count", o.debug_nan_count, "Debug: ... for this many steps")
      ->group("Debugging");
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
  // First, so that the options given beside it override the file's: CLI11
  // assigns given options in the order they are defined.
  command.add_option_function<std::string>(
      "--config", [o](const std::string& file) { *o = train::read_train_options(file, *o); },
      "JSON file of options, as a run's options.json; options given beside it override it");
  // Required, but possibly from --config: train() says when one is missing.
  command
      .add_option("--data", o->data,
                  "Prepared dataset folder (required); repeat it for several folders read as one "
                  "(the parts of a sharded prepare), or name a dataset file listing folders")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option_function<std::vector<std::string>>(
          "--share",
          [o](const std::vector<std::string>& pairs) {
            for (const std::string& pair : pairs) {
              const size_t eq = pair.find('=');
              char* end = nullptr;
              const double share =
                  eq == std::string::npos ? 0 : std::strtod(pair.c_str() + eq + 1, &end);
              if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0' ||
                  !(share > 0))
                throw Error(
                    format("--share {}: write SOURCE=FRACTION with a positive fraction, "
                           "e.g. --share real=0.3 (a source is named by its --data "
                           "folder's name)",
                           pair));
              o->shares[pair.substr(0, eq)] = share;
            }
          },
          "Sampling share of a source, SOURCE=FRACTION (repeat it; every source then needs one; "
          "shares are normalised): an epoch draws that share of its samples from the source, "
          "repeating a small one. Default: every training model once per epoch")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--select-by", o->select_by,
                  "The source whose validation R@1 picks the best checkpoint, or mean (the mean "
                  "over sources); each source is validated and reported apart")
      ->capture_default_str();
  command.add_option("--init", o->init,
                     "Checkpoint to start from (the released model, a run's best.json) instead "
                     "of from scratch; its shape options must match these");
  command.add_option("--out", o->out, "Run folder (checkpoints, metrics, options) (required)");
  command
      .add_option("--text-model", o->model.text_folder,
                  "Hugging Face folder of the pretrained text tower ($CADCLIP_TEXT_MODEL)")
      ->capture_default_str();
  command.add_option("--levels", o->levels, "Caption levels to sample (default: all)")
      ->delimiter(',');
  command
      .add_option("--max-text-length", o->model.text.max_length, "Tokens per caption; longer = cut")
      ->capture_default_str();
  command.add_option("--epochs", o->epochs, "Passes over the training split")
      ->capture_default_str();
  command.add_option("--batch-size", o->batch_size, "Pairs per process and step")
      ->capture_default_str();
  command.add_option("--lr", o->lr, "Peak learning rate of the new modules")->capture_default_str();
  command.add_option("--text-lr", o->text_lr, "Peak learning rate of the text tower")
      ->capture_default_str();
  command
      .add_option("--text-train-layers", o->text_train_layers,
                  "With --text-lr > 0: only the last N layers of the text tower train; 0 = all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--weight-decay", o->weight_decay, "AdamW weight decay")
      ->capture_default_str();
  command.add_option("--warmup", o->warmup, "Share of steps for linear warm-up")
      ->capture_default_str();
  command.add_option("--grad-clip", o->grad_clip, "Max gradient norm (0 = off)")
      ->capture_default_str();
  command
      .add_option_function<std::string>(
          "--precision",
          [o](const std::string& name) {
            o->model.two_tower.text_precision = model::parse_text_precision(name);
          },
          "Text tower precision")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->default_str(model::text_precision_name(o->model.two_tower.text_precision));
  CLI::Option* device =
      command
          .add_option("--device", o->device, "cpu or cuda[:n] (--backend nccl: cuda:LOCAL_RANK)")
          ->capture_default_str();
  command.add_option("--threads", o->threads, "Intra-op threads (0 = cores / processes)")
      ->capture_default_str();
  command.add_option("--seed", o->seed, "Seed of init, shuffling and caption choice")
      ->capture_default_str();
  command
      .add_option_function<std::string>(
          "--loss", [o](const std::string& name) { o->loss = train::parse_loss_kind(name); },
          "Contrastive loss")
      ->check(CLI::IsMember({"infonce", "siglip"}))
      ->default_str(std::string(train::loss_kind_name(o->loss)));
  command.add_flag(
      "!--no-false-negative-mask", o->mask_false_negatives,
      "Treat captions stating the same facts (or text) and equal geometry as negatives too");
  // `--queue` alone means the default length; the option is off unless given.
  command
      .add_option("--queue", o->queue,
                  "MoCo-style momentum queue: rows of extra negatives per modality; --queue "
                  "alone = 4096, absent or 0 = off (one process only)")
      ->expected(0, 1)
      ->default_str("4096");
  command
      .add_option("--text-cache", o->text_cache,
                  "With --text-lr 0: safetensors file of the frozen text features, reused when "
                  "it was made for the same captions and text model, else (re)written")
      ->capture_default_str();
  command
      .add_option("--queue-momentum", o->queue_momentum,
                  "EMA factor of the momentum encoders that fill the queue")
      ->capture_default_str();
  command
      .add_option("--max-nonfinite-steps", o->max_nonfinite_steps,
                  "Stop after this many non-finite steps in a row")
      ->capture_default_str();
  command
      .add_option("--checkpoint-every", o->checkpoint_every,
                  "Also write `last` every N steps (0 = per epoch)")
      ->capture_default_str();
  command
      .add_option("--stop-after-steps", o->stop_after_steps,
                  "Stop after N steps with a `last` checkpoint (0 = never)")
      ->capture_default_str();
  command.add_flag("--resume", o->resume, "Continue from <out>/checkpoints/last.json");
  add_launch_options(command, *nproc, *backend, *timeout_s);
  command
      .add_option("--loader-threads", o->loader_threads,
                  "Threads that make the next steps' inputs (shard reads, tokens, pairwise "
                  "inputs, collation) while a step trains; 0 = inside the step")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  command
      .add_option("--pairwise-cache-mb", o->pairwise_cache_mb,
                  "Memory per process for the models' pairwise attention inputs, kept after "
                  "their first use (about 12 F^2 bytes for F faces); 0 = recompute every step")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_flag("--activation-checkpointing", o->model.text.activation_checkpointing,
                   "Recompute the text tower's layers in backward instead of keeping their "
                   "activations (less memory, about a third more text compute)");
  command
      .add_option_function<std::string>(
          "--validation-split",
          [o](const std::string& name) {
            o->validation_split =
                name.empty() ? std::nullopt : std::optional(data::parse_split(name));
          },
          "Split evaluated after each epoch: train, validation or test (empty = none)")
      ->default_str(std::string(data::split_name(*o->validation_split)));
  command.add_option("--eval-batch-size", o->eval_batch_size, "Batch size of validation")
      ->capture_default_str();
  add_model_size_options(command, o->model);
  command.add_flag("!--nondeterministic", o->deterministic,
                   "Allow nondeterministic ATen algorithms");
  add_debug_options(command, *o);
  command.footer(
      "Multi-process: start the same command under torchrun --no-python or SLURM (RANK, "
      "WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), on one node or several; "
      "docs/TRAINING.md.");
  run = [o, nproc, backend, timeout_s, device] {
    if (*nproc > 1 && std::getenv("WORLD_SIZE") == nullptr)
      return launch_local(*nproc, command_line().argc, command_line().argv);
    return run_train(*o, *backend, *timeout_s, device->count() > 0);
  };
}

}  // namespace cadclip::app
