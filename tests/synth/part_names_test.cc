// The words engineers use: the name level of synthetic captions names parts by
// rules over their facts (a flange is a flange, a drilled plate a plate), is
// short, and never states a feature or a bolt size the part does not have.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "cad/occt_shape.h"
#include "cadclip/synth/synth.h"
#include "geometry_oracle.h"
#include "synth/part_names.h"

using namespace cadclip;
using nlohmann::json;

namespace {

const synth::SynthCaption& name_caption(const synth::SynthPart& part) {
  const auto it = std::find_if(part.captions.begin(), part.captions.end(),
                               [](const synth::SynthCaption& c) { return c.level == "name"; });
  EXPECT_NE(it, part.captions.end()) << part.id;
  return *it;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t words(const std::string& s) {
  std::istringstream in(s);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

int measured_holes(const test::OracleMeasure& m) {
  int n = 0;
  for (const auto& [d, count] : m.holes) n += count;
  return n;
}

// What a name may only say of a part with round holes, and the bolt it states.
void expect_true_to_the_part(const synth::SynthPart& part, const synth::SynthCaption& c,
                             const test::OracleMeasure& m) {
  const std::string text = lower(c.text);
  const int holes = measured_holes(m);
  for (const char* word : {"hole", "drilled", "mounting plate", "flange", "washer", "bushing"})
    if (text.find(word) != std::string::npos)
      EXPECT_GT(holes, 0) << part.id << " says '" << word << "' without a hole: " << c.text;
  for (const char* key : {"hole_count", "bolt_hole_count"})
    if (c.facts.contains(key)) {
      EXPECT_GE(holes, c.facts.at(key).get<int>()) << part.id << ": " << c.text;
    }
  // "M8" only with a fact behind it, and a round hole that clears or threads it.
  const bool says_metric = std::regex_search(c.text, std::regex("\\bM[0-9]"));
  const bool has_bolt = c.facts.contains("bolt_size") || c.facts.contains("thread");
  EXPECT_EQ(says_metric, has_bolt) << part.id << ": " << c.text << " " << c.facts.dump();
  if (c.facts.contains("bolt_size")) {
    const double m_size = c.facts.at("bolt_size").get<double>();
    bool fits = false;
    for (const auto& [d, n] : m.holes) fits |= d >= m_size - 0.01 && d <= 1.1 * m_size + 0.51;
    EXPECT_TRUE(fits) << part.id << ": no hole clears M" << m_size << ": " << c.text;
  }
  EXPECT_LE(words(c.text), 12u) << part.id << ": a name is a few words: " << c.text;
  EXPECT_FALSE(c.text.ends_with(".")) << part.id << ": a name is no sentence: " << c.text;
}

}  // namespace

TEST(PartNames, ClearanceBoltFollowsTheMetricSeries) {
  EXPECT_EQ(synth::clearance_bolt(8.4), 8);   // fine
  EXPECT_EQ(synth::clearance_bolt(9.0), 8);   // medium
  EXPECT_EQ(synth::clearance_bolt(6.6), 6);   // medium M6
  EXPECT_EQ(synth::clearance_bolt(3.4), 3);   // fine M3
  EXPECT_EQ(synth::clearance_bolt(7.5), 0);   // too big for M6, too small for M8
  EXPECT_EQ(synth::clearance_bolt(1.0), 0);   // smaller than M2
  EXPECT_EQ(synth::clearance_bolt(50.0), 0);  // beyond M36
}

TEST(PartNames, AFlangeIsNamedAFlangeWithItsBoltHoles) {
  synth::SynthOptions options;
  options.seed = 5;
  options.families = {"flange"};
  for (int64_t i = 0; i < 6; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    const synth::SynthCaption& c = name_caption(part);
    ASSERT_TRUE(c.noise.is_null());
    EXPECT_NE(lower(c.text).find("flange"), std::string::npos) << c.text;
    EXPECT_EQ(c.facts.at("family"), "flange");
    if (c.facts.contains("bolt_hole_count"))
      EXPECT_EQ(c.facts.at("bolt_hole_count"), part.params.at("bolt_holes")) << c.text;
    expect_true_to_the_part(part, c, test::oracle_measure(part.step));
  }
}

TEST(PartNames, FamilyRulesFollowTheMeasuredProportions) {
  // Spacers: a thick wall is a bushing or collar; the bore sets the bolt.
  synth::SynthOptions options;
  options.seed = 9;
  options.families = {"spacer", "washer", "hex_nut", "spur_gear", "l_bracket"};
  for (int64_t i = 0; i < 20; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    const synth::SynthCaption& c = name_caption(part);
    const test::OracleMeasure m = test::oracle_measure(part.step);
    expect_true_to_the_part(part, c, m);
    const json& p = part.params;
    if (part.family == "hex_nut") {
      if (c.facts.contains("thread")) EXPECT_EQ(c.facts.at("thread"), p.at("thread")) << c.text;
    }
    if (part.family == "spur_gear" && c.facts.contains("tooth_count"))
      EXPECT_EQ(c.facts.at("tooth_count"), p.at("teeth")) << c.text;
    if (part.family == "spacer") {
      const double od = p.at("outer_diameter"), id = p.at("inner_diameter");
      const std::string t = lower(c.text);
      const bool thick = t.find("bushing") != std::string::npos ||
                         t.find("collar") != std::string::npos ||
                         t.find("bush") != std::string::npos;
      const bool thin = t.find("sleeve") != std::string::npos;
      if (thick) EXPECT_LE(id, 0.5 * od + 0.05) << c.text;
      if (thin) EXPECT_GT(id, 0.5 * od - 0.05) << c.text;
    }
  }
}

TEST(PartNames, ProgramPlatesWithHolesGetPlateNamesAndNamesStayTrue) {
  synth::SynthOptions options;
  options.kind = "programs";
  options.seed = 13;
  cad::IngestOptions ingest;
  ingest.assume_unit = "m";
  int plates = 0;
  for (int64_t i = 0; i < 40; ++i) {
    const synth::SynthPart part = synth::make_synth_part(options, i);
    const synth::SynthCaption& c = name_caption(part);
    Result<TopoDS_Shape> shape = cad::deepcad_to_shape(part.json, part.id, ingest);
    ASSERT_TRUE(shape) << part.id;
    const test::OracleMeasure m = test::oracle_measure_shape(shape.value());
    expect_true_to_the_part(part, c, m);
    if (part.params.at("generator") == "plate" && measured_holes(m) > 0) {
      ++plates;
      EXPECT_NE(lower(c.text).find("plate"), std::string::npos) << part.id << ": " << c.text;
    }
  }
  EXPECT_GE(plates, 1) << "no drilled plate among 40 programs of seed 13";
}
