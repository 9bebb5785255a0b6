// `cadclip serve` over a real socket on 127.0.0.1: the JSON API, the page,
// and hostile requests (bad JSON, huge bodies, bad UTF-8, ../ paths, huge k,
// a part file that cannot be read) answered with clean JSON errors while the
// server stays up.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../index/index_fixture.h"
#include "../shared_corpus.h"
#include "cadclip/core/file.h"
#include "cadclip/index/build_index.h"
#include "serve_process.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;
using testing::raw;
using testing::Server;

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CADCLIP_SKIP_WITHOUT_SHARED_DATA();
    root_ = index::testing::fresh_folder("cadclip_serve_test");
    index::testing::write_checkpoint(root_ / "run", 0);
    const fs::path library = root_ / "library";
    fs::create_directories(library);
    for (const fs::path& part : index::testing::real_parts())
      fs::copy_file(part, library / part.filename());
    index::IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = library.string();
    o.out = (root_ / "index").string();
    o.worker_binary = CADCLIP_BINARY;
    o.workers = 1;
    // The prepare worker's test hook: the worker crashes while drawing this
    // part's thumbnail, so the index holds one part without a drawing.
    ::setenv("CADCLIP_DEBUG_CRASH_DRAWING", (std::string(kUndrawn) + ".step").c_str(), 1);
    index::build_index(o);
    ::unsetenv("CADCLIP_DEBUG_CRASH_DRAWING");
    // The prepare worker's test hook: the server's ingest worker crashes
    // (SIGSEGV) on an upload stored as upload.igs, as Open CASCADE does on
    // some malformed files.
    ::setenv("CADCLIP_DEBUG_CRASH_ON", "upload.igs", 1);
    server_.start({"serve", o.out, "--port", "0", "--max-upload-mb", "1", "--max-k", "50",
                   "--max-query-bytes", "200"});
    ::unsetenv("CADCLIP_DEBUG_CRASH_ON");
  }
  static void TearDownTestSuite() {
    server_.stop();
    fs::remove_all(root_);
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_read_timeout(60, 0);
    return c;
  }

  // The JSON error of a response: its status and message.
  static void expect_error(const httplib::Result& r, int status, const std::string& words) {
    ASSERT_TRUE(r) << "no answer";
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const nlohmann::json j = nlohmann::json::parse(r->body);
    EXPECT_EQ(j["error"]["status"], status);
    const std::string message = j["error"]["message"];
    EXPECT_NE(message.find(words), std::string::npos) << message;
  }

  static constexpr const char* kUndrawn = "82144_98698423_0001_2";  // the part without a drawing
  static fs::path root_;
  static Server server_;
};

fs::path ServeTest::root_;
Server ServeTest::server_;

TEST_F(ServeTest, HealthAndTextSearch) {
  auto c = client();
  auto health = c.Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const nlohmann::json h = nlohmann::json::parse(health->body);
  EXPECT_EQ(h["parts"], 4);
  EXPECT_EQ(h["factory"], "Flat");

  auto r = c.Get("/api/search?q=a%20plate%20with%20holes&k=3");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const nlohmann::json j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_GE(j["results"][0]["score"].get<double>(), j["results"][1]["score"].get<double>());
  EXPECT_EQ(j["results"][0]["rank"], 1);
  // A thumbnail is an SVG drawing.
  const nlohmann::json& drawn =
      j["results"][0]["id"] == kUndrawn ? j["results"][1] : j["results"][0];
  auto thumb = c.Get(drawn["thumbnail"].get<std::string>());
  ASSERT_TRUE(thumb);
  EXPECT_EQ(thumb->status, 200);
  EXPECT_NE(thumb->body.find("<polyline"), std::string::npos);

  auto post = c.Post("/api/search", R"({"q": "bracket", "k": 2})", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 200) << post->body;
  EXPECT_EQ(nlohmann::json::parse(post->body)["results"].size(), 2u);
}

TEST_F(ServeTest, SimilarItemsAndDetails) {
  auto c = client();
  const std::string id = "21165_5cb2d287_0000_2";
  auto r = c.Get("/api/similar/" + id + "?k=4");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["results"][0]["id"], id);
  auto item = c.Get("/api/items/" + id);
  ASSERT_TRUE(item);
  EXPECT_EQ(item->status, 200);
  EXPECT_GT(nlohmann::json::parse(item->body)["faces"].get<int>(), 0);
  expect_error(c.Get("/api/items/nothing-here"), 404, "no part");
  expect_error(c.Get("/api/similar/nothing-here"), 404, "no part");
}

TEST_F(ServeTest, APartWithoutADrawingIsServedWithoutOne) {
  auto c = client();
  auto item = c.Get(std::string("/api/items/") + kUndrawn);
  ASSERT_TRUE(item);
  ASSERT_EQ(item->status, 200) << item->body;
  EXPECT_TRUE(nlohmann::json::parse(item->body)["thumbnail"].is_null()) << item->body;
  expect_error(c.Get(std::string("/thumbnails/") + kUndrawn + ".svg"), 404, "no thumbnail");
  // The page draws a placeholder for a null thumbnail and for one that fails to load.
  const std::string page = c.Get("/app.js")->body;
  EXPECT_NE(page.find("noimg"), std::string::npos);
  EXPECT_NE(page.find("onerror"), std::string::npos);
}

TEST_F(ServeTest, ThePageIsServedWithoutExternalResources) {
  auto c = client();
  for (const char* path : {"/", "/app.js", "/style.css"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->body.find("http://"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("https://"), std::string::npos) << path;
  }
  EXPECT_NE(c.Get("/")->body.find("search-form"), std::string::npos);
}

TEST_F(ServeTest, BadParametersGetCleanErrors) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  auto c = client();
  expect_error(c.Get("/api/search?q=gear&k=1000000000"), 400, "k must be");
  expect_error(c.Get("/api/search?q=gear&k=-1"), 400, "k must be");
  expect_error(c.Get("/api/search?q=gear&k=ten"), 400, "k must be");
  expect_error(c.Get("/api/search?q="), 400, "empty");
  expect_error(c.Get("/api/search?q=%FF%FEgear"), 400, "UTF-8");
  expect_error(c.Get("/api/search?q=" + std::string(500, 'a')), 413, "at most 200");
  expect_error(c.Post("/api/search", "{not json", "application/json"), 400, "not valid JSON");
  expect_error(c.Post("/api/search", R"({"k": 3})", "application/json"), 400, "\"q\"");
  expect_error(c.Post("/api/search", R"({"q": "x", "k": 1e99})", "application/json"), 400,
               "k must be");
  expect_error(c.Get("/api/nothing"), 404, "nothing at");
}

TEST_F(ServeTest, HugeBodiesAreRefused) {
  auto c = client();
  const std::string body(3 * 1024 * 1024, 'x');
  auto r = c.Post("/api/search/part?filename=big.step", body, "application/octet-stream");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("larger than"), std::string::npos) << r->body;
}

TEST_F(ServeTest, NoFileOutsideTheIndexIsServed) {
  auto c = client();
  for (const char* path :
       {"/thumbnails/..%2F..%2F..%2Fetc%2Fpasswd.svg", "/thumbnails/../../../etc/passwd.svg",
        "/../../../../etc/passwd", "/%2E%2E/%2E%2E/etc/passwd", "/..%2f..%2fetc%2fpasswd",
        "/thumbnails/%2Fetc%2Fpasswd.svg", "/catalog.sqlite", "/thumbnails/../catalog.sqlite"}) {
    auto r = c.Get(path);
    if (!r) continue;  // refused outright is fine too
    EXPECT_GE(r->status, 400) << path;
    EXPECT_EQ(r->body.find("root:"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("SQLite format"), std::string::npos) << path;
  }
  const std::string answer =
      raw(server_.port(), "GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(answer.find("root:"), std::string::npos) << answer;
}

TEST_F(ServeTest, MalformedHttpDoesNotHurtTheServer) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  raw(server_.port(), "this is not http\r\n\r\n");
  raw(server_.port(), std::string(20000, 'G'));
  raw(server_.port(), "POST /api/search HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n{");
  EXPECT_TRUE(server_.alive());
  auto r = client().Get("/api/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

#ifdef CADCLIP_WITH_OCCT
TEST_F(ServeTest, PartUploads) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  auto c = client();
  const fs::path part = index::testing::real_parts()[1];
  httplib::MultipartFormDataItems form = {
      {"file", read_text_file(part), part.filename().string(), "application/octet-stream"}};
  auto r = c.Post("/api/search/part?k=2", form);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["results"][0]["id"], part.stem().string());

  expect_error(c.Post("/api/search/part?filename=junk.step", "ISO-10303-21;\nHEADER;\nENDSEC;\n",
                      "application/octet-stream"),
               422, "could not be read");
  expect_error(c.Post("/api/search/part?filename=notes.txt", "hello", "text/plain"), 415,
               "no part file");
  expect_error(c.Post("/api/search/part?filename=x.step", "", "application/octet-stream"), 400,
               "empty");
  EXPECT_TRUE(server_.alive());
}

// `serve --max-faces` reaches the uploads' ingest: a part over the limit is
// refused with a reason that names the limit and its flag.
TEST_F(ServeTest, TheIngestLimitsReachPartUploads) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  Server limited;
  limited.start({"serve", (root_ / "index").string(), "--port", "0", "--max-faces", "4"});
  httplib::Client c("127.0.0.1", limited.port());
  c.set_read_timeout(60, 0);
  const fs::path part = index::testing::real_parts()[1];
  httplib::MultipartFormDataItems form = {
      {"file", read_text_file(part), part.filename().string(), "application/octet-stream"}};
  expect_error(c.Post("/api/search/part?k=2", form), 422, "over the limit of 4 (--max-faces");
  limited.stop();
}

TEST_F(ServeTest, AnUploadThatCrashesTheIngestGetsAJsonError) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  auto c = client();
  const fs::path part = index::testing::real_parts()[0];
  expect_error(c.Post("/api/search/part?filename=crash.igs", read_text_file(part),
                      "application/octet-stream"),
               422, "crash");
  EXPECT_TRUE(server_.alive());
  // The server still reads parts and answers searches.
  httplib::MultipartFormDataItems form = {
      {"file", read_text_file(part), part.filename().string(), "application/octet-stream"}};
  auto r = c.Post("/api/search/part?k=1", form);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  auto health = c.Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}
#endif

TEST_F(ServeTest, ConcurrentTextSearchesGetTheirOwnAnswers) {
  // Requests at once are encoded in shared batches; each must still get the
  // answer it gets alone.
  const std::vector<std::string> texts = {"a%20plate%20with%20holes", "hex%20nut", "bracket",
                                          "a%20long%20shaft",         "gear",      "washer"};
  std::vector<std::string> alone;
  for (const std::string& t : texts) {
    auto r = client().Get("/api/search?k=4&q=" + t);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    alone.push_back(r->body);
  }
  std::vector<std::string> together(texts.size() * 3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < together.size(); ++i) {
    threads.emplace_back([&, i] {
      auto r = client().Get("/api/search?k=4&q=" + texts[i % texts.size()]);
      together[i] = r ? r->body : "no answer";
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < together.size(); ++i) {
    const nlohmann::json a = nlohmann::json::parse(alone[i % texts.size()]);
    const nlohmann::json b = nlohmann::json::parse(together[i]);
    ASSERT_EQ(a["results"].size(), b["results"].size()) << together[i];
    for (size_t r = 0; r < a["results"].size(); ++r)
      EXPECT_NEAR(a["results"][r]["score"].get<double>(), b["results"][r]["score"].get<double>(),
                  1e-5);
  }
}

}  // namespace
}  // namespace cadclip::serve
