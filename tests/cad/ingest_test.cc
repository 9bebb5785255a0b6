// Loading: the shared corpus, the model rule, units, and bad inputs that must
// fail with the right reason.
#include <gtest/gtest.h>
#include <IGESControl_Writer.hxx>
#include <Interface_Static.hxx>
#include <STEPControl_Controller.hxx>
#include <STEPControl_Writer.hxx>

#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "../shared_corpus.h"
#include "cad/occt_shape.h"
#include "cadclip/cad/ingest.h"
#include "many_faces.h"
#include "test_shapes.h"

namespace cadclip::cad {
namespace {

const std::filesystem::path kCorpus = CADCLIP_SHARED_DATA "/cad";

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Ingest, EveryCorpusFileGivesAGraphOrAStatedFailure) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  ASSERT_TRUE(std::filesystem::is_directory(kCorpus)) << "run from the project root";
  std::map<std::string, std::filesystem::path> files;  // sorted: a stable report
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kCorpus))
    if (entry.is_regular_file() && data::is_cad_path(entry.path()))
      files[entry.path().string()] = entry.path();
  ASSERT_GE(files.size(), 30u);
  int graphs = 0;
  std::map<std::string, std::pair<int, bool>> rules;  // file -> solid count, closed
  for (const auto& [name, path] : files) {
    const Result<data::BRepGraph> graph = ingest_file(path, IngestOptions{});
    if (!graph) {
      EXPECT_FALSE(graph.status().reason().empty()) << name;
      std::cout << "[failed] " << name << ": " << graph.status().reason() << "\n";
      continue;
    }
    ++graphs;
    rules[name] = {graph->solid_count, graph->closed};
    std::cout << "[graph] " << name << ": " << graph->num_faces() << " faces, "
              << graph->num_edges() << " edges, " << graph->solid_count << " solids, "
              << (graph->closed ? "closed" : "open") << ", " << graph->scale_mm << " mm, "
              << graph->unit << "\n";
    const int64_t f = graph->num_faces(), e = graph->num_edges();
    EXPECT_GT(f, 0) << name;
    EXPECT_EQ(graph->face_grids.size(), size_t(f * 10 * 10 * 7)) << name;
    EXPECT_EQ(graph->face_centroids.size(), size_t(f * 3)) << name;
    EXPECT_EQ(graph->edge_grids.size(), size_t(e * 10 * 12)) << name;
    EXPECT_EQ(graph->edge_dst.size(), size_t(e)) << name;
    EXPECT_EQ(e % 2, 0) << name;
    EXPECT_EQ(graph->id, path.stem().string());
    EXPECT_EQ(graph->geometry_hash.size(), 64u) << name;
    for (float value : graph->face_grids) ASSERT_TRUE(std::isfinite(value)) << name;
    for (float value : graph->edge_grids) ASSERT_TRUE(std::isfinite(value)) << name;
    for (int64_t k = 0; k < e; ++k) {
      ASSERT_GE(graph->edge_src[k], 0);
      ASSERT_LT(graph->edge_src[k], f);
      ASSERT_GE(graph->edge_dst[k], 0);
      ASSERT_LT(graph->edge_dst[k], f);
    }
  }
  EXPECT_GE(graphs, 28);

  // The model rule of docs/INGEST.md on the corpus's special cases.
  struct Expect {
    const char* file;
    int solids;
    bool closed;
  };
  for (const Expect& expect :
       {Expect{"occt/screw.step", 1, true}, Expect{"occt/CrankArm.brep", 2, true},
        Expect{"occt/face1.brep", 0, false}, Expect{"occt/shell1.brep", 0, false},
        Expect{"brepnet/66312_164f2d26_0003_2.step", 0, false}}) {
    const auto found = rules.find((kCorpus / expect.file).string());
    ASSERT_NE(found, rules.end()) << expect.file << " did not give a graph";
    EXPECT_EQ(found->second.first, expect.solids) << expect.file;
    EXPECT_EQ(found->second.second, expect.closed) << expect.file;
  }
}

std::string failure_of(const std::filesystem::path& path, const IngestOptions& options = {}) {
  const Result<data::BRepGraph> graph = ingest_file(path, options);
  EXPECT_FALSE(graph) << path << " should fail";
  return graph ? std::string() : graph.status().reason();
}

#define EXPECT_REASON(reason, text) \
  EXPECT_NE((reason).find(text), std::string::npos) << "reason: " << (reason)

TEST(Ingest, BadInputsFailWithTheirReason) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const auto folder = testing::scratch_folder();
  write_bytes(folder / "empty.step", "");
  EXPECT_REASON(failure_of(folder / "empty.step"), "is empty");

  std::mt19937 random(7);
  std::string noise(5000, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  for (const char* name : {"noise.step", "noise.iges", "noise.brep", "noise.json"})
    write_bytes(folder / name, noise);
  EXPECT_REASON(failure_of(folder / "noise.step"), "not a STEP file");
  EXPECT_REASON(failure_of(folder / "noise.iges"), "not an IGES file");
  EXPECT_REASON(failure_of(folder / "noise.brep"), "not a text BREP file");
  EXPECT_REASON(failure_of(folder / "noise.json"), "not valid JSON");

  const std::string screw = read_bytes(kCorpus / "occt/screw.step");
  write_bytes(folder / "truncated.step", screw.substr(0, screw.size() / 2));
  EXPECT_REASON(failure_of(folder / "truncated.step"), "truncated");
  const std::string bearing = read_bytes(kCorpus / "occt/bearing.iges");
  write_bytes(folder / "truncated.iges", bearing.substr(0, bearing.size() / 2));
  EXPECT_REASON(failure_of(folder / "truncated.iges"), "truncated");

  // Well-formed STEP whose every entity is one OCCT does not know.
  write_bytes(folder / "unsupported.step",
              "ISO-10303-21;\nHEADER;\nFILE_DESCRIPTION((''),'2;1');\n"
              "FILE_NAME('u','2026-01-01T00:00:00',(''),(''),'','','');\n"
              "FILE_SCHEMA(('AUTOMOTIVE_DESIGN'));\nENDSEC;\nDATA;\n"
              "#1=MADE_UP_ENTITY('a',1.0);\n#2=ANOTHER_UNKNOWN_THING(#1,(1,2,3));\n"
              "ENDSEC;\nEND-ISO-10303-21;\n");
  EXPECT_REASON(failure_of(folder / "unsupported.step"), "no STEP entity that OCCT can turn");

  IngestOptions limited;
  limited.limits.max_faces = 50;
  EXPECT_REASON(failure_of(kCorpus / "aagnet/partC.step", limited),
                "94 faces, over the limit of 50");

  // A STEP file saved as UTF-16 by a text editor: the reason says so and how to fix it.
  for (const bool bom : {true, false}) {
    std::string wide = bom ? std::string("\xFF\xFE") : std::string();
    for (const char c : screw) wide += std::string{c, '\0'};
    write_bytes(folder / "utf16.step", wide);
    EXPECT_REASON(failure_of(folder / "utf16.step"), "UTF-16");
    EXPECT_REASON(failure_of(folder / "utf16.step"), "iconv");
  }

  write_bytes(folder / "part.obj", "v 0 0 0\n");
  EXPECT_REASON(failure_of(folder / "part.obj"), "unknown extension");
  EXPECT_REASON(failure_of(folder / "missing.step"), "not a readable file");
  IngestOptions bad_unit;
  bad_unit.assume_unit = "furlong";
  EXPECT_REASON(failure_of(kCorpus / "occt/solid.brep", bad_unit), "unknown length unit");
}

// Real purchased parts have 1,000-1,100 faces (a library of 772 STEP files
// held two of 1,084 and 1,114): the default limits must take them.
TEST(IngestLimits, APartOf1100FacesIsAcceptedByDefault) {
  const auto folder = testing::scratch_folder();
  const auto path = folder / "part_1100.step";
  ASSERT_TRUE(write_step(testing::many_faced_prism(1100), path).is_ok());
  const Result<data::BRepGraph> graph = ingest_file(path, IngestOptions{});
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(graph->num_faces(), 1100);
  EXPECT_EQ(graph->num_edges(), 6 * 1098);
}

// The default face limit's size, with faces of three edges as real parts'
// faces have a few: read whole, every B-Rep edge between two faces.
TEST(IngestLimits, APartOf5000FacesIsReadByDefault) {
  const auto folder = testing::scratch_folder();
  const auto path = folder / "drum_5000.step";
  ASSERT_TRUE(write_step(testing::triangulated_drum(49, 51), path).is_ok());
  const Result<data::BRepGraph> graph = ingest_file(path, IngestOptions{});
  ASSERT_TRUE(graph) << graph.status().reason();
  EXPECT_EQ(graph->num_faces(), 5000);
  EXPECT_EQ(graph->num_edges(), 2 * (52 * 49 + 2 * 51 * 49));
  EXPECT_TRUE(graph->closed);
}

TEST(IngestLimits, APartOverALimitFailsNamingTheLimitAndItsFlag) {
  const auto folder = testing::scratch_folder();
  const auto path = folder / "part_1100.step";
  ASSERT_TRUE(write_step(testing::many_faced_prism(1100), path).is_ok());
  IngestOptions faces;
  faces.limits.max_faces = 1000;
  const std::string over_faces = failure_of(path, faces);
  EXPECT_REASON(over_faces, "the model has 1,100 faces, over the limit of 1,000 (--max-faces");
  EXPECT_REASON(over_faces, "max_faces in Python");
  IngestOptions edges;
  edges.limits.max_edges = 6000;
  EXPECT_REASON(failure_of(path, edges),
                "6,588 directed edges, over the limit of 6,000 (--max-edges");
}

TEST(Ingest, StepAndIgesComeOutInMillimetresWhateverTheFileUnit) {
  // A 10 x 20 x 30 mm box written in inches must read back as 10 x 20 x 30 mm.
  const auto folder = testing::scratch_folder();
  const TopoDS_Shape box = testing::box(10, 20, 30);
  // The STEP parameters exist once the controller is initialised, and a
  // writer takes write.step.unit when it is constructed.
  ASSERT_TRUE(STEPControl_Controller::Init());
  ASSERT_TRUE(Interface_Static::SetCVal("write.step.unit", "INCH"));
  STEPControl_Writer step;
  ASSERT_EQ(step.Transfer(box, STEPControl_AsIs), IFSelect_RetDone);
  ASSERT_EQ(step.Write((folder / "box_inch.step").c_str()), IFSelect_RetDone);
  ASSERT_TRUE(Interface_Static::SetCVal("write.step.unit", "MM"));
  IGESControl_Writer iges("IN", 0);
  ASSERT_TRUE(iges.AddShape(box));
  iges.ComputeModel();
  ASSERT_TRUE(iges.Write((folder / "box_inch.iges").c_str()));
  for (const char* name : {"box_inch.step", "box_inch.iges"}) {
    const std::string text = read_bytes(folder / name);
    ASSERT_TRUE(text.find("INCH") != std::string::npos || text.find("2HIN") != std::string::npos)
        << name << " should state inches";
    const Result<data::BRepGraph> graph = ingest_file(folder / name, IngestOptions{});
    ASSERT_TRUE(graph) << graph.status().reason();
    EXPECT_EQ(graph->unit, "file:inch") << name;
    EXPECT_NEAR(graph->bbox_mm[3] - graph->bbox_mm[0], 10, 1e-4) << name;
    EXPECT_NEAR(graph->bbox_mm[4] - graph->bbox_mm[1], 20, 1e-4) << name;
    EXPECT_NEAR(graph->bbox_mm[5] - graph->bbox_mm[2], 30, 1e-4) << name;
  }
}

TEST(Ingest, BrepTakesTheAssumedUnit) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  IngestOptions inch;
  inch.assume_unit = "inch";
  const Result<data::BRepGraph> mm = ingest_file(kCorpus / "occt/solid.brep", IngestOptions{});
  const Result<data::BRepGraph> inches = ingest_file(kCorpus / "occt/solid.brep", inch);
  ASSERT_TRUE(mm && inches);
  EXPECT_EQ(mm->unit, "assumed:mm");
  EXPECT_EQ(inches->unit, "assumed:inch");
  EXPECT_NEAR(inches->scale_mm, 25.4f * mm->scale_mm, 1e-3f * inches->scale_mm);
  EXPECT_NE(inches->geometry_hash, mm->geometry_hash);
  EXPECT_EQ(inches->face_types, mm->face_types);
}

}  // namespace
}  // namespace cadclip::cad
