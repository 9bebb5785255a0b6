// One part file to a graph for a search by example (Searcher::search_like_file,
// the server's uploads): ingested in a worker process of its own, so that a
// file which crashes Open CASCADE costs only that process.
#include <filesystem>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/index/searcher.h"

#ifdef CADCLIP_WITH_OCCT
#include "cadclip/cad/ingest_pool.h"
#endif

namespace cadclip::index {

namespace fs = std::filesystem;

#ifdef CADCLIP_WITH_OCCT
bool can_ingest_parts() { return true; }

data::BRepGraph ingest_isolated(const fs::path& path, const std::string& worker_binary,
                                const data::IngestLimits& limits) {
  if (!data::is_cad_path(path))
    throw Error(
        format("{}: not a CAD file cadclip reads (.step .stp .iges .igs .brep, DeepCAD "
               ".json)",
               path.string()));
  cad::IngestPoolOptions options;
  options.ingest.limits = limits;
  options.worker_binary = worker_binary;
  return cad::ingest_in_worker(path, options);
}
#else
bool can_ingest_parts() { return false; }

data::BRepGraph ingest_isolated(const fs::path& path, const std::string&,
                                const data::IngestLimits&) {
  throw Error(format("{}: this cadclip was built without Open CASCADE and cannot read CAD files",
                     path.string()));
}
#endif

}  // namespace cadclip::index
