// `cadclip prepare` end to end: the real binary with its worker processes on
// real CAD files (copied from ../shared/data/cad into a scratch folder) and
// on bad inputs made here.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../data/test_graphs.h"
#include "../shared_corpus.h"
#include "cadclip/core/file.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/splits.h"

namespace cadclip::data {
namespace {

namespace fs = std::filesystem;
const fs::path kShared = CADCLIP_SHARED_DATA "/cad";
// Small single-solid STEP parts (10-20 faces each).
const char* const kGoodFiles[] = {"occt/screw.step", "brepnet/76879_65a30a82_0010_2.step",
                                  "brepnet/54516_ac9e2ef4_0008_1.step"};

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally (killed)
  std::string log;
};

RunResult run_prepare(const std::string& env, const std::string& args, const fs::path& log) {
  const std::string command =
      "exec env " + env + " " + CADCLIP_BINARY + " prepare " + args + " >" + log.string() + " 2>&1";
  // exec: the shell becomes the job, so a killed job reads as killed, not as status 137.
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.log = read_text_file(log);
  return result;
}

nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(read_text_file(path));
}

std::vector<nlohmann::json> read_jsonl(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::map<std::string, std::string> shard_bytes(const fs::path& out) {
  std::map<std::string, std::string> bytes;
  for (const auto& entry : fs::directory_iterator(out / "shards"))
    bytes[entry.path().filename().string()] = read_text_file(entry.path());
  return bytes;
}

void expect_counts_add_up(const fs::path& out) {
  const nlohmann::json manifest = read_json(out / "manifest.json");
  const auto& counts = manifest["counts"];
  EXPECT_EQ(counts["prepared"].get<int64_t>() + counts["failed"].get<int64_t>(),
            counts["inputs"].get<int64_t>());
  int64_t by_kind = 0, in_shards = 0;
  for (const auto& [kind, n] : manifest["failed_by_kind"].items()) by_kind += n.get<int64_t>();
  for (const auto& shard : manifest["shards"]) in_shards += shard["models"].get<int64_t>();
  EXPECT_EQ(by_kind, counts["failed"].get<int64_t>());
  EXPECT_EQ(in_shards, counts["prepared"].get<int64_t>());
  EXPECT_EQ(static_cast<int64_t>(read_jsonl(out / "failures.jsonl").size()),
            counts["failed"].get<int64_t>());
  const Dataset dataset = Dataset::open(out);
  EXPECT_EQ(dataset.size(), counts["prepared"].get<int64_t>());
  const Splits splits = read_splits(out / "splits.json");
  EXPECT_EQ(
      static_cast<int64_t>(splits.train.size() + splits.validation.size() + splits.test.size()),
      dataset.size());
}

class PrepareJob : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kShared / kGoodFiles[0]))
      GTEST_SKIP() << kShared << " is missing: the shared CAD test data is not installed";
    fs::create_directories(in());
    for (const char* file : kGoodFiles)
      fs::copy_file(kShared / file, in() / fs::path(file).filename());
  }
  fs::path in() const { return scratch_.path() / "in"; }
  fs::path out(const std::string& name) const { return scratch_.path() / name; }

  testing::ScratchDir scratch_{
      "prepare-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())};
};

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST_F(PrepareJob, BadInputsFailWithTheirReasonsWhileTheGoodOnesArePrepared) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const std::string screw = read_text_file(kShared / "occt/screw.step");
  write_bytes(in() / "empty.step", "");
  std::mt19937 random(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  write_bytes(in() / "random.step", noise);
  write_bytes(in() / "truncated.step", screw.substr(0, screw.size() / 2));
  write_bytes(in() / "unsupported.step",
              "ISO-10303-21;\nHEADER;\nFILE_DESCRIPTION(('x'),'2;1');\nFILE_NAME('x','',(''),(''),"
              "'','','');\nFILE_SCHEMA(('AUTOMOTIVE_DESIGN'));\nENDSEC;\nDATA;\n#1=SOME_UNKNOWN_"
              "ENTITY('a');\n#2=ANOTHER_ONE(#1,3.0);\nENDSEC;\nEND-ISO-10303-21;\n");
  fs::copy_file(kShared / "aagnet/partC.step", in() / "many_faces.step");  // 94 faces
  write_bytes(in() / "crash_me.step", screw);
  write_bytes(in() / "hang_me.step", screw);
  write_bytes(in() / "notes.txt", "not an input: wrong extension");
  // Captions: one for a good model, one for a failed one, one for no input, and a broken row.
  write_bytes(scratch_.path() / "captions.csv",
              "uid,abstract,beginner,intermediate,expert\n"
              "screw,A screw.,,,\n"
              "empty,An empty file.,,,\n"
              "nowhere,A part nobody has.,,,\n"
              "broken,\"never closed,,,\n");

  const RunResult run = run_prepare(
      "CADCLIP_DEBUG_CRASH_ON=crash_me.step CADCLIP_DEBUG_HANG_ON=hang_me.step",
      // --captions before the input folder: an option must not swallow the inputs after it.
      "--captions " + (scratch_.path() / "captions.csv").string() + " " + in().string() +
          " --out " + out("out").string() + " --workers 2 --file-timeout 3 --max-faces 50",
      scratch_.path() / "log.txt");
  EXPECT_EQ(run.exit_code, 1) << run.log;  // ran, some inputs failed
  expect_counts_add_up(out("out"));

  std::map<std::string, nlohmann::json> failures;
  for (const auto& line : read_jsonl(out("out") / "failures.jsonl"))
    failures[line["id"].get<std::string>()] = line;
  ASSERT_EQ(failures.size(), 7u) << run.log;
  auto expect_failure = [&](const std::string& id, const std::string& kind,
                            const std::string& words) {
    ASSERT_TRUE(failures.count(id)) << id << " is not in failures.jsonl\n" << run.log;
    EXPECT_EQ(failures[id]["kind"], kind) << id;
    EXPECT_NE(failures[id]["reason"].get<std::string>().find(words), std::string::npos)
        << id << ": " << failures[id]["reason"];
  };
  expect_failure("empty", "ingest", "empty");
  expect_failure("random", "ingest", "not a STEP file");
  expect_failure("truncated", "ingest", "truncated");
  expect_failure("unsupported", "ingest", "no STEP entity");
  expect_failure("many_faces", "ingest", "94 faces");
  expect_failure("crash_me", "crash", "signal 11");
  expect_failure("hang_me", "timeout", "3.0 s");

  const Dataset dataset = Dataset::open(out("out"));
  ASSERT_EQ(dataset.size(), 3);
  EXPECT_EQ(dataset.ids(),
            (std::vector<std::string>{"54516_ac9e2ef4_0008_1", "76879_65a30a82_0010_2", "screw"}));
  EXPECT_EQ(dataset.graph(2).num_faces(), 10);

  const nlohmann::json captions = read_json(out("out") / "manifest.json")["captions"];
  EXPECT_EQ(captions["kept"], 1);
  EXPECT_EQ(captions["without_model"], 2);
  EXPECT_EQ(captions["without_model_of_failed_inputs"], 1);
  EXPECT_EQ(captions["models_without_caption"], 2);
  EXPECT_EQ(captions["files"][0]["problem_rows"], 1);
  EXPECT_EQ(captions["files"][0]["problems"][0]["line"], 5);
  const CaptionFile written = read_captions(out("out") / "captions.jsonl", {});
  ASSERT_EQ(written.captions.size(), 1u);
  EXPECT_EQ(written.captions[0].id, "screw");
  EXPECT_NE(run.log.find("2 captions"), std::string::npos) << run.log;  // reported in the log
  EXPECT_FALSE(fs::exists(out("out") / "work"));  // the journal goes once the run is finished
  EXPECT_TRUE(fs::exists(out("out") / "options.json"));
}

TEST_F(PrepareJob, TwoRunsGiveIdenticalShardBytesWhateverTheWorkerCount) {
  const RunResult one =
      run_prepare("", in().string() + " --out " + out("a").string() + " --workers 1",
                  scratch_.path() / "a.txt");
  const RunResult two =
      run_prepare("", in().string() + " --out " + out("b").string() + " --workers 2",
                  scratch_.path() / "b.txt");
  ASSERT_EQ(one.exit_code, 0) << one.log;
  ASSERT_EQ(two.exit_code, 0) << two.log;
  const auto a = shard_bytes(out("a")), b = shard_bytes(out("b"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a == b) << "the shards differ between runs";
  EXPECT_EQ(read_text_file(out("a") / "splits.json"), read_text_file(out("b") / "splits.json"));
}

TEST_F(PrepareJob, AnInterruptedRunResumesWithoutRedoingFinishedFiles) {
  const std::string args = in().string() + " --workers 1 --shard-models 2 --out ";
  // The job kills itself (SIGKILL, as an outside kill would) after two files.
  const RunResult killed = run_prepare("CADCLIP_DEBUG_KILL_JOB_AFTER=2", args + out("r").string(),
                                       scratch_.path() / "killed.txt");
  EXPECT_EQ(killed.exit_code, -1) << killed.log;
  EXPECT_FALSE(fs::exists(out("r") / "manifest.json"));
  EXPECT_TRUE(fs::exists(out("r") / "work" / "journal.bin"));
  // A record torn mid-write (a power cut, a kill during the append) is cut off on resume.
  {
    std::ofstream journal(out("r") / "work" / "journal.bin", std::ios::binary | std::ios::app);
    journal << "CJR1" << std::string(9, '\x7f');
  }

  const RunResult resumed = run_prepare("", args + out("r").string(), scratch_.path() / "r.txt");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("torn record"), std::string::npos) << resumed.log;
  const nlohmann::json manifest = read_json(out("r") / "manifest.json");
  EXPECT_EQ(manifest["run"]["from_journal"], 2);
  EXPECT_EQ(manifest["run"]["ingested_now"], 1);
  expect_counts_add_up(out("r"));

  const RunResult whole = run_prepare("", args + out("w").string(), scratch_.path() / "w.txt");
  ASSERT_EQ(whole.exit_code, 0) << whole.log;
  const auto resumed_shards = shard_bytes(out("r"));
  EXPECT_EQ(resumed_shards.size(), 2u);  // --shard-models 2 over three models
  EXPECT_TRUE(resumed_shards == shard_bytes(out("w")));
}

// With --thumbnails the workers draw each model after sending its graph; the
// drawings live in the journal, so a resumed run keeps them, and a worker
// that crashes while drawing costs only that drawing (the model is prepared).
TEST_F(PrepareJob, ThumbnailsSurviveAResumeAndACrashWhileDrawingCostsOnlyTheDrawing) {
  const std::string args = in().string() + " --workers 1 --thumbnails --out ";
  const std::string crash = "CADCLIP_DEBUG_CRASH_DRAWING=screw.step";
  const RunResult killed = run_prepare(crash + " CADCLIP_DEBUG_KILL_JOB_AFTER=2",
                                       args + out("t").string(), scratch_.path() / "killed.txt");
  EXPECT_EQ(killed.exit_code, -1) << killed.log;
  // Resuming without drawings would mix models with and without them.
  const RunResult plain = run_prepare("", in().string() + " --workers 1 --out " + out("t").string(),
                                      scratch_.path() / "plain.txt");
  EXPECT_EQ(plain.exit_code, 2) << plain.log;
  EXPECT_NE(plain.log.find("other options"), std::string::npos) << plain.log;

  const RunResult resumed = run_prepare(crash, args + out("t").string(), scratch_.path() / "t.txt");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.log;  // a missing drawing is a warning
  EXPECT_NE(resumed.log.find("1 without a drawing"), std::string::npos) << resumed.log;
  const nlohmann::json manifest = read_json(out("t") / "manifest.json");
  EXPECT_EQ(manifest["run"]["from_journal"], 2);
  EXPECT_EQ(manifest["counts"]["prepared"], 3);
  EXPECT_EQ(manifest["thumbnails"]["drawn"], 2);
  EXPECT_EQ(manifest["thumbnails"]["missing_by_kind"]["crash"], 1);
  expect_counts_add_up(out("t"));

  const RunResult whole = run_prepare("", args + out("w").string(), scratch_.path() / "w.txt");
  ASSERT_EQ(whole.exit_code, 0) << whole.log;
  const std::vector<nlohmann::json> lines = read_jsonl(out("t") / "thumbnails.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  for (const nlohmann::json& line : lines) {
    if (line["id"] == "screw") {
      EXPECT_TRUE(line["svg"].is_null()) << line;
      EXPECT_EQ(line["kind"], "crash") << line;
      EXPECT_NE(line["reason"].get<std::string>().find("signal 11"), std::string::npos) << line;
      continue;
    }
    const std::string svg = read_text_file(out("t") / line["svg"].get<std::string>());
    EXPECT_NE(svg.find("<polyline"), std::string::npos) << line;
    // Byte for byte the drawing of an uninterrupted run.
    EXPECT_EQ(svg, read_text_file(out("w") / line["svg"].get<std::string>())) << line;
  }
  EXPECT_TRUE(shard_bytes(out("t")) == shard_bytes(out("w")));
}

TEST_F(PrepareJob, AFinishedDatasetIsNotOverwrittenUnlessAsked) {
  const std::string args = in().string() + " --workers 1 --out " + out("o").string();
  ASSERT_EQ(run_prepare("", args, scratch_.path() / "1.txt").exit_code, 0);
  const RunResult again = run_prepare("", args, scratch_.path() / "2.txt");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.log.find("--overwrite"), std::string::npos) << again.log;
  EXPECT_EQ(run_prepare("", args + " --overwrite", scratch_.path() / "3.txt").exit_code, 0);
}

TEST_F(PrepareJob, ASplitsFileIsRestrictedToPreparedModelsAndMismatchesCounted) {
  write_text_atomic(scratch_.path() / "splits.json",
                    R"({"train": ["screw", "ghost"], "validation": ["76879_65a30a82_0010_2"],
                        "test": []})");
  write_text_atomic(scratch_.path() / "list.txt",
                    "# inputs\nin/screw.step\nin/76879_65a30a82_0010_2.step\n"
                    "in/54516_ac9e2ef4_0008_1.step\n");
  const RunResult run = run_prepare("",
                                    "--inputs-from " + (scratch_.path() / "list.txt").string() +
                                        " --workers 1 --out " + out("s").string() + " --splits " +
                                        (scratch_.path() / "splits.json").string(),
                                    scratch_.path() / "log.txt");
  ASSERT_EQ(run.exit_code, 0) << run.log;
  const Splits splits = read_splits(out("s") / "splits.json");
  EXPECT_EQ(splits.train, (std::vector<std::string>{"screw"}));
  EXPECT_EQ(splits.validation, (std::vector<std::string>{"76879_65a30a82_0010_2"}));
  const nlohmann::json report = read_json(out("s") / "manifest.json")["splits"];
  EXPECT_EQ(report["ids_without_model"], 1);
  EXPECT_EQ(report["models_in_no_split"], 1);
}

// Every file of the shared corpus is either prepared or listed with a
// reason, and the counts add up.
TEST(PrepareSharedCorpus, EveryFileIsPreparedOrListedAndTheCountsAddUp) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  if (!fs::exists(kShared)) GTEST_SKIP() << kShared << " is missing";
  testing::ScratchDir scratch("prepare-corpus");
  const RunResult run =
      run_prepare("", kShared.string() + " --out " + (scratch.path() / "out").string(),
                  scratch.path() / "log.txt");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.log;
  int64_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kShared)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".step" || ext == ".stp" || ext == ".iges" ||
                                    ext == ".igs" || ext == ".brep" || ext == ".json"))
      ++files;
  }
  const nlohmann::json manifest = read_json(scratch.path() / "out" / "manifest.json");
  EXPECT_EQ(manifest["counts"]["inputs"], files);
  expect_counts_add_up(scratch.path() / "out");
  for (const auto& failure : read_jsonl(scratch.path() / "out" / "failures.jsonl"))
    EXPECT_FALSE(failure["reason"].get<std::string>().empty()) << failure.dump();
}

// The Text2CAD layout as a user has it on disk (docs/INGEST.md, "Text2CAD on
// disk"): cad_json/<4 digits>/<8 digits>.json in metres, the v1.1 caption CSV
// with its extra columns, DeepCAD's split file naming models the user lacks.
TEST(PrepareText2cad, TheGuidesCommandPreparesTheLayout) {
  testing::ScratchDir scratch("prepare-text2cad");
  const fs::path layout = "tests/fixtures/text2cad";
  const RunResult run = run_prepare(
      "",
      (layout / "cad_json").string() + " --captions " + (layout / "text2cad_v1.1.csv").string() +
          " --splits " + (layout / "train_val_test_split.json").string() +
          " --assume-unit m --out " + (scratch.path() / "out").string(),
      scratch.path() / "log.txt");
  ASSERT_EQ(run.exit_code, 0) << run.log;
  const fs::path out = scratch.path() / "out";
  expect_counts_add_up(out);
  const nlohmann::json manifest = read_json(out / "manifest.json");
  EXPECT_EQ(manifest["counts"]["prepared"], 4);
  EXPECT_EQ(manifest["counts"]["failed"], 0);
  // Ids are the uids: the path under cad_json without the extension.
  const Splits splits = read_splits(out / "splits.json");
  EXPECT_EQ(splits.train, (std::vector<std::string>{"0001/00010007", "0070/00702684"}));
  EXPECT_EQ(splits.validation, (std::vector<std::string>{"0001/00010032"}));
  EXPECT_EQ(splits.test, (std::vector<std::string>{"0070/00702691"}));
  EXPECT_EQ(manifest["splits"]["ids_without_model"], 2) << "0070/00702690, 0099/00990001";
  // Four levels per model; the v1.1 columns (description, keywords, ...) are not captions,
  // and a quoted caption with a line break inside stays one caption.
  EXPECT_EQ(manifest["captions"]["kept"], 16);
  for (const char* level : {"abstract", "beginner", "intermediate", "expert"})
    EXPECT_EQ(manifest["captions"]["by_level"][level], 4) << level;
  // The empty extrude of 0001/00010007 is skipped and said, not silent.
  EXPECT_EQ(manifest["warnings"]["count"], 1);
  const std::vector<nlohmann::json> warnings = read_jsonl(out / "warnings.jsonl");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]["id"], "0001/00010007");
  EXPECT_NE(warnings[0]["warning"].get<std::string>().find("empty profile list"),
            std::string::npos);
  // Metres to millimetres: the plate is 100 x 60 x 10 mm.
  const Dataset dataset = Dataset::open(out);
  for (int64_t i = 0; i < dataset.size(); ++i) {
    const BRepGraph graph = dataset.graph(i);
    if (graph.id != "0070/00702684") continue;
    EXPECT_NEAR(graph.scale_mm, 100, 1e-3);
    EXPECT_EQ(graph.unit, "assumed:m");
  }
}

}  // namespace
}  // namespace cadclip::data
