// Writes a STEP file of one solid with about FACES faces, for measuring what
// prepare, index and part searches cost on large parts (docs/INGEST.md, "The
// ingest limits"):
//   many_faces_part FACES OUT.step [drum|prism]
// drum (the default): a triangulated drum of 49 sides, 2 x 49 x
// ceil((FACES - 2) / 98) triangles and two ends (5,000 faces for FACES =
// 5000), each face with a few edges as real parts have;
// prism: exactly FACES faces, a prism whose two ends have FACES - 2 edges
// each (tests/cad/many_faces.h).
#include <Interface_Static.hxx>
#include <STEPControl_Writer.hxx>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "many_faces.h"

int main(int argc, char** argv) {
  const int faces = argc >= 3 ? std::atoi(argv[1]) : 0;
  const std::string shape = argc >= 4 ? argv[3] : "drum";
  if (faces < 5 || (shape != "drum" && shape != "prism")) {
    std::fprintf(stderr, "usage: many_faces_part FACES OUT.step [drum|prism] (FACES >= 5)\n");
    return 2;
  }
  constexpr int kSides = 49;
  const TopoDS_Shape solid = shape == "prism"
                                 ? cadclip::cad::testing::many_faced_prism(faces)
                                 : cadclip::cad::testing::triangulated_drum(
                                       kSides, (faces - 2 + 2 * kSides - 1) / (2 * kSides));
  STEPControl_Writer writer;
  Interface_Static::SetCVal("write.step.unit", "MM");
  if (writer.Transfer(solid, STEPControl_AsIs) != IFSelect_RetDone ||
      writer.Write(argv[2]) != IFSelect_RetDone) {
    std::fprintf(stderr, "many_faces_part: could not write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
