#include "ingest_flags.h"

#include <CLI/CLI.hpp>
#include <string>

#include "cadclip/data/ingest_limits.h"
#include "option_flags.h"

namespace cadclip::app {

void add_ingest_limit_flags(CLI::App& command, data::IngestLimits& limits, const char* what) {
  const std::string of = std::string(" (") + what + ")";
  auto add = [&](const std::string& flag, auto& field) {
    command.add_option(flag, field, help(limits, field, flag) + of)
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
  };
  add("--max-faces", limits.max_faces);
  add("--max-edges", limits.max_edges);
  add("--max-file-mb", limits.max_file_mb);
  add("--file-timeout", limits.file_timeout_s);
}

}  // namespace cadclip::app
