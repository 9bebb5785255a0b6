// Test and benchmark shapes: closed solids of a chosen number of faces, the
// size of real purchased parts and beyond, made without a slow boolean.
//
// many_faced_prism: a prism over a regular polygon of faces - 2 sides (each
// side a planar face, plus the two ends); directed edges 6 (faces - 2). Its
// two end faces have faces - 2 edges each, which Open CASCADE's wire fixing
// takes in time quadratic in the edges (docs/INGEST.md).
//
// triangulated_drum: a twisted drum of planar triangles, faces = 2 sides
// rings + 2, where each face but the two ends has three edges, as the faces
// of real parts have a few: what a large real part costs to read.
#pragma once

#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakePolygon.hxx>
#include <BRepBuilderAPI_MakeSolid.hxx>
#include <BRepBuilderAPI_MakeVertex.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <BRep_Builder.hxx>
#include <BRep_Tool.hxx>
#include <Geom_Plane.hxx>
#include <TopAbs_Orientation.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Edge.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Shape.hxx>
#include <TopoDS_Shell.hxx>
#include <TopoDS_Vertex.hxx>
#include <gp_Pln.hxx>
#include <gp_Pnt.hxx>
#include <gp_Vec.hxx>

#include <cmath>
#include <initializer_list>
#include <numbers>
#include <vector>

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

// `sides` vertices on each of rings + 1 rings (radius 50 mm, 2 mm apart),
// each ring turned half a step from the one below, joined by 2 sides
// triangles per band: 2 sides rings + 2 faces; sides >= 3, rings >= 1.
inline TopoDS_Shape triangulated_drum(int sides, int rings) {
  std::vector<std::vector<TopoDS_Vertex>> v(rings + 1);
  for (int j = 0; j <= rings; ++j) {
    for (int i = 0; i < sides; ++i) {
      const double angle = std::numbers::pi * (2.0 * i + j) / sides;
      v[j].push_back(
          BRepBuilderAPI_MakeVertex(gp_Pnt(50 * std::cos(angle), 50 * std::sin(angle), 2.0 * j)));
    }
  }
  auto edge = [](const TopoDS_Vertex& a, const TopoDS_Vertex& b) {
    return TopoDS_Edge(BRepBuilderAPI_MakeEdge(a, b));
  };
  // Each edge once, shared by the two faces it bounds.
  std::vector<std::vector<TopoDS_Edge>> ring(rings + 1), up(rings), across(rings);
  for (int j = 0; j <= rings; ++j)
    for (int i = 0; i < sides; ++i) ring[j].push_back(edge(v[j][i], v[j][(i + 1) % sides]));
  for (int j = 0; j < rings; ++j) {
    for (int i = 0; i < sides; ++i) {
      up[j].push_back(edge(v[j][i], v[j + 1][i]));                    // below to above-right
      across[j].push_back(edge(v[j][(i + 1) % sides], v[j + 1][i]));  // below-right to above
    }
  }
  // Each face turned to face away from the drum: from its centre, out from
  // the axis, or down and up at the ends.
  auto face = [](const std::vector<TopoDS_Edge>& edges, const gp_Vec& outward) {
    BRepBuilderAPI_MakeWire wire;
    for (const TopoDS_Edge& e : edges) wire.Add(e);
    TopoDS_Face f = BRepBuilderAPI_MakeFace(wire.Wire(), /*OnlyPlane=*/true).Face();
    const Handle(Geom_Plane) plane = Handle(Geom_Plane)::DownCast(BRep_Tool::Surface(f));
    gp_Vec normal(plane->Pln().Axis().Direction());
    if (f.Orientation() == TopAbs_REVERSED) normal.Reverse();
    if (normal.Dot(outward) < 0) f.Reverse();
    return f;
  };
  auto away = [&](std::initializer_list<const TopoDS_Vertex*> corners) {
    gp_XYZ centre;
    for (const TopoDS_Vertex* c : corners) centre += BRep_Tool::Pnt(*c).XYZ();
    centre /= static_cast<double>(corners.size());
    return gp_Vec(centre.X(), centre.Y(), 0);
  };
  BRep_Builder builder;
  TopoDS_Shell shell;
  builder.MakeShell(shell);
  builder.Add(shell, face(ring[0], gp_Vec(0, 0, -1)));
  builder.Add(shell, face(ring[rings], gp_Vec(0, 0, 1)));
  for (int j = 0; j < rings; ++j) {
    for (int i = 0; i < sides; ++i) {
      const int next = (i + 1) % sides;
      builder.Add(shell, face({ring[j][i], across[j][i], up[j][i]},
                              away({&v[j][i], &v[j][next], &v[j + 1][i]})));
      builder.Add(shell, face({across[j][i], ring[j + 1][i], up[j][next]},
                              away({&v[j][next], &v[j + 1][i], &v[j + 1][next]})));
    }
  }
  shell.Closed(true);
  return BRepBuilderAPI_MakeSolid(shell).Solid();
}

}  // namespace cadclip::cad::testing
