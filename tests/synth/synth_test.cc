// cadclip synth: valid parts of every family, captions that agree with the
// solid, same seed same bytes, the noise rate, and the reference numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/synth/synth.h"
#include "geometry_oracle.h"

namespace fs = std::filesystem;
using namespace cadclip;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("cadclip_synth_test_" + name);
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

}  // namespace

TEST(Synth, HasAtLeastFifteenFamilies) { EXPECT_GE(synth::synth_families().size(), 15u); }

TEST(Synth, EveryFamilyGivesValidSolidsWhoseCaptionsAgreeWithTheGeometry) {
  for (const std::string& family : synth::synth_families()) {
    synth::SynthOptions options;
    options.seed = 7;
    options.families = {family};
    for (int64_t i = 0; i < 3; ++i) {
      const synth::SynthPart part = synth::make_synth_part(options, i);
      ASSERT_EQ(part.family, family);
      ASSERT_EQ(part.captions.size(), 5u);
      const test::OracleMeasure m = test::oracle_measure(part.step);
      EXPECT_TRUE(m.valid) << part.id << " " << family;
      EXPECT_EQ(m.solids, 1) << part.id << " " << family;
      EXPECT_GT(m.volume, 0) << part.id << " " << family;
      for (const std::string& problem : test::caption_disagreements(part, m))
        ADD_FAILURE() << problem;
    }
  }
}

TEST(Synth, SameSeedGivesSameBytesWhateverTheThreadCount) {
  synth::SynthOptions options;
  options.count = 24;
  options.seed = 3;
  options.noise = 0.3;
  options.workers = 2;
  const fs::path a = fresh_dir("a"), b = fresh_dir("b"), c = fresh_dir("c");
  synth::write_synth_dataset(options, a);
  options.workers = 1;
  synth::write_synth_dataset(options, b);
  const auto bytes_a = folder_bytes(a), bytes_b = folder_bytes(b);
  EXPECT_EQ(bytes_a.size(), 24u + 3u);  // parts, captions, splits, manifest
  EXPECT_TRUE(bytes_a == bytes_b);
  options.seed = 4;
  synth::write_synth_dataset(options, c);
  const auto bytes_c = folder_bytes(c);
  EXPECT_NE(bytes_a.at("captions.jsonl"), bytes_c.at("captions.jsonl"));
  EXPECT_NE(bytes_a.at("parts/synth_00000000.step"), bytes_c.at("parts/synth_00000000.step"));
  // The STEP header carries no clock time.
  EXPECT_NE(bytes_a.at("parts/synth_00000000.step").find("'2000-01-01T00:00:00'"),
            std::string::npos);
  if (!::testing::Test::HasFailure())
    for (const fs::path& dir : {a, b, c}) fs::remove_all(dir);
}

TEST(Synth, WrittenSetHasFiveLevelsPerPartAndThreeSplits) {
  synth::SynthOptions options;
  options.count = 18;
  options.seed = 11;
  const fs::path dir = fresh_dir("layout");
  const synth::SynthReport report = synth::write_synth_dataset(options, dir);
  EXPECT_EQ(report.parts, 18);
  std::ifstream in(dir / "captions.jsonl");
  std::map<std::string, std::set<std::string>> levels;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    levels[row.at("id").get<std::string>()].insert(row.at("level").get<std::string>());
    EXPECT_FALSE(row.at("text").get<std::string>().empty());
    EXPECT_TRUE(row.at("noise").is_null());  // --noise 0
  }
  EXPECT_EQ(levels.size(), 18u);
  for (const auto& [id, set] : levels) EXPECT_EQ(set.size(), 5u) << id;
  const auto splits = nlohmann::json::parse(read_text_file(dir / "splits.json"));
  size_t total = 0;
  for (const char* split : {"train", "validation", "test"}) total += splits.at(split).size();
  EXPECT_EQ(total, 18u);
  const auto manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
  EXPECT_EQ(manifest.at("counts").at("parts"), 18);
  EXPECT_EQ(manifest.at("families").size(), 18u);
  fs::remove_all(dir);
}

TEST(Synth, NoiseRateIsWithinToleranceOfP) {
  for (double p : {0.0, 0.3, 1.0}) {
    synth::SynthOptions options;
    options.seed = 5;
    options.noise = p;
    options.families = {"washer", "spacer",
                        "plate"};  // quick to model; noise does not depend on family
    int noisy = 0, total = 0;
    std::set<std::string> kinds;
    for (int64_t i = 0; i < 60; ++i) {
      for (const synth::SynthCaption& caption : synth::make_synth_part(options, i).captions) {
        ++total;
        if (caption.noise.is_null()) continue;
        ++noisy;
        kinds.insert(caption.noise.at("kind").get<std::string>());
      }
    }
    const double sigma = std::sqrt(total * p * (1 - p));
    EXPECT_NEAR(noisy, total * p, 4 * sigma + 1e-9) << "p = " << p;
    if (p == 1.0) EXPECT_GE(kinds.size(), 5u) << "noise kinds seen: " << kinds.size();
  }
}

TEST(Synth, BadOptionsAreClearErrors) {
  synth::SynthOptions options;
  options.noise = 1.5;
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  options.noise = 0;
  options.families = {"teapot"};
  EXPECT_THROW(synth::make_synth_part(options, 0), Error);
  const fs::path foreign = fresh_dir("foreign");
  fs::create_directories(foreign);
  write_text_atomic(foreign / "notes.txt", "not ours");
  options.families = {};
  options.count = 1;
  EXPECT_THROW(synth::write_synth_dataset(options, foreign), Error);
  fs::remove_all(foreign);
}

TEST(Synth, FamilyOracleOfOneFamilySetIsOneOverTestSize) {
  synth::SynthOptions options;
  options.count = 30;
  options.seed = 2;
  options.families = {"washer"};
  const fs::path dir = fresh_dir("stats");
  synth::write_synth_dataset(options, dir);
  const synth::SynthStats stats = synth::synth_stats(dir);
  ASSERT_GT(stats.test_parts, 0);
  EXPECT_NEAR(stats.family_oracle_r1, 1.0 / static_cast<double>(stats.test_parts), 1e-12);
  ASSERT_EQ(stats.shared_caption_share.size(), 5u);
  for (const auto& [level, share] : stats.shared_caption_share_all) {
    EXPECT_GE(share, 0);
    EXPECT_LE(share, 1);
  }
  fs::remove_all(dir);
}

TEST(Synth, IdPrefixNamesEveryPartAndReplacesAnEarlierPrefix) {
  synth::SynthOptions options;
  options.count = 4;
  options.seed = 3;
  options.families = {"washer", "spacer"};  // quick to model
  const fs::path dir = fresh_dir("prefix");
  synth::write_synth_dataset(options, dir);
  EXPECT_TRUE(fs::exists(dir / "parts" / "synth_00000000.step"));
  options.id_prefix = "std_";
  synth::write_synth_dataset(options, dir);  // the same folder, made again with another prefix
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir / "parts"))
    files.insert(entry.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"std_00000000.step", "std_00000001.step",
                                          "std_00000002.step", "std_00000003.step"}));
  std::ifstream in(dir / "captions.jsonl");
  std::string line;
  while (std::getline(in, line))
    EXPECT_TRUE(nlohmann::json::parse(line).at("id").get<std::string>().starts_with("std_"));
  const auto splits = nlohmann::json::parse(read_text_file(dir / "splits.json"));
  for (const auto& [split, ids] : splits.items())
    for (const auto& id : ids) EXPECT_TRUE(id.get<std::string>().starts_with("std_")) << split;
  fs::remove_all(dir);

  for (const char* bad : {"", "std/", "a b"}) {
    options.id_prefix = bad;
    try {
      synth::make_synth_part(options, 0);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--id-prefix"), std::string::npos) << e.what();
    }
  }
}
