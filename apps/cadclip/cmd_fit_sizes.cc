// cadclip fit-sizes CHECKPOINT --data DIR... --out RUN: a trained model with
// a size block (model/size_head.h) fitted to the captions of prepared
// folders, written as RUN/checkpoints/last.json for `cadclip export`.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/train/size_fit.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct FitSizesCommandOptions {
  std::string checkpoint;         // the trained model: pointer, folder or run folder
  std::vector<std::string> data;  // prepared folders
  std::string out;                // run folder written: checkpoints/last.json, size_fit.json
  // The library's defaults.
  int64_t bins_per_decade = train::SizeFitOptions{}.bins_per_decade;
  bool bore = train::SizeFitOptions{}.bore;
  bool pointer = train::SizeFitOptions{}.pointer;
  std::vector<double> weights = train::SizeFitOptions{}.weights;
  int64_t epochs = train::SizeFitOptions{}.epochs;
  int64_t batch_size = train::SizeFitOptions{}.batch_size;
  double lr = train::SizeFitOptions{}.lr;
  double weight_decay = train::SizeFitOptions{}.weight_decay;
  int64_t select_every = train::SizeFitOptions{}.select_every;
  double embedding_dropout = train::SizeFitOptions{}.embedding_dropout;
  uint64_t seed = train::SizeFitOptions{}.seed;
  int threads = 0;  // LibTorch intra-op threads; 0: its default
};

CADCLIP_OPTION_FIELDS(
    FitSizesCommandOptions,
    (checkpoint, "The trained model: a checkpoint, run or models/default.json"),
    (data,
     "Prepared folder (repeatable): its train split's captions fit the size head, its "
     "validation split chooses the weight"),
    (out, "Run folder to write: checkpoints/last.json and size_fit.json"),
    (bins_per_decade, "Bins of the size block per decade of size"),
    (bore,
     "A fourth side: the part's central bore (the smallest round hole on an axis through the "
     "box's centre), and the head reads 3-4 digit codes' last digits (a 6005 bearing's 25 mm "
     "bore)"),
    (pointer,
     "Each side's mean points at one of the numbers the caption states (or 10 mm) plus an "
     "offset, so a size never trained on carries over (--no-pointer: the MLP gives the mean)"),
    (weights, "Candidate weights of the size block beside the cosine; the best on validation wins"),
    (epochs, "Passes over the training captions"), (batch_size, "Captions per step"),
    (lr, "AdamW learning rate of the size head"),
    (weight_decay, "AdamW weight decay of the size head"),
    (select_every,
     "Score the validation splits every this many epochs and keep the best epoch's head (0: "
     "keep the last)"),
    (embedding_dropout,
     "Dropout on the caption embedding the head reads beside the numbers, while it learns"),
    (seed, "Seed of the head's start and order"), (threads, "LibTorch threads (0: its default)"))

int run_fit_sizes(const FitSizesCommandOptions& o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  const std::filesystem::path out(o.out);
  if (std::filesystem::exists(out / "checkpoints" / "last.json"))
    throw Error(format("--out {} holds a checkpoint already; name a new run folder", o.out));
  model::BuiltModel built = model::load_model_from_checkpoint(o.checkpoint);
  train::SizeFitOptions options;
  options.data = o.data;
  options.bins_per_decade = o.bins_per_decade;
  options.bore = o.bore;
  options.pointer = o.pointer;
  options.weights = o.weights;
  options.epochs = o.epochs;
  options.batch_size = o.batch_size;
  options.lr = o.lr;
  options.weight_decay = o.weight_decay;
  options.select_every = o.select_every;
  options.embedding_dropout = o.embedding_dropout;
  options.seed = o.seed;
  const train::SizeFitReport report = train::fit_size_head(built, options);
  model::save_checkpoint(out, "last", built, {});
  nlohmann::json json = report;
  json["checkpoint"] = o.checkpoint;
  json["data"] = o.data;
  json["bins_per_decade"] = o.bins_per_decade;
  json["bore"] = o.bore;
  json["pointer"] = o.pointer;
  write_text_atomic(out / "size_fit.json", json.dump(2) + "\n");
  std::printf(
      "size block fitted on %lld captions, kept epoch %lld: weight %s%s, validation R@1 %s%% "
      "(without it %s%%); wrote %s\n",
      static_cast<long long>(report.captions), static_cast<long long>(report.epoch),
      fixed(report.weight, 2).c_str(),
      o.bore ? (", bore weight " + fixed(report.bore_weight, 2)).c_str() : "",
      fixed(100 * report.validation_mean, 1).c_str(), fixed(100 * report.alone_mean, 1).c_str(),
      (out / "checkpoints" / "last.json").c_str());
  return kExitOk;
}

}  // namespace

void define_fit_sizes(CLI::App& command, Runner& run) {
  auto o = std::make_shared<FitSizesCommandOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "checkpoint", *o, o->checkpoint)->required()->check(CLI::ExistingPath);
  add_repeated(command, "--data", *o, o->data)->required()->check(CLI::ExistingPath);
  add_field(command, "--out", *o, o->out)->required();
  add_field(command, "--bins-per-decade", *o, o->bins_per_decade)->capture_default_str();
  add_switch(command, "--bore", *o, o->bore);
  add_switch(command, "!--no-pointer", *o, o->pointer);
  add_field(command, "--weights", *o, o->weights)->delimiter(',');
  add_field(command, "--epochs", *o, o->epochs)->capture_default_str();
  add_field(command, "--batch-size", *o, o->batch_size)->capture_default_str();
  add_field(command, "--lr", *o, o->lr)->capture_default_str();
  add_field(command, "--weight-decay", *o, o->weight_decay)->capture_default_str();
  add_field(command, "--select-every", *o, o->select_every)->capture_default_str();
  add_field(command, "--embedding-dropout", *o, o->embedding_dropout)->capture_default_str();
  add_field(command, "--seed", *o, o->seed)->capture_default_str();
  add_field(command, "--threads", *o, o->threads)->check(CLI::NonNegativeNumber);
  run = config.or_print([o] { return run_fit_sizes(*o); });
}

}  // namespace cadclip::app
