// The model rule of docs/INGEST.md: which part of a loaded file becomes the
// model, and what is recorded about it.
#include <BRepBndLib.hxx>
#include <BRepBuilderAPI_Sewing.hxx>
#include <BRep_Builder.hxx>
#include <BRep_Tool.hxx>
#include <Bnd_Box.hxx>
#include <Precision.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Compound.hxx>

#include <algorithm>
#include <cmath>

#include "cad/occt_shape.h"
#include "cadclip/core/log.h"

namespace cadclip::cad {
namespace {
// Sewing tolerance for loose faces, relative to the model's diagonal.
constexpr double kSewingRelativeTolerance = 1e-5;
}  // namespace

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
    // Rule 2: no solid, so every face is the model. Loose faces (IGES surface
    // models: every face has its own edges) are sewn first, as CAD importers
    // do, so that neighbouring faces share edges and the graph has adjacency.
    TopTools_IndexedMapOfShape shells, shell_faces;
    TopExp::MapShapes(shape, TopAbs_SHELL, shells);
    for (int i = 1; i <= shells.Extent(); ++i)
      TopExp::MapShapes(shells(i), TopAbs_FACE, shell_faces);
    TopoDS_Shape kept = shape;
    out.kept = "shells";
    if (shell_faces.Extent() < faces.Extent()) {
      out.kept = "faces";
      Bnd_Box box;
      BRepBndLib::Add(shape, box);
      const double diagonal = box.IsVoid() ? 0 : std::sqrt(box.SquareExtent());
      BRepBuilderAPI_Sewing sewing(
          /*tolerance=*/std::max(kSewingRelativeTolerance * diagonal, Precision::Confusion()));
      for (int i = 1; i <= faces.Extent(); ++i) sewing.Add(faces(i));
      sewing.Perform();
      if (!sewing.SewedShape().IsNull()) kept = sewing.SewedShape();
      TopTools_IndexedMapOfShape sewn_faces;
      TopExp::MapShapes(kept, TopAbs_FACE, sewn_faces);
      if (sewn_faces.Extent() == 0) return Status::failure("sewing the loose faces left no face");
      log::debug("ingest", "sewed {} loose face(s) into {} face(s)", faces.Extent(),
                 sewn_faces.Extent());
    }
    TopTools_IndexedMapOfShape kept_faces, kept_shells, kept_shell_faces;
    TopExp::MapShapes(kept, TopAbs_FACE, kept_faces);
    TopExp::MapShapes(kept, TopAbs_SHELL, kept_shells);
    bool all_shells_closed = true;
    for (int i = 1; i <= kept_shells.Extent(); ++i) {
      TopExp::MapShapes(kept_shells(i), TopAbs_FACE, kept_shell_faces);
      all_shells_closed = all_shells_closed && BRep_Tool::IsClosed(kept_shells(i));
    }
    for (int i = 1; i <= kept_faces.Extent(); ++i) builder.Add(compound, kept_faces(i));
    out.closed = kept_shells.Extent() > 0 && all_shells_closed &&
                 kept_shell_faces.Extent() == kept_faces.Extent();
  }
  out.shape = compound;
  return out;
}

}  // namespace cadclip::cad
