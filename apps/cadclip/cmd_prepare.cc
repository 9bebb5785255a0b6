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
#include "cadclip/core/log.h"
#include "command.h"
#include "ingest_flags.h"

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

}  // namespace

void define_prepare(CLI::App& command, Runner& run) {
  auto o = std::make_shared<cad::PrepareOptions>();
  const cad::PrepareOptions d;
  command.add_option("inputs", o->inputs,
                     "CAD files (.step .stp .iges .igs .brep, DeepCAD .json) and folders, searched "
                     "recursively");
  command
      .add_option("--inputs-from", o->inputs_from,
                  "Text file naming more inputs, one per line ('#' comments; relative to it)")
      ->check(CLI::ExistingFile);
  // One value per flag (repeat it, or use commas), so that no option swallows the inputs after it.
  command.add_option("--extensions", o->extensions, "File extensions a folder search picks up")
      ->delimiter(',')
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->capture_default_str();
  command.add_option("--out", o->out, "Prepared folder to write (an unfinished run there resumes)")
      ->required();
  command
      .add_option("--captions", o->captions,
                  "Caption file (repeatable): Text2CAD CSV, JSONL (id, level, text), CSV with "
                  "named columns")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command.add_option("--caption-format", o->caption.format, "auto, text2cad, jsonl or csv")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "text2cad", "jsonl", "csv"}));
  command.add_option("--caption-id-column", o->caption.id_column, "CSV: column with the model id")
      ->capture_default_str();
  command
      .add_option("--caption-text-column", o->caption.text_column, "CSV: column with the caption")
      ->capture_default_str();
  command.add_option("--caption-level-column", o->caption.level_column,
                     "CSV: column with the level (empty: every row gets --caption-level)");
  command
      .add_option("--caption-level", o->caption.level,
                  "Level of CSV rows without a level column and JSONL lines without one")
      ->capture_default_str();
  command
      .add_option("--splits", o->splits,
                  "Splits file {\"train\": [...], \"validation\": [...], \"test\": [...]}; "
                  "without it, a deterministic split by id hash")
      ->check(CLI::ExistingFile);
  command.add_option("--validation-ratio", o->validation_ratio, "Hash split: share in validation")
      ->capture_default_str();
  command.add_option("--test-ratio", o->test_ratio, "Hash split: share in test")
      ->capture_default_str();
  command
      .add_option("--assume-unit", o->ingest.assume_unit,
                  "Unit of unitless inputs (BREP, DeepCAD JSON): mm, cm, m, inch")
      ->capture_default_str();
  add_ingest_limit_flags(command, o->ingest.limits, "each input file");
  command
      .add_option("--deepcad-symmetric-full", o->ingest.deepcad_symmetric_full,
                  "DeepCAD symmetric extent: true = full distance each side (DeepCAD), false = "
                  "half each side (Text2CAD)")
      ->capture_default_str();
  command.add_option("--workers", o->workers, "Worker processes; 0 = one per core")
      ->capture_default_str();
  command.add_option("--shard-models", o->shard_models, "Models per shard at most")
      ->capture_default_str();
  command.add_option("--shard-mb", o->shard_mb, "Shard data size at most, MiB")
      ->capture_default_str();
  command.add_flag("--overwrite", o->overwrite,
                   "Replace a finished dataset in --out, or an unfinished run with other options");
  command.add_flag("--keep-work", o->keep_work,
                   "Keep --out/work (the journal) after a finished run");
  command.add_option("--worker-binary", o->worker_binary,
                     "cadclip executable the workers run (default: this one)");
  command.add_flag("--thumbnails", o->thumbnails,
                   "Also draw each model (thumbnails/, thumbnails.jsonl) for cadclip index");
  command.add_option("--thumbnail-px", o->thumbnail_px, "Drawing width and height, pixels")
      ->capture_default_str();
  CLI::Option* shard_index =
      command
          .add_option("--shard-index", o->shard_index,
                      "Job array: the part of the inputs to prepare, 0 .. --num-shards - 1 "
                      "(default: from SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN)")
          ->check(CLI::NonNegativeNumber);
  CLI::Option* num_shards =
      command
          .add_option("--num-shards", o->num_shards,
                      "Job array: parts the inputs are split into by a hash of their id, each "
                      "prepared into its own --out (default: SLURM_ARRAY_TASK_COUNT, else 1)")
          ->check(CLI::PositiveNumber);
  command.footer(
      "Exit status: 0 every input prepared, 1 some inputs failed (listed in failures.jsonl), "
      "2 bad arguments; a model without a drawing is prepared all the same (thumbnails.jsonl "
      "says why). An interrupted run started again with the same options finishes without "
      "redoing finished files. A job array prepares one part per task into its own --out "
      "(docs/INGEST.md); train on the parts with repeated --data, or join them with "
      "cadclip merge.");
  run = [o, shard_index, num_shards] {
    shard_from_slurm(*o, shard_index->count() > 0, num_shards->count() > 0);
    const cad::PrepareSummary summary = cad::run_prepare(*o);
    std::printf("%lld inputs: %lld prepared, %lld failed (see %s/failures.jsonl)\n",
                static_cast<long long>(summary.inputs), static_cast<long long>(summary.prepared),
                static_cast<long long>(summary.failed), o->out.c_str());
    if (o->thumbnails)
      std::printf("%lld drawn, %lld without a drawing (see %s/thumbnails.jsonl)\n",
                  static_cast<long long>(summary.thumbnails),
                  static_cast<long long>(summary.thumbnail_failures), o->out.c_str());
    return summary.failed == 0 ? kExitOk : kExitFindings;
  };
}

void define_prepare_worker(CLI::App& command, Runner& run) {
  auto parent = std::make_shared<int>(0);
  command.group("");  // hidden: only `cadclip prepare` starts it
  command.add_option("--parent", *parent, "Process id of the prepare job")->required();
  run = [parent] { return cad::run_prepare_worker(*parent); };
}

}  // namespace cadclip::app
#endif  // CADCLIP_WITH_OCCT
