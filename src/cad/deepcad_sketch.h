// Internal to the DeepCAD builder (deepcad.cc): the error it throws, the
// JSON it reads with the path of what failed, the sketch plane of a profile,
// and a sketch profile's planar face (deepcad_sketch.cc).
#pragma once

#include <TopoDS_Shape.hxx>
#include <gp_Dir.hxx>
#include <gp_Pnt.hxx>
#include <gp_Vec.hxx>
#include <gp_XY.hxx>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cadclip::cad::deepcad {

using Json = nlohmann::json;

// Thrown inside the builder only, for a malformed or unbuildable sequence;
// deepcad_to_shape turns it into a failed Result.
class SequenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `object[key]`, throwing SequenceError naming `where` when absent.
const Json& member(const Json& object, const char* key, const std::string& where);
// `object[key]` as a finite number or a string; SequenceError otherwise.
double number(const Json& object, const char* key, const std::string& where);
std::string text(const Json& object, const char* key, const std::string& where);
// value (in the file's unit) times `mm`, refused beyond any part's size.
double length_mm(double value, double mm, const std::string& where, const char* key);

// The sketch plane: sketch coordinates (x, y) map to origin + x·x_axis + y·y_axis.
struct Frame {
  gp_Pnt origin;
  gp_Dir x, y, normal;  // normal = x × y: sketch-counterclockwise is counterclockwise about it
  gp_Dir extrude;       // the transform's z_axis: the extrusion direction
  gp_Pnt place(const gp_XY& p) const {
    return origin.Translated(gp_Vec(x) * p.X() + gp_Vec(y) * p.Y());
  }
};
// A sketch's "transform" (origin and axes in the file's unit) as a Frame in mm.
Frame parse_frame(const Json& transform, const std::string& where, double mm);

// The planar face (or faces) of a profile; a null shape, with a warning, for
// a profile that encloses nothing once curves of zero size are dropped.
TopoDS_Shape make_profile_face(const Json& profile, const Frame& frame, const std::string& where,
                               double mm, std::vector<std::string>& warnings);

}  // namespace cadclip::cad::deepcad
