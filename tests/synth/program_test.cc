// cadclip synth --kind programs: the same seed gives the same bytes, every
// program builds through the DeepCAD import, every clean caption states only
// what the solid and the JSON file show, held-out phrasings stay out of
// training, equal geometry never straddles splits, and the mixed share holds.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "cad/occt_shape.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/synth/synth.h"
#include "geometry_oracle.h"
#include "synth/program.h"

namespace fs = std::filesystem;
using namespace cadclip;
using nlohmann::json;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("cadclip_program_test_" + name);
  fs::remove_all(dir);
  return dir;
}

std::map<std::string, std::string> folder_bytes(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file())
      files[fs::relative(entry.path(), dir).string()] = read_text_file(entry.path());
  return files;
}

synth::SynthOptions program_options(uint64_t seed) {
  synth::SynthOptions options;
  options.kind = "programs";
  options.seed = seed;
  return options;
}

// What the JSON file says, read independently of the generator, in the
// caption's unit: per extrude, the numbers of its sketch and its extent.
struct JsonStep {
  std::vector<double> xs, ys, radii;  // sketch coordinates and radii
  std::vector<double> ext_x, ext_y;   // where circles and arcs reach along x and y
  double origin[3], axes[3][3];       // x_axis, y_axis, z_axis
  double towards = 0, opposite = 0;
  std::string operation;
  int profiles = 0, inner_loops = 0, slot_loops = 0;
  std::vector<int> lines_per_loop;
};

std::vector<JsonStep> read_program(const std::string& text, double per_metre) {
  const json doc = json::parse(text);
  std::vector<JsonStep> steps;
  for (const json& item : doc.at("sequence")) {
    if (item.at("type") != "ExtrudeFeature") continue;
    const json& ex = doc.at("entities").at(item.at("entity").get<std::string>());
    JsonStep s;
    const std::string op = ex.at("operation");
    s.operation = op == "NewBodyFeatureOperation" ? "new body"
                  : op == "JoinFeatureOperation"  ? "join"
                  : op == "CutFeatureOperation"   ? "cut"
                                                  : "intersect";
    const double e1 = ex.at("extent_one").at("distance").at("value").get<double>() * per_metre;
    const std::string type = ex.at("extent_type");
    if (type == "OneSideFeatureExtentType") {
      s.towards = std::max(e1, 0.0);
      s.opposite = std::max(-e1, 0.0);
    } else if (type == "SymmetricFeatureExtentType") {
      s.towards = s.opposite = e1;  // DeepCAD's meaning, the import's default
    } else {
      s.towards = e1;
      s.opposite = ex.at("extent_two").at("distance").at("value").get<double>() * per_metre;
    }
    for (const json& ref : ex.at("profiles")) {
      const json& sketch = doc.at("entities").at(ref.at("sketch").get<std::string>());
      const json& t = sketch.at("transform");
      const char* names[] = {"x_axis", "y_axis", "z_axis"};
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c)
          s.axes[a][c] = t.at(names[a]).at(std::string(1, "xyz"[c])).get<double>();
      for (int c = 0; c < 3; ++c)
        s.origin[c] = t.at("origin").at(std::string(1, "xyz"[c])).get<double>() * per_metre;
      ++s.profiles;
      const json& loops =
          sketch.at("profiles").at(ref.at("profile").get<std::string>()).at("loops");
      s.inner_loops += static_cast<int>(loops.size()) - 1;
      for (size_t l = 0; l < loops.size(); ++l) {
        const json& loop = loops[l];
        int lines = 0, arcs = 0;
        for (const json& c : loop.at("profile_curves")) {
          auto point = [&](const char* key) {
            s.xs.push_back(c.at(key).at("x").get<double>() * per_metre);
            s.ys.push_back(c.at(key).at("y").get<double>() * per_metre);
          };
          const std::string kind = c.at("type");
          if (kind == "Line3D") {
            ++lines;
            point("start_point");
            point("end_point");
          } else {
            point("center_point");
            const double r = c.at("radius").get<double>() * per_metre;
            s.radii.push_back(r);
            s.ext_x.insert(s.ext_x.end(), {s.xs.back() - r, s.xs.back() + r});
            s.ext_y.insert(s.ext_y.end(), {s.ys.back() - r, s.ys.back() + r});
          }
          if (kind == "Arc3D") {
            ++arcs;
            point("start_point");
            point("end_point");
            // The reference semantics: through centre + r·R(θ)·ref, θ = (start + end)/2.
            const double th =
                (c.at("start_angle").get<double>() + c.at("end_angle").get<double>()) / 2;
            const double rx = c.at("reference_vector").at("x"),
                         ry = c.at("reference_vector").at("y");
            const double r = c.at("radius").get<double>() * per_metre;
            s.xs.push_back(c.at("center_point").at("x").get<double>() * per_metre +
                           r * (std::cos(th) * rx - std::sin(th) * ry));
            s.ys.push_back(c.at("center_point").at("y").get<double>() * per_metre +
                           r * (std::sin(th) * rx + std::cos(th) * ry));
          }
        }
        s.lines_per_loop.push_back(lines);
        // A slot cut-out: a hole in a profile, or a profile that is cut.
        s.slot_loops += lines == 2 && arcs == 2 && (l > 0 || s.operation == "cut");
      }
    }
    steps.push_back(s);
  }
  return steps;
}

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }

bool any_near(const std::vector<double>& values, double v, double tol) {
  for (double x : values)
    if (near(x, v, tol)) return true;
  return false;
}

// Every number and count the clean captions of `part` state, checked against
// the built solid (sizes, holes) and the JSON file (the program's numbers).
std::vector<std::string> program_disagreements(const synth::SynthPart& part,
                                               const test::OracleMeasure& m) {
  std::vector<std::string> problems;
  std::vector<synth::SynthCaption> all = part.captions;
  all.insert(all.end(), part.heldout_captions.begin(), part.heldout_captions.end());
  for (const synth::SynthCaption& caption : all) {
    if (!caption.noise.is_null()) continue;
    const bool mm = caption.extra.at("units") == "mm";
    const int decimals = caption.extra.at("decimals");
    const double tol = 0.5 * std::pow(10.0, -decimals) + 1e-9;
    const double unit_mm = mm ? 1.0 : part.mm_per_unit;  // millimetres per caption unit
    const std::vector<JsonStep> steps = read_program(part.json, 1000.0 / unit_mm);
    std::vector<double> extents, depths, radii, diffs;
    for (int i = 0; i < 3; ++i) extents.push_back(m.extent[i] / unit_mm);
    int joins = 0, cuts = 0, slots = 0;
    double added_height = 0;
    std::vector<double> profile_counts, line_counts;
    for (const JsonStep& s : steps) {
      depths.insert(depths.end(), {s.towards, s.opposite, s.towards + s.opposite});
      for (double r : s.radii) radii.insert(radii.end(), {r, 2 * r});
      for (int axis = 0; axis < 2; ++axis) {
        std::vector<double> v = axis ? s.ys : s.xs;
        const std::vector<double>& ext = axis ? s.ext_y : s.ext_x;
        v.insert(v.end(), ext.begin(), ext.end());
        for (double a : v)
          for (double b : v) diffs.push_back(std::abs(a - b));
      }
      joins += s.operation == "join" || s.operation == "new body";
      if (s.operation == "join" || s.operation == "new body") added_height += s.towards;
      cuts += s.operation == "cut";
      slots += s.slot_loops;
      profile_counts.push_back(s.profiles);
      for (int n : s.lines_per_loop) line_counts.push_back(n);
    }
    const std::string where = part.id + " " + part.family + " " + caption.level + ": \"" +
                              caption.text.substr(0, 160) + "\"";
    auto fail = [&](const std::string& key, const std::string& why) {
      problems.push_back(where + ": " + key + " " + why);
    };
    for (auto it = caption.facts.begin(); it != caption.facts.end(); ++it) {
      const std::string& key = it.key();
      const json& v = it.value();
      if (key == "family") {
        if (v != part.family) fail(key, "is " + v.dump());
        continue;
      }
      // Per-extrude facts: stepK_...
      if (key.starts_with("step") && key.size() > 4 &&
          std::isdigit(static_cast<unsigned char>(key[4]))) {
        const size_t us = key.find('_');
        const size_t k = std::stoul(key.substr(4, us - 4)) - 1;
        const std::string what = key.substr(us + 1);
        if (k >= steps.size()) {
          fail(key, "names an extrude the file does not have");
          continue;
        }
        const JsonStep& s = steps[k];
        if (what == "operation" && v != s.operation) fail(key, "is " + v.dump());
        if (what == "towards" && !near(v, s.towards, tol)) fail(key, "differs from the file");
        if (what == "opposite" && !near(v, s.opposite, tol)) fail(key, "differs from the file");
        if (what == "depth" && !near(v, s.towards + s.opposite, tol)) fail(key, "differs");
        if (what == "profiles" && v != s.profiles) fail(key, "differs");
        if (what == "inner_loops" && v != s.inner_loops) fail(key, "differs");
        if (what == "translation")
          for (int c = 0; c < 3; ++c)
            if (!near(v[static_cast<size_t>(c)], s.origin[c], tol)) fail(key, "differs");
        if (what == "euler") {
          const double a = v[0].get<double>() * M_PI / 180, b = v[1].get<double>() * M_PI / 180,
                       c = v[2].get<double>() * M_PI / 180;
          const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b),
                       cc = std::cos(c), sc = std::sin(c);
          // Columns of Rz(c)·Ry(b)·Rx(a).
          const double r[3][3] = {{cc * cb, sc * cb, -sb},
                                  {cc * sb * sa - sc * ca, sc * sb * sa + cc * ca, cb * sa},
                                  {cc * sb * ca + sc * sa, sc * sb * ca - cc * sa, cb * ca}};
          for (int col = 0; col < 3; ++col)
            for (int row = 0; row < 3; ++row)
              if (!near(r[col][row], s.axes[col][row], 0.003)) fail(key, "does not give the axes");
        }
        if (what == "scale") {
          for (double x : s.xs)
            if (x < -tol || x > v.get<double>() + 2 * tol) fail(key, "does not hold the sketch");
        }
        if (what == "points") {
          std::vector<double> values = s.xs;
          values.insert(values.end(), s.ys.begin(), s.ys.end());
          values.insert(values.end(), s.radii.begin(), s.radii.end());
          for (const json& x : v)
            if (!any_near(values, x.get<double>(), tol)) fail(key, "states " + x.dump());
        }
        if (what == "size") {  // the part's sketch extent and its depth
          if (!near(v[2], s.towards + s.opposite, tol)) fail(key, "depth differs");
          for (size_t i = 0; i < 2; ++i)
            if (!any_near(diffs, v[i].get<double>(), tol)) fail(key, "states " + v[i].dump());
        }
        if (what == "outline")
          for (const json& x : v)
            if (!any_near(diffs, x.get<double>(), tol) && !any_near(radii, x.get<double>(), tol))
              fail(key, "states " + x.dump());
        continue;
      }
      if (!v.is_number()) continue;
      const double x = v.get<double>();
      const bool hole = key.ends_with("hole_diameter") || key == "bore_diameter" ||
                        key == "inner_diameter" || key == "pocket_diameter";
      if (key == "bolt_size" || key == "thread") {
        // Metric sizes in millimetres whatever the caption's unit: a round hole of the solid
        // clears the bolt (ISO 273, nominal to coarse) or is the thread's bore.
        bool fits = false;
        for (const auto& [d, n] : m.holes)
          fits |= key == "thread" ? d >= 0.8 * x - 0.01 && d <= x + 0.21
                                  : d >= x - 0.01 && d <= 1.1 * x + 0.51;
        if (!fits) fail(key, "M" + v.dump() + " fits no round hole of the solid");
        continue;
      }
      if (key == "length" || key == "width" || key == "height") {
        const int axis = key == "length" ? 0 : key == "width" ? 1 : 2;
        if (!near(x, extents[static_cast<size_t>(axis)], tol))
          fail(key, std::to_string(x) + " but measured " +
                        std::to_string(extents[static_cast<size_t>(axis)]));
      } else if (hole) {
        bool found = false;
        for (const auto& [d, n] : m.holes) found |= near(d / unit_mm, x, tol);
        if (!found) fail(key, "names no round hole of the solid");
      } else if (key == "hole_count") {
        const auto d = caption.facts.find("hole_diameter");
        int measured = 0;
        for (const auto& [dd, n] : m.holes)
          if (d == caption.facts.end() || near(dd / unit_mm, d->get<double>(), tol)) measured += n;
        if (measured != static_cast<int>(x))
          fail(key, "but " + std::to_string(measured) + " measured");
      } else if (key == "extrude_count") {
        if (x != static_cast<double>(steps.size())) fail(key, "differs from the file");
      } else if (key == "join_count") {
        if (x != joins - 1) fail(key, "differs from the file");
      } else if (key == "cut_count") {
        if (x != cuts) fail(key, "differs from the file");
      } else if (key == "step_count") {
        if (x != joins) fail(key, "differs from the file");
      } else if (key == "slot_count") {
        if (x != slots) fail(key, "differs from the file");
      } else if (key == "boss_count" || key == "rib_count") {
        if (!any_near(profile_counts, x, 0)) fail(key, "is no extrude's profile count");
      } else if (key == "side_count") {
        if (!any_near(line_counts, x, 0)) fail(key, "is no loop's line count");
      } else if (key == "total_height") {
        if (!near(added_height, x, tol)) fail(key, "is not the height the extrudes add up to");
      } else if (key.ends_with("_diameter") || key.ends_with("_radius") || key == "diameter") {
        if (!any_near(radii, x, tol)) fail(key, "is no circle or arc of the file");
      } else if (key == "thickness" || key == "depth" || key.ends_with("_height") ||
                 key.ends_with("_depth") || key == "rib_thickness") {
        if (!any_near(depths, x, tol)) fail(key, "is no extrusion depth of the file");
      } else if (!any_near(diffs, x, tol) && !any_near(radii, x, tol)) {
        fail(key, "is no distance between two sketch coordinates");
      }
    }
  }
  return problems;
}

}  // namespace

TEST(Programs, EveryProgramBuildsThroughTheImportAndItsCaptionsAreTrue) {
  synth::SynthOptions options = program_options(7);
  cad::IngestOptions ingest;
  ingest.assume_unit = "m";
  std::set<std::string> generators;
  for (int64_t i = 0; i < 48; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    ASSERT_EQ(part.kind, "program");
    ASSERT_EQ(part.captions.size(), 5u);
    ASSERT_EQ(part.heldout_captions.size(), 5u);
    generators.insert(part.params.at("generator").get<std::string>());
    Result<TopoDS_Shape> shape = cad::deepcad_to_shape(part.json, part.id, ingest);
    ASSERT_TRUE(shape) << part.id << ": " << shape.status().reason();
    const test::OracleMeasure m = test::oracle_measure_shape(shape.value());
    EXPECT_TRUE(m.valid && m.solids == 1 && m.volume > 0) << part.id;
    // The largest side is at most the drawn real size (10-500 mm; cuts may take
    // some off), and of the order of Text2CAD's 0.75 units.
    const double largest = std::max({m.extent[0], m.extent[1], m.extent[2]});
    const double real = part.params.at("real_size_mm").get<double>();
    EXPECT_GE(real, 10.0) << part.id;
    EXPECT_LE(real, 500.0) << part.id;
    EXPECT_LE(largest, real * (1 + 1e-6)) << part.id;
    EXPECT_GE(largest / part.mm_per_unit, 0.2) << part.id;
    EXPECT_LE(largest / part.mm_per_unit, 1.5) << part.id;
    // prepare's import gives the same graph hash as the generator saw.
    Result<data::BRepGraph> graph = cad::ingest_shape(shape.value(), part.id, "assumed:m", ingest);
    ASSERT_TRUE(graph);
    EXPECT_EQ(graph->geometry_hash, part.geometry_hash) << part.id;
    for (const std::string& problem : program_disagreements(part, m)) ADD_FAILURE() << problem;
  }
  EXPECT_GE(generators.size(), 8u) << "families seen in 48 parts";
}

TEST(Programs, TheTruthCheckCatchesAWrongNumber) {
  cad::IngestOptions ingest;
  ingest.assume_unit = "m";
  const synth::SynthPart part = synth::make_synth_part(program_options(21), 0);
  Result<TopoDS_Shape> shape = cad::deepcad_to_shape(part.json, part.id, ingest);
  ASSERT_TRUE(shape);
  const test::OracleMeasure m = test::oracle_measure_shape(shape.value());
  ASSERT_TRUE(program_disagreements(part, m).empty());
  // Each change to a stated number must be caught.
  for (const std::string key :
       {"length", "height", "step1_points", "step1_towards", "step1_euler", "step1_translation"}) {
    synth::SynthPart wrong = part;
    bool changed = false;
    for (synth::SynthCaption& c : wrong.captions) {
      if (!c.facts.contains(key)) continue;
      json& v = c.facts[key];
      if (v.is_array())
        v[0] = v[0].get<double>() + (key == "step1_euler" ? 2.0 : 0.1);
      else
        v = v.get<double>() * 1.5 + 0.1;
      changed = true;
    }
    ASSERT_TRUE(changed) << key << " is stated by no caption of " << part.id;
    EXPECT_FALSE(program_disagreements(wrong, m).empty()) << key;
  }
}

TEST(Programs, SameSeedGivesSameBytesWhateverTheThreadCount) {
  synth::SynthOptions options = program_options(3);
  options.count = 12;
  options.noise = 0.3;
  options.workers = 2;
  const fs::path a = fresh_dir("a"), b = fresh_dir("b"), c = fresh_dir("c");
  synth::write_synth_dataset(options, a);
  options.workers = 1;
  synth::write_synth_dataset(options, b);
  const auto bytes_a = folder_bytes(a), bytes_b = folder_bytes(b);
  EXPECT_EQ(bytes_a.size(), 12u + 3u);
  EXPECT_TRUE(bytes_a == bytes_b);
  EXPECT_TRUE(bytes_a.count("parts/synth_00000000.json"));
  options.seed = 4;
  synth::write_synth_dataset(options, c);
  const auto bytes_c = folder_bytes(c);
  EXPECT_NE(bytes_a.at("captions.jsonl"), bytes_c.at("captions.jsonl"));
  EXPECT_NE(bytes_a.at("parts/synth_00000000.json"), bytes_c.at("parts/synth_00000000.json"));
  if (!::testing::Test::HasFailure())
    for (const fs::path& dir : {a, b, c}) fs::remove_all(dir);
}

TEST(Programs, HeldOutPhrasingsStayOutOfTrainingAndTestPartsGetBoth) {
  synth::SynthOptions options = program_options(11);
  options.count = 80;
  const fs::path dir = fresh_dir("heldout");
  synth::write_synth_dataset(options, dir);
  const json splits = json::parse(read_text_file(dir / "splits.json"));
  const json manifest = json::parse(read_text_file(dir / "manifest.json"));
  std::set<std::string> test;
  for (const auto& id : splits.at("test")) test.insert(id.get<std::string>());
  ASSERT_FALSE(test.empty());
  // Every fifth of each part's names (the shape's and an engineer's) is held out.
  std::map<std::string, std::vector<std::string>> heldout_names;
  for (const json& part : manifest.at("parts")) {
    const json& names = part.at("params").at("names");
    EXPECT_EQ(names.size(), 10u) << part.at("id");
    for (size_t i = 4; i < names.size(); i += 5) heldout_names[part.at("id")].push_back(names[i]);
  }
  std::map<std::string, std::vector<std::string>> markers;
  for (int level = 0; level < 5; ++level)
    markers[synth::kCaptionLevels[level]] = synth::heldout_markers(level);
  std::map<std::string, std::map<std::string, int>> levels_of;
  std::ifstream in(dir / "captions.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const json row = json::parse(line);
    const std::string id = row.at("id"), level = row.at("level"), text = row.at("text");
    ++levels_of[id][level];
    const bool held = level.ends_with("_heldout");
    const std::string base = held ? level.substr(0, level.size() - 8) : level;
    if (held) {
      EXPECT_TRUE(test.count(id)) << id << " is not a test part but has " << level;
      bool marked = false;
      for (const std::string& m : markers[base]) marked |= text.find(m) != std::string::npos;
      if (row.at("noise").is_null()) EXPECT_TRUE(marked) << level << ": " << text;
      continue;
    }
    // Seen phrasings, every split: no held-out structure, synonym or name.
    for (const auto& [lvl, list] : markers)
      for (const std::string& m : list)
        EXPECT_EQ(text.find(m), std::string::npos)
            << id << " " << level << " uses '" << m << "': " << text;
    for (const std::string& name : heldout_names[id])
      EXPECT_EQ(text.find(name), std::string::npos)
          << id << " " << level << " uses the held-out name '" << name << "': " << text;
  }
  for (const auto& [id, levels] : levels_of) {
    EXPECT_EQ(levels.size(), test.count(id) ? 10u : 5u) << id;
    for (const auto& [level, n] : levels) EXPECT_EQ(n, 1) << id << " " << level;
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(Programs, EqualGeometryNeverStraddlesSplitsAndProgramsAreUnique) {
  synth::SynthOptions options = program_options(5);
  options.count = 60;
  const fs::path dir = fresh_dir("splits");
  synth::write_synth_dataset(options, dir);
  const json splits = json::parse(read_text_file(dir / "splits.json"));
  const json manifest = json::parse(read_text_file(dir / "manifest.json"));
  std::map<std::string, std::string> split_of;
  for (const char* s : {"train", "validation", "test"})
    for (const auto& id : splits.at(s)) split_of[id] = s;
  std::map<std::string, std::string> split_of_hash;
  std::set<std::string> programs;
  for (const json& part : manifest.at("parts")) {
    const std::string id = part.at("id"), hash = part.at("geometry_hash");
    auto [it, inserted] = split_of_hash.emplace(hash, split_of.at(id));
    EXPECT_EQ(it->second, split_of.at(id)) << id << " shares its geometry across splits";
    EXPECT_TRUE(programs.insert(part.at("program_hash")).second) << id << " repeats a program";
  }
  EXPECT_EQ(manifest.at("counts").at("duplicates"), 0);
  const json& d = manifest.at("programs").at("distribution");
  EXPECT_EQ(d.at("parts"), 60);
  EXPECT_TRUE(d.contains("extrudes_per_model") && d.contains("faces_per_solid"));
  fs::remove_all(dir);
}

TEST(Programs, MixedShareIsRespectedAndBothKindsAreWritten) {
  synth::SynthOptions options;
  options.kind = "mixed";
  options.seed = 9;
  for (double share : {0.0, 0.3, 1.0}) {
    options.program_share = share;
    int programs = 0;
    const int n = 2000;
    for (int64_t i = 0; i < n; ++i) programs += synth::synth_part_is_program(options, i);
    const double sigma = std::sqrt(n * share * (1 - share));
    EXPECT_NEAR(programs, n * share, 4 * sigma + 1e-9) << share;
  }
  options.program_share = 0.5;
  options.count = 10;
  const fs::path dir = fresh_dir("mixed");
  const synth::SynthReport report = synth::write_synth_dataset(options, dir);
  int json_files = 0, step_files = 0;
  for (const auto& entry : fs::directory_iterator(dir / "parts")) {
    json_files += entry.path().extension() == ".json";
    step_files += entry.path().extension() == ".step";
  }
  EXPECT_EQ(json_files, report.programs);
  EXPECT_EQ(json_files + step_files, 10);
  for (int64_t i = 0; i < 10; ++i) {
    char name[40];
    std::snprintf(name, sizeof(name), "synth_%08lld.%s", static_cast<long long>(i),
                  synth::synth_part_is_program(options, i) ? "json" : "step");
    EXPECT_TRUE(fs::exists(dir / "parts" / name)) << name;
  }
  fs::remove_all(dir);
}

TEST(Programs, NoiseRateIsWithinToleranceOfPAndOfManyKinds) {
  for (double p : {0.0, 0.3, 1.0}) {
    synth::SynthOptions options = program_options(5);
    options.noise = p;
    int noisy = 0, total = 0;
    std::set<std::string> kinds;
    for (int64_t i = 0; i < 30; ++i) {
      for (const synth::SynthCaption& caption : synth::make_synth_part(options, i).captions) {
        ++total;
        if (caption.noise.is_null()) continue;
        ++noisy;
        kinds.insert(caption.noise.at("kind").get<std::string>());
      }
    }
    const double sigma = std::sqrt(total * p * (1 - p));
    EXPECT_NEAR(noisy, total * p, 4 * sigma + 1e-9) << "p = " << p;
    if (p == 1.0) EXPECT_GE(kinds.size(), 6u) << "noise kinds seen: " << kinds.size();
  }
}

TEST(Programs, MillimetreCaptionsStateMillimetres) {
  synth::SynthOptions options = program_options(13);
  options.caption_units = "mm";
  cad::IngestOptions ingest;
  ingest.assume_unit = "m";
  for (int64_t i = 0; i < 8; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    Result<TopoDS_Shape> shape = cad::deepcad_to_shape(part.json, part.id, ingest);
    ASSERT_TRUE(shape);
    const test::OracleMeasure m = test::oracle_measure_shape(shape.value());
    for (const synth::SynthCaption& c : part.captions) EXPECT_EQ(c.extra.at("units"), "mm");
    for (const std::string& problem : program_disagreements(part, m)) ADD_FAILURE() << problem;
  }
}

TEST(Programs, BadOptionsAreClearErrors) {
  synth::SynthOptions options;
  options.kind = "teapots";
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  options.kind = "mixed";
  options.program_share = 1.5;
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  options.program_share = 0.5;
  options.caption_units = "inch";
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  options.caption_units = "units";
  options.kind = "programs";
  options.families = {"plate"};
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
}
