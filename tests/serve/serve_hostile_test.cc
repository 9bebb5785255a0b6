// `cadclip serve` used as a careless or hostile client would: bytes that are
// not UTF-8 in every echoed place, curl's default form content type on a raw
// upload, more slow clients than threads, methods the API does not answer,
// absurd numbers, Content-Lengths with no body, upload failures, and scratch
// folders of a server that was killed. Every answer is valid JSON with the
// right status and a request id that the server log also names.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <latch>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../index/index_fixture.h"
#include "../shared_corpus.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/index/build_index.h"
#include "serve_process.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;
using testing::body_of;
using testing::connect_to;
using testing::raw;
using testing::raw_waiting;
using testing::Server;
using testing::status_of;

// An index of a prepared library (no CAD files to ingest: quick to build).
void build_prepared_index(const fs::path& root) {
  index::testing::write_checkpoint(root / "run", 0);
  index::testing::write_prepared(root / "prepared", 8);
  index::IndexOptions o;
  o.checkpoint = (root / "run").string();
  o.library = (root / "prepared").string();
  o.out = (root / "index").string();
  index::build_index(o);
}

// The JSON error of an answer, checked for shape: valid JSON (the parser
// refuses invalid UTF-8), the status, a request id that the header repeats.
nlohmann::json expect_json_error(int status, const std::string& body, const std::string& header_id,
                                 const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << what << ": the answer is not valid JSON (" << e.what() << "): " << body;
    return j;
  }
  EXPECT_EQ(j["error"]["status"], status) << what << ": " << body;
  EXPECT_TRUE(j["error"]["message"].is_string()) << what << ": " << body;
  EXPECT_TRUE(j["error"]["request_id"].is_string()) << what << ": " << body;
  if (j["error"]["request_id"].is_string() && !header_id.empty())
    EXPECT_EQ(j["error"]["request_id"].get<std::string>(), header_id) << what;
  return j;
}

class ServeHostileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = index::testing::fresh_folder("cadclip_serve_hostile_test");
    build_prepared_index(root_);
    server_.start({"serve", (root_ / "index").string(), "--port", "0", "--max-upload-mb", "1"},
                  (root_ / "server.log").string());
  }
  static void TearDownTestSuite() {
    server_.stop();
    fs::remove_all(root_);
  }
  httplib::Client client(int timeout_s = 60) const {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_read_timeout(timeout_s, 0);
    c.set_connection_timeout(timeout_s, 0);
    return c;
  }
  static std::string server_log() { return read_text_file(root_ / "server.log"); }
  // The server logs an answer just after sending it: wait a moment for the line.
  static bool logged(const std::string& text) {
    for (int i = 0; i < 50; ++i) {
      if (server_log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    return false;
  }

  static fs::path root_;
  static Server server_;
};

fs::path ServeHostileTest::root_;
Server ServeHostileTest::server_;

TEST_F(ServeHostileTest, ErrorsThatEchoBytesThatAreNotUtf8AreValidJson) {
  auto c = client();
  const std::vector<std::pair<std::string, int>> cases = {{"/api/items/%ff", 404},
                                                          {"/api/search?q=nut&k=%ff", 400},
                                                          {"/%ff", 404},
                                                          {"/thumbnails/%ff.svg", 404},
                                                          {"/api/similar/%ff", 404},
                                                          {"/api/search?q=%ff%20nut", 400},
                                                          {"/api/similar/m1?k=%fe%ff", 400}};
  for (const auto& [path, status] : cases) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, status) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
    const nlohmann::json j =
        expect_json_error(status, r->body, r->get_header_value("X-Request-Id"), path);
    if (path.find("%ff") != std::string::npos && status == 404)
      EXPECT_NE(j["error"]["message"].get<std::string>().find("\\xFF"), std::string::npos)
          << path << ": the byte is shown escaped: " << r->body;
    // The log names the request by the id the client was given.
    EXPECT_TRUE(logged(r->get_header_value("X-Request-Id") + " GET")) << path << "\n"
                                                                      << server_log();
  }
  auto post = c.Post("/api/search", "{\"q\": \"\xff nut\"}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 400) << post->body;
  const nlohmann::json j =
      expect_json_error(400, post->body, post->get_header_value("X-Request-Id"), "POST");
  EXPECT_NE(j.dump().find("UTF-8"), std::string::npos) << post->body;
  // What httplib refuses itself is JSON too.
  const std::string answer = raw(server_.port(), "this is not http\r\n\r\n");
  EXPECT_EQ(status_of(answer), 400) << answer;
  expect_json_error(400, body_of(answer), "", "not http");
  EXPECT_TRUE(server_.alive());
}

#ifdef CADCLIP_WITH_OCCT
TEST_F(ServeHostileTest, ARawUploadWithCurlsDefaultFormContentTypeIsRead) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  // curl --data-binary @part.step sends application/x-www-form-urlencoded.
  const fs::path part = index::testing::real_parts()[1];
  const std::string bytes = read_text_file(part);
  ASSERT_GT(bytes.size(), 8192u) << "the part must be larger than httplib's form limit";
  auto r = client().Post("/api/search/part?k=3&filename=" + part.filename().string(), bytes,
                         "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["results"].size(), 3u);
}

TEST_F(ServeHostileTest, UploadErrorsDoNotShowTheServersPaths) {
  auto r = client().Post("/api/search/part?filename=junk.step", "ISO-10303-21;\nHEADER;\nENDSEC;\n",
                         "application/octet-stream");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  const nlohmann::json j =
      expect_json_error(422, r->body, r->get_header_value("X-Request-Id"), "junk upload");
  const std::string message = j["error"]["message"];
  EXPECT_NE(message.find("junk.step"), std::string::npos) << message;
  for (const char* secret : {"/tmp", "cadclip-upload", "cadclip-serve", "upload.step"})
    EXPECT_EQ(message.find(secret), std::string::npos) << secret << " in: " << message;
}
#endif

TEST_F(ServeHostileTest, MoreSlowClientsThanThreadsDoNotStopOtherAnswers) {
  // 12 clients (the server has 8 threads) that each send one header line a
  // second and never finish their request.
  std::vector<int> slow;
  for (int i = 0; i < 12; ++i) {
    const int fd = connect_to(server_.port());
    ASSERT_GE(fd, 0);
    const std::string start = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
    ::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread dripper([&] {
    while (!done) {
      for (const int fd : slow) ::send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 8; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = client(/*timeout_s=*/3).Get("/api/health");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(r) << "request " << i << " got no answer while slow clients held sockets";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(seconds, 2.0) << "request " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  done = true;
  dripper.join();
  for (const int fd : slow) ::close(fd);
}

TEST_F(ServeHostileTest, AMethodAPathDoesNotAnswerGets405) {
  auto c = client();
  const std::vector<std::pair<httplib::Result, std::string>> answers = [&] {
    std::vector<std::pair<httplib::Result, std::string>> out;
    out.emplace_back(c.Put("/api/search", "{}", "application/json"), "GET, HEAD, POST");
    out.emplace_back(c.Delete("/api/items/m1"), "GET, HEAD");
    out.emplace_back(c.Post("/api/health", "", "application/json"), "GET, HEAD");
    out.emplace_back(c.Get("/api/search/part"), "POST");
    return out;
  }();
  for (const auto& [r, allow] : answers) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405) << r->body;
    EXPECT_EQ(r->get_header_value("Allow"), allow) << r->body;
    expect_json_error(405, r->body, r->get_header_value("X-Request-Id"), "405");
  }
  // The connection after a 405 with an unread body is not confused by it.
  auto r = c.Get("/api/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServeHostileTest, ARangeHeaderStillGetsTheWholeJsonAnswer) {
  // A slice of a JSON answer is no JSON: the Range is ignored, or 416 when malformed.
  auto c = client();
  auto r = c.Get("/api/health", {{"Range", "bytes=0-1"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(r->body, nullptr, false).is_object()) << r->body;
  r = c.Get("/api/items/nothing", {{"Range", "bytes=0-1,5-"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  expect_json_error(404, r->body, r->get_header_value("X-Request-Id"), "404 with a Range");
  r = c.Get("/api/health", {{"Range", "bytes=9-1"}});
  ASSERT_TRUE(r);
  expect_json_error(416, r->body, r->get_header_value("X-Request-Id"), "bad Range");
}

TEST_F(ServeHostileTest, AHugeKIsReportedAsItWasWritten) {
  // 20 digits: past int64, within uint64 (JSON gives them as unsigned integers).
  for (const std::string k : {"18446744073709551615", "12345678901234567890"}) {
    auto r = client().Post("/api/search", R"({"q": "nut", "k": )" + k + "}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    const nlohmann::json j =
        expect_json_error(400, r->body, r->get_header_value("X-Request-Id"), "huge k");
    EXPECT_NE(j["error"]["message"].get<std::string>().find("'" + k + "'"), std::string::npos)
        << r->body;
    r = client().Get("/api/search?q=nut&k=" + k);
    ASSERT_TRUE(r);
    EXPECT_NE(r->body.find("'" + k + "'"), std::string::npos) << r->body;
  }
}

TEST_F(ServeHostileTest, BadContentLengthsWithoutABodyAreAnsweredAtOnce) {
  // The client keeps its side open, waiting for the answer, and sends no body.
  const std::vector<std::pair<std::string, int>> cases = {
      {"99999999999", 413}, {"-1", 400}, {"18446744073709551617", 400}, {"12abc", 400}};
  for (const auto& [length, status] : cases) {
    const auto start = std::chrono::steady_clock::now();
    const std::string answer = raw_waiting(
        server_.port(),
        "POST /api/search HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n", 4.0);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(status_of(answer), status) << "Content-Length " << length << ": " << answer;
    EXPECT_LT(seconds, 3.0) << "Content-Length " << length;
    if (status_of(answer) == status)
      expect_json_error(status, body_of(answer), "", "Content-Length " + length);
  }
  EXPECT_TRUE(server_.alive());
}

// A server killed (kill -9) mid-upload leaves its scratch folder; the next
// server removes the folders of servers that are gone, and only those.
TEST(ServeScratch, FoldersOfKilledServersAreRemovedAtStart) {
  const fs::path root = index::testing::fresh_folder("cadclip_serve_scratch_test");
  build_prepared_index(root);
  const fs::path tmp = root / "tmp";
  fs::create_directories(tmp);
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::vector<fs::path> stale = {tmp / cadclip::format("cadclip-upload-{}-0", gone),
                                       tmp / cadclip::format("cadclip-serve-{}", gone)};
  const fs::path live = tmp / cadclip::format("cadclip-upload-{}-0", ::getpid());
  for (const fs::path& p : stale) fs::create_directories(p / "work");
  fs::create_directories(live);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  Server server;
  server.start({"serve", (root / "index").string(), "--port", "0"});
  ::unsetenv("TMPDIR");
  for (const fs::path& p : stale) EXPECT_FALSE(fs::exists(p)) << p;
  EXPECT_TRUE(fs::exists(live)) << "a running process's folder was removed";
  server.stop();
  fs::remove_all(root);
}

// SIGTERM that comes the moment the server says it is ready stops it: the
// stop is not lost in the window before the accept loop starts.
TEST(ServeStop, ASignalRightAfterTheReadyLineStopsTheServer) {
  const fs::path root = index::testing::fresh_folder("cadclip_serve_stop_test");
  build_prepared_index(root);
  for (int i = 0; i < 10; ++i) {
    Server server;
    server.start({"serve", (root / "index").string(), "--port", "0"});
    server.stop(10);
    if (::testing::Test::HasFailure()) break;
  }
  fs::remove_all(root);
}

// The new limits, each on a server of its own.
class ServeLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = index::testing::fresh_folder("cadclip_serve_limits_test");
    build_prepared_index(root_);
  }
  void TearDown() override {
    server_.stop();
    fs::remove_all(root_);
  }
  fs::path root_;
  Server server_;
};

TEST_F(ServeLimitsTest, ARequestHeadThatDoesNotArriveInTimeGets408) {
  server_.start({"serve", (root_ / "index").string(), "--port", "0", "--threads", "2",
                 "--header-timeout", "1.5"});
  const auto start = std::chrono::steady_clock::now();
  const std::string answer =
      raw_waiting(server_.port(), "GET /api/health HTTP/1.1\r\nHost: x\r\n", 5.0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(status_of(answer), 408) << answer;
  expect_json_error(408, body_of(answer), "", "408");
  EXPECT_GT(seconds, 1.2);
  EXPECT_LT(seconds, 4.0);
}

TEST_F(ServeLimitsTest, OneClientHoldsAtMostItsShareOfConnections) {
  server_.start(
      {"serve", (root_ / "index").string(), "--port", "0", "--max-client-connections", "3"});
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(connect_to(server_.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string answer =
      raw_waiting(server_.port(), "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n", 3.0);
  EXPECT_EQ(status_of(answer), 503) << answer;
  const nlohmann::json j = expect_json_error(503, body_of(answer), "", "over the bound");
  EXPECT_NE(j.dump().find("127.0.0.1"), std::string::npos) << answer;
  ::close(held.back());
  held.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  httplib::Client c("127.0.0.1", server_.port());
  auto r = c.Get("/api/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  for (const int fd : held) ::close(fd);
}

// What one client of a crowd saw: an HTTP status, or how its connection failed.
struct CrowdAnswer {
  int status = 0;           // 0 = no HTTP answer
  bool reset = false;       // the connection was reset (ECONNRESET, EPIPE)
  bool no_connect = false;  // connect() failed
  bool retry_after = false;
};

// `clients` threads connect at the same moment and each sends one search,
// reading its answer for up to 30 s.
std::vector<CrowdAnswer> crowd(int port, int clients) {
  std::vector<CrowdAnswer> answers(static_cast<size_t>(clients));
  std::latch go(clients);
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      CrowdAnswer& a = answers[static_cast<size_t>(i)];
      go.arrive_and_wait();
      const int fd = connect_to(port);
      if (fd < 0) {
        a.no_connect = true;
        return;
      }
      timeval timeout{30, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      const std::string request = "GET /api/search?q=hex+nut+" + std::to_string(i) +
                                  "&k=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0)
        a.reset = errno == ECONNRESET || errno == EPIPE;
      std::string answer;
      char buffer[4096];
      ssize_t n;
      while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, n);
      if (n < 0 && errno == ECONNRESET) a.reset = true;
      ::close(fd);
      a.status = status_of(answer);
      a.retry_after = answer.find("\r\nRetry-After: ") != std::string::npos;
    });
  }
  for (std::thread& t : threads) t.join();
  return answers;
}

// 200 clients at once, on the defaults and with a small --max-connections:
// every one is answered, 200 or 503 with Retry-After, and none is reset.
TEST_F(ServeLimitsTest, TwoHundredClientsAtOnceAreAllAnsweredNoneReset) {
  for (const std::vector<std::string>& limits :
       {std::vector<std::string>{}, std::vector<std::string>{"--max-connections", "40"}}) {
    std::vector<std::string> args = {"serve", (root_ / "index").string(), "--port", "0"};
    args.insert(args.end(), limits.begin(), limits.end());
    server_.start(args, (root_ / "serve.log").string());
    // With the small bound, 30 idle connections leave the crowd 10 slots,
    // so that the bound is surely reached.
    std::vector<int> idle;
    for (int i = 0; !limits.empty() && i < 30; ++i) idle.push_back(connect_to(server_.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto start = std::chrono::steady_clock::now();
    const std::vector<CrowdAnswer> answers = crowd(server_.port(), 200);
    for (const int fd : idle) ::close(fd);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::map<int, int> statuses;
    int resets = 0, no_connects = 0, without_retry_after = 0;
    for (const CrowdAnswer& a : answers) {
      ++statuses[a.status];
      resets += a.reset;
      no_connects += a.no_connect;
      without_retry_after += a.status == 503 && !a.retry_after;
    }
    const std::string seen = cadclip::format(
        "{}: 200 x{}, 503 x{}, no answer x{}, resets {}, failed connects {} in {} s",
        limits.empty() ? "defaults" : "--max-connections 40", statuses[200], statuses[503],
        statuses[0], resets, no_connects, seconds);
    std::printf("%s\n", seen.c_str());
    EXPECT_EQ(resets, 0) << seen;
    EXPECT_EQ(no_connects, 0) << seen;
    EXPECT_EQ(statuses[200] + statuses[503], 200) << seen;
    EXPECT_GT(statuses[200], 0) << seen;
    EXPECT_EQ(without_retry_after, 0) << seen;
    if (!limits.empty()) EXPECT_GT(statuses[503], 0) << seen;  // the bound was reached
    EXPECT_LT(seconds, 60) << seen;
    server_.stop();
  }
}

}  // namespace
}  // namespace cadclip::serve
