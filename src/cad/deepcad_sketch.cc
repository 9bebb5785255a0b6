// DeepCAD sketches: reading the JSON with the path of what failed, sketch
// planes, and a profile's loops of lines, arcs and circles chained, healed
// and made into a planar face (docs/INGEST.md gives the decisions).
#include "cad/deepcad_sketch.h"

#include <BRepAlgoAPI_Cut.hxx>
#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakeVertex.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepCheck_Analyzer.hxx>
#include <BRepGProp.hxx>
#include <BRepTools.hxx>
#include <BRep_Builder.hxx>
#include <GC_MakeArcOfCircle.hxx>
#include <GProp_GProps.hxx>
#include <Geom_Circle.hxx>
#include <Geom_TrimmedCurve.hxx>
#include <ShapeFix_Face.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_ListOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Compound.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Vertex.hxx>
#include <TopoDS_Wire.hxx>
#include <gp_Ax2.hxx>
#include <gp_Ax3.hxx>
#include <gp_Circ.hxx>
#include <gp_Pln.hxx>
#include <gp_XYZ.hxx>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cadclip/core/format.h"

namespace cadclip::cad::deepcad {
namespace {

// Lengths beyond this (1,000 km) are no part's: a wrong unit or a broken
// file, refused here before OCCT meets them in an overflowing prism or
// direction ("gp_Dir() - input vector has zero norm").
constexpr double kLargestLengthMm = 1e9;

gp_XYZ vector3(const Json& object, const char* key, const std::string& where) {
  const Json& value = member(object, key, where);
  const std::string inner = where + "." + key;
  return gp_XYZ(number(value, "x", inner), number(value, "y", inner), number(value, "z", inner));
}

gp_XY point2(const Json& object, const char* key, const std::string& where, double mm) {
  const gp_XYZ p = vector3(object, key, where);
  return gp_XY(length_mm(p.X(), mm, where, key), length_mm(p.Y(), mm, where, key));
}

gp_XY rotated(const gp_XY& v, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  return gp_XY(c * v.X() - s * v.Y(), s * v.X() + c * v.Y());
}

// One sketch curve in sketch coordinates (millimetres).
struct Curve {
  enum Kind { kLine, kArc, kCircle } kind = kLine;
  gp_XY start, end, mid, center;  // mid: a point halfway along an arc
  double radius = 0;
  void flip() { std::swap(start, end); }
};

std::string point_text(const gp_XY& p) { return format("({}, {}) mm", p.X(), p.Y()); }

// A curve of zero size (a line whose ends coincide, a circle or an arc of
// radius 0 whose ends coincide) bounds nothing: parse_curve returns no curve
// and notes a warning, and the loop goes on without it, as ShapeFix_Wire's
// small-edge fix does. 6-bit quantisation (SkexGen's models) collapses short
// segments and small circles onto one grid point. A curve that contradicts
// itself (an arc of radius 0 between distinct ends) still fails.
std::optional<Curve> parse_curve(const Json& json, const std::string& where, double mm,
                                 double tolerance, std::vector<std::string>& warnings) {
  const std::string type = text(json, "type", where);
  Curve curve;
  if (type == "Line3D") {
    curve.kind = Curve::kLine;
    curve.start = point2(json, "start_point", where, mm);
    curve.end = point2(json, "end_point", where, mm);
    if ((curve.end - curve.start).Modulus() <= tolerance) {
      warnings.push_back(format("{}: dropped a line of zero length (both ends at {})", where,
                                point_text(curve.start)));
      return std::nullopt;
    }
  } else if (type == "Circle3D") {
    curve.kind = Curve::kCircle;
    curve.center = point2(json, "center_point", where, mm);
    curve.radius = length_mm(number(json, "radius", where), mm, where, "radius");
    if (curve.radius < -tolerance)
      throw SequenceError(format("{}: a circle of negative radius {} mm", where, curve.radius));
    if (curve.radius <= tolerance) {
      warnings.push_back(
          format("{}: dropped a circle of radius 0 (centre {})", where, point_text(curve.center)));
      return std::nullopt;
    }
  } else if (type == "Arc3D") {
    curve.kind = Curve::kArc;
    curve.start = point2(json, "start_point", where, mm);
    curve.end = point2(json, "end_point", where, mm);
    const double start_angle = number(json, "start_angle", where);
    const double end_angle = number(json, "end_angle", where);
    const double raw_radius = number(json, "radius", where) * mm;
    const double chord = (curve.end - curve.start).Modulus();
    // SkexGen's conversion stores a straight segment as an arc of zero sweep
    // (angles equal to double precision) with its centre near infinity (a
    // radius of 1e13 m). Its sagitta (chord^2 / 8r) is far below the
    // tolerance, so it is the line between its ends; any other arc beyond the
    // length limit fails there.
    if (!(std::abs(raw_radius) <= kLargestLengthMm) && std::abs(end_angle - start_angle) <= 1e-9 &&
        chord * chord / (8 * std::abs(raw_radius)) <= tolerance) {
      warnings.push_back(format(
          "{}: an arc of radius {} mm and sweep {} rad is straight within {} mm; built as the "
          "line between its ends",
          where, raw_radius, end_angle - start_angle, tolerance));
      curve.kind = Curve::kLine;
      if (chord <= tolerance) {
        warnings.push_back(format("{}: dropped a line of zero length (both ends at {})", where,
                                  point_text(curve.start)));
        return std::nullopt;
      }
      return curve;
    }
    curve.center = point2(json, "center_point", where, mm);
    curve.radius = length_mm(number(json, "radius", where), mm, where, "radius");
    if (!(curve.radius > tolerance)) {
      if (std::abs(curve.radius) <= tolerance && chord <= tolerance) {
        warnings.push_back(format("{}: dropped an arc of radius 0 (both ends at {})", where,
                                  point_text(curve.start)));
        return std::nullopt;
      }
      throw SequenceError(format("{}: an arc of radius {} mm between distinct ends {} and {}",
                                 where, curve.radius, point_text(curve.start),
                                 point_text(curve.end)));
    }
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
    const double mid_angle = (start_angle + end_angle) / 2;
    curve.mid = curve.center + rotated(direction / direction.Modulus(), mid_angle) * curve.radius;
    if (chord <= tolerance)
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

// Loop ends farther apart than the matching tolerance but within this share
// of the profile's size are a gap to close, not an open loop: far below 6-bit
// quantisation's grid step (1/64 of the range), so never a drawn feature.
constexpr double kGapRelative = 1e-3;

// Reorders and flips curves into a closed chain whose joints lie within
// `tolerance`; nothing when they do not close. `gap` receives the widest
// joint, `broken` where the chain stopped when it did not close.
std::optional<std::vector<Curve>> try_chain(const std::vector<Curve>& curves, double tolerance,
                                            double& gap, std::string& broken) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<Curve> out{curves[0]};
    if (attempt == 1) out[0].flip();
    std::vector<bool> used(curves.size(), false);
    used[0] = true;
    double widest = 0;
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
        broken = format("no curve continues it at {} (the nearest end is {} mm away)",
                        point_text(tip), best);
        break;
      }
      widest = std::max(widest, best);
      used[best_index] = true;
      out.push_back(curves[best_index]);
      if (best_flip) out.back().flip();
    }
    if (open) continue;
    const double closing = (out.back().end - out.front().start).Modulus();
    if (closing <= tolerance) {
      gap = std::max(widest, closing);
      return out;
    }
    broken = format("its last end {} is {} mm from its first start {}", point_text(out.back().end),
                    closing, point_text(out.front().start));
  }
  return std::nullopt;
}

// Reorders and flips a loop's curves into a closed chain: DeepCAD stores them
// in loop order but not in a consistent direction, and we do not rely on the
// order either. Joints within `tolerance` are exact; a loop that closes only
// with gaps up to `gap_limit` is closed with a warning (the wire's shared
// vertices sit at each curve's start, so the gap disappears).
std::vector<Curve> chain(std::vector<Curve> curves, double tolerance, double gap_limit,
                         const std::string& where, std::vector<std::string>& warnings) {
  if (curves.empty()) throw SequenceError(format("{}: an empty loop", where));
  if (curves.size() == 1) {
    if (curves[0].kind == Curve::kCircle) return curves;
    throw SequenceError(format("{}: a loop of one open curve", where));
  }
  for (const Curve& curve : curves)
    if (curve.kind == Curve::kCircle)
      throw SequenceError(format("{}: a circle inside a loop of several curves", where));
  double gap = 0;
  std::string broken;
  if (auto exact = try_chain(curves, tolerance, gap, broken)) return *exact;
  if (auto closed = try_chain(curves, gap_limit, gap, broken)) {
    warnings.push_back(
        format("{}: closed gaps of up to {} mm between the loop's curves (limit {} mm)", where, gap,
               gap_limit));
    return *closed;
  }
  throw SequenceError(format(
      "{}: the loop's curves do not join into a closed chain: {}; gaps up to {} mm ({} of the "
      "profile's size) are closed, wider ones are an open loop to fix in the file",
      where, broken, gap_limit, kGapRelative));
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

// The largest distance between two points of a chained loop (its curves'
// starts and arc midpoints), or a circle's diameter: the scale against which a
// loop's area counts as none.
double loop_extent(const std::vector<Curve>& loop) {
  if (loop.size() == 1) return 2 * loop[0].radius;
  std::vector<gp_XY> points;
  for (const Curve& curve : loop) {
    points.push_back(curve.start);
    if (curve.kind == Curve::kArc) points.push_back(curve.mid);
  }
  double out = 0;
  for (const gp_XY& a : points)
    for (const gp_XY& b : points) out = std::max(out, (a - b).Modulus());
  return out;
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
  // The largest coordinate magnitude of the profile: the scale of its
  // tolerance. Values beyond any part (an almost straight arc's centre) are
  // left out: parse_curve heals or refuses them.
  double size = 0;
  auto add = [&size](double length) {
    if (std::abs(length) <= kLargestLengthMm) size = std::max(size, std::abs(length));
  };
  for (const Json& loop : loops) {
    for (const Json& curve : member(loop, "profile_curves", where)) {
      for (const char* key : {"start_point", "end_point", "center_point"}) {
        if (curve.contains(key)) {
          const gp_XYZ p = vector3(curve, key, where);
          add(p.X() * mm);
          add(p.Y() * mm);
        }
      }
      if (curve.contains("radius")) add(number(curve, "radius", where) * mm);
    }
  }
  return size;
}

// One loop of a profile, chained, with its signed area.
struct Loop {
  std::vector<Curve> curves;
  double area = 0;
  size_t index = 0;  // position in the file's loops, for messages
};

// The face of one loop alone, counterclockwise about the plane normal.
TopoDS_Face loop_face(const Loop& loop, const gp_Pln& plane, const Frame& frame,
                      const std::string& where) {
  const std::string loop_where = format("{}.loops[{}]", where, loop.index);
  TopoDS_Wire wire = make_wire(loop.curves, frame, loop_where);
  if (loop.area < 0) wire.Reverse();
  BRepBuilderAPI_MakeFace face(plane, wire, /*Inside=*/true);
  if (!face.IsDone() || !BRepCheck_Analyzer(face.Face()).IsValid())
    throw SequenceError(
        format("{}: the loop crosses itself (its face fails BRepCheck)", loop_where));
  return face.Face();
}

double face_area(const TopoDS_Shape& shape) {
  GProp_GProps props;
  BRepGProp::SurfaceProperties(shape, props);
  return std::abs(props.Mass());
}

// The region a profile means when its loops touch: quantisation moves a hole
// onto the outer loop or onto another hole, or onto the outer loop's very
// curves, and a face bounded by wires that meet fails BRepCheck. The region is
// still well defined, the outer loop's area less the holes', as a CAD system
// forms sketch regions: a planar boolean of the loops' own faces gives it.
// Returns the region's faces (a compound), or a null shape, with a warning,
// when the holes cover the outer loop.
TopoDS_Shape profile_region(const std::vector<Loop>& loops, size_t outer, const gp_Pln& plane,
                            const Frame& frame, const std::string& where,
                            std::vector<std::string>& warnings) {
  const TopoDS_Face outer_face = loop_face(loops[outer], plane, frame, where);
  TopTools_ListOfShape arguments, tools;
  arguments.Append(outer_face);
  // Which holes meet the outer loop, for the warning.
  std::string touching;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (i == outer) continue;
    const TopoDS_Face hole = loop_face(loops[i], plane, frame, where);
    tools.Append(hole);
    BRepBuilderAPI_MakeFace pair(outer_face);
    pair.Add(TopoDS::Wire(BRepTools::OuterWire(hole).Reversed()));
    if (!pair.IsDone() || !BRepCheck_Analyzer(pair.Face()).IsValid())
      touching += format("{}loops[{}]", touching.empty() ? "" : ", ", loops[i].index);
  }
  BRepAlgoAPI_Cut cut;
  cut.SetArguments(arguments);
  cut.SetTools(tools);
  cut.Build();
  if (!cut.IsDone() || cut.HasErrors() || cut.Shape().IsNull())
    throw SequenceError(format(
        "{}: the loops touch, and OCCT's planar boolean of outer loop less holes failed", where));
  // Slivers below this share of the outer loop's area are what is left of a
  // hole drawn on the outer loop's own curves, not material.
  const double outer_area = face_area(outer_face);
  const double sliver = 1e-9 * outer_area;
  BRep_Builder builder;
  TopoDS_Compound region;
  builder.MakeCompound(region);
  int faces = 0;
  double area = 0;
  for (TopExp_Explorer it(cut.Shape(), TopAbs_FACE); it.More(); it.Next()) {
    TopoDS_Face face = TopoDS::Face(it.Current());
    const double face_size = face_area(face);
    if (face_size <= sliver) continue;
    if (!BRepCheck_Analyzer(face).IsValid()) {
      ShapeFix_Face fix(face);
      fix.Perform();
      face = fix.Face();
      if (!BRepCheck_Analyzer(face).IsValid())
        throw SequenceError(format(
            "{}: the loops touch, and the region of outer loop less holes is not a valid face "
            "even after ShapeFix_Face",
            where));
    }
    builder.Add(region, face);
    ++faces;
    area += face_size;
  }
  const std::string which =
      touching.empty()
          ? "its holes touch each other"
          : "hole " + touching +
                " is not inside the outer loop (it touches, crosses or lies outside it)";
  if (faces == 0) {
    warnings.push_back(format(
        "{}: skipped the profile: {} and the holes cover all of the outer loop loops[{}], so "
        "it encloses no area",
        where, which, loops[outer].index));
    return TopoDS_Shape();
  }
  warnings.push_back(format(
      "{}: {} (the face would fail BRepCheck); built the outer loop less the holes, {} face(s) "
      "of {} mm^2 (the outer loop alone: {} mm^2)",
      where, which, faces, area, outer_area));
  return region;
}

}  // namespace

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

double length_mm(double value, double mm, const std::string& where, const char* key) {
  const double out = value * mm;
  if (!(std::abs(out) <= kLargestLengthMm))
    throw SequenceError(
        format("{}.{} is {} mm, beyond any part (limit {} mm); check the file and "
               "--assume-unit",
               where, key, out, kLargestLengthMm));
  return out;
}

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

// The planar face (or faces) of a profile: its loops chained and healed, the
// outer one chosen, the holes added; touching loops become their region.
TopoDS_Shape make_profile_face(const Json& profile, const Frame& frame, const std::string& where,
                               double mm, std::vector<std::string>& warnings) {
  const Json& loops_json = member(profile, "loops", where);
  if (!loops_json.is_array() || loops_json.empty())
    throw SequenceError(format("{}: a profile with no loops", where));
  const double size = profile_size(loops_json, where, mm);
  const double tolerance = 1e-6 * size + 1e-9;
  const double gap_limit = kGapRelative * size + 1e-9;

  std::vector<Loop> loops;
  std::vector<bool> flagged_outer;
  for (size_t i = 0; i < loops_json.size(); ++i) {
    const std::string loop_where = format("{}.loops[{}]", where, i);
    std::vector<Curve> curves;
    const Json& curves_json = member(loops_json[i], "profile_curves", loop_where);
    if (!curves_json.is_array()) throw SequenceError(format("{}: curves not a list", loop_where));
    for (size_t c = 0; c < curves_json.size(); ++c) {
      std::optional<Curve> curve = parse_curve(
          curves_json[c], format("{}.profile_curves[{}]", loop_where, c), mm, tolerance, warnings);
      if (curve) curves.push_back(*curve);
    }
    const bool is_outer = loops_json[i].value("is_outer", false);
    if (curves.empty() && !curves_json.empty()) {
      if (is_outer) {
        warnings.push_back(
            format("{}: skipped the profile: its outer loop loops[{}] has only curves of zero size",
                   where, i));
        return TopoDS_Shape();
      }
      warnings.push_back(
          format("{}: dropped the loop: all its curves are of zero size", loop_where));
      continue;
    }
    Loop loop;
    loop.curves = merged_circle(
        chain(std::move(curves), tolerance, gap_limit, loop_where, warnings), tolerance);
    loop.area = signed_area(loop.curves);
    loop.index = i;
    // A loop that runs out and back over the same path (an arc quantised
    // straight against a line, two half arcs bulging to one side) bounds no
    // region: as a hole it removes nothing, as the outer loop the profile is
    // empty.
    const double extent = loop_extent(loop.curves);
    if (std::abs(loop.area) / 2 <= tolerance * extent) {
      if (is_outer) {
        warnings.push_back(
            format("{}: skipped the profile: its outer loop loops[{}] encloses no area (its curves "
                   "run out and back over one path)",
                   where, i));
        return TopoDS_Shape();
      }
      warnings.push_back(format(
          "{}: dropped the loop: it encloses no area (its curves run out and back over one path)",
          loop_where));
      continue;
    }
    loops.push_back(std::move(loop));
    flagged_outer.push_back(is_outer);
  }
  if (loops.empty()) {
    warnings.push_back(format(
        "{}: skipped the profile: all its curves are of zero size, so it encloses no area", where));
    return TopoDS_Shape();
  }
  // The outer loop: the one flagged is_outer, or the largest when the flags
  // do not single one out.
  size_t outer = 0;
  const auto flagged = std::count(flagged_outer.begin(), flagged_outer.end(), true);
  for (size_t i = 0; i < loops.size(); ++i) {
    if (flagged == 1 ? bool(flagged_outer[i])
                     : std::abs(loops[i].area) > std::abs(loops[outer].area))
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
  if (BRepCheck_Analyzer(face.Face()).IsValid()) return face.Face();
  if (loops.size() == 1)
    throw SequenceError(format("{}.loops[{}]: the profile face is invalid: the loop crosses itself",
                               where, loops[outer].index));
  return profile_region(loops, outer, plane, frame, where, warnings);
}

}  // namespace cadclip::cad::deepcad
