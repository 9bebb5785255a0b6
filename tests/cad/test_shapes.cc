#include "test_shapes.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <BRepAlgoAPI_Cut.hxx>
#include <BRepBuilderAPI_Transform.hxx>
#include <BRepFilletAPI_MakeFillet.hxx>
#include <BRepPrimAPI_MakeBox.hxx>
#include <BRepPrimAPI_MakeCylinder.hxx>
#include <BRep_Tool.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopoDS.hxx>
#include <gp_Ax2.hxx>
#include <gp_Trsf.hxx>

#include <string>

namespace cadclip::cad::testing {

std::filesystem::path scratch_folder() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name =
      std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid());
  const auto folder = std::filesystem::temp_directory_path() / "cadclip_cad_test" / name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

TopoDS_Shape box(double a, double b, double c) { return BRepPrimAPI_MakeBox(a, b, c).Shape(); }

TopoDS_Shape plate_with_hole(double a, double b, double c, double r, double depth) {
  const TopoDS_Shape plate = box(a, b, c);
  // Past the top face (and the bottom one when through) so the cut is clean.
  const double bottom = depth > 0 ? c - depth : -1;
  const TopoDS_Shape pin =
      BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(a / 2, b / 2, bottom), gp_Dir(0, 0, 1)), r,
                               c + 1 - bottom)
          .Shape();
  return BRepAlgoAPI_Cut(plate, pin).Shape();
}

TopoDS_Shape filleted_box(double a, double b, double c, double r) {
  const TopoDS_Shape solid = box(a, b, c);
  BRepFilletAPI_MakeFillet fillet(solid);
  for (TopExp_Explorer it(solid, TopAbs_EDGE); it.More(); it.Next()) {
    const TopoDS_Edge& edge = TopoDS::Edge(it.Current());
    TopoDS_Vertex first, last;
    TopExp::Vertices(edge, first, last);
    const gp_Pnt p = BRep_Tool::Pnt(first), q = BRep_Tool::Pnt(last);
    if (std::abs(p.X() - a) < 1e-9 && std::abs(q.X() - a) < 1e-9 && std::abs(p.Y() - b) < 1e-9 &&
        std::abs(q.Y() - b) < 1e-9)
      fillet.Add(r, edge);
  }
  fillet.Build();
  EXPECT_TRUE(fillet.IsDone());
  return fillet.Shape();
}

TopoDS_Shape rounded_box(double a, double b, double c, double r) {
  const TopoDS_Shape solid = box(a, b, c);
  BRepFilletAPI_MakeFillet fillet(solid);
  for (TopExp_Explorer it(solid, TopAbs_EDGE); it.More(); it.Next())
    fillet.Add(r, TopoDS::Edge(it.Current()));
  fillet.Build();
  EXPECT_TRUE(fillet.IsDone());
  return fillet.Shape();
}

TopoDS_Shape translated(const TopoDS_Shape& shape, double dx, double dy, double dz) {
  gp_Trsf move;
  move.SetTranslation(gp_Vec(dx, dy, dz));
  return BRepBuilderAPI_Transform(shape, move, /*copy=*/true).Shape();
}

TopoDS_Shape scaled(const TopoDS_Shape& shape, double factor) {
  gp_Trsf scale;
  scale.SetScale(gp_Pnt(0, 0, 0), factor);
  return BRepBuilderAPI_Transform(shape, scale, /*copy=*/true).Shape();
}

}  // namespace cadclip::cad::testing
