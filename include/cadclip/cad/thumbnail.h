// Line-drawing thumbnails of parts: an isometric view with hidden lines
// removed (Open CASCADE's exact HLR), visible sharp edges and silhouettes as
// polylines in a small SVG that stays legible at 200 px.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "cadclip/cad/ingest.h"
#include "cadclip/core/error.h"

namespace cadclip::cad {

struct ThumbnailOptions {
  int size_px = 200;          // width and height of the drawing, pixels
  double stroke_px = 1.4;     // line width, pixels
  double margin_px = 8;       // empty border around the part, pixels
  bool remove_hidden = true;  // false: every edge and silhouette (the full wireframe)
  IngestOptions ingest;       // how the file is read (unit of unitless files)
};

struct Thumbnail {
  std::string svg;       // a complete SVG document
  int64_t strokes = 0;   // polylines drawn (one per projected edge)
  double length_px = 0;  // their total length in the drawing, pixels
};

// Reads `path` (STEP, IGES, BREP, DeepCAD JSON), keeps what the model rule of
// docs/INGEST.md keeps, and draws it. A file that cannot be read or projected
// is a failure naming the file and the reason. OCCT exceptions are caught; a
// crash inside OCCT itself needs a worker process to contain it.
Result<Thumbnail> make_thumbnail(const std::filesystem::path& path,
                                 const ThumbnailOptions& options = {});

}  // namespace cadclip::cad
