// The model rule of docs/INGEST.md: which part of a loaded file becomes the
// model, and what is recorded about it.
#include <BRep_Builder.hxx>
#include <BRep_Tool.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Compound.hxx>

#include "cad/occt_shape.h"
#include "cadclip/core/log.h"

namespace cadclip::cad {

Result<ModelShape> select_model(const TopoDS_Shape& shape) {
  if (shape.IsNull()) return Status::failure("the shape is null");
  TopTools_IndexedMapOfShape solids, faces;
  TopExp::MapShapes(shape, TopAbs_SOLID, solids);
  TopExp::MapShapes(shape, TopAbs_FACE, faces);
  if (faces.Extent() == 0) return Status::failure("the file holds no face (nothing to featurize)");

  ModelShape out;
  out.solid_count = solids.Extent();
  BRep_Builder builder;
  TopoDS_Compound compound;
  builder.MakeCompound(compound);

  if (solids.Extent() > 0) {
    // Rule 1: the solids, all of them; faces outside every solid are dropped.
    TopTools_IndexedMapOfShape solid_faces;
    out.closed = true;
    for (int i = 1; i <= solids.Extent(); ++i) {
      builder.Add(compound, solids(i));
      TopExp::MapShapes(solids(i), TopAbs_FACE, solid_faces);
      for (TopExp_Explorer shell(solids(i), TopAbs_SHELL); shell.More(); shell.Next())
        out.closed = out.closed && BRep_Tool::IsClosed(shell.Current());
    }
    if (solid_faces.Extent() == 0)
      return Status::failure(format("the file's {} solid(s) hold no face", solids.Extent()));
    if (solid_faces.Extent() < faces.Extent())
      log::debug("ingest", "dropped {} face(s) outside the {} solid(s)",
                 faces.Extent() - solid_faces.Extent(), solids.Extent());
    out.kept = "solids";
  } else {
    // Rule 2: no solid, so every face (in shells or loose) is the model.
    TopTools_IndexedMapOfShape shells, shell_faces;
    TopExp::MapShapes(shape, TopAbs_SHELL, shells);
    bool all_shells_closed = true;
    for (int i = 1; i <= shells.Extent(); ++i) {
      TopExp::MapShapes(shells(i), TopAbs_FACE, shell_faces);
      all_shells_closed = all_shells_closed && BRep_Tool::IsClosed(shells(i));
    }
    for (int i = 1; i <= faces.Extent(); ++i) builder.Add(compound, faces(i));
    const bool only_shells = shell_faces.Extent() == faces.Extent();
    out.closed = shells.Extent() > 0 && only_shells && all_shells_closed;
    out.kept = only_shells ? "shells" : "faces";
  }
  out.shape = compound;
  return out;
}

}  // namespace cadclip::cad
