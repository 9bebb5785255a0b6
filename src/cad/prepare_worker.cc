// The worker side of `cadclip prepare`: one file at a time, in a process of
// its own, so that Open CASCADE crashing or hanging on a file costs that file.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <thread>

#include "cad/prepare_protocol.h"
#include "cadclip/cad/prepare.h"
#include "cadclip/core/log.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::cad {
namespace {

using prepare_detail::FrameKind;
using prepare_detail::kWorkerFd;

// Test hooks: CADCLIP_DEBUG_CRASH_ON / CADCLIP_DEBUG_HANG_ON name a file
// (its name without folders) on which the worker crashes with SIGSEGV or
// hangs, as Open CASCADE does on some malformed files.
bool debug_hook_names(const char* variable, const std::filesystem::path& path) {
  const char* name = std::getenv(variable);
  return name != nullptr && *name != '\0' && path.filename() == name;
}

std::string result_payload(const nlohmann::json& header, const std::string& graph) {
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const uint64_t size = text.size();
  std::string payload(reinterpret_cast<const char*>(&size), sizeof size);
  payload += text;
  payload += graph;
  return payload;
}

}  // namespace

int run_prepare_worker(int parent_pid) {
  // Die with the job, whatever ends it; if it has already ended, stop now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent_pid) return 3;
  // Per-file info lines from the ingest code would break the job's progress line.
  if (log::level() < log::Level::kWarn) log::set_level(log::Level::kWarn);

  IngestOptions options;
  if (!prepare_detail::send_frame(kWorkerFd, FrameKind::kHello, "")) return 4;
  while (std::optional<prepare_detail::Frame> frame = prepare_detail::recv_frame(kWorkerFd)) {
    if (frame->kind == FrameKind::kOptions) {
      const nlohmann::json o = nlohmann::json::parse(frame->payload);
      options.assume_unit = o.at("assume_unit").get<std::string>();
      options.max_faces = o.at("max_faces").get<int>();
      options.max_edges = o.at("max_edges").get<int>();
      options.deepcad_symmetric_full = o.at("deepcad_symmetric_full").get<bool>();
      continue;
    }
    if (frame->kind != FrameKind::kTask) return 5;
    const nlohmann::json task = nlohmann::json::parse(frame->payload);
    const std::filesystem::path path = task.at("path").get<std::string>();
    const std::string id = task.at("id").get<std::string>();
    if (debug_hook_names("CADCLIP_DEBUG_CRASH_ON", path)) {
      ::signal(SIGSEGV, SIG_DFL);  // past any handler Open CASCADE may have installed
      ::raise(SIGSEGV);
    }
    if (debug_hook_names("CADCLIP_DEBUG_HANG_ON", path)) {
      while (true) std::this_thread::sleep_for(std::chrono::hours(1));
    }

    const auto start = std::chrono::steady_clock::now();
    nlohmann::json header;
    std::string graph_bytes;
    try {
      Result<data::BRepGraph> graph = ingest_file(path, options);
      if (graph) {
        graph->id = id;
        const Status valid = data::validate_graph(graph.value());
        if (valid) {
          header = {{"ok", true}, {"faces", graph->num_faces()}, {"edges", graph->num_edges()}};
          graph_bytes = data::encode_graph(graph.value());
        } else {
          header = {{"ok", false},
                    {"reason",
                     "the featurizer made an inconsistent graph (a cadclip "
                     "bug; please report it with the file): " +
                         valid.reason()}};
        }
      } else {
        header = {{"ok", false}, {"reason", graph.status().reason()}};
      }
    } catch (const std::exception& e) {
      // The worker is a process boundary, like main: what escapes ingest is this file's failure.
      header = {{"ok", false}, {"reason", std::string("unexpected error: ") + e.what()}};
    }
    header["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!prepare_detail::send_frame(kWorkerFd, FrameKind::kResult,
                                    result_payload(header, graph_bytes)))
      return 6;
  }
  return 0;
}

}  // namespace cadclip::cad
