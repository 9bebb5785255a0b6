// cadclip index [CHECKPOINT] LIBRARY --out DIR: embeds a part library into a
// searchable index folder (FAISS vectors, SQLite catalog, thumbnails); run it
// again to pick up new, changed and deleted parts.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/index/build_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "command.h"
#include "ingest_flags.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct IndexCommandOptions {
  index::IndexOptions index;        // the job's options (cadclip/index/build_index.h)
  int threads = 0;                  // intra-op threads; 0 = LibTorch's default (the cores)
  std::vector<std::string> inputs;  // [checkpoint] library, as given
};

CADCLIP_OPTION_FIELDS(
    IndexCommandOptions, (index, "The job's options (checkpoint and library from the inputs)"),
    (threads, "Intra-op threads; 0 = one per core"),
    (inputs,
     "[CHECKPOINT] LIBRARY. CHECKPOINT: <run>/checkpoints/<name>.json, its folder, or a run "
     "folder (last); left out: the released model (models/default.json, or $CADCLIP_MODEL). "
     "LIBRARY: a folder of CAD files, a prepared folder, or a dataset file listing prepared "
     "folders (the parts of a sharded prepare)"))

int run_index(IndexCommandOptions o) {
  if (o.threads > 0) at::set_num_threads(o.threads);
  o.index.library = o.inputs.back();
  if (o.inputs.size() == 2) {
    o.index.checkpoint = o.inputs.front();
  } else {
    o.index.checkpoint = model::default_model().string();
    std::printf("model: the released model %s\n", o.index.checkpoint.c_str());
  }
  const index::IndexSummary s = index::build_index(o.index);
  std::printf(
      "index %s: %s parts (%s new, %s changed, %s moved, %s removed, %s unchanged), %s failed, "
      "%s thumbnails drawn, FAISS %s\n",
      o.index.out.c_str(), with_commas(s.parts).c_str(), with_commas(s.added).c_str(),
      with_commas(s.changed).c_str(), with_commas(s.moved).c_str(), with_commas(s.removed).c_str(),
      with_commas(s.unchanged).c_str(), with_commas(s.failed).c_str(),
      with_commas(s.thumbnails).c_str(), s.factory.c_str());
  if (s.vectors_kept > 0)
    std::printf("FAISS index updated in place: %s vectors kept, none retrained\n",
                with_commas(s.vectors_kept).c_str());
  if (s.failed > 0) std::printf("failed files and reasons: %s/failures.jsonl\n", s.version.c_str());
  if (s.thumbnail_failures > 0)
    std::printf("%s parts indexed without a thumbnail, and why: %s/warnings.jsonl\n",
                with_commas(s.thumbnail_failures).c_str(), s.version.c_str());
  // A part without a drawing is indexed and searchable: a warning, not a failure.
  return s.failed > 0 ? kExitFindings : kExitOk;
}

}  // namespace

void define_index(CLI::App& command, Runner& run) {
  auto o = std::make_shared<IndexCommandOptions>();
  index::IndexOptions& i = o->index;
  const ConfigFlags config(command, o);
  // [CHECKPOINT] LIBRARY: without a checkpoint, the released model.
  add_field(command, "inputs", *o, o->inputs)->required()->expected(1, 2)->check(CLI::ExistingPath);
  add_field(command, "--out", i, i.out)->required();
  add_field(command, "--factory", i, i.factory)->capture_default_str();
  add_field(command, "--search-params", i, i.search_params);
  add_field(command, "--captions", i, i.captions);
  add_switch(command, "!--no-thumbnails", i, i.thumbnails);
  add_field(command, "--batch-size", i, i.batch_size)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_field(command, "--workers", i, i.workers)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_ingest_limit_flags(command, i.limits, "each library file");
  add_field(command, "--assume-unit", i, i.assume_unit)->capture_default_str();
  add_field(command, "--metadata", i, i.metadata)->check(CLI::ExistingFile);
  add_switch(command, "--update", i, i.update);
  add_switch(command, "--add", i, i.add);
  add_switch(command, "--overwrite", i, i.overwrite);
  add_switch(command, "--wait", i, i.wait);
  add_field(command, "--threads", *o, o->threads)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.footer(
      "Exit status: 0 indexed, 1 indexed but some files failed (failures.jsonl), 2 bad input "
      "(the index is then as it was). "
      "Parts indexed without a thumbnail because drawing them failed are listed in "
      "warnings.jsonl.");
  run = config.or_print([o] { return run_index(*o); });
}

}  // namespace cadclip::app
