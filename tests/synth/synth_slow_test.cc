// A few hundred synthetic parts: every family valid, every clean caption true
// of its solid, and at least five sentence structures per level and family.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "cadclip/synth/synth.h"
#include "geometry_oracle.h"

using namespace cadclip;

TEST(SynthSlow, ManyPartsOfEveryFamilyAreValidTrueAndVaried) {
  constexpr int kPerFamily = 25;
  const std::regex number(R"(\d+(\.\d+)?)");
  for (const std::string& family : synth::synth_families()) {
    synth::SynthOptions options;
    options.seed = 1234;
    options.families = {family};
    std::map<std::string, std::set<std::string>> structures;
    for (int64_t i = 0; i < kPerFamily; ++i) {
      const synth::SynthPart part = synth::make_synth_part(options, i);
      const test::OracleMeasure m = test::oracle_measure(part.step);
      EXPECT_TRUE(m.valid && m.solids == 1 && m.volume > 0) << part.id << " " << family;
      for (const std::string& problem : test::caption_disagreements(part, m))
        ADD_FAILURE() << problem;
      for (const synth::SynthCaption& caption : part.captions)
        structures[caption.level].insert(std::regex_replace(caption.text, number, "#"));
    }
    for (const char* level : synth::kCaptionLevels)
      EXPECT_GE(structures[level].size(), 5u) << family << " " << level;
  }
}
