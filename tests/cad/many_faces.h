// Test and benchmark shape: one closed solid with exactly `faces` faces, a
// prism over a regular polygon of faces - 2 sides (each side a planar face,
// plus the two ends), the size of real purchased parts and beyond without a
// slow boolean. Directed edges: 6 (faces - 2).
#pragma once

#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakePolygon.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <TopoDS_Shape.hxx>
#include <gp_Pnt.hxx>
#include <gp_Vec.hxx>

#include <cmath>
#include <numbers>

namespace cadclip::cad::testing {

// Radius 50 mm, height 20 mm; faces >= 5.
inline TopoDS_Shape many_faced_prism(int faces) {
  const int sides = faces - 2;
  BRepBuilderAPI_MakePolygon polygon;
  for (int i = 0; i < sides; ++i) {
    const double angle = 2 * std::numbers::pi * i / sides;
    polygon.Add(gp_Pnt(50 * std::cos(angle), 50 * std::sin(angle), 0));
  }
  polygon.Close();
  const TopoDS_Shape base = BRepBuilderAPI_MakeFace(polygon.Wire(), /*OnlyPlane=*/true).Shape();
  return BRepPrimAPI_MakePrism(base, gp_Vec(0, 0, 20)).Shape();
}

}  // namespace cadclip::cad::testing
