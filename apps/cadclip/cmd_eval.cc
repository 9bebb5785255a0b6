// cadclip eval CHECKPOINT --data DIR: retrieval metrics of a trained model on
// one split of a prepared dataset (docs/EVAL.md), as a table or as JSON.
#include <ATen/Parallel.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/splits.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/model/checkpoint_io.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct EvalCommandOptions {
  std::string checkpoint;         // checkpoint pointer (<name>.json), folder, or run folder
  std::vector<std::string> data;  // prepared folders or dataset files, read as one
  data::Split split = data::Split::kTest;
  std::string splits;                // splits JSON to take the split from; empty = the dataset's
  std::vector<std::string> levels;   // caption levels; empty = every level present
  bool json = false;                 // JSON on stdout instead of the table
  std::string json_out;              // also write the JSON report here; empty = none
  std::vector<std::string> subsets;  // NAME=SPLITS_FILE: the split's parts that file lists
  std::string save_embeddings;       // safetensors file for both towers' embeddings; empty = none
  int64_t batch_size = 64;           // models or texts per forward pass
  int64_t max_text_length = 0;       // tokens per caption; 0 = the checkpoint's
  int threads = 0;                   // intra-op threads; 0 = LibTorch's default (the cores)
  std::string device = "cpu";        // cpu or cuda[:n]
};

CADCLIP_OPTION_FIELDS(
    EvalCommandOptions,
    (checkpoint, "Checkpoint: <run>/checkpoints/<name>.json, its folder, or a run folder (last)"),
    (data,
     "Prepared dataset folder; repeat it for several read as one (the parts of a sharded "
     "prepare), or name a dataset file listing folders"),
    (split, "Split to evaluate"),
    (splits,
     "Splits JSON to take --split from instead of the dataset's splits.json (e.g. one kind of "
     "part only); ids the dataset lacks are left out"),
    (levels, "Caption levels to report (default: every level)"),
    (json, "Print JSON (docs/EVAL.md) instead of the table"),
    (json_out,
     "Also write the JSON report (docs/EVAL.md) to this file: table and JSON from one "
     "evaluation"),
    (subsets,
     "NAME=SPLITS_FILE (repeatable): also score the split's parts that the file lists, apart; "
     "the captions are encoded once for all"),
    (save_embeddings, "Write both towers' embeddings with their ids to this safetensors file"),
    (batch_size, "Models or texts per forward pass"),
    (max_text_length, "Tokens per caption, longer ones are cut; 0 = the checkpoint's"),
    (threads, "Intra-op threads; 0 = one per core"), (device, "cpu or cuda[:n]"))

// Fails at once, before any work, when `path` (given as `option`) cannot be
// written: its folder is missing or not writable.
void check_writable(const std::string& option, const std::filesystem::path& path) {
  const std::filesystem::path folder = path.parent_path().empty() ? "." : path.parent_path();
  std::string probe = (folder / ".cadclip-write-test.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw Error(
        format("{} {}: cannot write in {}: {}; choose a writable folder "
               "(nothing was evaluated)",
               option, path.string(), folder.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
  if (std::filesystem::is_directory(path))
    throw Error(
        format("{} {} is a folder; name a file in it (nothing was "
               "evaluated)",
               option, path.string()));
}

// One --subset NAME=FILE: the ids of the evaluated split that FILE lists
// under the same split name.
struct Subset {
  std::string name, file;
  std::vector<std::string> ids;
};

std::vector<Subset> read_subsets(const std::vector<std::string>& specs, data::Split split) {
  std::vector<Subset> subsets;
  for (const std::string& spec : specs) {
    const size_t equals = spec.find('=');
    if (equals == 0 || equals == std::string::npos || equals + 1 == spec.size())
      throw Error(
          format("--subset {}: write NAME=SPLITS_FILE (e.g. programs=splits_programs.json)", spec));
    Subset s{spec.substr(0, equals), spec.substr(equals + 1), {}};
    const data::Splits splits = data::read_splits(s.file);
    s.ids = splits.of(split);
    if (s.ids.empty())
      throw Error(format("--subset {}: {} lists no '{}' part; name a splits file with some", spec,
                         s.file, data::split_name(split)));
    subsets.push_back(std::move(s));
  }
  return subsets;
}

int run_eval(const EvalCommandOptions& o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  if (!o.save_embeddings.empty()) check_writable("--save-embeddings", o.save_embeddings);
  if (!o.json_out.empty()) check_writable("--json-out", o.json_out);
  data::PreparedData prepared = data::open_prepared(data::dataset_folders(o.data));
  const data::Dataset& dataset = prepared.dataset;
  const data::CaptionFile& captions = prepared.captions;
  if (!captions.problems.empty()) {
    log::warn("eval",
              "{}: {} caption lines could not be read and are left out (first: line {}: {})",
              captions.path.string(), captions.problems.size(), captions.problems.front().line,
              captions.problems.front().reason);
  }
  const data::Splits splits = o.splits.empty() ? prepared.splits : data::read_splits(o.splits);
  const std::vector<std::string>& ids = splits.of(o.split);
  if (ids.empty()) {
    throw Error(format("{}: split '{}' is empty; choose another with --split",
                       o.splits.empty() ? join(o.data) : o.splits, data::split_name(o.split)));
  }

  model::BuiltModel built = model::load_model_from_checkpoint(o.checkpoint);
  built.model->to(c10::Device(o.device));
  eval::EvalOptions options;
  options.levels = o.levels;
  options.batch_size = o.batch_size;
  options.split = data::split_name(o.split);
  // Subsets are parts of the same split, scored apart: the text tower pools
  // each caption once over all of them (the model does not change).
  const std::vector<Subset> subsets = read_subsets(o.subsets, o.split);
  eval::PooledTextCache pooled;
  options.pooled_text_cache = &pooled;
  const int64_t max_length = o.max_text_length > 0 ? o.max_text_length : built.text.max_length;
  const eval::EvalReport report = eval::evaluate(*built.model, *built.text.tokenizer, max_length,
                                                 dataset, captions.captions, ids, options);
  std::vector<eval::EvalReport> subset_reports;
  for (const Subset& subset : subsets) {
    options.split = format("{} ({})", data::split_name(o.split), subset.name);
    subset_reports.push_back(eval::evaluate(*built.model, *built.text.tokenizer, max_length,
                                            dataset, captions.captions, subset.ids, options));
  }
  if (!o.save_embeddings.empty()) {
    eval::save_embeddings(o.save_embeddings, report.embeddings);
    log::info("eval", "embeddings written to {}", o.save_embeddings);
  }
  nlohmann::json j = eval::to_json(report);
  j["checkpoint"] = o.checkpoint;
  j["data"] = o.data;
  for (size_t i = 0; i < subsets.size(); ++i)
    j["subsets"][subsets[i].name] = eval::to_json(subset_reports[i]);
  if (!o.json_out.empty()) write_text_atomic(o.json_out, j.dump(2) + "\n");
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("checkpoint %s, data %s\n%s", o.checkpoint.c_str(), join(o.data).c_str(),
                eval::format_table(report).c_str());
    for (size_t i = 0; i < subsets.size(); ++i)
      std::printf("\n--- subset %s: %s\n%s", subsets[i].name.c_str(), subsets[i].file.c_str(),
                  eval::format_table(subset_reports[i]).c_str());
  }
  return kExitOk;
}

}  // namespace

void define_eval(CLI::App& command, Runner& run) {
  auto o = std::make_shared<EvalCommandOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "checkpoint", *o, o->checkpoint)->required()->check(CLI::ExistingPath);
  add_repeated(command, "--data", *o, o->data)->required()->check(CLI::ExistingPath);
  command
      .add_option_function<std::string>(
          "--split", [o](const std::string& name) { o->split = data::parse_split(name); },
          help(*o, o->split, "--split"))
      ->check(CLI::IsMember({"train", "validation", "test"}))
      ->default_str(std::string(data::split_name(o->split)));
  add_field(command, "--splits", *o, o->splits)->check(CLI::ExistingFile);
  add_field(command, "--levels", *o, o->levels)->delimiter(',');
  add_switch(command, "--json", *o, o->json);
  add_field(command, "--json-out", *o, o->json_out);
  add_field(command, "--subset", *o, o->subsets);
  add_field(command, "--save-embeddings", *o, o->save_embeddings);
  add_field(command, "--batch-size", *o, o->batch_size)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--max-text-length", *o, o->max_text_length)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_field(command, "--threads", *o, o->threads)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_field(command, "--device", *o, o->device)->capture_default_str();
  command.footer(
      "Exit status: 0 evaluated (warnings about collapse or CAD->CAD self-retrieval go to "
      "stderr), 2 bad input.");
  run = config.or_print([o] { return run_eval(*o); });
}

}  // namespace cadclip::app
