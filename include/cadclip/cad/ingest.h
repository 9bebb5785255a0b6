// One CAD file (STEP, IGES, BREP or DeepCAD JSON) to one BRepGraph: the unit
// of work of `cadclip prepare`. A bad file is a failed Result with its reason,
// never an exception or a crash that could have been checked.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cadclip/core/error.h"
#include "cadclip/data/brep_graph.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/ingest_limits.h"

namespace cadclip::cad {

struct IngestOptions {
  std::string assume_unit = "mm";  // unit of unitless inputs (BREP, DeepCAD JSON): mm, cm, m, inch
  // Faces, edges, file size and time (data/ingest_limits.h). ingest_file
  // applies the face and edge limits; the ingest pool the size and the time.
  data::IngestLimits limits;
  bool deepcad_symmetric_full = true;  // DeepCAD's meaning of a symmetric extent (full distance
                                       // each side); false = Text2CAD's (half each side)
};
// Its JSON form: the "ingest" object of a prepared folder's manifest.json and
// of a prepare run's resume state, and what the parent sends its workers:
// {assume_unit, max_faces, max_edges, deepcad_symmetric_full}, what shapes a
// graph. The file size and time limits are left out: they decide which files
// are read, not what a graph holds, so changing them resumes a run.
void to_json(nlohmann::json& json, const IngestOptions& options);
void from_json(const nlohmann::json& json, IngestOptions& options);

// Loads `path` (format from its extension), applies the multi-solid/shell
// rule of docs/INGEST.md, and featurizes it. The graph's id is the file stem.
// Same file and options, same graph, byte for byte. Catches OCCT exceptions;
// a crash inside OCCT itself still needs a worker process to contain it.
Result<data::BRepGraph> ingest_file(const std::filesystem::path& path,
                                    const IngestOptions& options);

// OCCT's readers and writers report through the default messenger, which
// prints to stdout; only apps/ may write there. Removes that printer (once).
void quiet_occt_messages();

}  // namespace cadclip::cad
