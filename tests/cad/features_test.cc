// Features checked by hand on a box and on a plate with a through hole.
#include <gtest/gtest.h>
#include <BRepAdaptor_Surface.hxx>
#include <BRepBndLib.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepGProp.hxx>
#include <BRepPrimAPI_MakeSphere.hxx>
#include <Bnd_Box.hxx>
#include <GProp_GProps.hxx>
#include <Geom_SphericalSurface.hxx>
#include <TopExp.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <gp_Ax2.hxx>
#include <gp_Ax3.hxx>
#include <gp_Vec.hxx>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "../shared_corpus.h"
#include "cad/occt_shape.h"
#include "cadclip/core/format.h"
#include "test_shapes.h"

namespace cadclip::cad {
namespace {

using data::BRepGraph;

constexpr int kCells = data::kUvGridSize * data::kUvGridSize;

const float* face_sample(const BRepGraph& graph, int face, int sample) {
  return graph.face_grids.data() + (static_cast<size_t>(face) * kCells + sample) * 7;
}

float dot3(const float* a, const float* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

BRepGraph featurize(const TopoDS_Shape& shape) {
  Result<BRepGraph> graph = ingest_shape(shape, "part", "synthetic:mm", IngestOptions{});
  EXPECT_TRUE(graph) << graph.status().reason();
  return std::move(graph).value();
}

TEST(Features, BoxHasSixOutwardPlanesAndTwelveConvexEdges) {
  const BRepGraph graph = featurize(testing::box(10, 20, 30));
  ASSERT_EQ(graph.num_faces(), 6);
  EXPECT_EQ(graph.solid_count, 1);
  EXPECT_TRUE(graph.closed);
  EXPECT_EQ(graph.scale_mm, 30.f);
  const std::array<float, 6> expected_box{0, 0, 0, 10, 20, 30};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(graph.bbox_mm[k], expected_box[k], 1e-4);

  std::multiset<int> areas;
  for (int f = 0; f < 6; ++f) {
    EXPECT_EQ(graph.face_types[f], uint8_t(data::SurfaceType::kPlane));
    EXPECT_EQ(graph.face_loops[f], 1);
    EXPECT_EQ(graph.face_rational[f], 0);
    areas.insert(static_cast<int>(std::lround(graph.face_areas[f])));
    // Box centre is the origin after normalisation, so an outward normal
    // points the same way as the face's centroid.
    const float* centroid = &graph.face_centroids[f * 3];
    for (int s = 0; s < kCells; ++s) {
      const float* sample = face_sample(graph, f, s);
      EXPECT_EQ(sample[6], 1.f) << "a rectangle's whole grid, boundary included, is inside";
      EXPECT_NEAR(std::sqrt(dot3(sample + 3, sample + 3)), 1.f, 1e-5);
      EXPECT_NEAR(dot3(sample + 3, centroid), std::sqrt(dot3(centroid, centroid)), 1e-5)
          << "face " << f << " normal not outward";
      for (int c = 0; c < 3; ++c) EXPECT_LE(std::abs(sample[c]), 1.f + 1e-5);
    }
  }
  EXPECT_EQ(areas, (std::multiset<int>{200, 200, 300, 300, 600, 600}));

  ASSERT_EQ(graph.num_edges(), 24);
  std::set<std::pair<int, int>> pairs;
  std::multiset<int> lengths;
  for (int e = 0; e < 24; ++e) {
    EXPECT_EQ(graph.edge_convexity[e], uint8_t(data::Convexity::kConvex)) << e;
    EXPECT_EQ(graph.edge_types[e], uint8_t(data::CurveType::kLine));
    EXPECT_NE(graph.edge_src[e], graph.edge_dst[e]);
    pairs.insert({graph.edge_src[e], graph.edge_dst[e]});
    lengths.insert(static_cast<int>(std::lround(graph.edge_lengths[e])));
    // The face-normal channels hold the source and target faces' normals.
    const float* sample = graph.edge_grids.data() + e * 10 * 12 + 5 * 12;
    const float* src_normal = face_sample(graph, graph.edge_src[e], 0) + 3;
    const float* dst_normal = face_sample(graph, graph.edge_dst[e], 0) + 3;
    EXPECT_NEAR(dot3(sample + 6, src_normal), 1.f, 1e-5);
    EXPECT_NEAR(dot3(sample + 9, dst_normal), 1.f, 1e-5);
    // Convex: (n_src x n_dst) . t > 0 along the edge's direction in the source face.
    const float* t = sample + 3;
    const float* a = sample + 6;
    const float* b = sample + 9;
    const float cross_dot = (a[1] * b[2] - a[2] * b[1]) * t[0] +
                            (a[2] * b[0] - a[0] * b[2]) * t[1] + (a[0] * b[1] - a[1] * b[0]) * t[2];
    EXPECT_GT(cross_dot, 0.5f) << e;
  }
  EXPECT_EQ(pairs.size(), 24u) << "each face pair once per direction";
  for (const auto& [src, dst] : pairs) EXPECT_TRUE(pairs.count({dst, src}));
  EXPECT_EQ(lengths, (std::multiset<int>{10, 10, 10, 10, 10, 10, 10, 10, 20, 20, 20, 20,
                                         20, 20, 20, 20, 30, 30, 30, 30, 30, 30, 30, 30}));
}

TEST(Features, PlateWithThroughHole) {
  const double kRadius = 10;
  const BRepGraph graph = featurize(testing::plate_with_hole(100, 60, 10, kRadius));
  ASSERT_EQ(graph.num_faces(), 7);
  int cylinder = -1;
  for (int f = 0; f < 7; ++f)
    if (graph.face_types[f] == uint8_t(data::SurfaceType::kCylinder)) cylinder = f;
  ASSERT_GE(cylinder, 0);
  // Area of the hole's wall: 2*pi*r*h = 2*pi*10*10.
  EXPECT_NEAR(graph.face_areas[cylinder], 2 * M_PI * 10 * 10, 1e-2);
  int holed = 0;
  for (int f = 0; f < 7; ++f) {
    if (graph.face_loops[f] == 2) {
      ++holed;
      // Top and bottom: 100*60 - pi*10^2.
      EXPECT_NEAR(graph.face_areas[f], 6000 - M_PI * 100, 1e-2);
      // Some grid points fall in the hole: the mask excludes them.
      int inside = 0;
      for (int s = 0; s < kCells; ++s) inside += face_sample(graph, f, s)[6] > 0.5f;
      EXPECT_LT(inside, kCells);
      EXPECT_GT(inside, kCells / 2);
    }
  }
  EXPECT_EQ(holed, 2);

  // The hole's axis in normalised coordinates: centre of the plate, along z.
  // Out of the material, on the hole's wall, is towards the axis.
  for (int s = 0; s < kCells; ++s) {
    const float* sample = face_sample(graph, cylinder, s);
    const float radial[3] = {sample[0], sample[1], 0};
    EXPECT_LT(dot3(radial, sample + 3), 0) << "hole wall normal must point at the axis";
  }
  // 12 plate edges + 2 circles (the seam joins the cylinder to itself: no graph edge).
  ASSERT_EQ(graph.num_edges(), 28);
  int rim = 0;
  for (int e = 0; e < 28; ++e) {
    // A through hole's rims are convex: the material there is a 90° wedge
    // (below the top face, outside the cylinder), like a box edge. Every edge
    // of this part is convex; the blind hole below has the concave one.
    EXPECT_EQ(graph.edge_convexity[e], uint8_t(data::Convexity::kConvex)) << e;
    if (graph.edge_src[e] == cylinder || graph.edge_dst[e] == cylinder) {
      ++rim;
      EXPECT_EQ(graph.edge_types[e], uint8_t(data::CurveType::kCircle));
      EXPECT_NEAR(graph.edge_lengths[e], 2 * M_PI * kRadius, 1e-3);
    }
  }
  EXPECT_EQ(rim, 4);
}

TEST(Features, BlindHoleFloorEdgeIsConcave) {
  const BRepGraph graph = featurize(testing::plate_with_hole(100, 60, 10, 10, /*depth=*/4));
  ASSERT_EQ(graph.num_faces(), 8);  // 6 plate faces, the hole's wall and its floor
  int wall = -1;
  for (int f = 0; f < 8; ++f)
    if (graph.face_types[f] == uint8_t(data::SurfaceType::kCylinder)) wall = f;
  ASSERT_GE(wall, 0);
  int concave = 0, rim = 0;
  for (int e = 0; e < graph.num_edges(); ++e) {
    if (graph.edge_src[e] != wall && graph.edge_dst[e] != wall) continue;
    const int other = graph.edge_src[e] == wall ? graph.edge_dst[e] : graph.edge_src[e];
    // The floor is the plane whose centroid lies inside the plate (normalised z
    // between the faces); its normal points up, out of the material, into the hole.
    const bool floor = std::abs(graph.face_centroids[other * 3 + 2]) < 0.999f * 0.1f;
    if (floor) {
      ++concave;
      EXPECT_EQ(graph.edge_convexity[e], uint8_t(data::Convexity::kConcave)) << e;
      EXPECT_NEAR(graph.face_areas[other], M_PI * 100, 1e-2);
    } else {
      ++rim;
      EXPECT_EQ(graph.edge_convexity[e], uint8_t(data::Convexity::kConvex)) << e;
    }
  }
  EXPECT_EQ(concave, 2);
  EXPECT_EQ(rim, 2);
}

TEST(Features, SmoothEdgeBetweenTangentFaces) {
  // A box with one rounded vertical edge: the fillet meets its planes tangentially.
  const TopoDS_Shape rounded = testing::filleted_box(40, 30, 20, 5);
  const BRepGraph graph = featurize(rounded);
  int smooth = 0;
  for (int e = 0; e < graph.num_edges(); ++e)
    smooth += graph.edge_convexity[e] == uint8_t(data::Convexity::kSmooth);
  EXPECT_EQ(smooth, 4) << "the fillet's two tangent edges, in both directions";
}

TEST(Features, SameShapeTwiceGivesIdenticalBytes) {
  const TopoDS_Shape shape = testing::plate_with_hole(80, 50, 8, 6);
  const BRepGraph a = featurize(shape);
  const BRepGraph b = featurize(shape);
  EXPECT_EQ(a.face_grids, b.face_grids);
  EXPECT_EQ(a.face_areas, b.face_areas);
  EXPECT_EQ(a.face_centroids, b.face_centroids);
  EXPECT_EQ(a.edge_grids, b.edge_grids);
  EXPECT_EQ(a.edge_src, b.edge_src);
  EXPECT_EQ(a.edge_dst, b.edge_dst);
  EXPECT_EQ(a.edge_lengths, b.edge_lengths);
  EXPECT_EQ(a.edge_convexity, b.edge_convexity);
  EXPECT_EQ(a.bbox_mm, b.bbox_mm);
  EXPECT_EQ(a.geometry_hash, b.geometry_hash);
}

TEST(Features, LimitsFailWithTheirReasonInsteadOfTruncating) {
  IngestOptions options;
  options.limits.max_faces = 5;
  Result<BRepGraph> graph = ingest_shape(testing::box(1, 2, 3), "box", "synthetic:mm", options);
  ASSERT_FALSE(graph);
  EXPECT_NE(graph.status().reason().find("6 faces, over the limit of 5"), std::string::npos)
      << graph.status().reason();
  options.limits.max_faces = 0;
  options.limits.max_edges = 20;
  graph = ingest_shape(testing::box(1, 2, 3), "box", "synthetic:mm", options);
  ASSERT_FALSE(graph);
  EXPECT_NE(graph.status().reason().find("24 directed edges, over the limit of 20"),
            std::string::npos)
      << graph.status().reason();
}

TEST(Features, FaceAreasAndCentroidsAgreeWithOcctOnCorpusParts) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  // Planes and cylinders take a boundary-integral shortcut, other faces an
  // adaptive integration; the sums over a part must match BRepGProp's default
  // surface properties of the whole part.
  for (const char* file :
       {CADCLIP_SHARED_DATA "/cad/aagnet/partC.step", CADCLIP_SHARED_DATA "/cad/occt/screw.step",
        CADCLIP_SHARED_DATA "/cad/brepnet/23642_cd2f2029_0.step",
        CADCLIP_SHARED_DATA "/cad/occt/bottle.brep"}) {
    const Result<LoadedShape> loaded = read_shape(file, IngestOptions{});
    ASSERT_TRUE(loaded) << loaded.status().reason();
    const Result<ModelShape> model = select_model(loaded->shape);
    ASSERT_TRUE(model);
    const Result<BRepGraph> graph = featurize_shape(model->shape, IngestOptions{});
    ASSERT_TRUE(graph) << graph.status().reason();
    GProp_GProps props;
    BRepGProp::SurfaceProperties(model->shape, props);
    double total = 0;
    gp_XYZ moment(0, 0, 0);
    const double half = graph->scale_mm / 2;
    const gp_XYZ centre((graph->bbox_mm[0] + graph->bbox_mm[3]) / 2.0,
                        (graph->bbox_mm[1] + graph->bbox_mm[4]) / 2.0,
                        (graph->bbox_mm[2] + graph->bbox_mm[5]) / 2.0);
    for (int f = 0; f < graph->num_faces(); ++f) {
      total += graph->face_areas[f];
      const float* c = &graph->face_centroids[f * 3];
      moment += (centre + gp_XYZ(c[0], c[1], c[2]) * half) * graph->face_areas[f];
    }
    // Exact for planes and cylinders; other faces integrate to 1e-3 relative.
    EXPECT_NEAR(total, props.Mass(), 1e-3 * props.Mass()) << file;
    const gp_XYZ expected = props.CentreOfMass().XYZ();
    EXPECT_NEAR((moment / total - expected).Modulus(), 0, 1e-3 * graph->scale_mm) << file;
  }
}

TEST(Features, SphereBoxIsExact) {
  // A sphere's extremes lie on no edge; its box comes from the closed form.
  const BRepGraph graph = featurize(BRepPrimAPI_MakeSphere(gp_Pnt(1, 2, 3), 10).Shape());
  const std::array<float, 6> expected{-9, -8, -7, 11, 12, 13};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(graph.bbox_mm[k], expected[k], 1e-4) << k;
  EXPECT_EQ(graph.num_faces(), 1);
  EXPECT_EQ(graph.num_edges(), 0) << "a seam and two poles: no face pair";
  EXPECT_NEAR(graph.face_areas[0], 4 * M_PI * 100, 4 * M_PI * 100 * 1e-3);
}

// Neighbouring grid samples of a sphere lie 20° apart at most (10 samples
// over its half meridian), so their normals never oppose; a row that does is
// a normal with the wrong sign (a pole, where Su vanishes). Returns how many
// neighbour pairs of spherical faces oppose.
int opposed_grid_neighbours(const BRepGraph& graph) {
  int opposed = 0;
  for (int f = 0; f < graph.num_faces(); ++f) {
    if (graph.face_types[f] != uint8_t(data::SurfaceType::kSphere)) continue;
    for (int i = 0; i < data::kUvGridSize; ++i) {
      for (int j = 0; j < data::kUvGridSize; ++j) {
        const float* here = face_sample(graph, f, i * data::kUvGridSize + j);
        for (const auto& [di, dj] : {std::pair{1, 0}, std::pair{0, 1}}) {
          if (i + di >= data::kUvGridSize || j + dj >= data::kUvGridSize) continue;
          const float* next = face_sample(graph, f, (i + di) * data::kUvGridSize + j + dj);
          if (dot3(here + 3, next + 3) < 0) ++opposed;
        }
      }
    }
  }
  return opposed;
}

// Every sample of every spherical face of `shape`, the pole rows included,
// points away from its sphere's centre. The graph's faces follow the model's
// TopExp::MapShapes order, so face f is the f-th face of the kept shape.
void expect_sphere_normals_outward(const TopoDS_Shape& shape, const std::string& what) {
  TopoDS_Shape kept;
  Result<BRepGraph> graph = ingest_shape(shape, "part", "synthetic:mm", IngestOptions{}, &kept);
  ASSERT_TRUE(graph) << graph.status().reason();
  TopTools_IndexedMapOfShape faces;
  TopExp::MapShapes(kept, TopAbs_FACE, faces);
  ASSERT_EQ(faces.Extent(), graph->num_faces());
  int spherical = 0;
  const double half = graph->scale_mm / 2;
  for (int f = 0; f < graph->num_faces(); ++f) {
    if (graph->face_types[f] != uint8_t(data::SurfaceType::kSphere)) continue;
    ++spherical;
    const gp_Pnt centre = BRepAdaptor_Surface(TopoDS::Face(faces(f + 1))).Sphere().Location();
    for (int s = 0; s < kCells; ++s) {
      const float* sample = face_sample(graph.value(), f, s);
      const gp_Vec radial(
          sample[0] * half + (graph->bbox_mm[0] + graph->bbox_mm[3]) / 2 - centre.X(),
          sample[1] * half + (graph->bbox_mm[1] + graph->bbox_mm[4]) / 2 - centre.Y(),
          sample[2] * half + (graph->bbox_mm[2] + graph->bbox_mm[5]) / 2 - centre.Z());
      const gp_Vec normal(sample[3], sample[4], sample[5]);
      EXPECT_NEAR(normal.Dot(radial) / radial.Magnitude(), 1.0, 1e-3)
          << what << ": face " << f << " sample " << s << " (row " << s / data::kUvGridSize << ")";
    }
  }
  EXPECT_GT(spherical, 0) << what;
  EXPECT_EQ(opposed_grid_neighbours(graph.value()), 0) << what;
}

TEST(Features, SpherePolesPointOutwards) {
  // Whole and partial spheres about tilted axes, and the corner patches of a
  // rounded box, whose poles sit on a grid row (a fillet's sphere has its
  // pole at the patch's corner).
  const gp_Pnt centre(1, 2, 3);
  expect_sphere_normals_outward(BRepPrimAPI_MakeSphere(centre, 10).Shape(), "sphere");
  expect_sphere_normals_outward(BRepPrimAPI_MakeSphere(gp_Ax2(centre, gp_Dir(1, 1, 1)), 7).Shape(),
                                "tilted sphere");
  expect_sphere_normals_outward(
      BRepPrimAPI_MakeSphere(gp_Ax2(centre, gp_Dir(0, -1, 0.3)), 5, -M_PI / 3, M_PI / 2).Shape(),
      "sphere cut below");
  expect_sphere_normals_outward(testing::rounded_box(30, 20, 10, 3), "rounded box");
  // Patches reaching a pole, on spheres with right- and left-handed frames
  // (fillets build the latter), as loose faces; the pole's parameter as a
  // BREP file writes it (17 digits: -1.5707963267949001, 3.5e-15 past -pi/2,
  // as in occt/bottle.brep), where cos(v) < 0 turns the rounding-noise Su around.
  for (const bool direct : {true, false}) {
    gp_Ax3 frame(centre, gp_Dir(0.2, -0.3, 1), gp_Dir(1, 0, -0.2));
    if (!direct) frame.YReverse();
    const Handle(Geom_SphericalSurface) sphere = new Geom_SphericalSurface(frame, 4);
    for (const auto& [v0, v1] : {std::pair{-M_PI / 2, 0.0}, std::pair{-1.5707963267949001, 0.0},
                                 std::pair{0.3, 1.5707963267949001}}) {
      const TopoDS_Face patch = BRepBuilderAPI_MakeFace(sphere, 0, 1.168, v0, v1, 1e-7);
      expect_sphere_normals_outward(
          direct ? patch : TopoDS::Face(patch.Reversed()),
          format("patch v {}..{} of a {} sphere", v0, v1, direct ? "direct" : "indirect"));
    }
  }
}

TEST(Features, BottleSpherePolesPointOutwards) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  // OCCT's bottle: 16 spherical faces (the fillet corners) whose pole rows
  // pointed inwards, 160 opposed neighbour pairs before the fix.
  const Result<BRepGraph> graph =
      ingest_file(CADCLIP_SHARED_DATA "/cad/occt/bottle.brep", IngestOptions{});
  if (!graph && !std::filesystem::exists(CADCLIP_SHARED_DATA "/cad/occt/bottle.brep"))
    GTEST_SKIP() << "../shared/data is not beside the checkout";
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(opposed_grid_neighbours(graph.value()), 0);
  // Those rows made 32 of its 137 edges (64 of 274 directed) convex or
  // concave where their faces meet tangentially.
  ASSERT_EQ(graph->num_edges(), 274);
  const auto smooth = std::count(graph->edge_convexity.begin(), graph->edge_convexity.end(),
                                 uint8_t(data::Convexity::kSmooth));
  EXPECT_EQ(smooth, 252);
}

TEST(Features, BoundingBoxAgreesWithOcctsOptimalBox) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  // Edges exactly plus grid points of doubly curved faces, against OCCT's
  // global optimisation over every face (seconds on some parts: not used).
  for (const char* file : {CADCLIP_SHARED_DATA "/cad/occt/screw.step",
                           CADCLIP_SHARED_DATA "/cad/brepnet/23642_cd2f2029_0.step",
                           CADCLIP_SHARED_DATA "/cad/occt/bottle.brep"}) {
    const Result<LoadedShape> loaded = read_shape(file, IngestOptions{});
    ASSERT_TRUE(loaded) << loaded.status().reason();
    const Result<ModelShape> model = select_model(loaded->shape);
    ASSERT_TRUE(model);
    const Result<BRepGraph> graph = featurize_shape(model->shape, IngestOptions{});
    ASSERT_TRUE(graph) << graph.status().reason();
    Bnd_Box box;
    BRepBndLib::AddOptimal(model->shape, box, /*useTriangulation=*/false,
                           /*useShapeTolerance=*/false);
    double exact[6];
    box.Get(exact[0], exact[1], exact[2], exact[3], exact[4], exact[5]);
    for (int k = 0; k < 6; ++k) {
      EXPECT_NEAR(graph->bbox_mm[k], exact[k], 2e-3 * graph->scale_mm) << file << " side " << k;
    }
  }
}

}  // namespace
}  // namespace cadclip::cad
