// cadclip prepare INPUTS... --out DIR: CAD files and captions to a prepared
// dataset (shards, captions, splits, manifest, failures; docs/FORMATS.md).
// cadclip prepare-worker is its hidden helper process.
#ifdef CADCLIP_WITH_OCCT
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "cadclip/cad/prepare.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "command.h"
#include "ingest_flags.h"
#include "option_flags.h"

// PrepareOptions described for the command line and its config file, here
// because only they need it: the cad layer records what a run used
// (<out>/options.json) in a form of its own. Its caption and ingest options
// are flat keys (caption_format, assume_unit, limits, ...).
namespace cadclip::cad {

CADCLIP_OPTION_FIELDS(
    PrepareOptions,
    (inputs,
     "CAD files (.step .stp .iges .igs .brep, DeepCAD .json) and folders, searched recursively"),
    (inputs_from, "Text file naming more inputs, one per line ('#' comments; relative to it)"),
    (extensions, "File extensions a folder search picks up"),
    (out, "Prepared folder to write (an unfinished run there resumes)"),
    (captions,
     "Caption file (repeatable): Text2CAD CSV, JSONL (id, level, text), CSV with named columns"),
    (caption_format, caption.format, "auto, text2cad, jsonl or csv"),
    (caption_id_column, caption.id_column, "CSV: column with the model id"),
    (caption_text_column, caption.text_column, "CSV: column with the caption"),
    (caption_level_column, caption.level_column,
     "CSV: column with the level (empty: every row gets --caption-level)"),
    (caption_level, caption.level,
     "Level of CSV rows without a level column and JSONL lines without one"),
    (splits,
     "Splits file {\"train\": [...], \"validation\": [...], \"test\": [...]}; without it, a "
     "deterministic split by id hash"),
    (validation_ratio, "Hash split: share in validation"),
    (test_ratio, "Hash split: share in test"),
    (assume_unit, ingest.assume_unit,
     "Unit of unitless inputs (BREP, DeepCAD JSON): mm, cm, m, inch"),
    (limits, ingest.limits, "What one input file may cost to ingest"),
    (deepcad_symmetric_full, ingest.deepcad_symmetric_full,
     "DeepCAD symmetric extent: true = full distance each side (DeepCAD), false = half each "
     "side (Text2CAD)"),
    (workers, "Worker processes; 0 = one per core"), (shard_models, "Models per shard at most"),
    (shard_mb, "Shard data size at most, MiB"),
    (overwrite, "Replace a finished dataset in --out, or an unfinished run with other options"),
    (keep_work, "Keep --out/work (the journal) after a finished run"),
    (worker_binary, "cadclip executable the workers run (default: this one)"),
    (thumbnails, "Also draw each model (thumbnails/, thumbnails.jsonl) for cadclip index"),
    (thumbnail_px, "Drawing width and height, pixels"),
    (shard_index,
     "Job array: the part of the inputs to prepare, 0 .. --num-shards - 1 (default: from "
     "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN)"),
    (num_shards,
     "Job array: parts the inputs are split into by a hash of their id, each prepared into its "
     "own --out (default: SLURM_ARRAY_TASK_COUNT, else 1)"))

}  // namespace cadclip::cad

namespace cadclip::app {
namespace {

// An integer environment variable; nullopt when unset. Throws naming it when malformed.
std::optional<long long> env_integer(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const long long parsed = std::strtoll(value, &end, 10);
  if (*end != '\0')
    throw Error(format("{}='{}' is not an integer; pass --shard-index and --num-shards instead",
                       name, value));
  return parsed;
}

// The part of a SLURM job array this task prepares, unless the flags say:
// index (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP
// of SLURM_ARRAY_TASK_COUNT, so that --array=1-8 and --array=0-14:2 give parts
// 0..7. An array with gaps (--array=1,4,9) maps onto no such range: the flags
// must say.
void shard_from_slurm(cad::PrepareOptions& o, bool index_given, bool count_given) {
  const std::optional<long long> id = env_integer("SLURM_ARRAY_TASK_ID");
  if (!id) return;
  const std::optional<long long> count = env_integer("SLURM_ARRAY_TASK_COUNT");
  const long long min = env_integer("SLURM_ARRAY_TASK_MIN").value_or(0);
  const long long step = env_integer("SLURM_ARRAY_TASK_STEP").value_or(1);
  if (!count_given && count) o.num_shards = static_cast<int>(*count);
  if (index_given) return;
  if (step < 1 || *id < min || (*id - min) % step != 0 || (*id - min) / step >= o.num_shards)
    throw Error(format(
        "SLURM_ARRAY_TASK_ID={} does not map onto a part 0..{} (SLURM_ARRAY_TASK_MIN={}, "
        "SLURM_ARRAY_TASK_STEP={}, {} parts): use --array=0-{} (or any MIN-MAX range), or pass "
        "--shard-index and --num-shards",
        *id, o.num_shards - 1, min, step, o.num_shards, o.num_shards - 1));
  o.shard_index = static_cast<int>((*id - min) / step);
  log::info("prepare", "SLURM array task {} (ids from {} by {}): part {} of {}", *id, min, step,
            o.shard_index, o.num_shards);
}

// What to read: the inputs, the captions and the splits.
void add_input_flags(CLI::App& command, cad::PrepareOptions& o) {
  add_field(command, "inputs", o, o.inputs);
  add_field(command, "--inputs-from", o, o.inputs_from)->check(CLI::ExistingFile);
  // One value per flag (repeat it, or use commas), so that no option swallows the inputs after it.
  add_repeated(command, "--extensions", o, o.extensions)->delimiter(',')->capture_default_str();
  add_field(command, "--out", o, o.out)->required();
  add_repeated(command, "--captions", o, o.captions);
  add_field(command, "--caption-format", o, o.caption.format)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "text2cad", "jsonl", "csv"}));
  add_field(command, "--caption-id-column", o, o.caption.id_column)->capture_default_str();
  add_field(command, "--caption-text-column", o, o.caption.text_column)->capture_default_str();
  add_field(command, "--caption-level-column", o, o.caption.level_column);
  add_field(command, "--caption-level", o, o.caption.level)->capture_default_str();
  add_field(command, "--splits", o, o.splits)->check(CLI::ExistingFile);
  add_field(command, "--validation-ratio", o, o.validation_ratio)->capture_default_str();
  add_field(command, "--test-ratio", o, o.test_ratio)->capture_default_str();
}

// How the inputs are read, and how the output is cut into shards.
void add_ingest_flags(CLI::App& command, cad::PrepareOptions& o) {
  add_field(command, "--assume-unit", o, o.ingest.assume_unit)->capture_default_str();
  add_ingest_limit_flags(command, o.ingest.limits, "each input file");
  add_field(command, "--deepcad-symmetric-full", o, o.ingest.deepcad_symmetric_full)
      ->capture_default_str();
  add_field(command, "--workers", o, o.workers)->capture_default_str();
  add_field(command, "--shard-models", o, o.shard_models)->capture_default_str();
  add_field(command, "--shard-mb", o, o.shard_mb)->capture_default_str();
  add_switch(command, "--overwrite", o, o.overwrite);
  add_switch(command, "--keep-work", o, o.keep_work);
  add_field(command, "--worker-binary", o, o.worker_binary);
  add_switch(command, "--thumbnails", o, o.thumbnails);
  add_field(command, "--thumbnail-px", o, o.thumbnail_px)->capture_default_str();
}

int run_prepare(cad::PrepareOptions& o, bool shard_index_given, bool num_shards_given) {
  shard_from_slurm(o, shard_index_given, num_shards_given);
  const cad::PrepareSummary summary = cad::run_prepare(o);
  std::printf("%lld inputs: %lld prepared, %lld failed (see %s/failures.jsonl)\n",
              static_cast<long long>(summary.inputs), static_cast<long long>(summary.prepared),
              static_cast<long long>(summary.failed), o.out.c_str());
  if (o.thumbnails)
    std::printf("%lld drawn, %lld without a drawing (see %s/thumbnails.jsonl)\n",
                static_cast<long long>(summary.thumbnails),
                static_cast<long long>(summary.thumbnail_failures), o.out.c_str());
  return summary.failed == 0 ? kExitOk : kExitFindings;
}

}  // namespace

void define_prepare(CLI::App& command, Runner& run) {
  auto o = std::make_shared<cad::PrepareOptions>();
  const ConfigFlags config(command, o);
  add_input_flags(command, *o);
  add_ingest_flags(command, *o);
  CLI::Option* shard_index =
      add_field(command, "--shard-index", *o, o->shard_index)->check(CLI::NonNegativeNumber);
  CLI::Option* num_shards =
      add_field(command, "--num-shards", *o, o->num_shards)->check(CLI::PositiveNumber);
  command.footer(
      "Exit status: 0 every input prepared, 1 some inputs failed (listed in failures.jsonl), "
      "2 bad arguments; a model without a drawing is prepared all the same (thumbnails.jsonl "
      "says why). An interrupted run started again with the same options finishes without "
      "redoing finished files. A job array prepares one part per task into its own --out "
      "(docs/INGEST.md); train on the parts with repeated --data, or join them with "
      "cadclip merge.");
  run = config.or_print([o, shard_index, num_shards] {
    return run_prepare(*o, shard_index->count() > 0, num_shards->count() > 0);
  });
}

void define_prepare_worker(CLI::App& command, Runner& run) {
  auto parent = std::make_shared<int>(0);
  command.group("");  // hidden: only `cadclip prepare` starts it
  command.add_option("--parent", *parent, "Process id of the prepare job")->required();
  run = [parent] { return cad::run_prepare_worker(*parent); };
}

}  // namespace cadclip::app
#endif  // CADCLIP_WITH_OCCT
