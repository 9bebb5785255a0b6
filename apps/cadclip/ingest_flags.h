// The ingest limits' flags (data/ingest_limits.h), added by one function so
// that every subcommand that reads CAD files offers the same flags with the
// same help: prepare, index, search (--like) and serve (part uploads).
#pragma once

namespace CLI {
class App;
}

namespace cadclip::data {
struct IngestLimits;
}

namespace cadclip::app {

// --max-faces, --max-edges, --max-file-mb and --file-timeout into `limits`,
// each showing its default. `what` says which files they apply to ("each
// library file", "a part to search by").
void add_ingest_limit_flags(CLI::App& command, data::IngestLimits& limits, const char* what);

}  // namespace cadclip::app
