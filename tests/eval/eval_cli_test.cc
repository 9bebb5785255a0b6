// `cadclip eval` end to end: a checkpoint of a tiny model and a tiny prepared
// folder written here; the command's JSON must equal evaluate() in-process on
// the same checkpoint, the table and the saved embeddings must be there, and
// bad input must exit 2 with a message naming it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/Parallel.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../apps/cli_run.h"
#include "../model/random_graph.h"
#include "../model/tiny_model.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"

namespace cadclip::eval {
namespace {

namespace fs = std::filesystem;

using testing::run_cadclip;

// Equal structure, equal counts, ranks and strings; floating statistics equal
// to 1e-6 (another process may take other kernel paths in the last bits).
void expect_same(const nlohmann::json& got, const nlohmann::json& expected,
                 const std::string& where) {
  if (got.is_number() && expected.is_number()) {
    if (got.is_number_float() || expected.is_number_float()) {
      EXPECT_NEAR(got.get<double>(), expected.get<double>(), 1e-6) << where;
    } else {
      EXPECT_EQ(got.get<int64_t>(), expected.get<int64_t>()) << where;
    }
    return;
  }
  ASSERT_EQ(got.type(), expected.type()) << where;
  if (got.is_object()) {
    ASSERT_EQ(got.size(), expected.size()) << where << ": " << got.dump();
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(got.contains(key)) << where << "." << key;
      expect_same(got[key], value, where + "." + key);
    }
  } else if (got.is_array()) {
    ASSERT_EQ(got.size(), expected.size()) << where;
    for (size_t i = 0; i < got.size(); ++i) {
      expect_same(got[i], expected[i], where + "." + std::to_string(i));
    }
  } else {
    EXPECT_EQ(got, expected) << where;
  }
}

class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cadclip_eval_cli_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    data_ = root_ / "prepared";
    run_ = root_ / "run";
    fs::create_directories(data_);

    // A prepared folder: one shard, manifest, captions at two levels, splits.
    data::ShardWriter writer;
    std::vector<std::string> ids;
    for (int i = 0; i < 8; ++i) {
      data::BRepGraph g = testing::random_graph(2 + i % 5, 200 + i);
      g.id = "m" + std::to_string(i);
      g.geometry_hash = "h" + std::to_string(i);
      ids.push_back(g.id);
      writer.add(g);
    }
    writer.write(data_ / "shard-00000.safetensors");
    write_text_atomic(data_ / "manifest.json",
                      R"({"shards": [{"file": "shard-00000.safetensors"}]})");
    const char* texts[] = {"Cube 10 x 10 x 10.",
                           "Cylinder Ø30×40",
                           "M6×1.0 hex nut",
                           "Spur gear: module 1.5, 24 teeth",
                           "Washer: inner Ø6.4, outer Ø12",
                           "L-bracket, 3 mm sheet",
                           "Pipe, 2\" schedule 40",
                           "Hexagonal prism, 17 mm AF"};
    std::vector<data::Caption> captions;
    for (int i = 0; i < 8; ++i) {
      captions.push_back({ids[i], "abstract", texts[i]});
      captions.push_back({ids[i], "expert", std::string(texts[i]) + ", thickness 1.6 mm."});
    }
    data::write_captions_jsonl(data_ / "captions.jsonl", captions);
    data::Splits splits;
    splits.train = {"m0", "m1"};
    splits.validation = {"m2"};
    splits.test = {"m3", "m4", "m5", "m6", "m7"};
    data::write_splits(data_ / "splits.json", splits);

    // A checkpoint of a tiny untrained model.
    torch::manual_seed(0);
    const model::ModelConfig config = testing::tiny_model_config();
    model::save_checkpoint(run_, "last", model::build_model(config), model::TrainingState{});
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_, data_, run_;
};

TEST_F(EvalCli, JsonEqualsEvaluateInProcess) {
  const fs::path embeddings = root_ / "emb.safetensors";
  const auto run = run_cadclip(format("eval {} --data {} --json --threads 1 --batch-size 3 "
                                      "--save-embeddings {}",
                                      run_.string(), data_.string(), embeddings.string()),
                               /*with_stderr=*/false);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json j = nlohmann::json::parse(run.output);

  at::set_num_threads(1);
  model::BuiltModel built = model::load_model_from_checkpoint(run_);
  const data::Dataset dataset = data::Dataset::open(data_);
  const data::CaptionFile captions = data::read_captions(data_ / "captions.jsonl", {});
  EvalOptions options;
  options.batch_size = 3;
  const EvalReport report =
      evaluate(*built.model, *built.text.tokenizer, built.text.max_length, dataset,
               captions.captions, data::read_splits(data_ / "splits.json").test, options);
  nlohmann::json expected = to_json(report);
  expected["checkpoint"] = run_.string();
  expected["data"] = nlohmann::json::array({data_.string()});
  // Everything but the wall time is the same.
  EXPECT_TRUE(j.contains("seconds"));
  nlohmann::json got = j;
  got.erase("seconds");
  expected.erase("seconds");
  expect_same(got, expected, "");
  EXPECT_EQ(j["gallery"], 5);
  EXPECT_EQ(j["max_text_length"], 16);

  const SafetensorsReader file = SafetensorsReader::open(embeddings);
  EXPECT_EQ(file.at("brep").shape, (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(file.at("text").shape, (std::vector<int64_t>{10, 8}));
  EXPECT_EQ(file.metadata().at("brep_ids"), R"(["m3","m4","m5","m6","m7"])");
}

TEST_F(EvalCli, SubsetsScoreApartAndEqualRunsOnTheirOwnSplitsFiles) {
  data::Splits few;
  few.test = {"m4", "m6"};
  data::write_splits(root_ / "few.json", few);
  const fs::path json_out = root_ / "report.json";
  const auto run = run_cadclip(
      format("eval {} --data {} --threads 1 --batch-size 3 --subset few={} --json-out {}",
             run_.string(), data_.string(), (root_ / "few.json").string(), json_out.string()),
      /*with_stderr=*/false);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // The table, then the subset's table; the JSON file holds both.
  EXPECT_NE(run.output.find("gallery 5 parts"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--- subset few: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("gallery 2 parts"), std::string::npos) << run.output;
  const nlohmann::json j = nlohmann::json::parse(read_text_file(json_out));
  EXPECT_EQ(j["gallery"], 5);
  ASSERT_TRUE(j["subsets"].contains("few")) << j.dump();
  // The subset equals a run on the subset's splits file alone.
  const auto alone =
      run_cadclip(format("eval {} --data {} --threads 1 --batch-size 3 --json --splits {}",
                         run_.string(), data_.string(), (root_ / "few.json").string()),
                  /*with_stderr=*/false);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  nlohmann::json expected = nlohmann::json::parse(alone.output);
  nlohmann::json got = j["subsets"]["few"];
  for (nlohmann::json* x : {&expected, &got}) {
    x->erase("seconds");
    x->erase("split");
    x->erase("checkpoint");
    x->erase("data");
  }
  expect_same(got, expected, "");
  EXPECT_EQ(got["gallery"], 2);
}

TEST_F(EvalCli, ASubsetWithoutAFileIsRefusedSayingHowToWriteIt) {
  const auto run =
      run_cadclip(format("eval {} --data {} --subset programs", run_.string(), data_.string()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("NAME=SPLITS_FILE"), std::string::npos) << run.output;
}

TEST_F(EvalCli, PrintsTheTableForALevelAndSplit) {
  const auto run =
      run_cadclip(format("eval {} --data {} --split validation --levels expert --max-text-length 8",
                         (run_ / "checkpoints" / "last.json").string(), data_.string()),
                  /*with_stderr=*/false);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("split validation: gallery 1 parts"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("captions cut at 8 tokens"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\nexpert "), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("\nabstract "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\nself "), std::string::npos) << run.output;
}

TEST_F(EvalCli, RefusesALevelThatIsNotThere) {
  const auto run =
      run_cadclip(format("eval {} --data {} --levels beginner", run_.string(), data_.string()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("level 'beginner' has no caption"), std::string::npos) << run.output;
}

TEST_F(EvalCli, AnUnwritableEmbeddingsPathFailsBeforeAnyWork) {
  // The data folder has no splits.json: a run that evaluated first would
  // fail on it; the check of the output path comes before anything else.
  const fs::path empty = data_.parent_path() / "no_data_here";
  fs::create_directories(empty);
  const auto run =
      run_cadclip(format("eval {} --data {} --save-embeddings {}/missing/e.safetensors",
                         run_.string(), empty.string(), empty.string()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--save-embeddings"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("nothing was evaluated"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("splits.json"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace cadclip::eval
