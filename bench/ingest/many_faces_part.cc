// Writes a STEP file of one solid with exactly FACES faces (a prism over a
// polygon, tests/cad/many_faces.h), for measuring what prepare, index and
// part searches cost on large parts (docs/INGEST.md, "Limits"):
//   many_faces_part FACES OUT.step
#include <Interface_Static.hxx>
#include <STEPControl_Writer.hxx>

#include <cstdio>
#include <cstdlib>

#include "many_faces.h"

int main(int argc, char** argv) {
  const int faces = argc == 3 ? std::atoi(argv[1]) : 0;
  if (faces < 5) {
    std::fprintf(stderr, "usage: many_faces_part FACES OUT.step (FACES >= 5)\n");
    return 2;
  }
  STEPControl_Writer writer;
  Interface_Static::SetCVal("write.step.unit", "MM");
  if (writer.Transfer(cadclip::cad::testing::many_faced_prism(faces), STEPControl_AsIs) !=
          IFSelect_RetDone ||
      writer.Write(argv[2]) != IFSelect_RetDone) {
    std::fprintf(stderr, "many_faces_part: could not write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
