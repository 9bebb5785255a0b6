// An independent check of what synthetic captions state: reads the STEP file
// back and measures it by point classification, not by the generator's code.
#pragma once

#include <TopoDS_Shape.hxx>

#include <string>
#include <utility>
#include <vector>

#include "cadclip/synth/synth.h"

namespace cadclip::test {

struct OracleMeasure {
  bool valid = false;  // BRepCheck_Analyzer on the re-read solid
  int solids = 0;
  double volume = 0;             // mm^3
  double extent[3] = {0, 0, 0};  // bounding-box sides x, y, z, mm
  // Round holes: axis lines around which a ring of points just inside the
  // cylinder is all air and a ring just outside is all material; diameter -> count.
  std::vector<std::pair<double, int>> holes;
};

// `step_text` is a whole STEP file; throws std::runtime_error if it cannot be read.
OracleMeasure oracle_measure(const std::string& step_text);
// The same measure of a shape already built (a program part's solid, millimetres).
OracleMeasure oracle_measure_shape(const TopoDS_Shape& shape);

// What the clean captions of `part` state that the measure contradicts
// (sizes within rounding, hole counts and diameters); empty when all agree.
std::vector<std::string> caption_disagreements(const synth::SynthPart& part,
                                               const OracleMeasure& m);

}  // namespace cadclip::test
