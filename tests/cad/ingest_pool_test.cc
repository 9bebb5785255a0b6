// The ingest pool with real worker processes (the cadclip binary) on small
// CAD files from ../shared/data/cad and on files made here: every input gets
// one outcome; a garbage file is an ingest failure; a worker that crashes or
// hangs costs only its file (or only the drawing) and is replaced.
#include "cadclip/cad/ingest_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include "../shared_corpus.h"
#include "cadclip/core/file.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::cad {
namespace {

namespace fs = std::filesystem;
using data::FailureKind;

const fs::path kShared = CADCLIP_SHARED_DATA "/cad";
const fs::path kScrew = kShared / "occt/screw.step";  // 10 faces
const fs::path kBracket = kShared / "brepnet/76879_65a30a82_0010_2.step";

// Sets a worker's test hook (read by the worker processes a run starts) for one scope.
class DebugHook {
 public:
  DebugHook(const char* variable, const char* file) : variable_(variable) {
    ::setenv(variable, file, 1);
  }
  ~DebugHook() { ::unsetenv(variable_); }

 private:
  const char* variable_;
};

class IngestPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kScrew) || !fs::exists(kBracket))
      GTEST_SKIP() << kShared << " is missing: the shared CAD test data is not installed";
  }

  IngestPoolOptions options(int workers) const {
    IngestPoolOptions o;
    o.workers = workers;
    o.ingest.limits.file_timeout_s = 2;
    o.worker_binary = CADCLIP_BINARY;  // this test binary is no worker
    return o;
  }

  fs::path copy(const fs::path& from, const std::string& name) const {
    fs::copy_file(from, dir_.path() / name);
    return dir_.path() / name;
  }

  // Runs the pool and returns the outcomes by input index; each index must come once.
  std::map<size_t, IngestOutcome> run(const IngestPoolOptions& o,
                                      const std::vector<IngestInput>& inputs) const {
    std::map<size_t, IngestOutcome> outcomes;
    IngestPool(o).run(inputs, [&](IngestOutcome outcome) {
      EXPECT_LT(outcome.index, inputs.size());
      EXPECT_EQ(outcome.id, inputs[outcome.index].id);
      EXPECT_FALSE(outcomes.count(outcome.index)) << "two outcomes for " << outcome.id;
      outcomes[outcome.index] = std::move(outcome);
    });
    EXPECT_EQ(outcomes.size(), inputs.size());
    return outcomes;
  }

  ScratchDir dir_{fs::temp_directory_path() /
                  ("cadclip-ingest-pool-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name())};
};

data::BRepGraph decoded(const IngestOutcome& outcome) {
  return data::decode_graph(std::as_bytes(std::span(outcome.graph.data(), outcome.graph.size())),
                            outcome.id);
}

TEST_F(IngestPoolTest, GoodFilesGetGraphsAndDrawingsAndGarbageAnIngestFailure) {
  std::string noise(4096, '\0');
  std::mt19937 random(11);
  for (char& c : noise) c = static_cast<char>(random());
  write_text_atomic(dir_.path() / "garbage.step", noise);
  const std::vector<IngestInput> inputs = {
      {copy(kScrew, "screw.step"), "screw", /*thumbnail=*/true},
      {dir_.path() / "garbage.step", "garbage", /*thumbnail=*/true},
      {copy(kBracket, "bracket.step"), "parts/bracket", /*thumbnail=*/false},
      {dir_.path() / "absent.step", "absent", /*thumbnail=*/false}};
  std::map<size_t, IngestOutcome> out = run(options(2), inputs);

  ASSERT_FALSE(out[0].failure) << out[0].failure->reason;
  const data::BRepGraph screw = decoded(out[0]);
  EXPECT_EQ(screw.id, "screw");
  EXPECT_EQ(screw.num_faces(), 10);
  EXPECT_EQ(out[0].faces, 10);
  EXPECT_EQ(out[0].edges, screw.num_edges());
  EXPECT_GT(out[0].seconds, 0);
  EXPECT_TRUE(out[0].drawn);
  EXPECT_FALSE(out[0].no_drawing);
  EXPECT_NE(out[0].svg.find("<polyline"), std::string::npos);

  ASSERT_TRUE(out[1].failure);
  EXPECT_EQ(out[1].failure->kind, FailureKind::kIngest);
  EXPECT_NE(out[1].failure->reason.find("not a STEP file"), std::string::npos)
      << out[1].failure->reason;
  EXPECT_TRUE(out[1].graph.empty());
  EXPECT_FALSE(out[1].drawn);  // no graph, no drawing, and no reason for one either
  EXPECT_FALSE(out[1].no_drawing);

  ASSERT_FALSE(out[2].failure) << out[2].failure->reason;
  EXPECT_EQ(decoded(out[2]).id, "parts/bracket");
  EXPECT_FALSE(out[2].drawn);  // none asked for
  EXPECT_FALSE(out[2].no_drawing);
  EXPECT_TRUE(out[2].svg.empty());

  ASSERT_TRUE(out[3].failure);
  EXPECT_EQ(out[3].failure->kind, FailureKind::kUnreadable);
  EXPECT_NE(out[3].failure->reason.find("absent.step"), std::string::npos);
}

// One worker for everything: each file after the crash and the hang needs a
// replacement worker, and still gets its graph.
TEST_F(IngestPoolTest, ACrashAndAHangCostOnlyTheirFilesAndTheWorkerIsReplaced) {
  const DebugHook crash("CADCLIP_DEBUG_CRASH_ON", "crash_me.step");
  const DebugHook hang("CADCLIP_DEBUG_HANG_ON", "hang_me.step");
  const DebugHook crash_drawing("CADCLIP_DEBUG_CRASH_DRAWING", "crash_drawing.step");
  // Copies of one file: the same size, so the pool takes them in this order.
  const std::vector<IngestInput> inputs = {
      {copy(kScrew, "crash_me.step"), "crash_me", /*thumbnail=*/false},
      {copy(kScrew, "good_1.step"), "good_1", /*thumbnail=*/false},
      {copy(kScrew, "hang_me.step"), "hang_me", /*thumbnail=*/false},
      {copy(kScrew, "crash_drawing.step"), "crash_drawing", /*thumbnail=*/true},
      {copy(kScrew, "good_2.step"), "good_2", /*thumbnail=*/true}};
  std::map<size_t, IngestOutcome> out = run(options(1), inputs);

  ASSERT_TRUE(out[0].failure);
  EXPECT_EQ(out[0].failure->kind, FailureKind::kCrash);
  EXPECT_NE(out[0].failure->reason.find("signal 11"), std::string::npos) << out[0].failure->reason;
  ASSERT_TRUE(out[2].failure);
  EXPECT_EQ(out[2].failure->kind, FailureKind::kTimeout);
  EXPECT_NE(out[2].failure->reason.find("2.0 s"), std::string::npos) << out[2].failure->reason;
  // Crashing while drawing costs the drawing only: the graph came first.
  ASSERT_FALSE(out[3].failure) << out[3].failure->reason;
  EXPECT_EQ(decoded(out[3]).num_faces(), 10);
  EXPECT_FALSE(out[3].drawn);
  ASSERT_TRUE(out[3].no_drawing);
  EXPECT_EQ(out[3].no_drawing->kind, FailureKind::kCrash);
  EXPECT_NE(out[3].no_drawing->reason.find("thumbnail"), std::string::npos);
  for (const size_t good : {1, 4}) {
    ASSERT_FALSE(out[good].failure) << out[good].failure->reason;
    EXPECT_EQ(decoded(out[good]).num_faces(), 10) << out[good].id;
  }
  EXPECT_TRUE(out[4].drawn);
}

TEST_F(IngestPoolTest, FilesOverTheSizeLimitFailBeforeAnyWorkerStarts) {
  IngestPoolOptions o = options(1);
  o.ingest.limits.max_file_mb = 0.001;
  o.worker_binary = "/nonexistent/cadclip";  // a worker started would throw
  std::map<size_t, IngestOutcome> out = run(o, {{copy(kScrew, "screw.step"), "screw"}});
  ASSERT_TRUE(out[0].failure);
  EXPECT_EQ(out[0].failure->kind, FailureKind::kTooLarge);
  EXPECT_NE(out[0].failure->reason.find("--max-file-mb"), std::string::npos);
  EXPECT_NO_THROW(IngestPool(o).run({}, [](IngestOutcome) {})) << "no input, no worker";
}

TEST_F(IngestPoolTest, AWorkerBinaryThatIsNoCadclipIsABadArgument) {
  IngestPoolOptions o = options(1);
  o.worker_binary = "/nonexistent/cadclip";
  const std::vector<IngestInput> inputs = {{copy(kScrew, "screw.step"), "screw"}};
  EXPECT_THROW(IngestPool(o).run(inputs, [](IngestOutcome) {}), Error);
}

TEST_F(IngestPoolTest, OneFileInAWorkerGivesItsGraphOrAnIngestError) {
  const data::BRepGraph graph = ingest_in_worker(copy(kScrew, "screw.step"), options(0));
  EXPECT_EQ(graph.id, "screw");
  EXPECT_EQ(graph.num_faces(), 10);
  write_text_atomic(dir_.path() / "broken.step", "ISO-10303-21;\nHEADER;\nENDSEC;\n");
  try {
    ingest_in_worker(dir_.path() / "broken.step", options(0));
    FAIL() << "a broken file gave a graph";
  } catch (const data::IngestError& e) {
    EXPECT_EQ(e.failure().kind, FailureKind::kIngest);
    EXPECT_EQ(std::string(e.what()).rfind("broken.step could not be read as a part: ingest: ", 0),
              0u)
        << e.what();
  }
  const DebugHook crash("CADCLIP_DEBUG_CRASH_ON", "crash_me.step");
  try {
    ingest_in_worker(copy(kScrew, "crash_me.step"), options(0));
    FAIL() << "a crashing file gave a graph";
  } catch (const data::IngestError& e) {
    EXPECT_EQ(e.failure().kind, FailureKind::kCrash);
    EXPECT_NE(std::string(e.what()).find(": crash: "), std::string::npos) << e.what();
  }
}

TEST(FailureKind, EveryKindHasTheNameTheFilesUseAndBack) {
  const std::map<FailureKind, std::string> names = {{FailureKind::kUnreadable, "unreadable"},
                                                    {FailureKind::kBadName, "bad_name"},
                                                    {FailureKind::kDuplicateId, "duplicate_id"},
                                                    {FailureKind::kTooLarge, "too_large"},
                                                    {FailureKind::kIngest, "ingest"},
                                                    {FailureKind::kCrash, "crash"},
                                                    {FailureKind::kTimeout, "timeout"},
                                                    {FailureKind::kDraw, "draw"},
                                                    {FailureKind::kMissing, "missing"}};
  for (const auto& [kind, name] : names) {
    EXPECT_EQ(data::failure_kind_name(kind), name);
    EXPECT_EQ(data::failure_kind_from_name(name), kind) << name;
  }
  EXPECT_EQ(data::failure_kind_from_name("thumbnail_crash"), std::nullopt);
  EXPECT_EQ(data::failure_kind_from_name(""), std::nullopt);
}

}  // namespace
}  // namespace cadclip::cad
