// `cadclip serve` as a team server: filters, CSV exports and duplicate
// clusters over HTTP; API keys (refused to start beyond loopback without
// them, 401 without a key, the page and a minimal health without one); the
// access log with request ids; per-client rate limits; and a new index
// version swapped in while 8 clients keep searching, with no failed request.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../index/index_fixture.h"
#include "cadclip/core/file.h"
#include "cadclip/index/build_index.h"
#include "serve_process.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;
using testing::Server;

constexpr const char* kKey = "team-key-0123456789abcdef";

class ServeTeamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = index::testing::fresh_folder("cadclip_serve_team_test");
    index::testing::write_checkpoint(root_ / "run", 0);
    index::testing::write_prepared(root_ / "prepared", 12);
    // Catalog fields for the parts m0..m11, by id.
    std::string csv = "id,Material,Part Number\n";
    for (int i = 0; i < 12; ++i)
      csv += "m" + std::to_string(i) + "," + (i % 3 == 0 ? "steel" : "brass") + ",PN-" +
             std::to_string(100 + i) + "\n";
    write_text_atomic(root_ / "parts.csv", csv);
    index::build_index(options(root_ / "prepared", root_ / "index"));
    write_text_atomic(root_ / "keys", std::string("# team keys\n") + kKey + "\n");
    fs::permissions(root_ / "keys", fs::perms::owner_read | fs::perms::owner_write);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static index::IndexOptions options(const fs::path& library, const fs::path& out) {
    index::IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = library.string();
    o.out = out.string();
    o.metadata = (root_ / "parts.csv").string();
    o.wait = true;
    return o;
  }

  static httplib::Client client(const Server& server) {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(60, 0);
    return c;
  }

  static fs::path root_;
};

fs::path ServeTeamTest::root_;

TEST_F(ServeTeamTest, FiltersCsvAndDuplicatesOverHttp) {
  Server server;
  server.start({"serve", (root_ / "index").string(), "--port", "0"});
  auto c = client(server);
  auto r = c.Get("/api/search?q=washer&k=12&filter=faces%3E%3D4%20material%3Dsteel");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  nlohmann::json j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["filters"].size(), 2u);
  EXPECT_EQ(j["filters"][0]["clause"], "faces>=4");
  EXPECT_EQ(j["filters"][1]["clause"], "material=steel");
  EXPECT_EQ(j["filters"][1]["origin"], "given");
  ASSERT_FALSE(j["results"].empty());
  for (const auto& hit : j["results"]) {
    EXPECT_GE(hit["faces"].get<int>(), 4);
    EXPECT_EQ(hit["metadata"]["material"], "steel");
  }
  EXPECT_EQ(j["candidates"].get<size_t>(), j["results"].size());

  // --strict-numbers over the API, said in the answer.
  r = c.Post("/api/search", R"({"q": "a plate with 4 holes", "k": 5, "strict": true})",
             "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["filters"].size(), 1u);
  EXPECT_EQ(j["filters"][0]["clause"], "hole_count=4");
  EXPECT_EQ(j["filters"][0]["origin"], "query");
  EXPECT_EQ(j["filters"][0]["because"], "4 holes");

  // A catalog export.
  r = c.Get("/api/search?q=washer&k=3&format=csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_TRUE(r->body.starts_with("query,rank,score,id,name,size_x_mm")) << r->body;
  EXPECT_NE(r->body.find(",material,part_number\n"), std::string::npos) << r->body;
  EXPECT_EQ(std::count(r->body.begin(), r->body.end(), '\n'), 4);

  // Bad filters are 400 with the reason.
  r = c.Get("/api/search?q=washer&filter=size%3Cabc");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("filter clause 'size<abc'"), std::string::npos) << r->body;
  r = c.Get("/api/search?q=washer&filter=colour%3Dred");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("material, part_number"), std::string::npos) << r->body;

  // Duplicates: the random library has none with the same geometry.
  r = c.Get("/api/duplicates?kinds=exact");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["parts"], 12);
  EXPECT_EQ(j["clusters"].size(), 0u);
  server.stop();
}

TEST_F(ServeTeamTest, BeyondLoopbackOnlyWithAKey) {
  // Without a key file the server refuses to bind to every interface.
  const std::string command = std::string(CADCLIP_BINARY) + " serve " + (root_ / "index").string() +
                              " --host 0.0.0.0 --port 0 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  EXPECT_EQ(WEXITSTATUS(::pclose(pipe)), 2) << output;
  EXPECT_NE(output.find("--api-key-file"), std::string::npos) << output;

  Server server;
  const fs::path access = root_ / "access.jsonl";
  server.start({"serve", (root_ / "index").string(), "--host", "0.0.0.0", "--port", "0",
                "--api-key-file", (root_ / "keys").string(), "--access-log", access.string()});
  auto c = client(server);
  auto r = c.Get("/api/search?q=washer&k=2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer realm=\"cadclip\"");
  EXPECT_NE(r->body.find("API key"), std::string::npos);
  const std::string refused_id = r->get_header_value("X-Request-Id");
  r = c.Get("/api/search?q=washer&k=2", {{"Authorization", "Bearer wrong-key-0123456789"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = c.Get("/api/search?q=washer&k=2", {{"Authorization", std::string("Bearer ") + kKey}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const std::string answered_id = r->get_header_value("X-Request-Id");
  r = c.Get("/api/items/m1", {{"X-API-Key", kKey}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // The page needs no key; health without one says only that the server is up.
  r = c.Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/api/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body),
            (nlohmann::json{{"status", "ok"}, {"api_key_required", true}}));
  r = c.Get("/api/health", {{"X-API-Key", kKey}});
  ASSERT_TRUE(r);
  const nlohmann::json health = nlohmann::json::parse(r->body);
  EXPECT_EQ(health["parts"], 12);
  // No path of the server's disk in it.
  EXPECT_EQ(r->body.find(root_.string()), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find('/'), std::string::npos) << r->body;
  server.stop();

  // One access-log line per request, with its id, client, key id and status; never the key.
  const std::string log = read_text_file(access);
  EXPECT_EQ(log.find(kKey), std::string::npos);
  int lines = 0;
  bool saw_refused = false, saw_answered = false;
  for (size_t start = 0; start < log.size();) {
    const size_t end = log.find('\n', start);
    const nlohmann::json line = nlohmann::json::parse(log.substr(start, end - start));
    start = end + 1;
    ++lines;
    EXPECT_EQ(line["client"], "127.0.0.1");
    if (line["id"] == refused_id) {
      saw_refused = true;
      EXPECT_EQ(line["status"], 401);
      EXPECT_EQ(line["key"], "");
    }
    if (line["id"] == answered_id) {
      saw_answered = true;
      EXPECT_EQ(line["status"], 200);
      EXPECT_EQ(line["key"].get<std::string>().size(), 8u);
      EXPECT_EQ(line["target"], "/api/search?q=washer&k=2");
    }
  }
  EXPECT_EQ(lines, 7);
  EXPECT_TRUE(saw_refused);
  EXPECT_TRUE(saw_answered);
}

TEST_F(ServeTeamTest, RateLimitsPerClient) {
  Server server;
  server.start({"serve", (root_ / "index").string(), "--port", "0", "--rate-limit", "2",
                "--rate-burst", "4"});
  auto c = client(server);
  int ok = 0, limited = 0;
  std::string retry_after;
  for (int i = 0; i < 10; ++i) {
    auto r = c.Get("/api/items/m1");
    ASSERT_TRUE(r);
    if (r->status == 200) ++ok;
    if (r->status == 429) {
      ++limited;
      retry_after = r->get_header_value("Retry-After");
      EXPECT_NE(r->body.find("too many requests"), std::string::npos);
    }
  }
  // A burst of 4, then about 2 a second: the ten quick requests cannot all pass.
  EXPECT_GE(ok, 4);
  EXPECT_LE(ok, 6);
  EXPECT_EQ(ok + limited, 10);
  EXPECT_FALSE(retry_after.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto r = c.Get("/api/items/m1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  server.stop();
}

// Eight clients search without pause while the index is written again three
// times (12 -> 9 -> 14 -> 12 parts): every request is answered 200 from a
// whole version, and the server ends up answering from the newest one.
TEST_F(ServeTeamTest, ANewVersionIsSwappedInWithoutAFailedRequest) {
  const fs::path index = root_ / "swapped";
  index::build_index(options(root_ / "prepared", index));
  Server server;
  server.start({"serve", index.string(), "--port", "0", "--reload-interval", "0.1"});
  std::atomic<bool> running{true};
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::string> problems;
  std::mutex problems_mutex;
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      auto c = client(server);
      while (running) {
        const std::string path = t % 2 ? "/api/search?q=washer&k=20"
                                       : "/api/search?q=hex%20nut&k=20&filter=faces%3E%3D2";
        auto r = c.Get(path);
        bool good = r && r->status == 200;
        if (good) {
          const nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
          const size_t n = j.is_discarded() ? 0 : j["results"].size();
          good = n == 9 || n == 12 || n == 14;  // every part of one whole version
        }
        if (good) {
          ++answered;
        } else {
          ++failed;
          std::lock_guard lock(problems_mutex);
          problems.push_back(r ? std::to_string(r->status) + " " + r->body.substr(0, 200)
                               : "no answer");
        }
      }
    });
  }
  auto parts_now = [&] {
    auto h = client(server).Get("/api/health");
    return h ? nlohmann::json::parse(h->body)["parts"].get<int>() : -1;
  };
  for (const int parts : {9, 14, 12}) {
    fs::remove_all(root_ / "next");
    index::testing::write_prepared(root_ / "next", parts, /*seed=*/300 + parts);
    index::build_index(options(root_ / "next", index));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (parts_now() != parts && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(parts_now(), parts);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  running = false;
  for (std::thread& t : clients) t.join();
  EXPECT_GT(answered.load(), 20);
  EXPECT_EQ(failed.load(), 0) << (problems.empty() ? "" : problems.front());
  // The server let go of version 3 when it swapped in 4: the next writer
  // removes it, and keeps 4 until the server has moved on to 5.
  index::build_index(options(root_ / "next", index));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto version_now = [&] {
    auto h = client(server).Get("/api/health");
    return h ? nlohmann::json::parse(h->body)["version"].get<int>() : -1;
  };
  while (version_now() != 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(version_now(), 5);
  EXPECT_FALSE(fs::exists(index / "versions" / "3"));
  EXPECT_TRUE(fs::exists(index / "versions" / "5"));
  server.stop();
}

}  // namespace
}  // namespace cadclip::serve
