// Featurization of a selected model into a BRepGraph: UV-Net face grids,
// BRepNet/BRepFormer attributes, directed face adjacency with curve grids and
// convexity, size in millimetres and the geometry hash (docs/INGEST.md).
#include <BRepAdaptor_Curve.hxx>
#include <BRepAdaptor_Surface.hxx>
#include <BRepGProp.hxx>
#include <BRepLProp_SLProps.hxx>
#include <BRepTools.hxx>
#include <BRepTopAdaptor_FClass2d.hxx>
#include <BRep_Tool.hxx>
#include <BndLib_Add3dCurve.hxx>
#include <BndLib_AddSurface.hxx>
#include <Bnd_Box.hxx>
#include <GCPnts_AbscissaPoint.hxx>
#include <GProp_GProps.hxx>
#include <Geom2d_Curve.hxx>
#include <Geom_Curve.hxx>
#include <Geom_Surface.hxx>
#include <Precision.hxx>
#include <ShapeAnalysis_Surface.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Edge.hxx>
#include <TopoDS_Face.hxx>
#include <gp_Ax3.hxx>
#include <gp_Cylinder.hxx>
#include <gp_Pln.hxx>
#include <gp_Pnt2d.hxx>
#include <gp_Vec.hxx>
#include <gp_Vec2d.hxx>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include "cad/occt_shape.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"

namespace cadclip::cad {
namespace {

constexpr int kGrid = data::kUvGridSize;
constexpr int kFaceChannels = data::kFaceChannels;
constexpr int kSamples = data::kCurveSamples;
constexpr int kEdgeChannels = data::kEdgeChannels;
constexpr int kFaceValues = kGrid * kGrid * kFaceChannels;

// The geometry hash quantises points to 1 µm and unit normals to 1e-3: far
// finer than any size difference between two parts, far coarser than the
// 1e-12 mm noise that moving a part adds (docs/INGEST.md).
constexpr double kHashPointQuantumMm = 1e-3;
constexpr double kHashNormalQuantum = 1e-3;
// BRepTopAdaptor_FClass2d's tolerance, in UV units (occwl's value).
constexpr double kClassifyTolerance = 1e-9;
// The mask's ON band, relative to the face's UV diagonal: grid points at the
// UV bounds lie on the boundary and count as inside.
constexpr double kOnBandRelative = 1e-6;
// Relative error of the areas (and centroids) of faces other than planes and
// cylinders, which are exact.
constexpr double kAreaRelativeError = 1e-3;
// BRepNet: an edge is smooth when its faces' normals agree to within 5°.
const double kSmoothCosine = std::cos(5.0 * M_PI / 180.0);

data::SurfaceType surface_type(GeomAbs_SurfaceType type) {
  switch (type) {
    case GeomAbs_Plane:
      return data::SurfaceType::kPlane;
    case GeomAbs_Cylinder:
      return data::SurfaceType::kCylinder;
    case GeomAbs_Cone:
      return data::SurfaceType::kCone;
    case GeomAbs_Sphere:
      return data::SurfaceType::kSphere;
    case GeomAbs_Torus:
      return data::SurfaceType::kTorus;
    case GeomAbs_BezierSurface:
      return data::SurfaceType::kBezier;
    case GeomAbs_BSplineSurface:
      return data::SurfaceType::kBSpline;
    case GeomAbs_SurfaceOfRevolution:
      return data::SurfaceType::kRevolution;
    case GeomAbs_SurfaceOfExtrusion:
      return data::SurfaceType::kExtrusion;
    case GeomAbs_OffsetSurface:
      return data::SurfaceType::kOffset;
    default:
      return data::SurfaceType::kOther;
  }
}

data::CurveType curve_type(GeomAbs_CurveType type) {
  switch (type) {
    case GeomAbs_Line:
      return data::CurveType::kLine;
    case GeomAbs_Circle:
      return data::CurveType::kCircle;
    case GeomAbs_Ellipse:
      return data::CurveType::kEllipse;
    case GeomAbs_Hyperbola:
      return data::CurveType::kHyperbola;
    case GeomAbs_Parabola:
      return data::CurveType::kParabola;
    case GeomAbs_BezierCurve:
      return data::CurveType::kBezier;
    case GeomAbs_BSplineCurve:
      return data::CurveType::kBSpline;
    case GeomAbs_OffsetCurve:
      return data::CurveType::kOffset;
    default:
      return data::CurveType::kOther;
  }
}

// Per face: the sampled surface, for the face grid and the edge normals.
struct FaceSurface {
  Handle(BRepAdaptor_Surface) adaptor;
  Handle(ShapeAnalysis_Surface) analysis;  // built on demand when a pcurve is missing
  bool reversed = false;
  double u0 = 0, u1 = 0, v0 = 0, v1 = 0;  // the face's UV box
  double typical_su = 0, typical_sv = 0;  // |Su|, |Sv| inside the face: the scale of "vanishes"
};

// |Su| and |Sv| at the largest over nine interior points of the UV box: what
// the derivatives are worth on this face, against which a vanishing one is
// told from a small but regular one.
void measure_derivatives(FaceSurface& face) {
  for (const double a : {0.25, 0.5, 0.75}) {
    for (const double b : {0.25, 0.5, 0.75}) {
      gp_Pnt point;
      gp_Vec du, dv;
      face.adaptor->D1(face.u0 + a * (face.u1 - face.u0), face.v0 + b * (face.v1 - face.v0), point,
                       du, dv);
      face.typical_su = std::max(face.typical_su, du.Magnitude());
      face.typical_sv = std::max(face.typical_sv, dv.Magnitude());
    }
  }
}

// Su x Sv at (u, v), unit length, or nullopt where the parametrisation is
// singular there: a derivative that vanishes against its size elsewhere on
// the face (a sphere's pole, a B-spline edge collapsed to a point), or two
// parallel ones. At such points the derivative left is rounding noise, and
// the cross product, though not zero, points either way.
std::optional<gp_Vec> regular_normal(const FaceSurface& face, double u, double v, gp_Pnt& point) {
  gp_Vec du, dv;
  face.adaptor->D1(u, v, point, du, dv);
  const double su = du.Magnitude(), sv = dv.Magnitude();
  if (!(su > 1e-6 * face.typical_su) || !(sv > 1e-6 * face.typical_sv)) return std::nullopt;
  const gp_Vec normal = du.Crossed(dv);
  const double magnitude = normal.Magnitude();
  if (!(magnitude > 1e-9 * su * sv)) return std::nullopt;
  return normal / magnitude;
}

// Unit normal of the face's surface at (u, v), pointing out of the material;
// (0,0,0) where it is undefined (a cone apex). `point` receives the surface point.
gp_Vec face_normal(const FaceSurface& face, double u, double v, gp_Pnt& point) {
  std::optional<gp_Vec> normal = regular_normal(face, u, v, point);
  if (!normal) {
    // A singular point: higher derivatives give the direction, and the
    // regular normal a step into the face's UV box gives the side, so the
    // normal is the limit of its neighbours' (BRepLProp_SLProps alone, and the
    // plain cross product, gave such rows pointing inwards).
    BRepLProp_SLProps props(*face.adaptor, u, v, 1, 1e-9);
    normal = gp_Vec(0, 0, 0);
    if (props.IsNormalDefined()) {
      *normal = gp_Vec(props.Normal());
      const double step_u = 1e-3 * (face.u1 - face.u0) * (u < (face.u0 + face.u1) / 2 ? 1 : -1);
      const double step_v = 1e-3 * (face.v1 - face.v0) * (v < (face.v0 + face.v1) / 2 ? 1 : -1);
      gp_Pnt near_point;
      for (const auto& [su, sv] :
           {std::pair{0.0, step_v}, std::pair{step_u, 0.0}, std::pair{step_u, step_v}}) {
        const std::optional<gp_Vec> near = regular_normal(face, u + su, v + sv, near_point);
        if (!near) continue;
        if (near->Dot(*normal) < 0) normal->Reverse();
        break;
      }
    }
  }
  if (face.reversed) normal->Reverse();
  return *normal;
}

double parameter_at(double first, double last, int index, int count) {
  return index == count - 1 ? last : first + (last - first) * index / (count - 1);
}

// A B-Rep edge between two faces: "left" holds the edge in its loop in the
// direction in which the grid is sampled.
struct Link {
  int edge = 0;  // index into the edge map (0-based)
  int left = 0;  // face indices
  int right = 0;
  bool forward = true;  // traverse in the curve's parameter direction
};

gp_Vec normal_along_edge(FaceSurface& face, const TopoDS_Face& topo_face,
                         const Handle(Geom2d_Curve) & pcurve, double t, const gp_Pnt& point) {
  gp_Pnt2d uv;
  if (!pcurve.IsNull()) {
    uv = pcurve->Value(t);
  } else {
    if (face.analysis.IsNull())
      face.analysis = new ShapeAnalysis_Surface(BRep_Tool::Surface(topo_face));
    uv = face.analysis->ValueOfUV(point, Precision::Confusion());
  }
  gp_Pnt on_surface;
  return face_normal(face, uv.X(), uv.Y(), on_surface);
}

// Area and centroid of a planar or cylindrical face from its boundary alone
// (Green's theorem, 8-point Gauss-Legendre on 8 pieces of each edge): exact up
// to quadrature, and several times cheaper than BRepGProp::SurfaceProperties,
// which integrates over the domain and was the largest cost of featurization.
// Both surfaces have a constant area element (1 for a plane, R for a
// cylinder). A plane integrates its edges' 3-D curves in the plane's frame
// (STEP files often store no pcurves on planes, and OCCT would project one for
// every call); a cylinder needs the stored pcurves for its angle. False when
// the face is of another type or lacks what is needed.
bool planar_or_cylindrical_area(const TopoDS_Face& face, const BRepAdaptor_Surface& surface,
                                double& area, gp_XYZ& centroid) {
  const GeomAbs_SurfaceType type = surface.GetType();
  if (type != GeomAbs_Plane && type != GeomAbs_Cylinder) return false;
  static constexpr double kNodes[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
                                       0.9602898564975363};
  static constexpr double kWeights[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
                                         0.1012285362903763};
  const bool plane = type == GeomAbs_Plane;
  const gp_Ax3 frame = plane ? surface.Plane().Position() : surface.Cylinder().Position();
  const gp_XYZ origin = frame.Location().XYZ();
  const gp_XYZ x_axis = frame.XDirection().XYZ(), y_axis = frame.YDirection().XYZ();
  // Signed integrals over the UV domain of 1, u, v, cos u, sin u, each as a
  // boundary integral: 1 = d(u)/du, u = d(u^2/2)/du, v = -d(v^2/2)/dv,
  // cos u = d(sin u)/du, sin u = d(-cos u)/du.
  double m1 = 0, mu = 0, mv = 0, mc = 0, ms = 0;
  for (TopExp_Explorer it(face, TopAbs_EDGE); it.More(); it.Next()) {
    const TopoDS_Edge& edge = TopoDS::Edge(it.Current());
    const TopAbs_Orientation orientation = edge.Orientation();
    if (orientation != TopAbs_FORWARD && orientation != TopAbs_REVERSED) continue;
    if (BRep_Tool::Degenerated(edge)) continue;  // a point: nothing to integrate
    double first = 0, last = 0;
    Handle(Geom2d_Curve) pcurve;
    std::optional<BRepAdaptor_Curve> curve;
    if (plane) {
      if (BRep_Tool::Curve(edge, first, last).IsNull()) return false;
      curve.emplace(edge);
      first = curve->FirstParameter();
      last = curve->LastParameter();
    } else {
      pcurve = BRep_Tool::CurveOnSurface(edge, face, first, last);
      if (pcurve.IsNull()) return false;
    }
    if (!std::isfinite(first) || !std::isfinite(last)) return false;
    const double sign = orientation == TopAbs_REVERSED ? -1.0 : 1.0;
    const int pieces = 8;
    for (int piece = 0; piece < pieces; ++piece) {
      const double a = first + (last - first) * piece / pieces;
      const double b = first + (last - first) * (piece + 1) / pieces;
      const double half = (b - a) / 2, middle = (a + b) / 2;
      for (int g = 0; g < 8; ++g) {
        const double t = middle + half * (g < 4 ? -kNodes[g] : kNodes[g - 4]);
        const double w = sign * half * kWeights[g % 4];
        double u, v, du, dv;
        if (plane) {
          gp_Pnt p;
          gp_Vec d;
          curve->D1(t, p, d);
          const gp_XYZ r = p.XYZ() - origin;
          u = r.Dot(x_axis);
          v = r.Dot(y_axis);
          du = d.XYZ().Dot(x_axis);
          dv = d.XYZ().Dot(y_axis);
        } else {
          gp_Pnt2d p;
          gp_Vec2d d;
          pcurve->D1(t, p, d);
          u = p.X();
          v = p.Y();
          du = d.X();
          dv = d.Y();
        }
        m1 += w * u * dv;
        mu += w * u * u / 2 * dv;
        mv -= w * v * v / 2 * du;
        if (!plane) {
          mc += w * std::sin(u) * dv;
          ms -= w * std::cos(u) * dv;
        }
      }
    }
  }
  if (std::abs(m1) <= 1e-300) return false;
  if (plane) {
    area = std::abs(m1);
    centroid = origin + x_axis * (mu / m1) + y_axis * (mv / m1);
  } else {
    const double radius = surface.Cylinder().Radius();
    area = radius * std::abs(m1);
    centroid = origin + x_axis * (radius * mc / m1) + y_axis * (radius * ms / m1) +
               frame.Direction().XYZ() * (mv / m1);
  }
  return std::isfinite(area) && std::isfinite(centroid.X()) && std::isfinite(centroid.Y()) &&
         std::isfinite(centroid.Z());
}

void put3(float* out, const gp_XYZ& value) {
  out[0] = static_cast<float>(value.X());
  out[1] = static_cast<float>(value.Y());
  out[2] = static_cast<float>(value.Z());
}

// One face's use of an edge, and in which orientation.
struct Use {
  int face;
  TopAbs_Orientation orientation;
};

// Which faces hold each edge ([edges.Extent()] lists of uses), and the wire
// count of each face into `loop_counts`.
std::vector<std::vector<Use>> edge_uses(const TopTools_IndexedMapOfShape& faces,
                                        const TopTools_IndexedMapOfShape& edges,
                                        std::vector<int>& loop_counts) {
  const int face_count = faces.Extent();
  std::vector<std::vector<Use>> uses(edges.Extent());
  loop_counts.assign(face_count, 0);
  for (int f = 0; f < face_count; ++f) {
    const TopoDS_Shape& face = faces(f + 1);
    for (TopExp_Explorer wire(face, TopAbs_WIRE); wire.More(); wire.Next()) ++loop_counts[f];
    for (TopExp_Explorer edge(face, TopAbs_EDGE); edge.More(); edge.Next()) {
      const int index = edges.FindIndex(edge.Current()) - 1;
      CADCLIP_CHECK(index >= 0, "an edge of face {} is missing from the edge map", f);
      uses[index].push_back({f, edge.Current().Orientation()});
    }
  }
  return uses;
}

// The graph edges: one Link per edge with a 3-D curve between exactly two
// distinct faces, oriented so that "left" runs the edge forward.
std::vector<Link> manifold_links(const TopTools_IndexedMapOfShape& edges,
                                 const std::vector<std::vector<Use>>& uses) {
  std::vector<Link> links;
  for (int e = 0; e < edges.Extent(); ++e) {
    const TopoDS_Edge& edge = TopoDS::Edge(edges(e + 1));
    if (BRep_Tool::Degenerated(edge)) continue;
    double first = 0, last = 0;
    if (BRep_Tool::Curve(edge, first, last).IsNull()) continue;
    // Distinct faces in the order met; a seam meets its face twice.
    std::vector<Use> distinct;
    for (const Use& use : uses[e]) {
      const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                    [&](const Use& d) { return d.face == use.face; });
      if (!seen) distinct.push_back(use);
    }
    if (distinct.size() != 2) continue;  // boundary, seam or non-manifold: no graph edge
    Link link{e, distinct[0].face, distinct[1].face, true};
    if (distinct[0].orientation != TopAbs_FORWARD && distinct[1].orientation == TopAbs_FORWARD) {
      std::swap(link.left, link.right);
    } else if (distinct[0].orientation == TopAbs_REVERSED) {
      link.forward = false;  // both reversed: an inconsistently oriented shell
    }
    links.push_back(link);
  }
  return links;
}

// What the face steps hand on to the box, the edges and the hash, in
// millimetres (doubles: the hash quantises them before normalisation).
struct SampledFaces {
  std::vector<double> samples;        // [F, kGrid, kGrid, kFaceChannels]
  std::vector<FaceSurface> surfaces;  // [F]
  std::vector<double> centroids_mm;   // [F, 3]
};

// The face's UV box into `surface`; a failure when it is unbounded or empty,
// which no grid can sample.
Status read_uv_box(const TopoDS_Face& face, int f, FaceSurface& surface) {
  double u0, u1, v0, v1;
  BRepTools::UVBounds(face, u0, u1, v0, v1);
  if (!std::isfinite(u0) || !std::isfinite(u1) || !std::isfinite(v0) || !std::isfinite(v1) ||
      Precision::IsInfinite(u0) || Precision::IsInfinite(u1) || Precision::IsInfinite(v0) ||
      Precision::IsInfinite(v1))
    return Status::failure(format("face {} has an unbounded parameter range", f));
  if (!(u1 > u0) || !(v1 > v0))
    return Status::failure(format("face {} has an empty parameter range", f));
  surface.u0 = u0, surface.u1 = u1, surface.v0 = v0, surface.v1 = v1;
  return Status::ok();
}

// Sums of the grid points, for the centroid of a face whose area vanishes.
struct GridSums {
  gp_XYZ inside_sum{0, 0, 0}, all_sum{0, 0, 0};
  int inside_count = 0;
};

// The face's UV-Net grid into `grid` ([kGrid, kGrid, kFaceChannels]: point,
// outward normal, inside mask).
GridSums sample_grid(const TopoDS_Face& face, const FaceSurface& surface, double* grid) {
  const double u0 = surface.u0, u1 = surface.u1, v0 = surface.v0, v1 = surface.v1;
  BRepTopAdaptor_FClass2d classifier(face, kClassifyTolerance);
  const double on_band = kOnBandRelative * std::hypot(u1 - u0, v1 - v0);
  GridSums sums;
  for (int i = 0; i < kGrid; ++i) {
    const double u = parameter_at(u0, u1, i, kGrid);
    // Mirrored along u for a reversed face, so that the grid's own (u, v)
    // frame agrees with the flipped normal.
    const int row = surface.reversed ? kGrid - 1 - i : i;
    for (int j = 0; j < kGrid; ++j) {
      const double v = parameter_at(v0, v1, j, kGrid);
      gp_Pnt point;
      const gp_Vec normal = face_normal(surface, u, v, point);
      // TestOnRestriction classifies against the boundary polygon only.
      // Perform() falls back to the exact BRepClass_FaceClassifier for every
      // point on the boundary (a third of a grid that includes the UV
      // bounds), which made the mask cost more than reading the file.
      const TopAbs_State state = classifier.TestOnRestriction(gp_Pnt2d(u, v), on_band);
      const bool inside = state == TopAbs_IN || state == TopAbs_ON;
      double* out = grid + (row * kGrid + j) * kFaceChannels;
      out[0] = point.X();
      out[1] = point.Y();
      out[2] = point.Z();
      out[3] = normal.X();
      out[4] = normal.Y();
      out[5] = normal.Z();
      out[6] = inside ? 1.0 : 0.0;
      sums.all_sum += point.XYZ();
      if (inside) {
        sums.inside_sum += point.XYZ();
        ++sums.inside_count;
      }
    }
  }
  return sums;
}

// The face's area in mm^2, and its centroid into `centroid`; where the area
// vanishes, the centroid of its grid points (inside ones if any).
double area_and_centroid(const TopoDS_Face& face, const BRepAdaptor_Surface& adaptor,
                         const GridSums& sums, gp_XYZ& centroid) {
  double area = 0;
  if (!planar_or_cylindrical_area(face, adaptor, area, centroid)) {
    // Adaptive integration to a relative error of kAreaRelativeError: the
    // fixed-order default spent ~2 ms on each B-spline face.
    GProp_GProps props;
    BRepGProp::SurfaceProperties(face, props, kAreaRelativeError);
    area = std::abs(props.Mass());
    centroid = props.CentreOfMass().XYZ();
  }
  if (!(area > Precision::SquareConfusion()))
    centroid = sums.inside_count > 0 ? sums.inside_sum / sums.inside_count
                                     : sums.all_sum / (kGrid * kGrid);
  return area;
}

// Face f: its type, rationality, grid, area and centroid (millimetres).
Status sample_face(const TopoDS_Face& face, int f, data::BRepGraph& graph, SampledFaces& out) {
  TopLoc_Location location;  // this overload does not copy a located surface
  if (BRep_Tool::Surface(face, location).IsNull())
    return Status::failure(format("face {} has no surface", f));
  FaceSurface& surface = out.surfaces[f];
  surface.adaptor = new BRepAdaptor_Surface(face, /*restriction=*/false);
  surface.reversed = face.Orientation() == TopAbs_REVERSED;
  const BRepAdaptor_Surface& adaptor = *surface.adaptor;

  const GeomAbs_SurfaceType type = adaptor.GetType();
  graph.face_types[f] = static_cast<uint8_t>(surface_type(type));
  graph.face_rational[f] = (type == GeomAbs_BSplineSurface || type == GeomAbs_BezierSurface) &&
                           (adaptor.IsURational() || adaptor.IsVRational());

  if (Status status = read_uv_box(face, f, surface); !status) return status;
  measure_derivatives(surface);

  double* grid = out.samples.data() + static_cast<size_t>(f) * kFaceValues;
  const GridSums sums = sample_grid(face, surface, grid);
  gp_XYZ centroid;
  const double area = area_and_centroid(face, adaptor, sums, centroid);
  graph.face_areas[f] = static_cast<float>(area);
  out.centroids_mm[static_cast<size_t>(f) * 3] = centroid.X();
  out.centroids_mm[static_cast<size_t>(f) * 3 + 1] = centroid.Y();
  out.centroids_mm[static_cast<size_t>(f) * 3 + 2] = centroid.Z();
  return Status::ok();
}

// The box in millimetres. BRepBndLib::AddOptimal is exact but runs a global
// optimiser over every B-spline face (seconds on some parts); instead:
// every edge exactly (BndLib's optimal curve box); spheres over their UV box
// (a sphere's equator is often no edge of it); the inside grid points of the
// other faces whose interior can bulge past their edges (tori, B-splines,
// revolutions; BndLib's optimal box of a torus costs ~20 ms, a fillet's
// extremes lie on its edges anyway). Planes, cylinders, cones and
// extrusions are ruled: their extremes lie on their edges.
Bnd_Box model_box(const TopTools_IndexedMapOfShape& edges, const std::vector<uint8_t>& face_types,
                  const SampledFaces& faces) {
  Bnd_Box box;
  for (int e = 0; e < edges.Extent(); ++e) {
    const TopoDS_Edge& edge = TopoDS::Edge(edges(e + 1));
    double first = 0, last = 0;
    if (BRep_Tool::Degenerated(edge) || BRep_Tool::Curve(edge, first, last).IsNull()) continue;
    BndLib_Add3dCurve::AddOptimal(BRepAdaptor_Curve(edge), /*Tol=*/0.0, box);
  }
  const int face_count = static_cast<int>(face_types.size());
  for (int f = 0; f < face_count; ++f) {
    const auto type = static_cast<data::SurfaceType>(face_types[f]);
    const bool ruled = type == data::SurfaceType::kPlane || type == data::SurfaceType::kCylinder ||
                       type == data::SurfaceType::kCone || type == data::SurfaceType::kExtrusion;
    if (type == data::SurfaceType::kSphere) {
      const FaceSurface& surface = faces.surfaces[f];
      BndLib_AddSurface::AddOptimal(*surface.adaptor, surface.u0, surface.u1, surface.v0,
                                    surface.v1, /*Tol=*/0.0, box);
      continue;
    }
    const double* grid = faces.samples.data() + static_cast<size_t>(f) * kFaceValues;
    for (int k = 0; k < kGrid * kGrid; ++k) {
      const double* sample = grid + k * kFaceChannels;
      // Edgeless faces (a full sphere) have only their samples.
      if ((!ruled || box.IsVoid()) && sample[6] > 0.5)
        box.Add(gp_Pnt(sample[0], sample[1], sample[2]));
    }
  }
  return box;
}

// Millimetres to normalised coordinates: x -> (x - centre) * scale.
struct Normalisation {
  gp_XYZ centre;
  double scale = 0;  // 2 / the longest side of the box
};

// The normalisation of the box, which also fills graph.bbox_mm and
// graph.scale_mm; a failure for an empty, unbounded or degenerate box.
Result<Normalisation> normalisation(const Bnd_Box& box, data::BRepGraph& graph) {
  if (box.IsVoid()) return Status::failure("the model has an empty bounding box");
  double x0, y0, z0, x1, y1, z1;
  box.Get(x0, y0, z0, x1, y1, z1);
  const double longest = std::max({x1 - x0, y1 - y0, z1 - z0});
  if (!std::isfinite(longest) || longest > 1e9)
    return Status::failure("the model is unbounded (an infinite surface or curve)");
  if (longest <= Precision::Confusion())
    return Status::failure(format("the model is degenerate: its longest side is {} mm", longest));
  const gp_XYZ centre((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2);
  const double scale = 2.0 / longest;
  graph.bbox_mm = {static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(z0),
                   static_cast<float>(x1), static_cast<float>(y1), static_cast<float>(z1)};
  graph.scale_mm = static_cast<float>(longest);
  return Normalisation{centre, scale};
}

// Normalised face centroids and face grids.
void write_faces(const SampledFaces& faces, const Normalisation& frame, data::BRepGraph& graph) {
  const int face_count = static_cast<int>(graph.face_types.size());
  for (int f = 0; f < face_count; ++f) {
    const double* centroid = faces.centroids_mm.data() + static_cast<size_t>(f) * 3;
    put3(&graph.face_centroids[static_cast<size_t>(f) * 3],
         (gp_XYZ(centroid[0], centroid[1], centroid[2]) - frame.centre) * frame.scale);
  }
  const std::vector<double>& samples = faces.samples;
  graph.face_grids.resize(samples.size());
  for (size_t k = 0; k < samples.size(); k += kFaceChannels) {
    const gp_XYZ point(samples[k], samples[k + 1], samples[k + 2]);
    put3(&graph.face_grids[k], (point - frame.centre) * frame.scale);
    for (int c = 3; c < kFaceChannels; ++c)
      graph.face_grids[k + c] = static_cast<float>(samples[k + c]);
  }
}

// One B-Rep edge sampled in its left face's direction (millimetres).
struct EdgeSamples {
  std::array<gp_Pnt, kSamples> points;
  std::array<gp_Vec, kSamples> tangents, left_normals, right_normals;
  data::Convexity convexity = data::Convexity::kSmooth;
  uint8_t type = 0;  // CurveType
  float length = 0;  // mm
};

EdgeSamples sample_edge(const Link& link, const TopoDS_Edge& edge, const TopoDS_Face& left_face,
                        const TopoDS_Face& right_face, std::vector<FaceSurface>& surfaces) {
  BRepAdaptor_Curve curve(edge);
  const double t0 = curve.FirstParameter(), t1 = curve.LastParameter();
  double first = 0, last = 0;
  const Handle(Geom2d_Curve) left_pcurve = BRep_Tool::CurveOnSurface(edge, left_face, first, last);
  const Handle(Geom2d_Curve) right_pcurve =
      BRep_Tool::CurveOnSurface(edge, right_face, first, last);

  EdgeSamples out;
  double dot_sum = 0, turn_sum = 0;
  int defined = 0;
  for (int k = 0; k < kSamples; ++k) {
    const int step = link.forward ? k : kSamples - 1 - k;
    const double t = parameter_at(t0, t1, step, kSamples);
    gp_Vec derivative;
    curve.D1(t, out.points[k], derivative);
    if (!link.forward) derivative.Reverse();
    const double magnitude = derivative.Magnitude();
    out.tangents[k] = magnitude > 0 ? derivative / magnitude : gp_Vec(0, 0, 0);
    out.left_normals[k] =
        normal_along_edge(surfaces[link.left], left_face, left_pcurve, t, out.points[k]);
    out.right_normals[k] =
        normal_along_edge(surfaces[link.right], right_face, right_pcurve, t, out.points[k]);
    if (out.left_normals[k].SquareMagnitude() > 0 && out.right_normals[k].SquareMagnitude() > 0) {
      dot_sum += out.left_normals[k].Dot(out.right_normals[k]);
      turn_sum += out.left_normals[k].Crossed(out.right_normals[k]).Dot(out.tangents[k]);
      ++defined;
    }
  }
  if (defined > 0 && dot_sum / defined <= kSmoothCosine)
    out.convexity = turn_sum > 0 ? data::Convexity::kConvex : data::Convexity::kConcave;
  out.type = static_cast<uint8_t>(curve_type(curve.GetType()));
  out.length = static_cast<float>(GCPnts_AbscissaPoint::Length(curve));
  return out;
}

// Link l as directed edges 2 l (left→right) and 2 l + 1 (right→left).
void write_directed_edges(const Link& link, size_t l, const EdgeSamples& edge,
                          const Normalisation& frame, data::BRepGraph& graph) {
  for (int direction = 0; direction < 2; ++direction) {
    const bool reverse = direction == 1;
    graph.edge_src.push_back(reverse ? link.right : link.left);
    graph.edge_dst.push_back(reverse ? link.left : link.right);
    graph.edge_types.push_back(edge.type);
    graph.edge_lengths.push_back(edge.length);
    graph.edge_convexity.push_back(static_cast<uint8_t>(edge.convexity));
    float* out = graph.edge_grids.data() + (2 * l + direction) * kSamples * kEdgeChannels;
    for (int k = 0; k < kSamples; ++k) {
      const int from = reverse ? kSamples - 1 - k : k;
      float* sample = out + k * kEdgeChannels;
      put3(sample, (edge.points[from].XYZ() - frame.centre) * frame.scale);
      put3(sample + 3, (reverse ? -edge.tangents[from] : edge.tangents[from]).XYZ());
      put3(sample + 6, (reverse ? edge.right_normals[from] : edge.left_normals[from]).XYZ());
      put3(sample + 9, (reverse ? edge.left_normals[from] : edge.right_normals[from]).XYZ());
    }
  }
}

// Directed edges: left→right, then right→left, per B-Rep edge.
void write_edges(const std::vector<Link>& links, const TopTools_IndexedMapOfShape& faces,
                 const TopTools_IndexedMapOfShape& edges, std::vector<FaceSurface>& surfaces,
                 const Normalisation& frame, data::BRepGraph& graph) {
  const int64_t directed = 2 * static_cast<int64_t>(links.size());
  graph.edge_src.reserve(directed);
  graph.edge_dst.reserve(directed);
  graph.edge_grids.resize(static_cast<size_t>(directed) * kSamples * kEdgeChannels);
  graph.edge_types.reserve(directed);
  graph.edge_lengths.reserve(directed);
  graph.edge_convexity.reserve(directed);
  for (size_t l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    const EdgeSamples samples =
        sample_edge(link, TopoDS::Edge(edges(link.edge + 1)), TopoDS::Face(faces(link.left + 1)),
                    TopoDS::Face(faces(link.right + 1)), surfaces);
    write_directed_edges(link, l, samples, frame, graph);
  }
}

// Geometry hash: per-face digests of the quantised grid, centred on the box
// of all grid points, sorted so that the face order does not matter.
// samples: [F, kGrid, kGrid, kFaceChannels] in millimetres.
std::string geometry_hash(const std::vector<double>& samples,
                          const std::vector<uint8_t>& face_types) {
  const int face_count = static_cast<int>(face_types.size());
  gp_XYZ low(1e300, 1e300, 1e300), high(-1e300, -1e300, -1e300);
  for (size_t k = 0; k < samples.size(); k += kFaceChannels) {
    low.SetCoord(std::min(low.X(), samples[k]), std::min(low.Y(), samples[k + 1]),
                 std::min(low.Z(), samples[k + 2]));
    high.SetCoord(std::max(high.X(), samples[k]), std::max(high.Y(), samples[k + 1]),
                  std::max(high.Z(), samples[k + 2]));
  }
  const gp_XYZ hash_centre = (low + high) / 2;
  std::vector<std::array<uint8_t, 32>> digests(face_count);
  std::vector<int64_t> quantised;
  quantised.reserve(kGrid * kGrid * 7 + 1);
  for (int f = 0; f < face_count; ++f) {
    // One buffer per face: Sha256 costs per call, and 700 tiny updates a face
    // showed in the profile.
    quantised.assign(1, face_types[f]);
    const double* grid = samples.data() + static_cast<size_t>(f) * kFaceValues;
    for (int s = 0; s < kGrid * kGrid; ++s) {
      const double* sample = grid + s * kFaceChannels;
      for (int c = 0; c < 3; ++c)
        quantised.push_back(
            std::llround((sample[c] - hash_centre.Coord(c + 1)) / kHashPointQuantumMm));
      for (int c = 3; c < 6; ++c) quantised.push_back(std::llround(sample[c] / kHashNormalQuantum));
      quantised.push_back(sample[6] > 0.5 ? 1 : 0);
    }
    digests[f] = Sha256().update(std::as_bytes(std::span(quantised))).digest();
  }
  std::sort(digests.begin(), digests.end());
  Sha256 model_hash;
  model_hash.update(std::string_view("cadclip-geometry-hash-v1"));
  model_hash.update_value(static_cast<int64_t>(face_count));
  for (const auto& digest : digests) model_hash.update(std::as_bytes(std::span(digest)));
  return model_hash.hex_digest();
}

}  // namespace

Result<data::BRepGraph> featurize_shape(const TopoDS_Shape& shape, const IngestOptions& options) {
  if (shape.IsNull()) return Status::failure("cannot featurize a null shape");
  TopTools_IndexedMapOfShape faces, edges;
  // MapShapes visits sub-shapes in the order the file's topology lists them, so
  // the same file always gives the same face and edge order.
  TopExp::MapShapes(shape, TopAbs_FACE, faces);
  TopExp::MapShapes(shape, TopAbs_EDGE, edges);
  const int face_count = faces.Extent();
  if (face_count == 0) return Status::failure("the model has no face");
  const data::IngestLimits& limits = options.limits;
  if (limits.max_faces > 0 && face_count > limits.max_faces)
    return Status::failure(
        format("the model has {} faces, over the limit of {} (--max-faces, max_faces in "
               "Python; 0 = no limit; docs/INGEST.md gives the memory per size)",
               with_commas(face_count), with_commas(limits.max_faces)));

  std::vector<int> loop_counts;
  const std::vector<Link> links = manifold_links(edges, edge_uses(faces, edges, loop_counts));
  const int64_t directed = 2 * static_cast<int64_t>(links.size());
  if (limits.max_edges > 0 && directed > limits.max_edges)
    return Status::failure(
        format("the model has {} directed edges, over the limit of {} (--max-edges, max_edges "
               "in Python; 0 = no limit)",
               with_commas(directed), with_commas(limits.max_edges)));

  data::BRepGraph graph;
  SampledFaces sampled;
  sampled.samples.resize(static_cast<size_t>(face_count) * kFaceValues);
  sampled.surfaces.resize(face_count);
  sampled.centroids_mm.resize(static_cast<size_t>(face_count) * 3);
  graph.face_types.resize(face_count);
  graph.face_areas.resize(face_count);
  graph.face_centroids.resize(static_cast<size_t>(face_count) * 3);
  graph.face_rational.resize(face_count);
  graph.face_loops.assign(loop_counts.begin(), loop_counts.end());
  for (int f = 0; f < face_count; ++f) {
    if (Status status = sample_face(TopoDS::Face(faces(f + 1)), f, graph, sampled); !status)
      return status;
  }

  const Result<Normalisation> frame =
      normalisation(model_box(edges, graph.face_types, sampled), graph);
  if (!frame) return frame.status();
  write_faces(sampled, frame.value(), graph);
  write_edges(links, faces, edges, sampled.surfaces, frame.value(), graph);
  graph.geometry_hash = geometry_hash(sampled.samples, graph.face_types);
  return graph;
}

}  // namespace cadclip::cad
