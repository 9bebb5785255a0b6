// The cad layer's internal API over OCCT shapes: loading files in millimetres,
// the model rule of docs/INGEST.md, DeepCAD JSON to a solid, featurization and
// STEP writing. Only src/cad/, src/synth/ (which models its parts as OCCT
// shapes) and their tests and benchmarks include this: OCCT types never reach
// include/cadclip/.
#pragma once

#include <TopoDS_Shape.hxx>

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/cad/ingest.h"
#include "cadclip/cad/thumbnail.h"
#include "cadclip/core/error.h"
#include "cadclip/data/brep_graph.h"

namespace cadclip::cad {

// Millimetres per unit for "mm", "cm", "m", "in"/"inch", "ft"/"foot", "um"/"micron";
// a failure naming the accepted spellings otherwise.
Result<double> millimetres_per_unit(std::string_view unit);

// A file's whole content as OCCT gives it, in millimetres.
struct LoadedShape {
  TopoDS_Shape shape;
  std::string unit;  // BRepGraph::unit: "file:MILLIMETRE", "assumed:inch", ...
};

// Reads a STEP, IGES or BREP file (no featurization, no model rule), scaled to
// millimetres: STEP and IGES by their stated unit, BREP (and files that state
// none) by options.assume_unit. Failures name the file and the reason.
Result<LoadedShape> read_shape(const std::filesystem::path& path, const IngestOptions& options);

// DeepCAD JSON (already parsed text) to a solid in millimetres (coordinates
// times options.assume_unit). `name` only labels messages. What the build
// skipped or healed but did not fail on (an extrude with no profiles, a curve
// of zero size, a gap closed, touching loops; docs/INGEST.md) is appended to
// `warnings` when given.
Result<TopoDS_Shape> deepcad_to_shape(std::string_view json_text, std::string_view name,
                                      const IngestOptions& options,
                                      std::vector<std::string>* warnings = nullptr);

// What the model rule of docs/INGEST.md keeps of a loaded shape.
struct ModelShape {
  TopoDS_Shape shape;   // a compound of what is kept
  int solid_count = 0;  // solids in the source
  bool closed = false;  // every kept shell closed (false for loose faces)
  std::string kept;     // "solids", "shells" or "faces"
};
Result<ModelShape> select_model(const TopoDS_Shape& shape);

// Featurizes an already selected model (coordinates in millimetres) into a
// BRepGraph; fills everything except id, unit, solid_count and closed, which
// the caller sets. Limits of `options` apply.
Result<data::BRepGraph> featurize_shape(const TopoDS_Shape& shape, const IngestOptions& options);

// select_model + featurize_shape + the bookkeeping fields: what ingest_file
// does after loading. For shapes made in memory (synthetic parts), with a unit
// string such as "synthetic:mm". `kept`, when given, receives the selected
// model shape (so that a caller can draw it without loading the file again).
Result<data::BRepGraph> ingest_shape(const TopoDS_Shape& shape, std::string id, std::string unit,
                                     const IngestOptions& options, TopoDS_Shape* kept = nullptr);

// ingest_file that also hands back the model shape it featurized (the model
// rule's selection, millimetres) in `kept`: the prepare worker draws the
// thumbnail from it instead of reading the file a second time. What ingest
// noted without failing (deepcad_to_shape's warnings) goes to `warnings`.
Result<data::BRepGraph> ingest_file_keeping(const std::filesystem::path& path,
                                            const IngestOptions& options, TopoDS_Shape& kept,
                                            std::vector<std::string>& warnings);

// The line drawing of make_thumbnail for a model shape already loaded and
// selected (millimetres); options.ingest is not used. `name` labels failure
// messages. OCCT exceptions become failures; a crash still needs a worker.
Result<Thumbnail> draw_thumbnail(const TopoDS_Shape& model, std::string_view name,
                                 const ThumbnailOptions& options);

// OCCT's STEP/IGES translators share process-wide state (static parameters
// such as xstep.cascade.unit, the unit globals of OCCT 7.6, the messenger).
// Every use of a reader or writer in the cad layer holds this mutex, so that
// threads may ingest or write files at once; featurization runs outside it.
std::mutex& xstep_mutex();

// Writes `shape` (millimetres) as a STEP AP214 file stating millimetres. The
// file appears atomically (written beside `path`, then renamed).
Status write_step(const TopoDS_Shape& shape, const std::filesystem::path& path);

}  // namespace cadclip::cad
