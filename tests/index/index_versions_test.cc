// An index folder under concurrent and interrupted use: a refused checkpoint
// leaves it as it was, a kill at the worst moment leaves the previous version
// in force, a second writer is turned away (or waits), readers keep the
// version they opened, and an index of the layout before versions is read
// and moved to versions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/Parallel.h>

#include <chrono>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/searcher.h"
#include "cadclip/model/checkpoint_io.h"
#include "index_fixture.h"

extern char** environ;

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;
using testing::fresh_folder;

// Runs the cadclip binary with `args` and extra environment `env`; its
// stderr goes to `log`. Returns the wait status.
int run_cadclip(const std::vector<std::string>& args, const std::vector<std::string>& env,
                const fs::path& log) {
  std::vector<std::string> all = {CADCLIP_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = env;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, CADCLIP_BINARY, &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Every part of the index is its own best match with a score of 1: its
// catalog embedding and its row in the vectors are the same vector.
void expect_consistent(const Searcher& searcher, const std::string& what) {
  ASSERT_GT(searcher.size(), 0) << what;
  for (int64_t i = 0; i < 64; ++i) {
    const std::string id = "m" + std::to_string(i);
    if (searcher.find(id) == nullptr) continue;
    const std::vector<Hit> hits = searcher.search_like_item(id, 1);
    ASSERT_EQ(hits.size(), 1u) << what;
    EXPECT_EQ(hits[0].item->id, id) << what << ": the part is not its own best match";
    EXPECT_NEAR(hits[0].score, 1.0, 1e-4) << what << ": " << id;
  }
}

// Files of a writer that did not finish: temporary files and half-built versions.
std::vector<std::string> leftovers(const fs::path& index) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(index)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp") != std::string::npos || name.find(".building") != std::string::npos)
      found.push_back(entry.path().string());
  }
  return found;
}

// Writes NaN into the first value of brep_head.weight of a checkpoint and
// updates its pointer's sum, as if the NaN had been saved that way.
void plant_nan(const fs::path& run) {
  const fs::path file = model::resolve_checkpoint(run) / "model.safetensors";
  const SafetensorsReader reader = SafetensorsReader::open(file);
  const TensorInfo& victim = reader.at("brep_head.weight");
  uint64_t header = 0;
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(&header), 8);
  {
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    out.seekp(static_cast<std::streamoff>(8 + header + victim.begin));
    out.write(reinterpret_cast<const char*>(&nan), 4);
  }
  const fs::path pointer = run / "checkpoints" / "last.json";
  nlohmann::json json = nlohmann::json::parse(read_text_file(pointer));
  json["model_sha256"] = sha256_file_hex(file);
  write_text_atomic(pointer, json.dump(2));
}

class IndexVersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(1);
    root_ = fresh_folder("cadclip_index_versions_test");
    testing::write_checkpoint(root_ / "run", 0);
    testing::write_prepared(root_ / "prepared", 8);
    // The same ids with other geometry: every vector changes.
    testing::write_prepared(root_ / "changed", 8, /*seed=*/300);
  }
  void TearDown() override { fs::remove_all(root_); }

  IndexOptions options(const fs::path& library) const {
    IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = library.string();
    o.out = (root_ / "index").string();
    o.worker_binary = CADCLIP_BINARY;
    o.workers = 1;
    return o;
  }
  std::vector<std::string> cli(const fs::path& library) const {
    return {"index", (root_ / "run").string(),   library.string(),
            "--out", (root_ / "index").string(), "--threads",
            "1"};
  }

  fs::path root_;
};

TEST_F(IndexVersionsTest, ARefusedCheckpointLeavesTheIndexAsItWas) {
  build_index(options(root_ / "prepared"));
  const std::string before = Searcher::open(root_ / "index").checkpoint_identity();
  testing::write_checkpoint(root_ / "sick", 1);
  plant_nan(root_ / "sick");
  IndexOptions o = options(root_ / "changed");
  o.checkpoint = (root_ / "sick").string();
  o.overwrite = true;
  try {
    build_index(o);
    FAIL() << "a checkpoint holding NaN was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
  const Searcher searcher = Searcher::open(root_ / "index");
  EXPECT_EQ(searcher.size(), 8);
  EXPECT_EQ(searcher.checkpoint_identity(), before);
  expect_consistent(searcher, "after the refused rebuild");
}

TEST_F(IndexVersionsTest, AKillWhileWritingLeavesThePreviousVersionInForce) {
  build_index(options(root_ / "prepared"));
  for (const char* point : {"vectors", "commit"}) {
    SCOPED_TRACE(point);
    const int status =
        run_cadclip(cli(root_ / "changed"), {std::string("CADCLIP_DEBUG_KILL_INDEX_AT=") + point},
                    root_ / "killed.log");
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the run was not killed at " << point << ":\n"
        << read_text_file(root_ / "killed.log");
    const Searcher searcher = Searcher::open(root_ / "index");
    EXPECT_EQ(searcher.size(), 8);
    expect_consistent(searcher, std::string("after a kill at ") + point);
  }
  // The next run finishes the job and leaves nothing of the killed ones.
  build_index(options(root_ / "changed"));
  expect_consistent(Searcher::open(root_ / "index"), "after the run that finished");
  EXPECT_EQ(leftovers(root_ / "index"), std::vector<std::string>{});
}

TEST_F(IndexVersionsTest, ASecondWriterIsTurnedAwayWhileOneHoldsTheFolder) {
  build_index(options(root_ / "prepared"));
  // Another writer holds the folder (as a `cadclip index` running elsewhere would).
  const int fd = ::open((root_ / "index" / "lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  try {
    build_index(options(root_ / "changed"));
    FAIL() << "a second writer was let in";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("being written by another"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--wait"), std::string::npos) << e.what();
  }
  ::close(fd);
  expect_consistent(Searcher::open(root_ / "index"), "after the refused writer");
}

TEST_F(IndexVersionsTest, ASecondWriterWithWaitRunsAfterTheFirst) {
  build_index(options(root_ / "prepared"));
  const int fd = ::open((root_ / "index" / "lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::thread release([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::close(fd);
  });
  IndexOptions o = options(root_ / "changed");
  o.wait = true;
  const auto start = std::chrono::steady_clock::now();
  const IndexSummary summary = build_index(o);
  EXPECT_GT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(700));
  release.join();
  EXPECT_EQ(summary.changed, 8);
  expect_consistent(Searcher::open(root_ / "index"), "after waiting");
}

TEST_F(IndexVersionsTest, TwoWritersAtOnceLeaveOneWholeIndex) {
  testing::write_prepared(root_ / "small", 5, /*seed=*/500);
  int codes[2] = {0, 0};
  std::thread a([&] { codes[0] = run_cadclip(cli(root_ / "prepared"), {}, root_ / "a.log"); });
  std::thread b([&] { codes[1] = run_cadclip(cli(root_ / "small"), {}, root_ / "b.log"); });
  a.join();
  b.join();
  int succeeded = 0;
  for (int i = 0; i < 2; ++i) {
    const std::string log = read_text_file(root_ / (i == 0 ? "a.log" : "b.log"));
    ASSERT_TRUE(WIFEXITED(codes[i])) << log;
    if (WEXITSTATUS(codes[i]) == 0) {
      ++succeeded;
    } else {
      EXPECT_NE(log.find("being written by another"), std::string::npos) << log;
    }
  }
  EXPECT_GE(succeeded, 1);
  const Searcher searcher = Searcher::open(root_ / "index");
  EXPECT_TRUE(searcher.size() == 8 || searcher.size() == 5) << searcher.size();
  expect_consistent(searcher, "after two writers");
}

TEST_F(IndexVersionsTest, AReaderKeepsTheVersionItOpened) {
  build_index(options(root_ / "prepared"));
  {
    const Searcher before = Searcher::open(root_ / "index");
    const std::vector<Hit> old_hits = before.search_text("M6 hex nut", 3);
    build_index(options(root_ / "changed"));
    // The reader still answers from its version, whose folder is still there.
    EXPECT_TRUE(fs::exists(before.version_folder() / "catalog.sqlite"));
    const std::vector<Hit> again = before.search_text("M6 hex nut", 3);
    ASSERT_EQ(again.size(), old_hits.size());
    for (size_t i = 0; i < again.size(); ++i) {
      EXPECT_EQ(again[i].item->id, old_hits[i].item->id);
      EXPECT_FLOAT_EQ(again[i].score, old_hits[i].score);
    }
    const Searcher after = Searcher::open(root_ / "index");
    EXPECT_NE(after.version_folder(), before.version_folder());
    expect_consistent(after, "the new version");
  }
  // Once no reader holds it, the next writer removes the old version.
  build_index(options(root_ / "prepared"));
  int versions = 0;
  for (const auto& entry : fs::directory_iterator(root_ / "index" / "versions")) {
    (void)entry;
    ++versions;
  }
  EXPECT_EQ(versions, 1);
}

TEST_F(IndexVersionsTest, AnIndexOfTheLayoutBeforeVersionsIsReadAndMoved) {
  const IndexSummary first = build_index(options(root_ / "prepared"));
  // The layout before versions: the version's files at the top of the folder.
  const fs::path index = root_ / "index";
  for (const auto& entry : fs::directory_iterator(first.version))
    fs::rename(entry.path(), index / entry.path().filename());
  fs::remove_all(index / "versions");
  fs::remove(index / "CURRENT");
  fs::remove(index / "reader.lock");
  expect_consistent(Searcher::open(index), "the old layout");
  const IndexSummary second = build_index(options(root_ / "prepared"));
  EXPECT_EQ(second.unchanged, 8);
  EXPECT_FALSE(fs::exists(index / "catalog.sqlite"));
  EXPECT_FALSE(fs::exists(index / "vectors.faiss"));
  expect_consistent(Searcher::open(index), "moved to versions");
}

}  // namespace
}  // namespace cadclip::index
