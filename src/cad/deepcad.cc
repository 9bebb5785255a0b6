// DeepCAD JSON construction sequences (the form of Text2CAD's models) to a
// solid: sketch profiles of lines, arcs and circles on the sketch plane,
// extruded one-sided, symmetric or two-sided, combined by NewBody, Join, Cut
// and Intersect. docs/INGEST.md gives the decisions; DeepCAD's cadlib is the
// reference for the format.
#include <BRepAlgoAPI_BooleanOperation.hxx>
#include <BRepAlgoAPI_Common.hxx>
#include <BRepAlgoAPI_Cut.hxx>
#include <BRepAlgoAPI_Fuse.hxx>
#include <BRepBndLib.hxx>
#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakeVertex.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepBuilderAPI_Transform.hxx>
#include <BRepCheck_Analyzer.hxx>
#include <BRepGProp.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <Bnd_Box.hxx>
#include <GC_MakeArcOfCircle.hxx>
#include <GProp_GProps.hxx>
#include <Geom_Circle.hxx>
#include <Geom_TrimmedCurve.hxx>
#include <ShapeUpgrade_UnifySameDomain.hxx>
#include <Standard_Failure.hxx>
#include <TopExp.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Vertex.hxx>
#include <TopoDS_Wire.hxx>
#include <gp_Ax2.hxx>
#include <gp_Ax3.hxx>
#include <gp_Circ.hxx>
#include <gp_Pln.hxx>
#include <gp_Trsf.hxx>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "cad/occt_shape.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace {

using Json = nlohmann::json;

// Thrown inside this file only, for a malformed or unbuildable sequence;
// deepcad_to_shape turns it into a failed Result.
class SequenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const Json& member(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object()) throw SequenceError(format("{} is not a JSON object", where));
  const auto found = object.find(key);
  if (found == object.end()) throw SequenceError(format("{} has no '{}'", where, key));
  return *found;
}

double number(const Json& object, const char* key, const std::string& where) {
  const Json& value = member(object, key, where);
  if (!value.is_number()) throw SequenceError(format("{}.{} is not a number", where, key));
  const double out = value.get<double>();
  if (!std::isfinite(out)) throw SequenceError(format("{}.{} is not finite", where, key));
  return out;
}

std::string text(const Json& object, const char* key, const std::string& where) {
  const Json& value = member(object, key, where);
  if (!value.is_string()) throw SequenceError(format("{}.{} is not a string", where, key));
  return value.get<std::string>();
}

gp_XYZ vector3(const Json& object, const char* key, const std::string& where) {
  const Json& value = member(object, key, where);
  const std::string inner = where + "." + key;
  return gp_XYZ(number(value, "x", inner), number(value, "y", inner), number(value, "z", inner));
}

// Lengths beyond this (1,000 km) are no part's: a wrong unit or a broken
// file, refused here before OCCT meets them in an overflowing prism or
// direction ("gp_Dir() - input vector has zero norm").
constexpr double kLargestLengthMm = 1e9;

double length_mm(double value, double mm, const std::string& where, const char* key) {
  const double out = value * mm;
  if (!(std::abs(out) <= kLargestLengthMm))
    throw SequenceError(
        format("{}.{} is {} mm, beyond any part (limit {} mm); check the file and "
               "--assume-unit",
               where, key, out, kLargestLengthMm));
  return out;
}

gp_XY point2(const Json& object, const char* key, const std::string& where, double mm) {
  const gp_XYZ p = vector3(object, key, where);
  return gp_XY(length_mm(p.X(), mm, where, key), length_mm(p.Y(), mm, where, key));
}

gp_XY rotated(const gp_XY& v, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  return gp_XY(c * v.X() - s * v.Y(), s * v.X() + c * v.Y());
}

// The sketch plane: sketch coordinates (x, y) map to origin + x·x_axis + y·y_axis.
struct Frame {
  gp_Pnt origin;
  gp_Dir x, y, normal;  // normal = x × y: sketch-counterclockwise is counterclockwise about it
  gp_Dir extrude;       // the transform's z_axis: the extrusion direction
  gp_Pnt place(const gp_XY& p) const {
    return origin.Translated(gp_Vec(x) * p.X() + gp_Vec(y) * p.Y());
  }
};

Frame parse_frame(const Json& transform, const std::string& where, double mm) {
  const gp_XYZ origin = vector3(transform, "origin", where);
  const gp_XYZ x = vector3(transform, "x_axis", where);
  const gp_XYZ y = vector3(transform, "y_axis", where);
  const gp_XYZ z = vector3(transform, "z_axis", where);
  if (x.Modulus() < 1e-9 || y.Modulus() < 1e-9 || z.Modulus() < 1e-9 ||
      x.Crossed(y).Modulus() < 1e-9 * x.Modulus() * y.Modulus())
    throw SequenceError(format("{}: the sketch axes are zero or parallel", where));
  Frame frame;
  frame.origin =
      gp_Pnt(length_mm(origin.X(), mm, where, "origin"), length_mm(origin.Y(), mm, where, "origin"),
             length_mm(origin.Z(), mm, where, "origin"));
  frame.x = gp_Dir(x);
  frame.y = gp_Dir(y);
  frame.normal = gp_Dir(x.Crossed(y));
  frame.extrude = gp_Dir(z);
  return frame;
}

// One sketch curve in sketch coordinates (millimetres).
struct Curve {
  enum Kind { kLine, kArc, kCircle } kind = kLine;
  gp_XY start, end, mid, center;  // mid: a point halfway along an arc
  double radius = 0;
  void flip() { std::swap(start, end); }
};

Curve parse_curve(const Json& json, const std::string& where, double mm, double tolerance) {
  const std::string type = text(json, "type", where);
  Curve curve;
  if (type == "Line3D") {
    curve.kind = Curve::kLine;
    curve.start = point2(json, "start_point", where, mm);
    curve.end = point2(json, "end_point", where, mm);
    if ((curve.end - curve.start).Modulus() <= tolerance)
      throw SequenceError(format("{}: a line of zero length", where));
  } else if (type == "Circle3D") {
    curve.kind = Curve::kCircle;
    curve.center = point2(json, "center_point", where, mm);
    curve.radius = length_mm(number(json, "radius", where), mm, where, "radius");
    if (!(curve.radius > tolerance)) throw SequenceError(format("{}: a circle of radius 0", where));
  } else if (type == "Arc3D") {
    curve.kind = Curve::kArc;
    curve.start = point2(json, "start_point", where, mm);
    curve.end = point2(json, "end_point", where, mm);
    curve.center = point2(json, "center_point", where, mm);
    curve.radius = length_mm(number(json, "radius", where), mm, where, "radius");
    if (!(curve.radius > tolerance)) throw SequenceError(format("{}: an arc of radius 0", where));
    // DeepCAD's rule (cadlib Arc.get_mid_point): the arc passes through the
    // reference vector turned counterclockwise, in the sketch's own frame, by
    // the mean of its two angles. Neither `normal` (stored in sketch or in
    // world coordinates, depending on the file) nor which end is called the
    // start decides the side: a half circle lands on its end point either way.
    const gp_XYZ reference = vector3(json, "reference_vector", where);
    const gp_XY direction(reference.X(), reference.Y());
    if (direction.Modulus() < 1e-12)
      throw SequenceError(
          format("{}: the arc's reference_vector is zero in the sketch plane", where));
    const double mid_angle =
        (number(json, "start_angle", where) + number(json, "end_angle", where)) / 2;
    curve.mid = curve.center + rotated(direction / direction.Modulus(), mid_angle) * curve.radius;
    if ((curve.end - curve.start).Modulus() <= tolerance)
      throw SequenceError(format("{}: an arc whose start and end points coincide", where));
    const double apart = std::max(1e-6 * curve.radius, tolerance);
    if ((curve.mid - curve.start).Modulus() <= apart || (curve.mid - curve.end).Modulus() <= apart)
      throw SequenceError(
          format("{}: the arc's angles put its midpoint on an end point (a zero sweep)", where));
  } else {
    throw SequenceError(
        format("{}: unsupported curve type '{}' (Line3D, Arc3D, Circle3D)", where, type));
  }
  return curve;
}

// Reorders and flips a loop's curves into a closed chain: DeepCAD stores them
// in loop order but not in a consistent direction, and we do not rely on the
// order either.
std::vector<Curve> chain(std::vector<Curve> curves, double tolerance, const std::string& where) {
  if (curves.empty()) throw SequenceError(format("{}: an empty loop", where));
  if (curves.size() == 1) {
    if (curves[0].kind == Curve::kCircle) return curves;
    throw SequenceError(format("{}: a loop of one open curve", where));
  }
  for (const Curve& curve : curves)
    if (curve.kind == Curve::kCircle)
      throw SequenceError(format("{}: a circle inside a loop of several curves", where));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<Curve> out{curves[0]};
    if (attempt == 1) out[0].flip();
    std::vector<bool> used(curves.size(), false);
    used[0] = true;
    bool open = false;
    for (size_t step = 1; step < curves.size() && !open; ++step) {
      const gp_XY tip = out.back().end;
      double best = 1e300;
      size_t best_index = 0;
      bool best_flip = false;
      for (size_t i = 0; i < curves.size(); ++i) {
        if (used[i]) continue;
        const double to_start = (curves[i].start - tip).Modulus();
        const double to_end = (curves[i].end - tip).Modulus();
        if (to_start < best) best = to_start, best_index = i, best_flip = false;
        if (to_end < best) best = to_end, best_index = i, best_flip = true;
      }
      if (best > tolerance) {
        open = true;
        break;
      }
      used[best_index] = true;
      out.push_back(curves[best_index]);
      if (best_flip) out.back().flip();
    }
    if (!open && (out.back().end - out.front().start).Modulus() <= tolerance) return out;
  }
  throw SequenceError(format("{}: the loop's curves do not join into a closed chain", where));
}

// A loop of arcs that all lie on one circle is that circle: files store full
// circles as two (or more) arcs, and OCCT 7.6's ShapeUpgrade_UnifySameDomain
// hangs or leaves an invalid solid on some walls split that way
// (tests/fixtures/deepcad/parity_cases/split_circle_*), while one circle edge
// gives the same solid with one seam.
std::vector<Curve> merged_circle(std::vector<Curve> loop, double tolerance) {
  if (loop.size() < 2) return loop;
  // Each arc's signed sweep through its midpoint: the arcs make one circle
  // only when they all turn the same way and go round once (two half arcs
  // bulging to one side enclose nothing, and stay arcs).
  auto turn = [](const gp_XY& from, const gp_XY& to) {
    return std::atan2(from.Crossed(to), from.Dot(to));
  };
  double total = 0;
  int positive = 0, negative = 0;
  for (const Curve& curve : loop) {
    if (curve.kind != Curve::kArc || (curve.center - loop[0].center).Modulus() > tolerance ||
        std::abs(curve.radius - loop[0].radius) > tolerance)
      return loop;
    const gp_XY a = curve.start - curve.center, m = curve.mid - curve.center,
                b = curve.end - curve.center;
    const double sweep = turn(a, m) + turn(m, b);
    total += sweep;
    (sweep > 0 ? positive : negative) += 1;
  }
  if ((positive > 0 && negative > 0) || std::abs(std::abs(total) - 2 * M_PI) > 1e-6) return loop;
  Curve circle;
  circle.kind = Curve::kCircle;
  circle.center = loop[0].center;
  circle.radius = loop[0].radius;
  return {circle};
}

// Twice the signed area of a chained loop in sketch coordinates (arcs through
// their midpoints): positive when counterclockwise.
double signed_area(const std::vector<Curve>& loop) {
  if (loop.size() == 1) return 2 * M_PI * loop[0].radius * loop[0].radius;
  std::vector<gp_XY> polygon;
  for (const Curve& curve : loop) {
    polygon.push_back(curve.start);
    if (curve.kind == Curve::kArc) polygon.push_back(curve.mid);
  }
  double twice = 0;
  for (size_t i = 0; i < polygon.size(); ++i) {
    const gp_XY& a = polygon[i];
    const gp_XY& b = polygon[(i + 1) % polygon.size()];
    twice += a.X() * b.Y() - b.X() * a.Y();
  }
  return twice;
}

TopoDS_Wire make_wire(const std::vector<Curve>& loop, const Frame& frame,
                      const std::string& where) {
  BRepBuilderAPI_MakeWire wire;
  if (loop.size() == 1) {
    const gp_Circ circle(gp_Ax2(frame.place(loop[0].center), frame.normal, frame.x),
                         loop[0].radius);
    BRepBuilderAPI_MakeEdge edge(circle);
    if (!edge.IsDone()) throw SequenceError(format("{}: OCCT could not make the circle", where));
    wire.Add(edge.Edge());
  } else {
    // Shared vertices at the chain's nodes, so the wire closes exactly.
    std::vector<TopoDS_Vertex> nodes;
    for (const Curve& curve : loop)
      nodes.push_back(BRepBuilderAPI_MakeVertex(frame.place(curve.start)).Vertex());
    for (size_t i = 0; i < loop.size(); ++i) {
      const TopoDS_Vertex& a = nodes[i];
      const TopoDS_Vertex& b = nodes[(i + 1) % nodes.size()];
      TopoDS_Edge edge;
      if (loop[i].kind == Curve::kLine) {
        BRepBuilderAPI_MakeEdge make(a, b);
        if (!make.IsDone()) throw SequenceError(format("{}: OCCT could not make a line", where));
        edge = make.Edge();
      } else {
        GC_MakeArcOfCircle arc(frame.place(loop[i].start), frame.place(loop[i].mid),
                               frame.place(loop[(i + 1) % loop.size()].start));
        if (!arc.IsDone()) throw SequenceError(format("{}: OCCT could not make an arc", where));
        BRepBuilderAPI_MakeEdge make(arc.Value(), a, b);
        if (!make.IsDone()) throw SequenceError(format("{}: OCCT could not make an arc", where));
        edge = make.Edge();
      }
      wire.Add(edge);
      if (!wire.IsDone()) throw SequenceError(format("{}: the loop's edges do not connect", where));
    }
  }
  if (!wire.IsDone()) throw SequenceError(format("{}: OCCT could not make the loop", where));
  return wire.Wire();
}

double profile_size(const Json& loops, const std::string& where, double mm) {
  // The largest coordinate magnitude of the profile: the scale of its tolerance.
  double size = 0;
  for (const Json& loop : loops) {
    for (const Json& curve : member(loop, "profile_curves", where)) {
      for (const char* key : {"start_point", "end_point", "center_point"}) {
        if (curve.contains(key)) {
          const gp_XY p = point2(curve, key, where, mm);
          size = std::max({size, std::abs(p.X()), std::abs(p.Y())});
        }
      }
      if (curve.contains("radius")) size = std::max(size, number(curve, "radius", where) * mm);
    }
  }
  return size;
}

TopoDS_Face make_profile_face(const Json& profile, const Frame& frame, const std::string& where,
                              double mm) {
  const Json& loops_json = member(profile, "loops", where);
  if (!loops_json.is_array() || loops_json.empty())
    throw SequenceError(format("{}: a profile with no loops", where));
  const double tolerance = 1e-6 * profile_size(loops_json, where, mm) + 1e-9;

  struct Loop {
    std::vector<Curve> curves;
    double area = 0;
    bool is_outer = false;
  };
  std::vector<Loop> loops;
  for (size_t i = 0; i < loops_json.size(); ++i) {
    const std::string loop_where = format("{}.loops[{}]", where, i);
    std::vector<Curve> curves;
    const Json& curves_json = member(loops_json[i], "profile_curves", loop_where);
    if (!curves_json.is_array()) throw SequenceError(format("{}: curves not a list", loop_where));
    for (size_t c = 0; c < curves_json.size(); ++c)
      curves.push_back(parse_curve(curves_json[c], format("{}.profile_curves[{}]", loop_where, c),
                                   mm, tolerance));
    Loop loop;
    loop.curves = merged_circle(chain(std::move(curves), tolerance, loop_where), tolerance);
    loop.area = signed_area(loop.curves);
    loop.is_outer = loops_json[i].value("is_outer", false);
    loops.push_back(std::move(loop));
  }
  // The outer loop: the one flagged is_outer, or the largest when the flags
  // do not single one out.
  size_t outer = 0;
  const auto flagged =
      std::count_if(loops.begin(), loops.end(), [](const Loop& l) { return l.is_outer; });
  for (size_t i = 0; i < loops.size(); ++i) {
    if (flagged == 1 ? loops[i].is_outer : std::abs(loops[i].area) > std::abs(loops[outer].area))
      outer = i;
  }
  const gp_Pln plane(gp_Ax3(frame.origin, frame.normal, frame.x));
  TopoDS_Wire outer_wire = make_wire(loops[outer].curves, frame, where);
  if (loops[outer].area < 0) outer_wire.Reverse();  // counterclockwise about the plane normal
  BRepBuilderAPI_MakeFace face(plane, outer_wire, /*Inside=*/true);
  if (!face.IsDone())
    throw SequenceError(format("{}: OCCT could not make the profile face", where));
  for (size_t i = 0; i < loops.size(); ++i) {
    if (i == outer) continue;
    TopoDS_Wire hole = make_wire(loops[i].curves, frame, where);
    if (loops[i].area > 0) hole.Reverse();  // holes run clockwise
    face.Add(hole);
  }
  if (!face.IsDone()) throw SequenceError(format("{}: OCCT could not add the holes", where));
  BRepCheck_Analyzer check(face.Face());
  if (!check.IsValid()) throw SequenceError(format("{}: the profile face is invalid", where));
  return face.Face();
}

// The extrusion range [low, high] along the extrude direction, in mm.
std::pair<double, double> extent_range(const Json& extrude, const std::string& where, double mm,
                                       const IngestOptions& options) {
  const std::string type = text(extrude, "extent_type", where);
  const double one = length_mm(
      number(member(member(extrude, "extent_one", where), "distance", where), "value", where), mm,
      where, "extent_one");
  if (type == "OneSideFeatureExtentType") return {std::min(0.0, one), std::max(0.0, one)};
  if (type == "SymmetricFeatureExtentType") {
    const double side = options.deepcad_symmetric_full ? std::abs(one) : std::abs(one) / 2;
    return {-side, side};
  }
  if (type == "TwoSidesFeatureExtentType") {
    const double two = -length_mm(
        number(member(member(extrude, "extent_two", where), "distance", where), "value", where), mm,
        where, "extent_two");
    // DeepCAD fuses a prism to +one with a prism to -two: their union.
    return {std::min({0.0, one, two}), std::max({0.0, one, two})};
  }
  throw SequenceError(format("{}: unsupported extent type '{}'", where, type));
}

TopoDS_Shape extrude_profile(const TopoDS_Face& face, const Frame& frame,
                             std::pair<double, double> range, const std::string& where) {
  const auto [low, high] = range;
  if (high - low <= 1e-9 * std::max(1.0, std::abs(high) + std::abs(low)))
    throw SequenceError(format("{}: the extrude has zero distance", where));
  gp_Trsf shift;
  shift.SetTranslation(gp_Vec(frame.extrude) * low);
  BRepBuilderAPI_Transform moved(face, shift, /*copy=*/true);
  if (!moved.IsDone()) throw SequenceError(format("{}: OCCT could not place the profile", where));
  BRepPrimAPI_MakePrism prism(moved.Shape(), gp_Vec(frame.extrude) * (high - low));
  if (!prism.IsDone() || prism.Shape().IsNull())
    throw SequenceError(format("{}: OCCT could not extrude the profile", where));
  TopoDS_Shape body = prism.Shape();
  GProp_GProps props;
  BRepGProp::VolumeProperties(body, props);
  // A profile whose normal points against the extrusion gives an inside-out solid.
  if (props.Mass() < 0) body.Reverse();
  return body;
}

TopoDS_Shape boolean(const std::string& operation, const TopoDS_Shape& body,
                     const TopoDS_Shape& tool, const std::string& where) {
  std::unique_ptr<BRepAlgoAPI_BooleanOperation> op;
  if (operation == "cut") {
    op = std::make_unique<BRepAlgoAPI_Cut>(body, tool);
  } else if (operation == "intersect") {
    op = std::make_unique<BRepAlgoAPI_Common>(body, tool);
  } else {
    op = std::make_unique<BRepAlgoAPI_Fuse>(body, tool);
  }
  if (!op->IsDone() || op->HasErrors() || op->Shape().IsNull())
    throw SequenceError(format("{}: the {} boolean failed in OCCT", where, operation));
  return op->Shape();
}

TopoDS_Shape build(const Json& doc, const std::string& name, const IngestOptions& options,
                   double mm, std::vector<std::string>& warnings) {
  const Json& entities = member(doc, "entities", name);
  const Json& sequence = member(doc, "sequence", name);
  if (!sequence.is_array()) throw SequenceError(format("{}: 'sequence' is not a list", name));
  std::vector<const Json*> steps;
  for (const Json& step : sequence) steps.push_back(&step);
  std::stable_sort(steps.begin(), steps.end(), [](const Json* a, const Json* b) {
    return a->value("index", 0) < b->value("index", 0);
  });

  TopoDS_Shape body;
  int extrudes = 0, skipped = 0;
  for (const Json* step : steps) {
    const std::string type = text(*step, "type", name + ".sequence[]");
    if (type == "Sketch") continue;  // built when an extrude uses it
    if (type != "ExtrudeFeature")
      throw SequenceError(
          format("{}: unsupported feature '{}' (only Sketch and ExtrudeFeature)", name, type));
    const std::string id = text(*step, "entity", name + ".sequence[]");
    const std::string where = format("{}: extrude '{}'", name, id);
    const Json& extrude = member(entities, id.c_str(), name + ".entities");
    const std::string start = text(member(extrude, "start_extent", where), "type", where);
    if (start != "ProfilePlaneStartDefinition")
      throw SequenceError(format("{}: unsupported start extent '{}'", where, start));
    const std::string operation_name = text(extrude, "operation", where);
    std::string operation;
    if (operation_name == "NewBodyFeatureOperation" || operation_name == "JoinFeatureOperation")
      operation = "fuse";
    else if (operation_name == "CutFeatureOperation")
      operation = "cut";
    else if (operation_name == "IntersectFeatureOperation")
      operation = "intersect";
    else
      throw SequenceError(format("{}: unsupported operation '{}'", where, operation_name));
    const auto range = extent_range(extrude, where, mm, options);

    const Json& profiles = member(extrude, "profiles", where);
    if (!profiles.is_array()) throw SequenceError(format("{}: 'profiles' is not a list", where));
    if (profiles.empty()) {
      // Both reference builders (DeepCAD's cadlib, Text2CAD's CadSeqProc)
      // skip such a feature and build the rest, which then matches the
      // file's stored bounding box.
      warnings.push_back(format("{}: skipped an extrude with an empty profile list", where));
      ++skipped;
      continue;
    }
    // A multi-profile extrude is one extrude per profile; NewBody's extra
    // profiles join (DeepCAD's split), Cut and Intersect repeat.
    for (size_t p = 0; p < profiles.size(); ++p) {
      const std::string sketch_id = text(profiles[p], "sketch", where);
      const std::string profile_id = text(profiles[p], "profile", where);
      const std::string profile_where =
          format("{} profile '{}' of sketch '{}'", where, profile_id, sketch_id);
      const Json& sketch = member(entities, sketch_id.c_str(), name + ".entities");
      const Frame frame =
          parse_frame(member(sketch, "transform", profile_where), profile_where, mm);
      const Json& profile =
          member(member(sketch, "profiles", profile_where), profile_id.c_str(), profile_where);
      const TopoDS_Face face = make_profile_face(profile, frame, profile_where, mm);
      const TopoDS_Shape tool = extrude_profile(face, frame, range, profile_where);
      if (body.IsNull()) {
        if (operation != "fuse")
          throw SequenceError(format("{}: the first extrude is a {} with nothing to {}", where,
                                     operation_name, operation));
        body = tool;
      } else {
        body = boolean(operation, body, tool, profile_where);
      }
    }
    ++extrudes;
  }
  if (extrudes == 0 && skipped > 0)
    throw SequenceError(
        format("{}: every extrude of the sequence has an empty profile list, so no solid", name));
  if (extrudes == 0 || body.IsNull())
    throw SequenceError(format("{}: the sequence has no extrude, so no solid", name));

  // Booleans leave coplanar faces split where bodies met; a CAD system would
  // show one face.
  ShapeUpgrade_UnifySameDomain unify(body, /*UnifyEdges=*/true, /*UnifyFaces=*/true,
                                     /*ConcatBSplines=*/false);
  unify.Build();
  if (!unify.Shape().IsNull()) body = unify.Shape();

  TopTools_IndexedMapOfShape solids;
  TopExp::MapShapes(body, TopAbs_SOLID, solids);
  if (solids.Extent() == 0) throw SequenceError(format("{}: the result holds no solid", name));
  BRepCheck_Analyzer check(body);
  if (!check.IsValid())
    throw SequenceError(format("{}: the result is not a valid solid (BRepCheck)", name));
  GProp_GProps props;
  BRepGProp::VolumeProperties(body, props);
  Bnd_Box box;
  BRepBndLib::Add(body, box);
  const double diagonal = box.IsVoid() ? 0 : std::sqrt(box.SquareExtent());
  if (!(props.Mass() > 1e-9 * diagonal * diagonal * diagonal))
    throw SequenceError(format("{}: the result has zero volume ({} mm^3)", name, props.Mass()));
  return body;
}

}  // namespace

Result<TopoDS_Shape> deepcad_to_shape(std::string_view json_text, std::string_view name,
                                      const IngestOptions& options,
                                      std::vector<std::string>* warnings) {
  const std::string label(name);
  Result<double> mm = millimetres_per_unit(options.assume_unit);
  if (!mm) return mm.status();
  const Json doc = Json::parse(json_text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::failure(format("{} is not valid JSON (a DeepCAD sequence is JSON)", label));
  try {
    std::vector<std::string> noted;
    TopoDS_Shape shape = build(doc, label, options, mm.value(), noted);
    if (warnings != nullptr) warnings->insert(warnings->end(), noted.begin(), noted.end());
    return shape;
  } catch (const SequenceError& error) {
    return Status::failure(error.what());
  } catch (const Json::exception& error) {
    return Status::failure(format("{}: malformed DeepCAD JSON: {}", label, error.what()));
  } catch (const Standard_Failure& failure) {
    return Status::failure(
        format("{}: OCCT failed building the sequence: {}", label, failure.GetMessageString()));
  }
}

}  // namespace cadclip::cad
