// The prepare job: check the options, read captions and splits, find the
// inputs (prepare_inputs.cc), ready the output folder, ingest what the
// journal of an interrupted run does not already hold through the ingest
// pool, and write the dataset from the journal (prepare_output.cc).
#include "cadclip/cad/prepare.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <unordered_map>

#include "cad/prepare_job.h"
#include "cadclip/cad/ingest_pool.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/data/shard.h"

namespace cadclip::cad {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using prepare_detail::FinishedRun;
using prepare_detail::Journal;
using prepare_detail::JournalEntry;
using Clock = std::chrono::steady_clock;

constexpr double kJournalSyncIntervalS = 5;

void check_options(const PrepareOptions& o) {
  if (o.out.empty()) throw Error("prepare needs an output folder: pass --out DIR");
  if (o.inputs.empty() && o.inputs_from.empty())
    throw Error("prepare needs inputs: CAD files or folders, or --inputs-from LIST");
  if (o.workers < 0)
    throw Error(format("--workers is {}; use 0 (one per core) or more", o.workers));
  data::check_limits(o.ingest.limits);
  if (o.shard_models < 1 || o.shard_mb <= 0)
    throw Error("--shard-models must be at least 1 and --shard-mb positive");
  if (o.thumbnails && (o.thumbnail_px < 32 || o.thumbnail_px > 4096))
    throw Error(format("--thumbnail-px is {}; use 32 to 4096 pixels", o.thumbnail_px));
  if (o.num_shards < 1)
    throw Error(format("--num-shards is {}; a job has at least one part", o.num_shards));
  if (o.shard_index < 0 || o.shard_index >= o.num_shards)
    throw Error(
        format("--shard-index {} is not a part of {} (0 to {}); with a SLURM array, the "
               "index is SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN",
               o.shard_index, o.num_shards, o.num_shards - 1));
  data::hash_split("", {o.validation_ratio, o.test_ratio});  // throws on bad ratios
}

// Captions first: a bad caption file stops the job before hours of ingest.
std::vector<data::CaptionFile> read_caption_files(const PrepareOptions& o) {
  std::vector<data::CaptionFile> caption_files;
  for (const std::string& path : o.captions) {
    caption_files.push_back(data::read_captions(path, o.caption));
    const data::CaptionFile& file = caption_files.back();
    log::info("prepare", "{}: {} captions from {} rows ({}), {} rows with problems", path,
              with_commas(file.captions.size()), with_commas(file.rows), file.format,
              file.problems.size());
    for (size_t i = 0; i < file.problems.size() && i < 20; ++i)
      log::warn("prepare", "{} line {}: {}", path, file.problems[i].line, file.problems[i].reason);
    if (file.problems.size() > 20)
      log::warn("prepare", "{}: {} more problem lines are listed in manifest.json", path,
                file.problems.size() - 20);
  }
  return caption_files;
}

// Checks what `out` holds and readies it: a fresh start, or the resumption of
// an unfinished run with the same ingest options.
void ready_output(const fs::path& out, const PrepareOptions& o) {
  const fs::path work = out / "work";
  ordered_json state = {{"manifest_version", prepare_detail::kManifestVersion},
                        {"shard_schema_version", data::kShardSchemaVersion},
                        {"ingest", prepare_detail::ingest_json(o.ingest)}};
  // Only when drawing: runs without thumbnails resume journals of older builds.
  if (o.thumbnails) state["thumbnail_px"] = o.thumbnail_px;
  // Likewise only for a part of a job array: another part must not resume this one.
  if (o.num_shards > 1) state["shard"] = {{"index", o.shard_index}, {"count", o.num_shards}};
  std::error_code error;
  if (fs::exists(out, error) && !fs::is_directory(out, error))
    throw Error(format("--out {} is a file, not a folder", out.string()));
  const bool has_journal = fs::exists(work / "journal.bin", error);
  bool resume = false;
  if (has_journal) {
    nlohmann::json old;
    if (fs::exists(work / "state.json", error))
      old = nlohmann::json::parse(read_text_file(work / "state.json"), nullptr, false);
    if (old == nlohmann::json::parse(state.dump())) {
      resume = true;
    } else if (!o.overwrite) {
      throw Error(
          format("{} holds an unfinished prepare run with other options ({} then, {} now); "
                 "rerun with the same options to finish it, or pass --overwrite to start "
                 "again",
                 out.string(), old.is_discarded() ? "unknown" : old.dump(), state.dump()));
    }
  } else if (fs::exists(out / "manifest.json", error) && !o.overwrite) {
    throw Error(
        format("{} already holds a prepared dataset; pass --overwrite to replace it, or "
               "choose another --out",
               out.string()));
  }
  if (!resume) {
    fs::remove_all(work);
    fs::create_directories(work);
    write_text_atomic(work / "state.json", state.dump(1) + "\n");
  } else {
    log::info("prepare", "resuming the unfinished run in {}", out.string());
  }
  // Until the new manifest is written, the folder must not look finished.
  fs::remove(out / "manifest.json", error);
}

IngestPoolOptions pool_options(const PrepareOptions& o) {
  IngestPoolOptions pool;
  pool.workers = o.workers;
  pool.worker_binary = o.worker_binary;
  pool.ingest = o.ingest;
  pool.thumbnail.size_px = o.thumbnail_px;
  return pool;
}

// The journal record of an outcome, without its payload (graph, then SVG).
JournalEntry journal_entry(const prepare_detail::Input& in, const IngestOutcome& outcome) {
  JournalEntry entry;
  entry.path = in.path.string();
  entry.id = in.id;
  entry.size = in.size;
  entry.mtime_ns = in.mtime_ns;
  entry.failure = outcome.failure;
  entry.warnings = outcome.warnings;
  entry.seconds = outcome.seconds;
  entry.faces = outcome.faces;
  entry.edges = outcome.edges;
  entry.drawn = outcome.drawn;
  entry.no_drawing = outcome.no_drawing;
  entry.svg_size = outcome.drawn ? outcome.svg.size() : 0;
  return entry;
}

// Runs `todo` (indices into `inputs`) through the ingest pool and appends
// every outcome to the journal.
void ingest(const std::vector<prepare_detail::Input>& inputs, const std::vector<size_t>& todo,
            const PrepareOptions& o, Journal& journal, int64_t earlier_failures) {
  if (todo.empty()) return;
  std::vector<IngestInput> work;
  for (const size_t i : todo) work.push_back({inputs[i].path, inputs[i].id, o.thumbnails});
  // A debugging aid for the resume tests: the job kills itself after this many files.
  int64_t stop_after = 0;
  if (const char* v = std::getenv("CADCLIP_DEBUG_KILL_JOB_AFTER")) stop_after = std::atoll(v);

  Progress progress("prepare", {.total = static_cast<int64_t>(todo.size()), .unit = "files"});
  int64_t finished = 0, failed = earlier_failures;
  Clock::time_point last_sync = Clock::now();
  IngestPool(pool_options(o)).run(work, [&](IngestOutcome outcome) {
    const prepare_detail::Input& in = inputs[todo[outcome.index]];
    if (outcome.failure) ++failed;
    JournalEntry entry = journal_entry(in, outcome);
    std::string payload = std::move(outcome.graph);
    if (outcome.drawn) payload += outcome.svg;
    journal.append(std::move(entry), payload);
    ++finished;
    if (Clock::now() - last_sync > std::chrono::duration<double>(kJournalSyncIntervalS)) {
      journal.sync();
      last_sync = Clock::now();
    }
    progress.advance(1, {{"failed", with_commas(failed)}, {"last", in.path.filename().string()}});
    if (stop_after > 0 && finished >= stop_after) {
      journal.sync();
      ::kill(::getpid(), SIGKILL);
    }
  });
  journal.sync();
  progress.finish();
}

}  // namespace

PrepareSummary run_prepare(const PrepareOptions& o) {
  FinishedRun run;
  run.start = Clock::now();
  check_options(o);
  const fs::path out = o.out;
  run.caption_files = read_caption_files(o);
  if (!o.splits.empty()) run.split_file = data::read_splits(o.splits);

  run.inputs = prepare_detail::collect_inputs(o, run.failures);
  if (run.inputs.empty() && run.failures.empty())
    throw Error(format("no inputs found (extensions {}); check the paths and --extensions",
                       prepare_detail::dump(o.extensions)));
  prepare_detail::select_part(o, run);
  const std::vector<prepare_detail::Input>& inputs = run.inputs;
  const int64_t total_inputs = static_cast<int64_t>(inputs.size() + run.failures.size());
  if (o.num_shards > 1)
    log::info("prepare", "part {} of {}: {} of the job's {} inputs", o.shard_index, o.num_shards,
              with_commas(total_inputs), with_commas(run.shard["inputs"].get<int64_t>()));
  ready_output(out, o);
  Journal journal(out / "work" / "journal.bin");
  if (journal.dropped_bytes() > 0)
    log::warn("prepare", "cut a torn record ({}) off the end of the journal of the interrupted run",
              human_bytes(journal.dropped_bytes()));

  // The journal's latest word on each input still unchanged on disk.
  std::unordered_map<std::string, size_t> by_path;
  for (size_t i = 0; i < journal.entries().size(); ++i) by_path[journal.entries()[i].path] = i;
  std::vector<std::optional<size_t>> outcome(inputs.size());
  std::vector<size_t> todo;
  int64_t earlier_failures = static_cast<int64_t>(run.failures.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto it = by_path.find(inputs[i].path.string());
    if (it != by_path.end()) {
      const JournalEntry& e = journal.entries()[it->second];
      if (e.id == inputs[i].id && e.size == inputs[i].size && e.mtime_ns == inputs[i].mtime_ns) {
        outcome[i] = it->second;
        if (e.failure) ++earlier_failures;
        continue;
      }
    }
    todo.push_back(i);
  }
  run.from_journal = static_cast<int64_t>(inputs.size() - todo.size());
  run.ingested_now = static_cast<int64_t>(todo.size());
  log::info("prepare",
            "{} inputs: {} to ingest, {} done by an earlier run, {} failed before "
            "opening",
            with_commas(total_inputs), with_commas(todo.size()), with_commas(run.from_journal),
            run.failures.size());

  const size_t entries_before = journal.entries().size();
  run.ingest_start = Clock::now();
  ingest(inputs, todo, o, journal, earlier_failures);
  run.ingest_end = Clock::now();
  for (size_t e = entries_before; e < journal.entries().size(); ++e)
    by_path[journal.entries()[e].path] = e;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!outcome[i]) {
      const auto it = by_path.find(inputs[i].path.string());
      CADCLIP_CHECK(it != by_path.end(), "input {} has no outcome", inputs[i].path.string());
      outcome[i] = it->second;
    }
    run.entry_of.push_back(*outcome[i]);
  }
  return prepare_detail::write_dataset(o, journal, std::move(run));
}

}  // namespace cadclip::cad
