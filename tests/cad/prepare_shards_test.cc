// `cadclip prepare` as a job array: the parts of a 4-way prepare of a
// synthetic set (families as STEP and programs as DeepCAD JSON, plus a
// garbage file and a second file claiming an id) hold, together, exactly the
// graphs of one unsharded run, byte for byte by id, with the same failures;
// `cadclip merge` over them gives one run's captions and splits; the part
// comes from SLURM's array variables when no flag says; a merge of three parts
// of four is refused. Runs the cadclip binary.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../data/test_graphs.h"
#include "../run_command.h"
#include "cadclip/cad/prepare.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/prepared.h"

namespace cadclip::cad {
namespace {

namespace fs = std::filesystem;

// cadclip with `args` under `env` (log level info unless given): status and output.
cadclip::testing::CommandRun cadclip(const std::string& env, const std::string& args) {
  return cadclip::testing::run_command(
      format("env {} {} {}", env.empty() ? "CADCLIP_LOG_LEVEL=info" : env, CADCLIP_BINARY, args));
}

nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(read_text_file(path));
}

std::multiset<std::string> lines_of(const fs::path& path) {
  std::multiset<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.insert(line);
  return lines;
}

// Every model's encoded graph, by id.
std::map<std::string, std::string> graphs_by_id(const data::Dataset& dataset) {
  std::map<std::string, std::string> out;
  for (int64_t i = 0; i < dataset.size(); ++i)
    out[dataset.id(i)] = data::encode_graph(dataset.graph(i));
  return out;
}

std::vector<std::string> caption_rows(const data::CaptionFile& file) {
  std::vector<std::string> rows;
  for (const data::Caption& c : file.captions)
    rows.push_back(c.id + "|" + c.level + "|" + c.text + "|" + c.facts);
  return rows;
}

// CADCLIP_SHARDS_TEST_PARTS=2000 runs the same check on 2,000 parts (by hand: docs/CLUSTER.md).
int synthetic_parts() {
  const char* env = std::getenv("CADCLIP_SHARDS_TEST_PARTS");
  return env != nullptr ? std::atoi(env) : 40;
}

TEST(PrepareShards, FourPartsHoldOneRunsGraphsByteForByteAndMergeIntoIt) {
  data::testing::ScratchDir dir("prepare-shards");
  const fs::path synth = dir.path() / "synth";
  const int count = synthetic_parts();
  const auto made = cadclip(
      "",
      format("synth --kind mixed --count {} --seed 5 --workers 2 --out {}", count, synth.string()));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // A file no reader opens, and a second file claiming an id: failures in one part alone.
  std::ofstream(synth / "parts" / "garbage.step") << "ISO-10303-21; not really";
  fs::path step;
  for (const auto& entry : fs::directory_iterator(synth / "parts"))
    if (entry.path().extension() == ".step" && entry.path().stem() != "garbage")
      step = entry.path();
  ASSERT_FALSE(step.empty());
  fs::copy_file(step, fs::path(step).replace_extension(".stp"));

  const std::string inputs =
      format("prepare {} --captions {} --splits {} --assume-unit m --workers 2",
             (synth / "parts").string(), (synth / "captions.jsonl").string(),
             (synth / "splits.json").string());
  const auto whole = cadclip("", inputs + " --out " + (dir.path() / "whole").string());
  ASSERT_EQ(whole.exit_code, 1) << whole.output;  // the garbage file and the duplicate id fail
  std::vector<fs::path> parts;
  for (int k = 0; k < 4; ++k) {
    parts.push_back(dir.path() / ("part-" + std::to_string(k)));
    // Part 2 from a SLURM array numbered 1-4; the others from the flags.
    const auto part =
        k == 2 ? cadclip("SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4",
                         inputs + " --out " + parts.back().string())
               : cadclip("", format("{} --num-shards 4 --shard-index {} --out {}", inputs, k,
                                    parts.back().string()));
    ASSERT_LE(part.exit_code, 1) << part.output;
    if (k == 2) EXPECT_NE(part.output.find("part 2 of 4"), std::string::npos) << part.output;
  }

  const nlohmann::json whole_manifest = read_json(dir.path() / "whole" / "manifest.json");
  const std::map<std::string, std::string> expected =
      graphs_by_id(data::Dataset::open(dir.path() / "whole"));
  ASSERT_GE(expected.size(), static_cast<size_t>(count) - 2);
  std::fprintf(stderr, "[shards] %zu models prepared whole and in 4 parts\n", expected.size());
  std::map<std::string, std::string> together;
  int64_t inputs_in_parts = 0, failed_in_parts = 0;
  for (int k = 0; k < 4; ++k) {
    const nlohmann::json manifest = read_json(parts[k] / "manifest.json");
    EXPECT_EQ(manifest["shard"]["index"], k);
    EXPECT_EQ(manifest["shard"]["count"], 4);
    EXPECT_EQ(manifest["shard"]["inputs"], whole_manifest["counts"]["inputs"]);
    inputs_in_parts += manifest["counts"]["inputs"].get<int64_t>();
    failed_in_parts += manifest["counts"]["failed"].get<int64_t>();
    EXPECT_EQ(manifest["captions"]["without_model"].get<int64_t>() +
                  manifest["captions"]["of_other_parts"].get<int64_t>() +
                  manifest["captions"]["kept"].get<int64_t>(),
              whole_manifest["captions"]["without_model"].get<int64_t>() +
                  whole_manifest["captions"]["kept"].get<int64_t>())
        << "every caption is kept, of another part, or of no model";
    for (const auto& [id, bytes] : graphs_by_id(data::Dataset::open(parts[k]))) {
      EXPECT_EQ(shard_of(id, 4), k) << id;
      EXPECT_TRUE(together.emplace(id, bytes).second) << id << " is in two parts";
    }
  }
  EXPECT_EQ(inputs_in_parts, whole_manifest["counts"]["inputs"].get<int64_t>());
  EXPECT_EQ(failed_in_parts, 2);
  ASSERT_EQ(together.size(), expected.size());
  for (const auto& [id, bytes] : expected) {
    ASSERT_TRUE(together.contains(id)) << id;
    EXPECT_TRUE(together.at(id) == bytes) << id << " differs";
  }

  // Three parts of four are refused; all four merge into what one run wrote.
  const fs::path merged = dir.path() / "merged";
  const auto three = cadclip("", format("merge {} {} {} --out {}", parts[0].string(),
                                        parts[1].string(), parts[3].string(), merged.string()));
  EXPECT_EQ(three.exit_code, 2) << three.output;
  EXPECT_NE(three.output.find("parts 2 of the 4-way prepare"), std::string::npos) << three.output;
  const auto all =
      cadclip("", format("merge {} {} {} {} --out {}", parts[0].string(), parts[1].string(),
                         parts[2].string(), parts[3].string(), merged.string()));
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const data::PreparedData one = data::open_prepared({dir.path() / "whole"});
  const data::PreparedData four = data::open_prepared({merged});
  EXPECT_EQ(caption_rows(four.captions), caption_rows(one.captions));
  EXPECT_EQ(four.splits.train, one.splits.train);
  EXPECT_EQ(four.splits.validation, one.splits.validation);
  EXPECT_EQ(four.splits.test, one.splits.test);
  EXPECT_EQ(lines_of(merged / "failures.jsonl"), lines_of(dir.path() / "whole" / "failures.jsonl"));
  EXPECT_EQ(read_json(merged / "manifest.json")["counts"], whole_manifest["counts"]);
}

TEST(PrepareShards, ASlurmArrayThatMapsOntoNoPartIsRefusedWithTheFix) {
  data::testing::ScratchDir dir("prepare-shards-slurm");
  fs::create_directories(dir.path() / "in");
  std::ofstream(dir.path() / "in" / "a.step") << "x";
  const auto run = cadclip(
      "SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4",
      format("prepare {} --out {}", (dir.path() / "in").string(), (dir.path() / "out").string()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("SLURM_ARRAY_TASK_ID=9 does not map onto a part 0..3"),
            std::string::npos)
      << run.output;
}

TEST(ShardOf, IsAStableFunctionOfTheIdAlone) {
  // Pinned (values from Python's hashlib): an assignment never changes between versions.
  EXPECT_EQ(shard_of("plate_0001", 1), 0);
  EXPECT_EQ(shard_of("plate_0001", 4), 3);
  EXPECT_EQ(shard_of("plate_0001", 64), 15);
  EXPECT_EQ(shard_of("0070/00702684", 4), 2);
  EXPECT_EQ(shard_of("0070/00702684", 7), 3);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 400; ++i) ++counts[static_cast<size_t>(shard_of(format("m{}", i), 4))];
  for (int c : counts) EXPECT_GT(c, 60) << "the parts should be about even";
  EXPECT_THROW(shard_of("x", 0), Error);
}

}  // namespace
}  // namespace cadclip::cad
