#include "cadclip/data/ingest_failure.h"

namespace cadclip::data {
namespace {

struct KindName {
  FailureKind kind;
  std::string_view name;
};
// Names are part of the file formats: never rename one.
constexpr KindName kKindNames[] = {{FailureKind::kUnreadable, "unreadable"},
                                   {FailureKind::kBadName, "bad_name"},
                                   {FailureKind::kDuplicateId, "duplicate_id"},
                                   {FailureKind::kTooLarge, "too_large"},
                                   {FailureKind::kIngest, "ingest"},
                                   {FailureKind::kCrash, "crash"},
                                   {FailureKind::kTimeout, "timeout"},
                                   {FailureKind::kDraw, "draw"},
                                   {FailureKind::kMissing, "missing"}};

constexpr FailureKind kKinds[] = {
    FailureKind::kUnreadable, FailureKind::kBadName, FailureKind::kDuplicateId,
    FailureKind::kTooLarge,   FailureKind::kIngest,  FailureKind::kCrash,
    FailureKind::kTimeout,    FailureKind::kDraw,    FailureKind::kMissing};
static_assert(std::size(kKinds) == std::size(kKindNames), "every kind has a name");

}  // namespace

std::span<const FailureKind> failure_kinds() { return kKinds; }

std::string_view failure_kind_name(FailureKind kind) {
  for (const KindName& k : kKindNames)
    if (k.kind == kind) return k.name;
  CADCLIP_CHECK(false, "FailureKind {} has no name", static_cast<int>(kind));
  return {};
}

std::optional<FailureKind> failure_kind_from_name(std::string_view name) {
  for (const KindName& k : kKindNames)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

}  // namespace cadclip::data
