// Open CASCADE side of the synthetic generator: random streams, modelling
// helpers, measuring a built solid, its interim geometry hash and STEP text.
#include <APIHeaderSection_MakeHeader.hxx>
#include <BRepAdaptor_Curve.hxx>
#include <BRepAdaptor_Surface.hxx>
#include <BRepAlgoAPI_Common.hxx>
#include <BRepAlgoAPI_Cut.hxx>
#include <BRepAlgoAPI_Fuse.hxx>
#include <BRepBndLib.hxx>
#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepCheck_Analyzer.hxx>
#include <BRepFilletAPI_MakeFillet.hxx>
#include <BRepGProp.hxx>
#include <BRepLProp_SLProps.hxx>
#include <BRepPrimAPI_MakeBox.hxx>
#include <BRepPrimAPI_MakeCone.hxx>
#include <BRepPrimAPI_MakeCylinder.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <BRepPrimAPI_MakeRevol.hxx>
#include <BRepTools.hxx>
#include <BRep_Tool.hxx>
#include <Bnd_Box.hxx>
#include <GC_MakeArcOfCircle.hxx>
#include <GProp_GProps.hxx>
#include <STEPControl_Writer.hxx>
#include <Standard_Failure.hxx>
#include <StepBasic_Product.hxx>
#include <StepData_Protocol.hxx>
#include <StepData_StepModel.hxx>
#include <StepData_StepWriter.hxx>
#include <TCollection_HAsciiString.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopTools_ListOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Edge.hxx>
#include <TopoDS_Face.hxx>
#include <gp_Ax2.hxx>
#include <gp_Cylinder.hxx>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "cad/occt_shape.h"
#include "cadclip/core/format.h"
#include "synth/model.h"

namespace cadclip::synth {

// ---------------------------------------------------------------- Rng

namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed, uint64_t index, uint64_t tag, uint64_t counter) {
  uint64_t state = seed;
  // Mix each key in turn so that (seed, index, tag, counter) tuples never share a stream.
  for (uint64_t key : {index, tag, counter}) {
    state = splitmix64(state) ^ key;
  }
  for (uint64_t& word : s_) word = splitmix64(state);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
int Rng::integer(int lo, int hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int>(next() % span);
}
double Rng::step(double lo, double hi, double step) {
  const int steps = static_cast<int>(std::floor((hi - lo) / step + 1e-9));
  return lo + step * integer(0, std::max(0, steps));
}
bool Rng::chance(double p) { return uniform() < p; }
std::string Rng::pick(std::initializer_list<const char*> items) {
  return *(items.begin() + integer(0, static_cast<int>(items.size()) - 1));
}

// ---------------------------------------------------------------- modelling

namespace {

template <class Fn>
TopoDS_Shape guarded(const char* what, Fn&& fn) {
  try {
    TopoDS_Shape shape = fn();
    if (shape.IsNull()) throw Reject(format("{} gave no shape", what));
    return shape;
  } catch (const Standard_Failure& e) {
    throw Reject(format("{} failed in Open CASCADE: {}", what, e.GetMessageString()));
  }
}

gp_Pnt to3d(const gp_Pnt& o, const gp_Dir& xd, const gp_Dir& yd, double x, double y) {
  return gp_Pnt(o.XYZ() + xd.XYZ() * x + yd.XYZ() * y);
}

}  // namespace

TopoDS_Shape profile_face(const std::vector<P2>& points, const gp_Pnt& origin, const gp_Dir& xdir,
                          const gp_Dir& ydir) {
  return guarded("profile", [&] {
    // Each corner becomes an entry point, optionally an arc or chamfer line,
    // and an exit point; straight edges join the exit of one corner to the
    // entry of the next.
    struct Corner {
      double ax, ay, bx, by;  // entry and exit points (2-D)
      double fillet;
      double mx, my;  // arc midpoint for fillets
    };
    const size_t n = points.size();
    std::vector<Corner> corners(n);
    for (size_t i = 0; i < n; ++i) {
      const P2& p = points[i];
      const P2& prev = points[(i + n - 1) % n];
      const P2& next = points[(i + 1) % n];
      double ix = p.x - prev.x, iy = p.y - prev.y;
      double ox = next.x - p.x, oy = next.y - p.y;
      const double il = std::hypot(ix, iy), ol = std::hypot(ox, oy);
      if (il < 1e-9 || ol < 1e-9) throw Reject("profile has a repeated point");
      ix /= il, iy /= il, ox /= ol, oy /= ol;
      const double cut = p.fillet > 0 ? p.fillet : p.chamfer;
      Corner c{p.x, p.y, p.x, p.y, p.fillet, 0, 0};
      if (cut > 0) {
        if (cut >= il * 0.999 || cut >= ol * 0.999)
          throw Reject("corner rounding longer than side");
        c.ax = p.x - ix * cut, c.ay = p.y - iy * cut;
        c.bx = p.x + ox * cut, c.by = p.y + oy * cut;
        if (p.fillet > 0) {
          // Right-angle corner: the centre is one radius in from both tangent points.
          const double cx = c.ax + ox * cut, cy = c.ay + oy * cut;
          const double dx = ix - ox, dy = iy - oy, dl = std::hypot(dx, dy);
          c.mx = cx + dx / dl * cut, c.my = cy + dy / dl * cut;
        }
      }
      corners[i] = c;
    }
    BRepBuilderAPI_MakeWire wire;
    auto add_line = [&](double x0, double y0, double x1, double y1) {
      if (std::hypot(x1 - x0, y1 - y0) < 1e-9) return;
      wire.Add(BRepBuilderAPI_MakeEdge(to3d(origin, xdir, ydir, x0, y0),
                                       to3d(origin, xdir, ydir, x1, y1))
                   .Edge());
    };
    for (size_t i = 0; i < n; ++i) {
      const Corner& c = corners[i];
      if (c.fillet > 0) {
        Handle(Geom_TrimmedCurve) arc = GC_MakeArcOfCircle(to3d(origin, xdir, ydir, c.ax, c.ay),
                                                           to3d(origin, xdir, ydir, c.mx, c.my),
                                                           to3d(origin, xdir, ydir, c.bx, c.by))
                                            .Value();
        wire.Add(BRepBuilderAPI_MakeEdge(arc).Edge());
      } else {
        add_line(c.ax, c.ay, c.bx, c.by);
      }
      const Corner& next = corners[(i + 1) % n];
      add_line(c.bx, c.by, next.ax, next.ay);
    }
    if (!wire.IsDone()) throw Reject("profile wire is not connected");
    BRepBuilderAPI_MakeFace face(wire.Wire(), /*OnlyPlane=*/true);
    if (!face.IsDone()) throw Reject("profile is not a planar face");
    return TopoDS_Shape(face.Face());
  });
}

TopoDS_Shape extrude(const TopoDS_Shape& face, const gp_Vec& direction) {
  return guarded("extrude", [&] { return BRepPrimAPI_MakePrism(face, direction).Shape(); });
}

TopoDS_Shape revolve(const TopoDS_Shape& face, const gp_Ax1& axis, double angle_rad) {
  return guarded("revolve", [&] { return BRepPrimAPI_MakeRevol(face, axis, angle_rad).Shape(); });
}

TopoDS_Shape box(double x0, double y0, double z0, double dx, double dy, double dz) {
  return guarded("box",
                 [&] { return BRepPrimAPI_MakeBox(gp_Pnt(x0, y0, z0), dx, dy, dz).Shape(); });
}

TopoDS_Shape cylinder(const gp_Pnt& base, const gp_Dir& dir, double radius, double height) {
  return guarded("cylinder", [&] {
    return BRepPrimAPI_MakeCylinder(gp_Ax2(base, dir), radius, height).Shape();
  });
}

TopoDS_Shape cone(const gp_Pnt& base, const gp_Dir& dir, double r_base, double r_top,
                  double height) {
  return guarded("cone", [&] {
    return BRepPrimAPI_MakeCone(gp_Ax2(base, dir), r_base, r_top, height).Shape();
  });
}

namespace {
template <class Op>
TopoDS_Shape boolean(const char* what, const TopoDS_Shape& shape,
                     const std::vector<TopoDS_Shape>& tools) {
  if (tools.empty()) return shape;
  return guarded(what, [&] {
    Op op;
    TopTools_ListOfShape arguments, tool_list;
    arguments.Append(shape);
    for (const TopoDS_Shape& tool : tools) tool_list.Append(tool);
    op.SetArguments(arguments);
    op.SetTools(tool_list);
    op.SetRunParallel(false);  // parts are made in parallel already
    op.Build();
    if (!op.IsDone() || op.HasErrors()) throw Reject(format("{} did not finish", what));
    return op.Shape();
  });
}
}  // namespace

TopoDS_Shape cut(const TopoDS_Shape& shape, const std::vector<TopoDS_Shape>& tools) {
  return boolean<BRepAlgoAPI_Cut>("cut", shape, tools);
}
TopoDS_Shape fuse(const TopoDS_Shape& shape, const std::vector<TopoDS_Shape>& tools) {
  return boolean<BRepAlgoAPI_Fuse>("fuse", shape, tools);
}
TopoDS_Shape common(const TopoDS_Shape& a, const TopoDS_Shape& b) {
  return boolean<BRepAlgoAPI_Common>("common", a, {b});
}

TopoDS_Shape fillet_edges(const TopoDS_Shape& shape, double radius,
                          const std::function<bool(const gp_Pnt& mid, bool straight)>& select) {
  return guarded("fillet", [&] {
    BRepFilletAPI_MakeFillet fillet(shape);
    TopTools_IndexedMapOfShape edges;
    TopExp::MapShapes(shape, TopAbs_EDGE, edges);
    int added = 0;
    for (int i = 1; i <= edges.Extent(); ++i) {
      const TopoDS_Edge& edge = TopoDS::Edge(edges(i));
      if (BRep_Tool::Degenerated(edge)) continue;
      BRepAdaptor_Curve curve(edge);
      const gp_Pnt mid = curve.Value(0.5 * (curve.FirstParameter() + curve.LastParameter()));
      if (select(mid, curve.GetType() == GeomAbs_Line)) {
        fillet.Add(radius, edge);
        ++added;
      }
    }
    if (added == 0) throw Reject("fillet found no edge to round");
    fillet.Build();
    if (!fillet.IsDone()) throw Reject("fillet did not finish");
    return fillet.Shape();
  });
}

// ---------------------------------------------------------------- measuring

Measured measure_valid_solid(const TopoDS_Shape& shape) {
  Measured m;
  try {
    for (TopExp_Explorer it(shape, TopAbs_SOLID); it.More(); it.Next()) ++m.solids;
    if (m.solids != 1) throw Reject(format("{} solids instead of one", m.solids));
    BRepCheck_Analyzer analyzer(shape);
    if (!analyzer.IsValid()) throw Reject("BRepCheck_Analyzer: invalid solid");
    GProp_GProps volume, area;
    BRepGProp::VolumeProperties(shape, volume);
    BRepGProp::SurfaceProperties(shape, area);
    m.volume = volume.Mass();
    m.area = area.Mass();
    if (!(m.volume > 1e-3)) throw Reject(format("degenerate solid, volume {}", m.volume));
    Bnd_Box bounds;
    BRepBndLib::AddOptimal(shape, bounds, /*useTriangulation=*/false, /*useShapeTolerance=*/false);
    bounds.Get(m.bbox[0], m.bbox[1], m.bbox[2], m.bbox[3], m.bbox[4], m.bbox[5]);

    // Holes: cylindrical faces whose normal points at their axis (material
    // outside), grouped by axis line and radius; a group whose faces sweep a
    // full turn is one round hole (a fillet sweeps a quarter turn only).
    std::map<std::tuple<long, long, long, long, long, long, long>, double> sweep;
    std::map<std::tuple<long, long, long, long, long, long, long>, double> radius_of;
    for (TopExp_Explorer it(shape, TopAbs_FACE); it.More(); it.Next()) {
      ++m.faces;
      const TopoDS_Face& face = TopoDS::Face(it.Current());
      BRepAdaptor_Surface surface(face);
      if (surface.GetType() != GeomAbs_Cylinder) continue;
      const gp_Cylinder cyl = surface.Cylinder();
      double u0, u1, v0, v1;
      BRepTools::UVBounds(face, u0, u1, v0, v1);
      const double u = 0.5 * (u0 + u1), v = 0.5 * (v0 + v1);
      BRepLProp_SLProps props(surface, u, v, 1, 1e-9);
      if (!props.IsNormalDefined()) continue;
      gp_Dir normal = props.Normal();
      if (face.Orientation() == TopAbs_REVERSED) normal.Reverse();
      const gp_Pnt p = props.Value();
      const gp_Ax1 axis = cyl.Axis();
      gp_Vec radial(axis.Location(), p);
      const gp_Vec along(axis.Direction());
      radial -= along * radial.Dot(along);
      if (gp_Vec(normal).Dot(radial) >= 0) continue;  // outer surface
      // Canonical axis line: unit direction with a positive leading component,
      // and the line's point closest to the origin.
      gp_Dir d = axis.Direction();
      if (d.X() < -1e-9 ||
          (std::abs(d.X()) <= 1e-9 && (d.Y() < -1e-9 || (std::abs(d.Y()) <= 1e-9 && d.Z() < 0))))
        d.Reverse();
      const gp_Vec o(axis.Location().XYZ());
      const gp_Vec closest = o - gp_Vec(d) * o.Dot(gp_Vec(d));
      auto q = [](double x) { return std::lround(x * 1000); };
      // Coaxial holes in two walls are two holes: the key holds where along
      // the axis the face sits (its middle, to 0.1 mm).
      const double along_axis = gp_Vec(p.XYZ()).Dot(gp_Vec(d));
      const auto key =
          std::make_tuple(q(d.X()), q(d.Y()), q(d.Z()), q(closest.X()), q(closest.Y()),
                          q(closest.Z()) * 100000 + std::lround(along_axis * 10), q(cyl.Radius()));
      sweep[key] += u1 - u0;
      radius_of[key] = cyl.Radius();
    }
    std::map<long, int> by_diameter;
    for (const auto& [key, total] : sweep) {
      if (total < 2 * M_PI - 1e-6) continue;
      ++by_diameter[std::lround(radius_of[key] * 2 * 1000)];
    }
    for (const auto& [d, count] : by_diameter) m.holes.emplace_back(d / 1000.0, count);
  } catch (const Standard_Failure& e) {
    throw Reject(format("measuring failed in Open CASCADE: {}", e.GetMessageString()));
  }
  return m;
}

// ---------------------------------------------------------------- STEP

std::string step_text(const TopoDS_Shape& shape, const std::string& name) {
  // The STEP translator keeps global state (its controller, static parameters);
  // one part at a time keeps it consistent. Modelling runs in parallel outside.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  cad::quiet_occt_messages();  // the translator prints its statistics to stdout, which is apps/'s
  try {
    STEPControl_Writer writer;
    if (writer.Transfer(shape, STEPControl_AsIs) != IFSelect_RetDone)
      throw Reject("STEP transfer failed");
    Handle(StepData_StepModel) model = writer.Model();
    // The translator names products with a process-wide counter; name it after the part.
    for (int i = 1; i <= model->NbEntities(); ++i) {
      Handle(StepBasic_Product) product = Handle(StepBasic_Product)::DownCast(model->Value(i));
      if (product.IsNull()) continue;
      product->SetId(new TCollection_HAsciiString(name.c_str()));
      product->SetName(new TCollection_HAsciiString(name.c_str()));
    }
    APIHeaderSection_MakeHeader header(model);
    header.SetName(new TCollection_HAsciiString(name.c_str()));
    header.SetTimeStamp(new TCollection_HAsciiString("2000-01-01T00:00:00"));
    header.SetAuthorValue(1, new TCollection_HAsciiString("cadclip synth"));
    header.SetOrganizationValue(1, new TCollection_HAsciiString("cadclip"));
    header.SetOriginatingSystem(new TCollection_HAsciiString("cadclip synth"));
    header.SetAuthorisation(new TCollection_HAsciiString(""));
    StepData_StepWriter step_writer(model);
    step_writer.SendModel(Handle(StepData_Protocol)::DownCast(model->Protocol()));
    std::ostringstream out;
    if (!step_writer.Print(out)) throw Reject("STEP text could not be written");
    return out.str();
  } catch (const Standard_Failure& e) {
    throw Reject(format("STEP writing failed in Open CASCADE: {}", e.GetMessageString()));
  }
}

}  // namespace cadclip::synth
