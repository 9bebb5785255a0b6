// Program parts as DeepCAD JSON (REFERENCE.md §2, docs/INGEST.md "DeepCAD
// JSON"), their canonical signature, the Euler angles captions state, and the
// counts behind the distribution table of docs/SYNTHETIC.md.
#include <cmath>

#include "cadclip/core/format.h"
#include "synth/program.h"

namespace cadclip::synth {
namespace {

using Json = nlohmann::json;

constexpr double kPi = 3.14159265358979323846;

// Metres to a picometre: equal inputs give equal text, and no 1e-17 noise.
double metres(double units, double scale) {
  const double v = std::round(units * scale * 1e12) / 1e12;
  return v == 0 ? 0.0 : v;  // no "-0.0"
}

Json point(Pt p, double scale) {
  return {{"x", metres(p.x, scale)}, {"y", metres(p.y, scale)}, {"z", 0.0}};
}

Json vec(const V3& v, double scale) {
  return {{"x", metres(v.x, scale)}, {"y", metres(v.y, scale)}, {"z", metres(v.z, scale)}};
}

Json unit_vec(const V3& v) {
  auto r = [](double x) {
    const double v = std::round(x * 1e12) / 1e12;
    return v == 0 ? 0.0 : v;
  };
  return {{"x", r(v.x)}, {"y", r(v.y)}, {"z", r(v.z)}};
}

Json curve_json(const SketchCurve& c, double scale, const std::string& id) {
  const Json normal = {{"x", 0.0}, {"y", 0.0}, {"z", 1.0}};
  if (c.kind == SketchCurve::kLine)
    return {{"type", "Line3D"},
            {"curve", id},
            {"start_point", point(c.start, scale)},
            {"end_point", point(c.end, scale)}};
  if (c.kind == SketchCurve::kCircle)
    return {{"type", "Circle3D"},
            {"curve", id},
            {"center_point", point(c.centre, scale)},
            {"radius", metres(c.radius, scale)},
            {"normal", normal}};
  // The reference semantics: the arc passes through centre + radius·R(θ)·reference
  // with θ = (start_angle + end_angle)/2, turning counterclockwise about +z; so the
  // reference points at the counterclockwise-first end and end_angle is the sweep.
  const Pt first = c.ccw ? c.start : c.end;
  const Pt last = c.ccw ? c.end : c.start;
  const double len = std::hypot(first.x - c.centre.x, first.y - c.centre.y);
  const V3 ref{(first.x - c.centre.x) / len, (first.y - c.centre.y) / len, 0};
  return {{"type", "Arc3D"},
          {"curve", id},
          {"start_point", point(first, scale)},
          {"end_point", point(last, scale)},
          {"center_point", point(c.centre, scale)},
          {"radius", metres(c.radius, scale)},
          {"normal", normal},
          {"start_angle", 0.0},
          {"end_angle", std::round(c.sweep() * 1e12) / 1e12},
          {"reference_vector", unit_vec(ref)}};
}

Json distance(double value, double scale) {
  return {{"type", "ModelParameter"},
          {"role", "AlongDistance"},
          {"name", "none"},
          {"value", metres(value, scale)}};
}

}  // namespace

std::string operation_name(Operation op) {
  switch (op) {
    case Operation::kNewBody:
      return "NewBodyFeatureOperation";
    case Operation::kJoin:
      return "JoinFeatureOperation";
    case Operation::kCut:
      return "CutFeatureOperation";
    default:
      return "IntersectFeatureOperation";
  }
}

std::string extent_name(Extent extent) {
  switch (extent) {
    case Extent::kOneSide:
      return "OneSideFeatureExtentType";
    case Extent::kSymmetric:
      return "SymmetricFeatureExtentType";
    default:
      return "TwoSidesFeatureExtentType";
  }
}

std::string program_json(const Program& program, double scale, const double* bbox_mm) {
  Json entities = Json::object();
  Json sequence = Json::array();
  int index = 0;
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const ProgramStep& step = program.steps[s];
    const std::string sketch_id = format("sketch_{}", s), extrude_id = format("extrude_{}", s);
    Json profiles = Json::object();
    Json refs = Json::array();
    for (size_t p = 0; p < step.profiles.size(); ++p) {
      Json loops = Json::array();
      for (size_t l = 0; l < step.profiles[p].loops.size(); ++l) {
        Json curves = Json::array();
        const SketchLoop& loop = step.profiles[p].loops[l];
        for (size_t c = 0; c < loop.curves.size(); ++c)
          curves.push_back(curve_json(loop.curves[c], scale, format("c{}_{}_{}_{}", s, p, l, c)));
        loops.push_back({{"is_outer", l == 0}, {"profile_curves", curves}});
      }
      const std::string profile_id = format("profile_{}", p);
      profiles[profile_id] = {{"loops", loops}};
      refs.push_back({{"profile", profile_id}, {"sketch", sketch_id}});
    }
    entities[sketch_id] = {{"type", "Sketch"},
                           {"name", format("Sketch {}", s + 1)},
                           {"transform",
                            {{"origin", vec(step.frame.origin, scale)},
                             {"x_axis", unit_vec(step.frame.x)},
                             {"y_axis", unit_vec(step.frame.y)},
                             {"z_axis", unit_vec(step.frame.z)}}},
                           {"profiles", profiles}};
    Json extrude = {{"type", "ExtrudeFeature"},
                    {"name", format("Extrude {}", s + 1)},
                    {"profiles", refs},
                    {"operation", operation_name(step.operation)},
                    {"start_extent", {{"type", "ProfilePlaneStartDefinition"}}},
                    {"extent_type", extent_name(step.extent)},
                    {"extent_one", {{"distance", distance(step.e1, scale)}}}};
    if (step.extent == Extent::kTwoSides)
      extrude["extent_two"] = {{"distance", distance(step.e2, scale)}};
    entities[extrude_id] = extrude;
    sequence.push_back({{"index", index++}, {"type", "Sketch"}, {"entity", sketch_id}});
    sequence.push_back({{"index", index++}, {"type", "ExtrudeFeature"}, {"entity", extrude_id}});
  }
  Json doc = {{"entities", entities}, {"sequence", sequence}};
  if (bbox_mm) {
    auto m = [](double mm) { return std::round(mm * 1e9) / 1e12; };
    doc["properties"] = {
        {"bounding_box",
         {{"type", "BoundingBox3D"},
          {"min_point", {{"x", m(bbox_mm[0])}, {"y", m(bbox_mm[1])}, {"z", m(bbox_mm[2])}}},
          {"max_point", {{"x", m(bbox_mm[3])}, {"y", m(bbox_mm[4])}, {"z", m(bbox_mm[5])}}}}}};
  }
  return doc.dump(1) + "\n";
}

std::string program_signature(const Program& program) { return program_json(program, 1.0); }

V3 euler_degrees(const Frame& f) {
  // R = [x y z] (columns) = Rz(c)·Ry(b)·Rx(a).
  const double r00 = f.x.x, r10 = f.x.y, r20 = f.x.z;
  const double r01 = f.y.x, r11 = f.y.y, r21 = f.y.z;
  const double r22 = f.z.z;
  const double b = std::asin(std::clamp(-r20, -1.0, 1.0));
  double a = 0, c = 0;
  if (std::cos(b) > 1e-9) {
    a = std::atan2(r21, r22);
    c = std::atan2(r10, r00);
  } else {
    c = std::atan2(-r01, r11);
  }
  auto deg = [](double rad) {
    double d = std::round(rad * 180 / kPi * 10) / 10;
    if (d <= -180) d += 360;
    return d == 0 ? 0.0 : d;
  };
  return {deg(a), deg(b), deg(c)};
}

nlohmann::json program_summary(const Program& program) {
  std::map<std::string, int> curves, operations, extents, planes;
  int loops = 0, inner_loops = 0, profiles = 0;
  nlohmann::json roles = nlohmann::json::array();
  for (const ProgramStep& step : program.steps) {
    roles.push_back(step.role);
    ++operations[operation_name(step.operation)];
    ++extents[extent_name(step.extent)];
    const V3& n = step.frame.z;
    const char* plane = std::abs(std::abs(n.z) - 1) < 1e-9   ? "XY"
                        : std::abs(std::abs(n.y) - 1) < 1e-9 ? "XZ"
                        : std::abs(std::abs(n.x) - 1) < 1e-9 ? "YZ"
                                                             : "oblique";
    ++planes[plane];
    const double offset =
        step.frame.origin.x * n.x + step.frame.origin.y * n.y + step.frame.origin.z * n.z;
    if (std::abs(offset) > 1e-9) ++planes["offset from the origin"];
    for (const SketchProfile& profile : step.profiles) {
      ++profiles;
      for (size_t l = 0; l < profile.loops.size(); ++l) {
        ++loops;
        inner_loops += l > 0;
        for (const SketchCurve& c : profile.loops[l].curves)
          ++curves[c.kind == SketchCurve::kLine  ? "Line3D"
                   : c.kind == SketchCurve::kArc ? "Arc3D"
                                                 : "Circle3D"];
      }
    }
  }
  return {{"extrudes", program.steps.size()},
          {"profiles", profiles},
          {"loops", loops},
          {"inner_loops", inner_loops},
          {"curves", curves},
          {"operations", operations},
          {"extents", extents},
          {"planes", planes},
          {"roles", roles}};
}

}  // namespace cadclip::synth
