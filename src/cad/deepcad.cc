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
#include <BRepBuilderAPI_Transform.hxx>
#include <BRepCheck_Analyzer.hxx>
#include <BRepGProp.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <Bnd_Box.hxx>
#include <GProp_GProps.hxx>
#include <ShapeFix_Shape.hxx>
#include <ShapeUpgrade_UnifySameDomain.hxx>
#include <Standard_Failure.hxx>
#include <TopExp.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <gp_Trsf.hxx>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cad/deepcad_sketch.h"
#include "cad/occt_shape.h"
#include "cadclip/core/format.h"

namespace cadclip::cad {
namespace deepcad {
namespace {

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

TopoDS_Shape extrude_profile(const TopoDS_Shape& face, const Frame& frame,
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

// The steps of the sequence in their "index" order.
std::vector<const Json*> ordered_steps(const Json& doc, const std::string& name) {
  const Json& sequence = member(doc, "sequence", name);
  if (!sequence.is_array()) throw SequenceError(format("{}: 'sequence' is not a list", name));
  std::vector<const Json*> steps;
  for (const Json& step : sequence) steps.push_back(&step);
  std::stable_sort(steps.begin(), steps.end(), [](const Json* a, const Json* b) {
    return a->value("index", 0) < b->value("index", 0);
  });
  return steps;
}

// An extrude's operation as the boolean it makes: "fuse", "cut" or "intersect".
std::string boolean_of(const std::string& operation_name, const std::string& where) {
  if (operation_name == "NewBodyFeatureOperation" || operation_name == "JoinFeatureOperation")
    return "fuse";
  if (operation_name == "CutFeatureOperation") return "cut";
  if (operation_name == "IntersectFeatureOperation") return "intersect";
  throw SequenceError(format("{}: unsupported operation '{}'", where, operation_name));
}

// The sequence being built: its entities, what it has made so far and what it noted.
struct BuildState {
  const Json& entities;
  const std::string& name;
  const IngestOptions& options;
  double mm;
  std::vector<std::string>& warnings;
  TopoDS_Shape body;  // null until the first extrude with a face
  int extrudes = 0;   // extrudes built
  int skipped = 0;    // extrudes skipped for an empty profile list
};

// One extrude feature (entity `id`) applied to the body: each of its profiles
// extruded over the feature's range and combined by its operation.
void apply_extrude(BuildState& state, const std::string& id) {
  const std::string where = format("{}: extrude '{}'", state.name, id);
  const Json& extrude = member(state.entities, id.c_str(), state.name + ".entities");
  const std::string start = text(member(extrude, "start_extent", where), "type", where);
  if (start != "ProfilePlaneStartDefinition")
    throw SequenceError(format("{}: unsupported start extent '{}'", where, start));
  const std::string operation_name = text(extrude, "operation", where);
  const std::string operation = boolean_of(operation_name, where);
  const auto range = extent_range(extrude, where, state.mm, state.options);

  const Json& profiles = member(extrude, "profiles", where);
  if (!profiles.is_array()) throw SequenceError(format("{}: 'profiles' is not a list", where));
  if (profiles.empty()) {
    // Both reference builders (DeepCAD's cadlib, Text2CAD's CadSeqProc)
    // skip such a feature and build the rest, which then matches the
    // file's stored bounding box.
    state.warnings.push_back(format("{}: skipped an extrude with an empty profile list", where));
    ++state.skipped;
    return;
  }
  // A multi-profile extrude is one extrude per profile; NewBody's extra
  // profiles join (DeepCAD's split), Cut and Intersect repeat.
  for (size_t p = 0; p < profiles.size(); ++p) {
    const std::string sketch_id = text(profiles[p], "sketch", where);
    const std::string profile_id = text(profiles[p], "profile", where);
    const std::string profile_where =
        format("{} profile '{}' of sketch '{}'", where, profile_id, sketch_id);
    const Json& sketch = member(state.entities, sketch_id.c_str(), state.name + ".entities");
    const Frame frame =
        parse_frame(member(sketch, "transform", profile_where), profile_where, state.mm);
    const Json& profile =
        member(member(sketch, "profiles", profile_where), profile_id.c_str(), profile_where);
    const TopoDS_Shape face =
        make_profile_face(profile, frame, profile_where, state.mm, state.warnings);
    if (face.IsNull()) continue;  // encloses nothing; make_profile_face noted why
    const TopoDS_Shape tool = extrude_profile(face, frame, range, profile_where);
    if (state.body.IsNull()) {
      if (operation != "fuse")
        throw SequenceError(format("{}: the first extrude is a {} with nothing to {}", where,
                                   operation_name, operation));
      state.body = tool;
    } else {
      state.body = boolean(operation, state.body, tool, profile_where);
    }
  }
  ++state.extrudes;
}

// The built body as a CAD system would show it: coplanar faces merged, checked
// (and repaired where ShapeFix_Shape can) to be a valid solid of some volume.
TopoDS_Shape finished_solid(TopoDS_Shape body, const std::string& name,
                            std::vector<std::string>& warnings) {
  // Booleans leave coplanar faces split where bodies met; a CAD system would
  // show one face.
  ShapeUpgrade_UnifySameDomain unify(body, /*UnifyEdges=*/true, /*UnifyFaces=*/true,
                                     /*ConcatBSplines=*/false);
  unify.Build();
  if (!unify.Shape().IsNull()) body = unify.Shape();

  TopTools_IndexedMapOfShape solids;
  TopExp::MapShapes(body, TopAbs_SOLID, solids);
  if (solids.Extent() == 0) throw SequenceError(format("{}: the result holds no solid", name));
  if (!BRepCheck_Analyzer(body).IsValid()) {
    // The booleans of profiles healed above can leave a tolerance or an
    // orientation that ShapeFix_Shape repairs; what it cannot repair fails.
    ShapeFix_Shape fix(body);
    fix.Perform();
    if (fix.Shape().IsNull() || !BRepCheck_Analyzer(fix.Shape()).IsValid())
      throw SequenceError(format(
          "{}: the result is not a valid solid (BRepCheck), even after ShapeFix_Shape", name));
    warnings.push_back(format("{}: the result failed BRepCheck; ShapeFix_Shape repaired it", name));
    body = fix.Shape();
  }
  GProp_GProps props;
  BRepGProp::VolumeProperties(body, props);
  Bnd_Box box;
  BRepBndLib::Add(body, box);
  const double diagonal = box.IsVoid() ? 0 : std::sqrt(box.SquareExtent());
  if (!(props.Mass() > 1e-9 * diagonal * diagonal * diagonal))
    throw SequenceError(format("{}: the result has zero volume ({} mm^3)", name, props.Mass()));
  return body;
}

TopoDS_Shape build(const Json& doc, const std::string& name, const IngestOptions& options,
                   double mm, std::vector<std::string>& warnings) {
  BuildState state{member(doc, "entities", name),
                   name,
                   options,
                   mm,
                   warnings,
                   TopoDS_Shape(),
                   /*extrudes=*/0,
                   /*skipped=*/0};
  for (const Json* step : ordered_steps(doc, name)) {
    const std::string type = text(*step, "type", name + ".sequence[]");
    if (type == "Sketch") continue;  // built when an extrude uses it
    if (type != "ExtrudeFeature")
      throw SequenceError(
          format("{}: unsupported feature '{}' (only Sketch and ExtrudeFeature)", name, type));
    apply_extrude(state, text(*step, "entity", name + ".sequence[]"));
  }
  if (state.extrudes == 0 && state.skipped > 0)
    throw SequenceError(
        format("{}: every extrude of the sequence has an empty profile list, so no solid", name));
  if (state.extrudes == 0)
    throw SequenceError(format("{}: the sequence has no extrude, so no solid", name));
  if (state.body.IsNull())
    throw SequenceError(
        format("{}: every profile of the sequence encloses no area (see the warnings), so no solid",
               name));
  return finished_solid(state.body, name, warnings);
}

}  // namespace
}  // namespace deepcad

Result<TopoDS_Shape> deepcad_to_shape(std::string_view json_text, std::string_view name,
                                      const IngestOptions& options,
                                      std::vector<std::string>* warnings) {
  const std::string label(name);
  Result<double> mm = millimetres_per_unit(options.assume_unit);
  if (!mm) return mm.status();
  const deepcad::Json doc =
      deepcad::Json::parse(json_text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::failure(format("{} is not valid JSON (a DeepCAD sequence is JSON)", label));
  try {
    std::vector<std::string> noted;
    TopoDS_Shape shape = deepcad::build(doc, label, options, mm.value(), noted);
    if (warnings != nullptr) warnings->insert(warnings->end(), noted.begin(), noted.end());
    return shape;
  } catch (const deepcad::SequenceError& error) {
    return Status::failure(error.what());
  } catch (const deepcad::Json::exception& error) {
    return Status::failure(format("{}: malformed DeepCAD JSON: {}", label, error.what()));
  } catch (const Standard_Failure& failure) {
    return Status::failure(
        format("{}: OCCT failed building the sequence: {}", label, failure.GetMessageString()));
  }
}

}  // namespace cadclip::cad
