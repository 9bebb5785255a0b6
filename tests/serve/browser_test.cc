// The web page in headless Chromium: serve a small real index, then let
// browser_check.py search, filter by size and file type, reopen the search
// from its URL, click "more like this" and Back, open the duplicate clusters,
// and save a screenshot of filtered results (build/serve_browser.png;
// docs/images/ has a copy).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "../index/index_fixture.h"
#include "../shared_corpus.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/index/build_index.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;

TEST(Browser, SearchSeeThumbnailsAndMoreLikeThis) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "no /usr/bin/chromium (scripts/setup.sh)";
  const fs::path root = index::testing::fresh_folder("cadclip_browser_test");
  index::testing::write_checkpoint(root / "run", 0);
  const fs::path library = root / "library";
  fs::create_directories(library);
  for (const auto& entry : fs::directory_iterator(CADCLIP_SHARED_DATA "/cad/brepnet"))
    fs::copy_file(entry.path(), library / entry.path().filename());
  // One part twice, for the duplicate clusters.
  fs::copy_file(index::testing::real_parts()[0], library / "duplicate_copy.step");
  index::IndexOptions o;
  o.checkpoint = (root / "run").string();
  o.library = library.string();
  o.out = (root / "index").string();
  o.worker_binary = CADCLIP_BINARY;
  index::build_index(o);

  // The server in the background; its first line names the port. Its log
  // goes to a file, shown when the check fails.
  const fs::path server_log = root / "serve.log";
  const std::string serve = format("{} serve {} --port 0 --access-log - 2>{} & echo pid $!",
                                   CADCLIP_BINARY, o.out, server_log.string());
  std::FILE* out = ::popen(serve.c_str(), "r");
  ASSERT_NE(out, nullptr);
  char line[512];
  int pid = -1, port = -1;
  while (std::fgets(line, sizeof line, out)) {
    const std::string text = line;
    if (text.rfind("pid ", 0) == 0) pid = std::stoi(text.substr(4));
    if (text.find("serving") != std::string::npos) {
      port = std::stoi(text.substr(text.rfind(':') + 1));
      break;
    }
  }
  ASSERT_GT(port, 0);
  const fs::path screenshot = fs::absolute("build") / "serve_browser.png";
  const std::string check =
      format("{} tests/serve/browser_check.py http://127.0.0.1:{}/ {} duplicate_copy 2>&1",
             CADCLIP_PYTHON_EXE, port, screenshot.string());
  std::FILE* run = ::popen(check.c_str(), "r");
  std::string output;
  while (std::fgets(line, sizeof line, run)) output += line;
  const int status = ::pclose(run);
  if (pid > 0) ::kill(pid, SIGTERM);
  ::pclose(out);
  EXPECT_EQ(status, 0) << output << "\nthe server's log:\n" << read_text_file(server_log);
  EXPECT_TRUE(fs::exists(screenshot));
  fs::remove_all(root);
}

}  // namespace
}  // namespace cadclip::serve
