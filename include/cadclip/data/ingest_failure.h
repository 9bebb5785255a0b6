// Why an input was not ingested, or a prepared part has no drawing: a kind
// from one fixed list and a reason for people, as a value (per-item failures
// of batch jobs are values, docs/STYLE.md). The kinds' names are what
// failures.jsonl, thumbnails.jsonl, manifest.json and the prepare journal
// hold (docs/FORMATS.md); layers built without Open CASCADE read them too.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "cadclip/core/error.h"

namespace cadclip::data {

enum class FailureKind {
  // Before the file is opened:
  kUnreadable,   // "unreadable": the file cannot be looked at (stat fails)
  kBadName,      // "bad_name": its name is not UTF-8, so it cannot be a model id
  kDuplicateId,  // "duplicate_id": another input gives the same model id
  kTooLarge,     // "too_large": over the size limit, so never opened
  // In a worker process:
  kIngest,   // "ingest": read and refused (bad geometry, over --max-faces, ...)
  kCrash,    // "crash": the worker died or garbled its answer (also while drawing)
  kTimeout,  // "timeout": over the per-file limit; the worker was replaced (also while drawing)
  // Drawings only:
  kDraw,     // "draw": Open CASCADE's HLR failed or drew nothing
  kMissing,  // "missing": the drawing a prepared folder names is gone
};

// Every kind, in the enum's order.
std::span<const FailureKind> failure_kinds();
// The name written to the files; one table holds both directions.
std::string_view failure_kind_name(FailureKind kind);
// nullopt for a name that is no kind.
std::optional<FailureKind> failure_kind_from_name(std::string_view name);

struct IngestFailure {
  FailureKind kind = FailureKind::kIngest;
  std::string reason;  // what failed, on which file, and what to do
};

// Thrown where one file's failure ends an API call (a part file to search
// by): the message names the file, failure() keeps the kind and reason.
class IngestError : public Error {
 public:
  IngestError(const std::string& message, IngestFailure failure)
      : Error(message), failure_(std::move(failure)) {}
  const IngestFailure& failure() const { return failure_; }

 private:
  IngestFailure failure_;
};

}  // namespace cadclip::data
