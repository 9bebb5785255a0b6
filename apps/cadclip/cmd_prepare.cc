// cadclip prepare INPUTS... --out DIR: CAD files and captions to a prepared
// dataset (shards, captions, splits, manifest, failures; docs/FORMATS.md).
// cadclip prepare-worker is its hidden helper process.
#ifdef CADCLIP_WITH_OCCT
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cadclip/cad/prepare.h"
#include "command.h"

namespace cadclip::app {

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
  command
      .add_option("--max-faces", o->ingest.max_faces,
                  "A model with more faces fails (never truncated); 0 = no limit")
      ->capture_default_str();
  command
      .add_option("--max-edges", o->ingest.max_edges,
                  "A model with more directed edges fails; 0 = no limit")
      ->capture_default_str();
  command
      .add_option("--deepcad-symmetric-full", o->ingest.deepcad_symmetric_full,
                  "DeepCAD symmetric extent: true = full distance each side (DeepCAD), false = "
                  "half each side (Text2CAD)")
      ->capture_default_str();
  command.add_option("--workers", o->workers, "Worker processes; 0 = one per core")
      ->capture_default_str();
  command
      .add_option("--file-timeout", o->file_timeout_s,
                  "Seconds one file may take before it fails and its worker is replaced; 0 = "
                  "no limit")
      ->capture_default_str();
  command
      .add_option("--max-file-mb", o->max_file_mb,
                  "Larger files fail without being opened; 0 = no limit")
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
  command.footer(
      "Exit status: 0 every input prepared, 1 some inputs failed (listed in failures.jsonl), "
      "2 bad arguments; a model without a drawing is prepared all the same (thumbnails.jsonl "
      "says why). An interrupted run started again with the same options finishes without "
      "redoing finished files.");
  run = [o] {
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
