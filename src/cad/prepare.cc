// The prepare job: find the inputs, ingest them in worker processes (resuming
// from the journal), then write shards, captions, splits, failures and the
// manifest.
#include "cadclip/cad/prepare.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "cad/prepare_protocol.h"
#include "cadclip/cad/thumbnail.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/data/utf8.h"

namespace cadclip::cad {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using prepare_detail::FrameKind;
using prepare_detail::Journal;
using prepare_detail::JournalEntry;
using prepare_detail::WorkerProcess;
using Clock = std::chrono::steady_clock;

constexpr int kManifestVersion = 1;
constexpr double kWorkerStartLimitS = 120;  // a worker that is not ready by then is broken
constexpr double kJournalSyncIntervalS = 5;
constexpr size_t kExamples = 10;  // ids quoted in the manifest for each kind of mismatch

struct Input {
  fs::path path;
  std::string id;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

struct Failure {
  std::string path, id, kind, reason;
};

std::string dump(const ordered_json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

ordered_json ingest_json(const IngestOptions& o) {
  return {{"assume_unit", o.assume_unit},
          {"max_faces", o.max_faces},
          {"max_edges", o.max_edges},
          {"deepcad_symmetric_full", o.deepcad_symmetric_full}};
}

ordered_json options_json(const PrepareOptions& o) {
  return {{"inputs", o.inputs},
          {"inputs_from", o.inputs_from},
          {"extensions", o.extensions},
          {"out", o.out},
          {"captions", o.captions},
          {"caption_format", o.caption.format},
          {"caption_id_column", o.caption.id_column},
          {"caption_text_column", o.caption.text_column},
          {"caption_level_column", o.caption.level_column},
          {"caption_level", o.caption.level},
          {"splits", o.splits},
          {"validation_ratio", o.validation_ratio},
          {"test_ratio", o.test_ratio},
          {"ingest", ingest_json(o.ingest)},
          {"workers", o.workers},
          {"file_timeout_s", o.file_timeout_s},
          {"max_file_mb", o.max_file_mb},
          {"shard_models", o.shard_models},
          {"shard_mb", o.shard_mb},
          {"overwrite", o.overwrite},
          {"keep_work", o.keep_work},
          {"worker_binary", o.worker_binary},
          {"thumbnails", o.thumbnails},
          {"thumbnail_px", o.thumbnail_px}};
}

void check_options(const PrepareOptions& o) {
  if (o.out.empty()) throw Error("prepare needs an output folder: pass --out DIR");
  if (o.inputs.empty() && o.inputs_from.empty())
    throw Error("prepare needs inputs: CAD files or folders, or --inputs-from LIST");
  if (o.workers < 0)
    throw Error(format("--workers is {}; use 0 (one per core) or more", o.workers));
  if (o.file_timeout_s < 0 || o.max_file_mb < 0)
    throw Error("--file-timeout and --max-file-mb must be 0 (no limit) or positive");
  if (o.shard_models < 1 || o.shard_mb <= 0)
    throw Error("--shard-models must be at least 1 and --shard-mb positive");
  if (o.ingest.max_faces < 0 || o.ingest.max_edges < 0)
    throw Error("--max-faces and --max-edges must be 0 (no limit) or positive");
  if (o.thumbnails && (o.thumbnail_px < 32 || o.thumbnail_px > 4096))
    throw Error(format("--thumbnail-px is {}; use 32 to 4096 pixels", o.thumbnail_px));
  data::hash_split("", {o.validation_ratio, o.test_ratio});  // throws on bad ratios
}

// ---------------------------------------------------------------- inputs

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

void add_folder(const fs::path& folder, const std::set<std::string>& extensions,
                const fs::path& out, std::vector<Input>& inputs) {
  std::error_code error;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, error);
  if (error) throw Error(format("cannot read the folder {}: {}", folder.string(), error.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    const fs::path& path = it->path();
    if (it->is_directory(error)) {
      // The output folder may sit inside an input folder: its files are no inputs.
      if (same_file(path, out)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(error)) continue;
    std::string ext = lower(path.extension().string());
    if (ext.empty() || !extensions.count(ext.substr(1))) continue;
    fs::path relative = path.lexically_relative(folder);
    relative.replace_extension();
    inputs.push_back({path, relative.generic_string()});
  }
  if (error)
    throw Error(format("reading the folder {} failed: {}", folder.string(), error.message()));
}

std::vector<fs::path> listed_inputs(const PrepareOptions& o) {
  std::vector<fs::path> roots(o.inputs.begin(), o.inputs.end());
  if (!o.inputs_from.empty()) {
    const fs::path list = o.inputs_from;
    const std::string text = read_text_file(list);
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t eol = std::min(text.find('\n', pos), text.size());
      const std::string line = trim(text.substr(pos, eol - pos));
      pos = eol + 1;
      if (line.empty() || line[0] == '#') continue;
      fs::path path = line;
      if (path.is_relative()) path = list.parent_path() / path;
      roots.push_back(path);
    }
  }
  return roots;
}

// Every input, sorted by id; files that cannot be ingested for reasons known
// before opening them go to `failures` instead.
std::vector<Input> collect_inputs(const PrepareOptions& o, std::vector<Failure>& failures) {
  std::set<std::string> extensions;
  for (const auto& e : o.extensions) extensions.insert(lower(e.starts_with(".") ? e.substr(1) : e));
  std::vector<Input> found;
  for (const fs::path& root : listed_inputs(o)) {
    std::error_code error;
    if (fs::is_directory(root, error)) {
      add_folder(root, extensions, o.out, found);
    } else if (fs::exists(root, error)) {
      found.push_back({root, root.stem().string()});
    } else {
      throw Error(format("input {} does not exist; pass CAD files, folders, or --inputs-from LIST",
                         root.string()));
    }
  }
  std::sort(found.begin(), found.end(), [](const Input& a, const Input& b) {
    return a.id != b.id ? a.id < b.id : a.path < b.path;
  });
  std::vector<Input> inputs;
  std::set<fs::path> seen_paths;
  std::map<std::string, fs::path> seen_ids;
  const double max_bytes = o.max_file_mb * 1024 * 1024;
  for (Input& in : found) {
    // Absolute, so that a run resumed from another working folder still finds its journal entries.
    in.path = fs::absolute(in.path).lexically_normal();
    if (!seen_paths.insert(in.path).second) continue;  // the same file named twice
    struct stat st {};
    if (::stat(in.path.c_str(), &st) != 0) {
      failures.push_back({in.path.string(), in.id, "unreadable",
                          format("cannot read {}: {}", in.path.string(), std::strerror(errno))});
      continue;
    }
    in.size = static_cast<uint64_t>(st.st_size);
    in.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (data::first_invalid_utf8(in.id)) {
      failures.push_back({in.path.string(), in.id, "bad_name",
                          "the file name is not UTF-8, so it cannot be a model id; rename it"});
      continue;
    }
    const auto [it, fresh] = seen_ids.emplace(in.id, in.path);
    if (!fresh) {
      failures.push_back({in.path.string(), in.id, "duplicate_id",
                          format("{} already gives the model id '{}'; rename one of the files",
                                 it->second.string(), in.id)});
      continue;
    }
    if (o.max_file_mb > 0 && static_cast<double>(in.size) > max_bytes) {
      failures.push_back({in.path.string(), in.id, "too_large",
                          format("the file is {}, over the limit of {} MiB (--max-file-mb)",
                                 human_bytes(in.size), o.max_file_mb)});
      continue;
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

// ---------------------------------------------------------------- output folder

// Checks what `out` holds and readies it: a fresh start, or the resumption of
// an unfinished run with the same ingest options.
void ready_output(const fs::path& out, const PrepareOptions& o) {
  const fs::path work = out / "work";
  ordered_json state = {{"manifest_version", kManifestVersion},
                        {"shard_schema_version", data::kShardSchemaVersion},
                        {"ingest", ingest_json(o.ingest)}};
  // Only when drawing: runs without thumbnails resume journals of older builds.
  if (o.thumbnails) state["thumbnail_px"] = o.thumbnail_px;
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

// ---------------------------------------------------------------- workers

std::string worker_binary(const PrepareOptions& o) {
  if (!o.worker_binary.empty()) return o.worker_binary;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw Error(
        "cannot find this program's path for the prepare workers; pass the cadclip "
        "executable as the worker binary");
  return self.string();
}

// What the workers are told once started: the ingest options, and the
// drawing's style when the run draws thumbnails.
std::string worker_options(const PrepareOptions& o) {
  ordered_json options = ingest_json(o.ingest);
  if (o.thumbnails) {
    const ThumbnailOptions style;
    options["thumbnail"] = {{"size_px", o.thumbnail_px},
                            {"stroke_px", style.stroke_px},
                            {"margin_px", style.margin_px}};
  }
  return dump(options);
}

// Starts `n` workers and waits until each has said hello in this build's
// protocol, then sends the options. Throws cadclip::Error when one cannot start.
std::vector<WorkerProcess> start_workers(int n, const std::string& binary,
                                         const std::string& options) {
  std::vector<WorkerProcess> workers;
  for (int i = 0; i < n; ++i) workers.push_back(WorkerProcess::start(binary));
  for (WorkerProcess& w : workers) {
    pollfd p{w.fd(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(kWorkerStartLimitS * 1000));
    std::optional<prepare_detail::Frame> hello;
    if (ready > 0) hello = prepare_detail::recv_frame(w.fd());
    if (!hello || hello->kind != FrameKind::kHello) {
      const std::string how = ready > 0 ? w.reap() : "was not ready in time";
      throw Error(
          format("a prepare worker ({} prepare-worker) {} before taking any file; check "
                 "that `{} --version` runs",
                 binary, how, binary));
    }
    const nlohmann::json said = nlohmann::json::parse(hello->payload, nullptr, false);
    const int version = said.is_object() ? said.value("protocol", 1) : 1;
    if (version != prepare_detail::kProtocolVersion) {
      w.kill_now();
      throw Error(
          format("the prepare worker {} speaks protocol {}, this cadclip {}; pass the "
                 "cadclip executable of the same build as the worker binary",
                 binary, version, prepare_detail::kProtocolVersion));
    }
    if (!prepare_detail::send_frame(w.fd(), FrameKind::kOptions, options))
      throw Error(
          format("a prepare worker ({}) ended before taking any file: {}", binary, w.reap()));
  }
  return workers;
}

struct Slot {
  WorkerProcess process;
  std::optional<size_t> input;  // index of the input it is working on
  Clock::time_point started;    // of the file; of its drawing once the graph is in
  // The input's graph came in and its drawing is awaited: the outcome so far
  // and the encoded graph, recorded with or without the drawing.
  std::optional<JournalEntry> drawing;
  std::string graph;
};

// Runs `todo` (indices into `inputs`) through worker processes and appends
// every outcome to the journal.
void run_workers(const std::vector<Input>& inputs, std::vector<size_t> todo,
                 const PrepareOptions& o, Journal& journal, int64_t earlier_failures) {
  if (todo.empty()) return;
  // Largest files first: the long ones do not end up alone at the end.
  std::stable_sort(todo.begin(), todo.end(),
                   [&](size_t a, size_t b) { return inputs[a].size > inputs[b].size; });
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = static_cast<int>(
      std::min<size_t>(todo.size(), static_cast<size_t>(o.workers > 0 ? o.workers : cores)));
  const std::string binary = worker_binary(o);
  log::info("prepare", "{} files to ingest with {} worker processes", with_commas(todo.size()), n);

  std::vector<Slot> slots(n);
  {
    std::vector<WorkerProcess> started = start_workers(n, binary, worker_options(o));
    for (int i = 0; i < n; ++i) slots[i].process = std::move(started[i]);
  }
  // A debugging aid for the resume tests: the job kills itself after this many files.
  int64_t stop_after = 0;
  if (const char* v = std::getenv("CADCLIP_DEBUG_KILL_JOB_AFTER")) stop_after = std::atoll(v);

  Progress progress("prepare", {.total = static_cast<int64_t>(todo.size()), .unit = "files"});
  int64_t finished = 0, failed = earlier_failures;
  Clock::time_point last_sync = Clock::now();
  auto record = [&](size_t index, JournalEntry entry, std::string_view payload) {
    const Input& in = inputs[index];
    entry.path = in.path.string();
    entry.id = in.id;
    entry.size = in.size;
    entry.mtime_ns = in.mtime_ns;
    if (!entry.ok) {
      ++failed;
      if (entry.kind == "ingest") {
        log::info("prepare", "failed: {}", entry.reason);
      } else {
        log::warn("prepare", "failed ({}): {}: {}", entry.kind, in.path.string(), entry.reason);
      }
    }
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
  };
  auto fail = [&](Slot& slot, const std::string& kind, const std::string& reason) {
    if (slot.drawing) {
      // Only the drawing was lost: the part is prepared without a thumbnail
      // (the embedding needs only the graph), and the reason is kept.
      JournalEntry entry = std::move(*slot.drawing);
      slot.drawing.reset();
      entry.thumbnail = kind;
      entry.thumbnail_reason = reason;
      log::warn("prepare", "no thumbnail ({}): {}: {}", kind, inputs[*slot.input].path.string(),
                reason);
      const size_t index = *slot.input;
      slot.input.reset();
      record(index, std::move(entry), std::exchange(slot.graph, {}));
      return;
    }
    JournalEntry entry;
    entry.ok = false;
    entry.kind = kind;
    entry.reason = reason;
    entry.seconds = std::chrono::duration<double>(Clock::now() - slot.started).count();
    const size_t index = *slot.input;
    slot.input.reset();
    record(index, std::move(entry), "");
  };

  size_t next = 0;
  while (true) {
    for (Slot& slot : slots) {
      if (slot.input || next >= todo.size()) continue;
      const Input& in = inputs[todo[next]];
      const std::string task =
          dump({{"path", in.path.string()}, {"id", in.id}, {"thumbnail", o.thumbnails}});
      if (!slot.process.running() ||
          !prepare_detail::send_frame(slot.process.fd(), FrameKind::kTask, task)) {
        // A worker that died between files is replaced; the file was never sent.
        if (slot.process.running()) slot.process.reap();
        slot.process = std::move(start_workers(1, binary, worker_options(o))[0]);
        if (!prepare_detail::send_frame(slot.process.fd(), FrameKind::kTask, task))
          throw Error(format("a fresh prepare worker ended at once: {}", slot.process.reap()));
      }
      slot.input = todo[next++];
      slot.started = Clock::now();
    }
    std::vector<pollfd> fds;
    std::vector<Slot*> busy;
    double wait_s = 1.0;
    for (Slot& slot : slots) {
      if (!slot.input) continue;
      fds.push_back({slot.process.fd(), POLLIN, 0});
      busy.push_back(&slot);
      if (o.file_timeout_s > 0) {
        const double left =
            o.file_timeout_s - std::chrono::duration<double>(Clock::now() - slot.started).count();
        wait_s = std::min(wait_s, std::max(0.0, left));
      }
    }
    if (busy.empty()) break;
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_s * 1000) + 1);
    if (ready < 0 && errno != EINTR)
      throw Error(format("waiting for the prepare workers failed: {}", std::strerror(errno)));
    for (size_t i = 0; i < busy.size(); ++i) {
      Slot& slot = *busy[i];
      if (ready <= 0 || fds[i].revents == 0) continue;
      const std::optional<prepare_detail::Frame> frame = prepare_detail::recv_frame(fds[i].fd);
      const FrameKind expected = slot.drawing ? FrameKind::kThumbnail : FrameKind::kResult;
      if (!frame || frame->kind != expected) {
        const std::string how = slot.process.reap();
        fail(slot, "crash",
             slot.drawing ? format("the worker process ended ({}) while drawing this file's "
                                   "thumbnail (Open CASCADE's HLR crashed on it); the part is "
                                   "kept without a thumbnail, no other file was affected",
                                   how)
                          : format("the worker process ended ({}) while ingesting this file "
                                   "(Open CASCADE crashed on it); no other file was affected",
                                   how));
        continue;
      }
      std::string_view header_text, body;
      std::optional<prepare_detail::ResultHeader> header;
      if (prepare_detail::split_payload(frame->payload, header_text, body))
        header = prepare_detail::parse_result_header(header_text);
      if (!header) {
        slot.process.kill_now();
        fail(slot, "crash", "the worker sent a garbled answer for this file and was replaced");
        continue;
      }
      const size_t index = *slot.input;
      if (slot.drawing) {
        JournalEntry entry = std::move(*slot.drawing);
        slot.drawing.reset();
        slot.input.reset();
        std::string payload = std::exchange(slot.graph, {});
        if (header->ok) {
          entry.thumbnail = "ok";
          entry.svg_size = body.size();
          payload += body;
        } else {
          entry.thumbnail = "draw";
          entry.thumbnail_reason =
              header->reason.empty() ? "the worker sent no reason" : header->reason;
          log::info("prepare", "no thumbnail: {}", entry.thumbnail_reason);
        }
        record(index, std::move(entry), payload);
        continue;
      }
      JournalEntry entry;
      entry.ok = header->ok;
      entry.kind = entry.ok ? "" : "ingest";
      entry.reason =
          entry.ok || !header->reason.empty() ? header->reason : "the worker sent no reason";
      if (entry.ok) entry.warnings = header->warnings;
      entry.seconds = header->seconds;
      entry.faces = header->faces;
      entry.edges = header->edges;
      const std::string_view graph = entry.ok ? body : std::string_view();
      if (entry.ok && header->thumbnail_follows) {
        // The drawing gets a --file-timeout of its own, counted from now.
        slot.drawing = std::move(entry);
        slot.graph = std::string(graph);
        slot.started = Clock::now();
        continue;
      }
      slot.input.reset();
      record(index, std::move(entry), graph);
    }
    if (o.file_timeout_s > 0) {
      for (Slot* slot : busy) {
        if (!slot->input) continue;
        const double took = std::chrono::duration<double>(Clock::now() - slot->started).count();
        if (took < o.file_timeout_s) continue;
        slot->process.kill_now();
        fail(*slot, "timeout",
             format("{} still running after {} s, the per-file limit (--file-timeout); its "
                    "worker was stopped and replaced",
                    slot->drawing ? "drawing the thumbnail (HLR) was" : "ingest was",
                    fixed(o.file_timeout_s, 1)));
      }
    }
  }
  for (Slot& slot : slots)
    if (slot.process.running()) slot.process.finish();
  journal.sync();
  progress.finish();
}

// ---------------------------------------------------------------- assembly

std::string shard_name(int64_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "shard-%05lld.safetensors", static_cast<long long>(n));
  return name;
}

template <class Container>
ordered_json examples(const Container& ids) {
  ordered_json list = ordered_json::array();
  for (const auto& id : ids) {
    if (list.size() >= kExamples) break;
    list.push_back(id);
  }
  return list;
}

}  // namespace

PrepareSummary run_prepare(const PrepareOptions& o) {
  const Clock::time_point start = Clock::now();
  check_options(o);
  const fs::path out = o.out;

  // Captions and splits first: a bad caption file stops the job before hours of ingest.
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
  std::optional<data::Splits> split_file;
  if (!o.splits.empty()) split_file = data::read_splits(o.splits);

  std::vector<Failure> failures;
  const std::vector<Input> inputs = collect_inputs(o, failures);
  const int64_t total_inputs = static_cast<int64_t>(inputs.size() + failures.size());
  if (total_inputs == 0)
    throw Error(format("no inputs found (extensions {}); check the paths and --extensions",
                       dump(o.extensions)));
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
  int64_t earlier_failures = static_cast<int64_t>(failures.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto it = by_path.find(inputs[i].path.string());
    if (it != by_path.end()) {
      const JournalEntry& e = journal.entries()[it->second];
      if (e.id == inputs[i].id && e.size == inputs[i].size && e.mtime_ns == inputs[i].mtime_ns) {
        outcome[i] = it->second;
        if (!e.ok) ++earlier_failures;
        continue;
      }
    }
    todo.push_back(i);
  }
  const int64_t from_journal = static_cast<int64_t>(inputs.size() - todo.size());
  log::info("prepare",
            "{} inputs: {} to ingest, {} done by an earlier run, {} failed before "
            "opening",
            with_commas(total_inputs), with_commas(todo.size()), with_commas(from_journal),
            failures.size());

  const size_t entries_before = journal.entries().size();
  const Clock::time_point ingest_start = Clock::now();
  run_workers(inputs, todo, o, journal, earlier_failures);
  const Clock::time_point ingest_end = Clock::now();
  for (size_t e = entries_before; e < journal.entries().size(); ++e)
    by_path[journal.entries()[e].path] = e;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!outcome[i]) {
      const auto it = by_path.find(inputs[i].path.string());
      CADCLIP_CHECK(it != by_path.end(), "input {} has no outcome", inputs[i].path.string());
      outcome[i] = it->second;
    }
  }

  // Shards, in id order, so that the bytes do not depend on which worker was faster.
  fs::remove_all(out / "shards");
  fs::create_directories(out / "shards");
  data::ShardWriter writer;
  ordered_json shard_list = ordered_json::array();
  std::vector<std::string> prepared_ids;
  std::set<std::string> failed_ids;
  int64_t total_faces = 0, total_edges = 0;
  double ingest_seconds = 0;
  auto flush = [&] {
    const std::string name = shard_name(static_cast<int64_t>(shard_list.size()));
    const int64_t models = writer.size(), faces = writer.num_faces(), edges = writer.num_edges();
    writer.write(out / "shards" / name);
    shard_list.push_back({{"file", "shards/" + name},
                          {"models", models},
                          {"faces", faces},
                          {"edges", edges},
                          {"bytes", fs::file_size(out / "shards" / name)}});
  };
  const double shard_bytes = o.shard_mb * 1024 * 1024;
  // Drawings: thumbnails/<hash of the id>.svg (ids may hold '/'), and one
  // thumbnails.jsonl line per prepared model saying which file, or why none.
  fs::remove_all(out / "thumbnails");
  if (o.thumbnails) fs::create_directories(out / "thumbnails");
  std::string thumbnail_lines;
  std::map<std::string, int64_t> thumbnail_failed_by_kind;
  int64_t thumbnails_drawn = 0;
  // What ingest skipped without failing the model (an extrude with no
  // profiles): one warnings.jsonl line each, counted in the manifest.
  std::string warning_lines;
  int64_t warning_count = 0;
  std::vector<std::string> warned_ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const JournalEntry& e = journal.entries()[*outcome[i]];
    ingest_seconds += e.seconds;
    if (!e.ok) {
      failures.push_back({inputs[i].path.string(), inputs[i].id, e.kind, e.reason});
      failed_ids.insert(inputs[i].id);
      continue;
    }
    for (const std::string& warning : e.warnings) {
      warning_lines +=
          dump(ordered_json{
              {"id", inputs[i].id}, {"path", inputs[i].path.string()}, {"warning", warning}}) +
          "\n";
      ++warning_count;
    }
    if (!e.warnings.empty()) warned_ids.push_back(inputs[i].id);
    std::string bytes = journal.payload(e);
    if (e.svg_size > bytes.size())
      throw Error(
          format("the journal record of {} is inconsistent (a drawing of {} bytes in {}); "
                 "delete {} and run again",
                 e.path, e.svg_size, bytes.size(), (out / "work").string()));
    const std::string svg = bytes.substr(bytes.size() - e.svg_size);
    bytes.resize(bytes.size() - e.svg_size);
    if (o.thumbnails) {
      ordered_json line = {{"id", inputs[i].id}, {"path", inputs[i].path.string()}};
      if (e.thumbnail == "ok") {
        const std::string file = "thumbnails/" + sha256_hex(inputs[i].id).substr(0, 24) + ".svg";
        write_text_atomic(out / file, svg);
        line["svg"] = file;
        ++thumbnails_drawn;
      } else {
        const std::string kind = e.thumbnail.empty() ? "draw" : e.thumbnail;
        line["svg"] = nullptr;
        line["kind"] = kind;
        line["reason"] = e.thumbnail_reason.empty() ? "no drawing was made" : e.thumbnail_reason;
        ++thumbnail_failed_by_kind[kind];
      }
      thumbnail_lines += dump(line) + "\n";
    }
    data::BRepGraph graph = data::decode_graph(std::as_bytes(std::span(bytes.data(), bytes.size())),
                                               format("the journal record of {}", e.path));
    graph.id = inputs[i].id;
    if (writer.size() > 0 && (writer.size() >= o.shard_models ||
                              static_cast<double>(writer.byte_size() + bytes.size()) > shard_bytes))
      flush();
    writer.add(graph);
    prepared_ids.push_back(graph.id);
    total_faces += graph.num_faces();
    total_edges += graph.num_edges();
  }
  if (writer.size() > 0) flush();

  // Captions: kept for prepared models; the rest counted, never dropped silently.
  const std::set<std::string> model_ids(prepared_ids.begin(), prepared_ids.end());
  std::vector<data::Caption> captions;
  std::set<std::string> captioned, orphan_ids;
  int64_t orphans = 0, orphans_of_failed = 0;
  std::map<std::string, int64_t> by_level;
  ordered_json caption_reports = ordered_json::array();
  for (const data::CaptionFile& file : caption_files) {
    ordered_json problems = ordered_json::array();
    for (const auto& p : file.problems)
      problems.push_back({{"line", p.line}, {"reason", p.reason}});
    caption_reports.push_back({{"path", file.path.string()},
                               {"format", file.format},
                               {"rows", file.rows},
                               {"captions", file.captions.size()},
                               {"empty", file.empty},
                               {"problem_rows", file.problems.size()},
                               {"problems", problems}});
    for (const data::Caption& c : file.captions) {
      if (model_ids.count(c.id)) {
        captions.push_back(c);
        captioned.insert(c.id);
        ++by_level[c.level];
      } else {
        ++orphans;
        if (failed_ids.count(c.id)) ++orphans_of_failed;
        orphan_ids.insert(c.id);
      }
    }
  }
  std::stable_sort(captions.begin(), captions.end(),
                   [](const data::Caption& a, const data::Caption& b) { return a.id < b.id; });
  std::vector<std::string> uncaptioned;
  for (const std::string& id : prepared_ids)
    if (!captioned.count(id)) uncaptioned.push_back(id);
  data::write_captions_jsonl(out / "captions.jsonl", captions);
  if (!caption_files.empty()) {
    if (orphans > 0)
      log::warn("prepare",
                "{} captions ({} ids, e.g. '{}') name no prepared model; {} of them "
                "belong to inputs that failed",
                with_commas(orphans), with_commas(orphan_ids.size()), *orphan_ids.begin(),
                with_commas(orphans_of_failed));
    if (!uncaptioned.empty())
      log::warn("prepare", "{} prepared models (e.g. '{}') have no caption",
                with_commas(uncaptioned.size()), uncaptioned.front());
  }

  // Splits: the given file restricted to prepared models, or a hash split.
  data::Splits splits;
  ordered_json split_report;
  if (split_file) {
    std::set<std::string> listed;
    int64_t missing = 0;
    std::set<std::string> missing_examples;
    auto keep = [&](const std::vector<std::string>& from, std::vector<std::string>& into) {
      for (const std::string& id : from) {
        listed.insert(id);
        if (model_ids.count(id)) {
          into.push_back(id);
        } else {
          ++missing;
          if (missing_examples.size() < kExamples) missing_examples.insert(id);
        }
      }
    };
    keep(split_file->train, splits.train);
    keep(split_file->validation, splits.validation);
    keep(split_file->test, splits.test);
    std::vector<std::string> unlisted;
    for (const std::string& id : prepared_ids)
      if (!listed.count(id)) unlisted.push_back(id);
    if (!unlisted.empty())
      log::warn("prepare",
                "{} prepared models (e.g. '{}') are in no split of {}; they are in no "
                "split of splits.json either",
                with_commas(unlisted.size()), unlisted.front(), o.splits);
    split_report = {{"source", "file"},
                    {"file", o.splits},
                    {"ids_without_model", missing},
                    {"ids_without_model_examples", examples(missing_examples)},
                    {"models_in_no_split", unlisted.size()},
                    {"models_in_no_split_examples", examples(unlisted)}};
  } else {
    splits = data::split_by_hash(prepared_ids, {o.validation_ratio, o.test_ratio});
    split_report = {
        {"source", "hash"}, {"validation_ratio", o.validation_ratio}, {"test_ratio", o.test_ratio}};
  }
  split_report["train"] = splits.train.size();
  split_report["validation"] = splits.validation.size();
  split_report["test"] = splits.test.size();
  data::write_splits(out / "splits.json", splits);

  std::sort(failures.begin(), failures.end(),
            [](const Failure& a, const Failure& b) { return a.path < b.path; });
  std::string failure_lines;
  std::map<std::string, int64_t> by_kind;
  for (const Failure& f : failures) {
    ++by_kind[f.kind];
    failure_lines += dump({{"path", f.path}, {"id", f.id}, {"kind", f.kind}, {"reason", f.reason}});
    failure_lines += '\n';
  }
  write_text_atomic(out / "failures.jsonl", failure_lines);
  write_text_atomic(out / "warnings.jsonl", warning_lines);
  if (o.thumbnails) {
    write_text_atomic(out / "thumbnails.jsonl", thumbnail_lines);
  } else {
    fs::remove(out / "thumbnails.jsonl");
  }
  write_text_atomic(out / "options.json", dump(options_json(o), 1) + "\n");

  PrepareSummary summary;
  summary.inputs = total_inputs;
  summary.prepared = static_cast<int64_t>(prepared_ids.size());
  summary.failed = static_cast<int64_t>(failures.size());
  summary.from_journal = from_journal;
  summary.shards = static_cast<int64_t>(shard_list.size());
  summary.thumbnails = thumbnails_drawn;
  summary.warned = static_cast<int64_t>(warned_ids.size());
  for (const auto& [kind, count] : thumbnail_failed_by_kind) summary.thumbnail_failures += count;
  CADCLIP_CHECK(summary.prepared + summary.failed == summary.inputs,
                "counts do not add up: {} prepared + {} failed != {} inputs", summary.prepared,
                summary.failed, summary.inputs);

  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  ordered_json manifest = {
      {"format", "cadclip.prepared"},
      {"manifest_version", kManifestVersion},
      {"shard_schema_version", data::kShardSchemaVersion},
      {"counts",
       {{"inputs", summary.inputs}, {"prepared", summary.prepared}, {"failed", summary.failed}}},
      {"failed_by_kind", by_kind},
      {"warnings",
       {{"count", warning_count},
        {"models", warned_ids.size()},
        {"models_examples", examples(warned_ids)},
        {"file", "warnings.jsonl"}}},
      {"faces", total_faces},
      {"edges", total_edges},
      {"shards", shard_list},
      {"captions",
       {{"files", caption_reports},
        {"kept", captions.size()},
        {"by_level", by_level},
        {"without_model", orphans},
        {"without_model_of_failed_inputs", orphans_of_failed},
        {"without_model_ids", orphan_ids.size()},
        {"without_model_examples", examples(orphan_ids)},
        {"models_without_caption", uncaptioned.size()},
        {"models_without_caption_examples", examples(uncaptioned)}}},
      {"splits", split_report},
      {"thumbnails", o.thumbnails ? ordered_json{{"drawn", summary.thumbnails},
                                                 {"missing", summary.thumbnail_failures},
                                                 {"missing_by_kind", thumbnail_failed_by_kind}}
                                  : ordered_json()},
      {"run",
       {{"from_journal", from_journal},
        {"ingested_now", static_cast<int64_t>(todo.size())},
        {"ingest_seconds", ingest_seconds},
        {"setup_wall_seconds", std::chrono::duration<double>(ingest_start - start).count()},
        {"ingest_wall_seconds", std::chrono::duration<double>(ingest_end - ingest_start).count()},
        {"assemble_wall_seconds", std::chrono::duration<double>(Clock::now() - ingest_end).count()},
        {"wall_seconds", wall}}}};
  write_text_atomic(out / "manifest.json", dump(manifest, 1) + "\n");
  if (!o.keep_work) fs::remove_all(out / "work");

  std::string kinds;
  for (const auto& [kind, count] : by_kind)
    kinds += format("{}{} {}", kinds.empty() ? "" : ", ", kind, count);
  log::info("prepare", "{} inputs: {} prepared in {} shards, {} failed{} ({}); wrote {}",
            with_commas(summary.inputs), with_commas(summary.prepared), summary.shards,
            with_commas(summary.failed), kinds.empty() ? "" : " (" + kinds + ")",
            human_duration(wall), out.string());
  if (warning_count > 0)
    log::warn("prepare",
              "{} prepared models were built with warnings (an extrude with no "
              "profiles skipped, ...); {} lists them",
              with_commas(static_cast<int64_t>(warned_ids.size())),
              (out / "warnings.jsonl").string());
  if (summary.thumbnail_failures > 0)
    log::warn("prepare", "{} prepared models have no thumbnail; {} says why",
              with_commas(summary.thumbnail_failures), (out / "thumbnails.jsonl").string());
  return summary;
}

}  // namespace cadclip::cad
