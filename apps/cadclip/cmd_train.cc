// cadclip train: contrastive training on a prepared dataset (one process, or
// one rank of a torchrun/SLURM launch).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cadclip/core/format.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/trainer.h"
#include "command.h"

namespace cadclip::app {
namespace {

std::string default_text_model() {
  if (const char* env = std::getenv("CADCLIP_TEXT_MODEL")) return env;
  return "/opt/cadclip/models/all-MiniLM-L6-v2";
}

int run_train(const train::TrainOptions& options) {
  const train::ProcessGroupOptions group = train::process_group_from_environment();
  auto communicator = train::make_communicator(group);
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

}  // namespace

void define_train(CLI::App& command, Runner& run) {
  auto o = std::make_shared<train::TrainOptions>();
  o->text_model = default_text_model();
  command.add_option("--data", o->data, "Prepared dataset folder")->required();
  command.add_option("--out", o->out, "Run folder (checkpoints, metrics, options)")->required();
  command
      .add_option("--text-model", o->text_model,
                  "Hugging Face folder of the pretrained text tower ($CADCLIP_TEXT_MODEL)")
      ->capture_default_str();
  command.add_option("--levels", o->levels, "Caption levels to sample (default: all)")
      ->delimiter(',');
  command.add_option("--max-text-length", o->max_text_length, "Tokens per caption; longer = cut")
      ->capture_default_str();
  command.add_option("--epochs", o->epochs, "Passes over the training split")
      ->capture_default_str();
  command.add_option("--batch-size", o->batch_size, "Pairs per process and step")
      ->capture_default_str();
  command.add_option("--lr", o->lr, "Peak learning rate of the new modules")->capture_default_str();
  command.add_option("--text-lr", o->text_lr, "Peak learning rate of the text tower")
      ->capture_default_str();
  command.add_option("--weight-decay", o->weight_decay, "AdamW weight decay")
      ->capture_default_str();
  command.add_option("--warmup", o->warmup, "Share of steps for linear warm-up")
      ->capture_default_str();
  command.add_option("--grad-clip", o->grad_clip, "Max gradient norm (0 = off)")
      ->capture_default_str();
  command.add_option("--precision", o->precision, "Text tower precision")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  command.add_option("--device", o->device, "cpu or cuda[:n]")->capture_default_str();
  command.add_option("--threads", o->threads, "Intra-op threads (0 = cores / processes)")
      ->capture_default_str();
  command.add_option("--seed", o->seed, "Seed of init, shuffling and caption choice")
      ->capture_default_str();
  command.add_option("--loss", o->loss, "Contrastive loss")
      ->check(CLI::IsMember({"infonce", "siglip"}))
      ->capture_default_str();
  command.add_flag("!--no-false-negative-mask", o->mask_false_negatives,
                   "Treat identical captions and geometry as negatives too");
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
  command
      .add_option("--validation-split", o->validation_split,
                  "Split evaluated after each epoch (empty = none)")
      ->capture_default_str();
  command.add_option("--eval-batch-size", o->eval_batch_size, "Batch size of validation")
      ->capture_default_str();
  command.add_option("--embed-dim", o->embed_dim, "Shared embedding size")->capture_default_str();
  command.add_option("--brep-width", o->brep.width, "B-Rep encoder width")->capture_default_str();
  command.add_option("--brep-layers", o->brep.layers, "B-Rep encoder layers")
      ->capture_default_str();
  command.add_option("--brep-heads", o->brep.heads, "B-Rep encoder heads")->capture_default_str();
  command.add_option("--brep-ffn", o->brep.ffn_hidden, "B-Rep SwiGLU hidden width")
      ->capture_default_str();
  command.add_option("--brep-dropout", o->brep.dropout, "B-Rep dropout")->capture_default_str();
  command.add_flag("!--nondeterministic", o->deterministic,
                   "Allow nondeterministic ATen algorithms");
  command
      .add_option("--debug-nan-at-step", o->debug_nan_at_step,
                  "Debug: poison the loss with NaN from this step")
      ->group("Debugging");
  command.add_option("--debug-nan-count", o->debug_nan_count, "Debug: ... for this many steps")
      ->group("Debugging");
  command.footer(
      "Multi-process: start the same command under torchrun --no-python or SLURM (RANK, "
      "WORLD_SIZE, MASTER_ADDR, MASTER_PORT).");
  run = [o] { return run_train(*o); };
}

}  // namespace cadclip::app
