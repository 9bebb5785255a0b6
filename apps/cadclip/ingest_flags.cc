#include "ingest_flags.h"

#include <CLI/CLI.hpp>
#include <string>

#include "cadclip/data/ingest_limits.h"

namespace cadclip::app {

void add_ingest_limit_flags(CLI::App& command, data::IngestLimits& limits, const char* what) {
  const std::string of = std::string(" (") + what + ")";
  command
      .add_option("--max-faces", limits.max_faces,
                  "A model with more faces fails, never truncated; embedding memory grows with "
                  "faces squared (docs/INGEST.md); 0 = no limit" +
                      of)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--max-edges", limits.max_edges,
                  "A model with more directed edges (two per B-Rep edge) fails; 0 = no limit" + of)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--max-file-mb", limits.max_file_mb,
                  "A larger CAD file fails without being opened, MiB; 0 = no limit" + of)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--file-timeout", limits.file_timeout_s,
                  "Seconds one CAD file may take before it fails and its worker process is "
                  "replaced (its drawing gets as long again); 0 = no limit" +
                      of)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

}  // namespace cadclip::app
