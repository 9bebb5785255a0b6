// Shapes and files the cad tests build for themselves.
#pragma once

#include <TopoDS_Shape.hxx>

#include <filesystem>

namespace cadclip::cad::testing {

// A fresh empty folder under the system temp folder, unique to this test.
std::filesystem::path scratch_folder();

// A box [0,a]x[0,b]x[0,c] in mm.
TopoDS_Shape box(double a, double b, double c);
// A plate [0,a]x[0,b]x[0,c] with a hole of radius r along z at its centre,
// drilled from the top face: through when depth is 0, else `depth` deep.
TopoDS_Shape plate_with_hole(double a, double b, double c, double r, double depth = 0);
// A box [0,a]x[0,b]x[0,c] with its edge at x=a, y=b (along z) rounded to radius r.
TopoDS_Shape filleted_box(double a, double b, double c, double r);
// A box [0,a]x[0,b]x[0,c] with all twelve edges rounded to radius r: the
// corners become spherical patches with a pole at one vertex, as fillets make them.
TopoDS_Shape rounded_box(double a, double b, double c, double r);
// `shape` moved by (dx, dy, dz) / scaled by `factor` about the origin (geometry copied).
TopoDS_Shape translated(const TopoDS_Shape& shape, double dx, double dy, double dz);
TopoDS_Shape scaled(const TopoDS_Shape& shape, double factor);

}  // namespace cadclip::cad::testing
