#include "cadclip/data/ingest_limits.h"

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"

namespace cadclip::data {

CADCLIP_OPTION_FIELDS(
    IngestLimits,
    (max_faces,
     "A model with more faces fails, never truncated; embedding memory grows with faces "
     "squared (docs/INGEST.md); 0 = no limit"),
    (max_edges, "A model with more directed edges (two per B-Rep edge) fails; 0 = no limit"),
    (max_file_mb, "A larger CAD file fails without being opened, MiB; 0 = no limit"),
    (file_timeout_s,
     "Seconds one CAD file may take before it fails and its worker process is replaced (its "
     "drawing gets as long again); 0 = no limit"))

void check_limits(const IngestLimits& limits) {
  const auto require = [](bool ok, const char* flag, double value) {
    if (!ok)
      throw Error(format("{} {} is negative; give 0 (no limit) or a positive limit", flag, value));
  };
  require(limits.max_faces >= 0, "--max-faces", limits.max_faces);
  require(limits.max_edges >= 0, "--max-edges", limits.max_edges);
  require(limits.max_file_mb >= 0, "--max-file-mb", limits.max_file_mb);
  require(limits.file_timeout_s >= 0, "--file-timeout", limits.file_timeout_s);
}

}  // namespace cadclip::data
