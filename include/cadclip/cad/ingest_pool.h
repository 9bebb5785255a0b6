// CAD files ingested in `cadclip prepare-worker` processes, so that a file
// which crashes or hangs Open CASCADE costs only itself: the pool starts the
// workers, hands each a file at a time, replaces a worker that crashed, hung
// or garbled its answer, and streams every input's outcome to the caller.
// `cadclip prepare`, `cadclip index` and part searches ingest through it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cadclip/cad/ingest.h"
#include "cadclip/cad/thumbnail.h"
#include "cadclip/data/brep_graph.h"
#include "cadclip/data/ingest_failure.h"

namespace cadclip::cad {

struct IngestPoolOptions {
  int workers = 0;             // worker processes at most; 0 = one per core (never more than
                               // the files to ingest)
  std::string worker_binary;   // the cadclip executable the workers run; empty = this one
  IngestOptions ingest;        // loading and featurization, and ingest.limits: the workers
                               // apply the face and edge limits, the pool the file size
                               // (kTooLarge, never opened) and time (kTimeout, the worker
                               // replaced; a drawing's time counts from the graph's arrival)
  ThumbnailOptions thumbnail;  // the drawing's size_px, stroke_px and margin_px
  // When set, run() checks it at least once a second and, once it is true,
  // stops its workers and returns: inputs still in work get no outcome (a
  // caller that abandons the run, such as a Python iterator that is closed).
  const std::atomic<bool>* stop = nullptr;
};

struct IngestInput {
  std::filesystem::path path;  // the CAD file, as the failure reasons will name it
  std::string id;              // the model id the graph gets
  bool thumbnail = false;      // also draw the shape once its graph is made
};

// What became of one input.
struct IngestOutcome {
  size_t index = 0;  // the input's position in the span given to run()
  std::string id;
  std::optional<data::IngestFailure> failure;  // none: ingested
  std::string graph;                           // ingested: the encoded graph (data/graph_codec.h)
  std::vector<std::string> warnings;           // ingested: what ingest skipped without failing
  double seconds = 0;                          // in the worker (until it failed)
  int64_t faces = 0, edges = 0;
  // Ingested inputs that asked for a drawing: the SVG, or why there is none
  // (kDraw, or kCrash / kTimeout of the drawing alone: the graph is kept).
  bool drawn = false;
  std::string svg;
  std::optional<data::IngestFailure> no_drawing;
};

class IngestPool {
 public:
  // Called once per input, on the thread that called run(), in the order the
  // outcomes come; the time it takes is not counted against any file.
  using OnOutcome = std::function<void(IngestOutcome outcome)>;

  // Throws cadclip::Error for a negative worker count or limit.
  explicit IngestPool(IngestPoolOptions options);

  // Ingests every input and returns when each has its outcome (or when
  // options.stop asks): failures
  // known before opening at once, then the rest, largest files first, in
  // workers started for this run and stopped before it returns. Throws
  // cadclip::Error when no worker can be started (a wrong worker binary) or
  // an exception of on_outcome; a bad or crashing file is an outcome.
  void run(std::span<const IngestInput> inputs, const OnOutcome& on_outcome);

 private:
  IngestPoolOptions options_;
};

// The failures known before a file is opened, as the pool finds them:
// kUnreadable, kBadName (of `id`) or kTooLarge (over options.limits.max_file_mb).
std::optional<data::IngestFailure> check_before_opening(const std::filesystem::path& path,
                                                        const std::string& id,
                                                        const IngestOptions& options);

// One file in one fresh worker: its graph, with id `id` (empty = the file's
// stem), or an IngestError "<file name> could not be read as a part: <kind>:
// <reason>" whose failure() holds the kind. Throws cadclip::Error when the
// worker cannot be started. `options.workers` is not used.
data::BRepGraph ingest_in_worker(const std::filesystem::path& path,
                                 const IngestPoolOptions& options, const std::string& id = {});

}  // namespace cadclip::cad
