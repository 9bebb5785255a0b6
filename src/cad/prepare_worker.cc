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
#include <optional>
#include <thread>
#include <utility>

#include "cad/occt_shape.h"
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
// hangs, as Open CASCADE does on some malformed files;
// CADCLIP_DEBUG_CRASH_DRAWING / CADCLIP_DEBUG_HANG_DRAWING do the same after
// the file's graph has been sent, while its thumbnail is being drawn (HLR).
bool debug_hook_names(const char* variable, const std::filesystem::path& path) {
  const char* name = std::getenv(variable);
  return name != nullptr && *name != '\0' && path.filename() == name;
}

void obey_debug_hooks(const char* crash, const char* hang, const std::filesystem::path& path) {
  if (debug_hook_names(crash, path)) {
    ::signal(SIGSEGV, SIG_DFL);  // past any handler Open CASCADE may have installed
    ::raise(SIGSEGV);
  }
  if (debug_hook_names(hang, path)) {
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Ingests one file: the kResult header and the encoded graph (when ok);
// `model` receives the shape that was featurized, for the drawing.
std::pair<nlohmann::json, std::string> ingest_one(const std::filesystem::path& path,
                                                  const std::string& id,
                                                  const IngestOptions& options,
                                                  TopoDS_Shape& model) {
  try {
    std::vector<std::string> warnings;
    Result<data::BRepGraph> graph = ingest_file_keeping(path, options, model, warnings);
    if (!graph) return {{{"ok", false}, {"reason", graph.status().reason()}}, ""};
    graph->id = id;
    const Status valid = data::validate_graph(graph.value());
    if (!valid)
      return {{{"ok", false},
               {"reason",
                "the featurizer made an inconsistent graph (a cadclip bug; please report it "
                "with the file): " +
                    valid.reason()}},
              ""};
    nlohmann::json header = {
        {"ok", true}, {"faces", graph->num_faces()}, {"edges", graph->num_edges()}};
    if (!warnings.empty()) header["warnings"] = warnings;
    return {std::move(header), data::encode_graph(graph.value())};
  } catch (const std::exception& e) {
    // The worker is a process boundary, like main: what escapes ingest is this file's failure.
    return {{{"ok", false}, {"reason", std::string("unexpected error: ") + e.what()}}, ""};
  }
}

// Draws the shape that ingest_one kept: the kThumbnail header and the SVG (when ok).
std::pair<nlohmann::json, std::string> draw_one(const TopoDS_Shape& model,
                                                const std::filesystem::path& path,
                                                const ThumbnailOptions& options) {
  try {
    Result<Thumbnail> drawing = draw_thumbnail(model, path.string(), options);
    if (!drawing) return {{{"ok", false}, {"reason", drawing.status().reason()}}, ""};
    // make_pair, not braces: a braced pair takes its members by const reference
    // and would copy the SVG.
    return std::make_pair(nlohmann::json{{"ok", true}, {"strokes", drawing->strokes}},
                          std::move(drawing->svg));
  } catch (const std::exception& e) {
    return {{{"ok", false}, {"reason", std::string("unexpected error while drawing: ") + e.what()}},
            ""};
  }
}

}  // namespace

int run_prepare_worker(int parent_pid) {
  // Die with the job, whatever ends it; if it has already ended, stop now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent_pid) return 3;
  // Per-file info lines from the ingest code would break the job's progress line.
  if (log::level() < log::Level::kWarn) log::set_level(log::Level::kWarn);

  IngestOptions options;
  std::optional<ThumbnailOptions> drawing;
  if (!prepare_detail::send_frame(kWorkerFd, FrameKind::kHello,
                                  dump({{"protocol", prepare_detail::kProtocolVersion}})))
    return 4;
  while (std::optional<prepare_detail::Frame> frame = prepare_detail::recv_frame(kWorkerFd)) {
    if (frame->kind == FrameKind::kOptions) {
      const nlohmann::json o = nlohmann::json::parse(frame->payload);
      options = o.get<IngestOptions>();
      drawing.reset();
      if (o.contains("thumbnail")) {
        const nlohmann::json& t = o.at("thumbnail");
        drawing.emplace();
        drawing->size_px = t.at("size_px").get<int>();
        drawing->stroke_px = t.at("stroke_px").get<double>();
        drawing->margin_px = t.at("margin_px").get<double>();
      }
      continue;
    }
    if (frame->kind != FrameKind::kTask) return 5;
    const nlohmann::json task = nlohmann::json::parse(frame->payload);
    const std::filesystem::path path = task.at("path").get<std::string>();
    const std::string id = task.at("id").get<std::string>();
    const bool draw = drawing && task.value("thumbnail", false);
    obey_debug_hooks("CADCLIP_DEBUG_CRASH_ON", "CADCLIP_DEBUG_HANG_ON", path);

    const auto start = std::chrono::steady_clock::now();
    TopoDS_Shape model;
    auto [header, graph_bytes] = ingest_one(path, id, options, model);
    header["seconds"] = seconds_since(start);
    // The graph goes out before the drawing starts: if HLR then crashes or
    // hangs, the job still has the embedding input and loses only the picture.
    const bool follows = draw && header.value("ok", false);
    header["thumbnail_follows"] = follows;
    if (!prepare_detail::send_frame(kWorkerFd, FrameKind::kResult,
                                    prepare_detail::join_payload(dump(header), graph_bytes)))
      return 6;
    if (!follows) continue;

    obey_debug_hooks("CADCLIP_DEBUG_CRASH_DRAWING", "CADCLIP_DEBUG_HANG_DRAWING", path);
    const auto drawing_start = std::chrono::steady_clock::now();
    auto [thumb_header, svg] = draw_one(model, path, *drawing);
    thumb_header["seconds"] = seconds_since(drawing_start);
    if (!prepare_detail::send_frame(kWorkerFd, FrameKind::kThumbnail,
                                    prepare_detail::join_payload(dump(thumb_header), svg)))
      return 6;
  }
  return 0;
}

}  // namespace cadclip::cad
