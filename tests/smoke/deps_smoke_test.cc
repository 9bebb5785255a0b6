// One binary that links LibTorch, Open CASCADE, SentencePiece, FAISS, SQLite
// and cpp-httplib, and runs one small operation of each.
#include <faiss/IndexFlat.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <sqlite3.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#ifdef CADCLIP_WITH_OCCT
#include <BRepGProp.hxx>
#include <BRepPrimAPI_MakeBox.hxx>
#include <GProp_GProps.hxx>
#endif

namespace {

TEST(DepsSmokeTest, LibTorchMatmulAndAutograd) {
  torch::manual_seed(0);
  auto a = torch::randn({64, 32}, torch::requires_grad());
  auto b = torch::randn({32, 16});
  auto loss = a.matmul(b).pow(2).sum();
  loss.backward();
  EXPECT_TRUE(torch::allclose(a.grad(), 2 * a.matmul(b).matmul(b.t()), 1e-4, 1e-4));
  EXPECT_GE(at::get_num_threads(), 1);
}

#ifdef CADCLIP_WITH_OCCT
TEST(DepsSmokeTest, OpenCascadeBoxVolume) {
  const TopoDS_Shape box = BRepPrimAPI_MakeBox(10.0, 20.0, 30.0).Shape();
  GProp_GProps props;
  BRepGProp::VolumeProperties(box, props);
  EXPECT_NEAR(props.Mass(), 6000.0, 1e-6);
}
#endif

TEST(DepsSmokeTest, SentencePieceTrainsAndEncodes) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cadclip_smoke_spm_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream corpus(dir / "corpus.txt");
    for (int i = 0; i < 200; ++i)
      corpus << "a flange with " << i % 12 << " bolt holes and a hub of " << i << " mm\n"
             << "a rectangular plate with a grid of holes, " << i * 3 << " millimetres wide\n";
  }
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + (dir / "corpus.txt").string() + " --model_prefix=" + (dir / "m").string() +
      " --vocab_size=60 --model_type=unigram --minloglevel=2");
  ASSERT_TRUE(status.ok()) << status.ToString();
  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load((dir / "m.model").string()).ok());
  std::vector<int> ids;
  ASSERT_TRUE(processor.Encode("a flange with 6 bolt holes", &ids).ok());
  std::string text;
  ASSERT_TRUE(processor.Decode(ids, &text).ok());
  EXPECT_EQ(text, "a flange with 6 bolt holes");
}

TEST(DepsSmokeTest, FaissExactSearchAlongsideLibTorch) {
  const int d = 16, n = 100;
  auto base = torch::nn::functional::normalize(
      torch::randn({n, d}), torch::nn::functional::NormalizeFuncOptions().dim(1));
  faiss::IndexFlatIP index(d);
  index.add(n, base.data_ptr<float>());
  std::vector<float> distances(1);
  std::vector<faiss::Index::idx_t> labels(1);
  index.search(1, base[42].contiguous().data_ptr<float>(), 1, distances.data(), labels.data());
  EXPECT_EQ(labels[0], 42);
  EXPECT_NEAR(distances[0], 1.0f, 1e-5);
}

TEST(DepsSmokeTest, SqliteInMemory) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE parts(id TEXT, faces INT);"
                         "INSERT INTO parts VALUES('washer', 4), ('flange', 31);",
                         nullptr, nullptr, &error),
            SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT SUM(faces) FROM parts", -1, &statement, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(statement), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(statement, 0), 35);
  sqlite3_finalize(statement);
  sqlite3_close(db);
}

TEST(DepsSmokeTest, HttplibServesOnLoopback) {
  httplib::Server server;
  server.Get("/health", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(R"({"ok":true})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread thread([&] { server.listen_after_bind(); });
  httplib::Client client("127.0.0.1", port);
  const auto result = client.Get("/health");
  server.stop();
  thread.join();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->body, R"({"ok":true})");
}

}  // namespace
