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
#include "cadclip/index/build_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "command.h"
#include "ingest_flags.h"

namespace cadclip::app {
namespace {

struct IndexCommandOptions {
  index::IndexOptions index;        // the job's options (cadclip/index/build_index.h)
  int threads = 0;                  // intra-op threads; 0 = LibTorch's default (the cores)
  std::vector<std::string> inputs;  // [checkpoint] library, as given
};

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
  // [CHECKPOINT] LIBRARY: without a checkpoint, the released model.
  command
      .add_option("inputs", o->inputs,
                  "[CHECKPOINT] LIBRARY. CHECKPOINT: <run>/checkpoints/<name>.json, its folder, "
                  "or a run folder (last); left out: the released model (models/default.json, "
                  "or $CADCLIP_MODEL). LIBRARY: a folder of CAD files, a prepared folder, or a "
                  "dataset file listing prepared folders (the parts of a sharded prepare)")
      ->required()
      ->expected(1, 2)
      ->check(CLI::ExistingPath);
  command.add_option("--out", i.out, "Index folder to write (updated when it exists)")->required();
  command
      .add_option("--factory", i.factory,
                  "FAISS factory string (Flat, IVF1024,Flat, HNSW32,Flat, ...); auto = Flat "
                  "below 20,000 parts, IVF with about 4 sqrt(parts) lists below 200,000, "
                  "else those lists holding 8-bit codes (SQ8) reranked by the exact vectors")
      ->capture_default_str();
  command.add_option("--search-params", i.search_params,
                     "FAISS search parameters, e.g. nprobe=16 (default for IVF), efSearch=128 "
                     "(default for HNSW), and rerank=N: a lossy index (SQ or PQ codes) orders "
                     "N candidates by the exact vectors (default 64)");
  command.add_option("--captions", i.captions,
                     "Caption file (JSONL/CSV) naming parts by id; default: the prepared "
                     "folder's captions.jsonl");
  command.add_flag("!--no-thumbnails", i.thumbnails, "Do not draw thumbnails");
  command.add_option("--batch-size", i.batch_size, "Parts per forward pass")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--workers", i.workers, "Ingest worker processes; 0 = one per core")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_ingest_limit_flags(command, i.limits, "each library file");
  command.add_option("--assume-unit", i.assume_unit, "Unit of unitless CAD files")
      ->capture_default_str();
  command
      .add_option("--metadata", i.metadata,
                  "CSV of catalog fields (part number, material, project, ...): one row per "
                  "part, named by an 'id' or 'file' column; filter on them with `search "
                  "--filter`")
      ->check(CLI::ExistingFile);
  command.add_flag("--update", i.update,
                   "Change an existing index in place: add new files, re-embed changed ones, "
                   "keep moved or renamed ones by their content, drop deleted ones; fails "
                   "rather than build a new index");
  command.add_flag("--add", i.add,
                   "As --update, but parts of the index that LIBRARY does not name stay: index "
                   "a library folder by folder, or add a batch of parts to a large index");
  command.add_flag("--overwrite", i.overwrite,
                   "Rebuild an index that was made with another checkpoint");
  command.add_flag("--wait", i.wait,
                   "Another cadclip index writing the same folder: wait for it instead of "
                   "failing");
  command.add_option("--threads", o->threads, "Intra-op threads; 0 = one per core")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.footer(
      "Exit status: 0 indexed, 1 indexed but some files failed (failures.jsonl), 2 bad input "
      "(the index is then as it was). "
      "Parts indexed without a thumbnail because drawing them failed are listed in "
      "warnings.jsonl.");
  run = [o] { return run_index(*o); };
}

}  // namespace cadclip::app
