// TextBatcher: concurrent text searches answered in shared batches give the
// same parts and scores as one search each; a full queue refuses at once.
#include "cadclip/serve/text_batcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../index/index_fixture.h"
#include "cadclip/index/build_index.h"

namespace cadclip::serve {
namespace {

namespace fs = std::filesystem;

class TextBatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = index::testing::fresh_folder("cadclip_text_batcher_test");
    index::testing::write_checkpoint(root_ / "run", 0);
    index::testing::write_prepared(root_ / "prepared", 12);
    index::IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = (root_ / "prepared").string();
    o.out = (root_ / "index").string();
    index::build_index(o);
    searcher_ = new index::Searcher(index::Searcher::open(o.out));
  }
  static void TearDownTestSuite() {
    delete searcher_;
    fs::remove_all(root_);
  }

  static fs::path root_;
  static index::Searcher* searcher_;
};

fs::path TextBatcherTest::root_;
index::Searcher* TextBatcherTest::searcher_ = nullptr;

TEST_F(TextBatcherTest, ConcurrentQueriesShareBatchesAndGetTheirOwnAnswers) {
  // One encoder that waits long for company: the 8 queries go in batches of 4.
  TextBatcher batcher(*searcher_,
                      {.workers = 1, .max_batch = 4, .max_queued = 16, .window_ms = 2000});
  const std::vector<std::string>& texts = index::testing::caption_texts();
  std::vector<std::vector<index::Hit>> got(texts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < texts.size(); ++i)
    threads.emplace_back(
        [&, i] { got[i] = batcher.search(texts[i], 3 + static_cast<int>(i % 3)); });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(batcher.texts_done(), 8);
  EXPECT_EQ(batcher.batches_done(), 2);
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<index::Hit> alone = searcher_->search_text(texts[i], 3 + i % 3);
    ASSERT_EQ(got[i].size(), alone.size()) << texts[i];
    for (size_t r = 0; r < alone.size(); ++r) {
      EXPECT_EQ(got[i][r].rank, alone[r].rank);
      EXPECT_NEAR(got[i][r].score, alone[r].score, 1e-5) << texts[i];
      // Equal scores may come in either order; distinct ones may not.
      if (r + 1 < alone.size() && alone[r].score - alone[r + 1].score > 1e-4)
        EXPECT_EQ(got[i][r].item->id, alone[r].item->id) << texts[i] << " rank " << r + 1;
    }
  }
}

TEST_F(TextBatcherTest, AFullQueueRefusesAtOnce) {
  TextBatcher batcher(*searcher_,
                      {.workers = 1, .max_batch = 4, .max_queued = 1, .window_ms = 1500});
  std::thread first([&] { EXPECT_EQ(batcher.search("M6 hex nut", 2).size(), 2u); });
  // The first query waits in the queue for company (up to the window).
  while (batcher.queued() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_THROW(batcher.search("washer", 2), Busy);
  EXPECT_THROW(batcher.search("washer", 0), Error);
  first.join();
  EXPECT_EQ(batcher.texts_done(), 1);
}

TEST_F(TextBatcherTest, BadOptionsAreRefused) {
  EXPECT_THROW(TextBatcher(*searcher_, {.workers = 0}), Error);
  EXPECT_THROW(TextBatcher(*searcher_, {.window_ms = -1}), Error);
}

}  // namespace
}  // namespace cadclip::serve
