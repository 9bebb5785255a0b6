// The ingest pool: worker processes started with posix_spawn, one file at a
// time each (protocol in prepare_protocol.h), with crashes, hangs and garbled
// answers turned into outcomes and the worker replaced.
#include "cadclip/cad/ingest_pool.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "cad/input_checks.h"
#include "cad/prepare_protocol.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::cad {
namespace {

namespace fs = std::filesystem;
using data::FailureKind;
using data::IngestFailure;
using prepare_detail::FrameKind;
using prepare_detail::WorkerProcess;
using Clock = std::chrono::steady_clock;

constexpr double kWorkerStartLimitS = 120;  // a worker that is not ready by then is broken

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string resolve_binary(const std::string& binary) {
  if (!binary.empty()) return binary;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw Error(
        "cannot find this program's path for the prepare workers; pass the cadclip "
        "executable as the worker binary");
  return self.string();
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

// check_before_opening, and the file's facts when it passes.
std::optional<IngestFailure> check_input(const fs::path& path, const std::string& id,
                                         const data::IngestLimits& limits, FileFacts& facts) {
  std::optional<IngestFailure> failure = stat_input(path, facts);
  if (!failure) failure = check_id(id);
  if (!failure) failure = check_size(facts.size, limits.max_file_mb);
  return failure;
}

// True when `fd` has something to read (or its peer is gone).
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

struct Slot {
  WorkerProcess process;
  std::optional<size_t> input;  // index of the input it is working on
  Clock::time_point started;    // of the file; of its drawing once the graph is in
  // The input's graph came in and its drawing is awaited: the outcome so far.
  std::optional<IngestOutcome> drawing;
};

// One run of the pool over the inputs that go to workers.
class PoolRun {
 public:
  PoolRun(const IngestPoolOptions& o, std::span<const IngestInput> inputs,
          const IngestPool::OnOutcome& on_outcome)
      : o_(o),
        timeout_s_(o.ingest.limits.file_timeout_s),
        binary_(resolve_binary(o.worker_binary)),
        options_(prepare_detail::options_payload(o.ingest, o.thumbnail.size_px,
                                                 o.thumbnail.stroke_px, o.thumbnail.margin_px)),
        inputs_(inputs),
        on_outcome_(on_outcome) {}

  void run(const std::vector<size_t>& todo);

 private:
  void send_task(Slot& slot, size_t index);
  void read_answer(Slot& slot);
  void take_drawing(Slot& slot, const prepare_detail::ResultHeader& header, std::string_view svg);
  void fail(Slot& slot, FailureKind kind, const std::string& reason);
  void stop_overdue(const std::vector<Slot*>& busy);
  void deliver(Slot& slot, IngestOutcome outcome);

  const IngestPoolOptions& o_;
  const double timeout_s_;  // o_.ingest.limits.file_timeout_s
  const std::string binary_;
  const std::string options_;
  std::span<const IngestInput> inputs_;
  const IngestPool::OnOutcome& on_outcome_;
  std::vector<Slot> slots_;
};

void PoolRun::run(const std::vector<size_t>& todo) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = static_cast<int>(
      std::min<size_t>(todo.size(), static_cast<size_t>(o_.workers > 0 ? o_.workers : cores)));
  log::info("ingest", "{} files to ingest with {} worker processes", with_commas(todo.size()), n);
  for (WorkerProcess& w : start_workers(n, binary_, options_))
    slots_.push_back(Slot{std::move(w), std::nullopt, {}, std::nullopt});

  size_t next = 0;
  while (true) {
    for (Slot& slot : slots_)
      if (!slot.input && next < todo.size()) send_task(slot, todo[next++]);
    std::vector<pollfd> fds;
    std::vector<Slot*> busy;
    double wait_s = 1.0;
    for (Slot& slot : slots_) {
      if (!slot.input) continue;
      fds.push_back({slot.process.fd(), POLLIN, 0});
      busy.push_back(&slot);
      if (timeout_s_ > 0)
        wait_s = std::min(wait_s, std::max(0.0, timeout_s_ - seconds_since(slot.started)));
    }
    if (busy.empty() || (o_.stop && o_.stop->load())) break;
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_s * 1000) + 1);
    if (ready < 0 && errno != EINTR)
      throw Error(format("waiting for the prepare workers failed: {}", std::strerror(errno)));
    for (size_t i = 0; i < busy.size(); ++i)
      if (ready > 0 && fds[i].revents != 0) read_answer(*busy[i]);
    if (timeout_s_ > 0) stop_overdue(busy);
  }
  // Workers still busy (a stopped run) are killed as their slots go.
  for (Slot& slot : slots_)
    if (slot.process.running() && !slot.input) slot.process.finish();
}

void PoolRun::send_task(Slot& slot, size_t index) {
  const IngestInput& in = inputs_[index];
  const std::string task =
      nlohmann::json{{"path", in.path.string()}, {"id", in.id}, {"thumbnail", in.thumbnail}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!slot.process.running() ||
      !prepare_detail::send_frame(slot.process.fd(), FrameKind::kTask, task)) {
    // A worker that died between files is replaced; the file was never sent.
    if (slot.process.running()) slot.process.reap();
    slot.process = std::move(start_workers(1, binary_, options_)[0]);
    if (!prepare_detail::send_frame(slot.process.fd(), FrameKind::kTask, task))
      throw Error(format("a fresh prepare worker ended at once: {}", slot.process.reap()));
  }
  slot.input = index;
  slot.started = Clock::now();
}

void PoolRun::read_answer(Slot& slot) {
  const std::optional<prepare_detail::Frame> frame = prepare_detail::recv_frame(slot.process.fd());
  const FrameKind expected = slot.drawing ? FrameKind::kThumbnail : FrameKind::kResult;
  if (!frame || frame->kind != expected) {
    const std::string how = slot.process.reap();
    fail(slot, FailureKind::kCrash,
         slot.drawing ? format("the worker process ended ({}) while drawing this file's "
                               "thumbnail (Open CASCADE's HLR crashed on it); the part is "
                               "kept without a thumbnail, no other file was affected",
                               how)
                      : format("the worker process ended ({}) while ingesting this file "
                               "(Open CASCADE crashed on it); no other file was affected",
                               how));
    return;
  }
  std::string_view header_text, body;
  std::optional<prepare_detail::ResultHeader> header;
  if (prepare_detail::split_payload(frame->payload, header_text, body))
    header = prepare_detail::parse_result_header(header_text);
  if (!header) {
    slot.process.kill_now();
    fail(slot, FailureKind::kCrash,
         "the worker sent a garbled answer for this file and was replaced");
    return;
  }
  if (slot.drawing) {
    take_drawing(slot, *header, body);
    return;
  }
  IngestOutcome outcome;
  outcome.index = *slot.input;
  outcome.id = inputs_[outcome.index].id;
  outcome.seconds = header->seconds;
  outcome.faces = header->faces;
  outcome.edges = header->edges;
  if (!header->ok) {
    outcome.failure =
        IngestFailure{FailureKind::kIngest,
                      header->reason.empty() ? "the worker sent no reason" : header->reason};
    deliver(slot, std::move(outcome));
    return;
  }
  outcome.graph = std::string(body);
  outcome.warnings = header->warnings;
  if (inputs_[outcome.index].thumbnail) {
    if (header->thumbnail_follows) {
      // The drawing gets a file_timeout_s of its own, counted from now.
      slot.drawing = std::move(outcome);
      slot.started = Clock::now();
      return;
    }
    outcome.no_drawing = IngestFailure{FailureKind::kDraw, "no drawing was made"};
  }
  deliver(slot, std::move(outcome));
}

void PoolRun::take_drawing(Slot& slot, const prepare_detail::ResultHeader& header,
                           std::string_view svg) {
  IngestOutcome outcome = std::move(*slot.drawing);
  if (header.ok) {
    outcome.drawn = true;
    outcome.svg = std::string(svg);
  } else {
    outcome.no_drawing = IngestFailure{
        FailureKind::kDraw, header.reason.empty() ? "the worker sent no reason" : header.reason};
    log::info("ingest", "no thumbnail: {}", outcome.no_drawing->reason);
  }
  deliver(slot, std::move(outcome));
}

void PoolRun::fail(Slot& slot, FailureKind kind, const std::string& reason) {
  const IngestInput& in = inputs_[*slot.input];
  if (slot.drawing) {
    // Only the drawing was lost: the graph stands (an embedding needs only
    // the graph), and the reason is kept.
    IngestOutcome outcome = std::move(*slot.drawing);
    outcome.no_drawing = IngestFailure{kind, reason};
    log::warn("ingest", "no thumbnail ({}): {}: {}", data::failure_kind_name(kind),
              in.path.string(), reason);
    deliver(slot, std::move(outcome));
    return;
  }
  IngestOutcome outcome;
  outcome.index = *slot.input;
  outcome.id = in.id;
  outcome.failure = IngestFailure{kind, reason};
  outcome.seconds = seconds_since(slot.started);
  deliver(slot, std::move(outcome));
}

void PoolRun::stop_overdue(const std::vector<Slot*>& busy) {
  for (Slot* slot : busy) {
    if (!slot->input || seconds_since(slot->started) < timeout_s_) continue;
    // An answer that came while on_outcome ran is read on the next round.
    if (readable(slot->process.fd())) continue;
    slot->process.kill_now();
    fail(*slot, FailureKind::kTimeout,
         format("{} still running after {} s, the per-file limit (--file-timeout); its "
                "worker was stopped and replaced",
                slot->drawing ? "drawing the thumbnail (HLR) was" : "ingest was",
                fixed(timeout_s_, 1)));
  }
}

void PoolRun::deliver(Slot& slot, IngestOutcome outcome) {
  slot.input.reset();
  slot.drawing.reset();
  if (outcome.failure) {
    const IngestInput& in = inputs_[outcome.index];
    if (outcome.failure->kind == FailureKind::kIngest) {
      log::info("ingest", "failed: {}", outcome.failure->reason);
    } else {
      log::warn("ingest", "failed ({}): {}: {}", data::failure_kind_name(outcome.failure->kind),
                in.path.string(), outcome.failure->reason);
    }
  }
  on_outcome_(std::move(outcome));
}

}  // namespace

IngestPool::IngestPool(IngestPoolOptions options) : options_(std::move(options)) {
  if (options_.workers < 0)
    throw Error(
        format("the ingest pool got {} workers; use 0 (one per core) or more", options_.workers));
  data::check_limits(options_.ingest.limits);
}

std::optional<IngestFailure> check_before_opening(const fs::path& path, const std::string& id,
                                                  const IngestOptions& options) {
  FileFacts facts;
  return check_input(path, id, options.limits, facts);
}

void IngestPool::run(std::span<const IngestInput> inputs, const OnOutcome& on_outcome) {
  std::vector<size_t> todo;
  std::vector<uint64_t> sizes(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    FileFacts facts;
    std::optional<IngestFailure> failure =
        check_input(inputs[i].path, inputs[i].id, options_.ingest.limits, facts);
    if (!failure) {
      sizes[i] = facts.size;
      todo.push_back(i);
      continue;
    }
    log::info("ingest", "failed ({}): {}", data::failure_kind_name(failure->kind), failure->reason);
    IngestOutcome outcome;
    outcome.index = i;
    outcome.id = inputs[i].id;
    outcome.failure = std::move(failure);
    on_outcome(std::move(outcome));
  }
  if (todo.empty()) return;
  // Largest files first: the long ones do not end up alone at the end.
  std::stable_sort(todo.begin(), todo.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  PoolRun(options_, inputs, on_outcome).run(todo);
}

data::BRepGraph ingest_in_worker(const fs::path& path, const IngestPoolOptions& options,
                                 const std::string& id) {
  IngestPoolOptions one = options;
  one.workers = 1;
  const IngestInput input{path, id.empty() ? path.stem().string() : id, /*thumbnail=*/false};
  std::optional<IngestOutcome> result;
  IngestPool(one).run(std::span(&input, 1),
                      [&](IngestOutcome outcome) { result = std::move(outcome); });
  CADCLIP_CHECK(result.has_value(), "the ingest pool gave {} no outcome", path.string());
  if (result->failure) {
    // The message first: the failure is moved into the error, and the order
    // in which a call's arguments are made is unspecified.
    const std::string message =
        format("{} could not be read as a part: {}: {}", path.filename().string(),
               data::failure_kind_name(result->failure->kind), result->failure->reason);
    throw data::IngestError(message, std::move(*result->failure));
  }
  return data::decode_graph(std::as_bytes(std::span(result->graph.data(), result->graph.size())),
                            format("the worker's graph of {}", path.string()));
}

}  // namespace cadclip::cad
