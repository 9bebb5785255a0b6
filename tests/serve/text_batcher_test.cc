// TextBatcher: concurrent text searches answered in shared batches give the
// same parts and scores as one search each, each under its own filter and
// index version; a full queue refuses at once.
#include "cadclip/serve/text_batcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../index/index_fixture.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/filter.h"

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
    searcher_ = new std::shared_ptr<const index::Searcher>(
        std::make_shared<const index::Searcher>(index::Searcher::open(o.out)));
  }
  static void TearDownTestSuite() {
    delete searcher_;
    fs::remove_all(root_);
  }
  static index::SearchOptions top(int64_t k, const std::string& filter = "") {
    index::SearchOptions options;
    options.k = k;
    options.filter = index::parse_filter(filter);
    options.rank_by_facts = false;  // compared with search_text, the embedding alone
    return options;
  }

  static fs::path root_;
  static std::shared_ptr<const index::Searcher>* searcher_;
};

fs::path TextBatcherTest::root_;
std::shared_ptr<const index::Searcher>* TextBatcherTest::searcher_ = nullptr;

TEST_F(TextBatcherTest, ConcurrentQueriesShareBatchesAndGetTheirOwnAnswers) {
  // One encoder that waits long for company: the 8 queries go in batches of 4.
  TextBatcher batcher({.workers = 1, .max_batch = 4, .max_queued = 16, .window_ms = 2000});
  const std::vector<std::string>& texts = index::testing::caption_texts();
  std::vector<std::vector<index::Hit>> got(texts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < texts.size(); ++i)
    threads.emplace_back([&, i] {
      got[i] = batcher.search(*searcher_, texts[i], top(3 + static_cast<int>(i % 3))).hits;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(batcher.texts_done(), 8);
  EXPECT_EQ(batcher.batches_done(), 2);
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<index::Hit> alone = (*searcher_)->search_text(texts[i], 3 + i % 3);
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
  TextBatcher batcher({.workers = 1, .max_batch = 4, .max_queued = 1, .window_ms = 1500});
  std::thread first(
      [&] { EXPECT_EQ(batcher.search(*searcher_, "M6 hex nut", top(2)).hits.size(), 2u); });
  // The first query waits in the queue for company (up to the window).
  while (batcher.queued() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_THROW(batcher.search(*searcher_, "washer", top(2)), Busy);
  EXPECT_THROW(batcher.search(*searcher_, "washer", top(0)), Error);
  first.join();
  EXPECT_EQ(batcher.texts_done(), 1);
}

// Texts batched together keep their own filters; a filter naming a field the
// index lacks fails its own request only.
TEST_F(TextBatcherTest, EachTextOfABatchKeepsItsOwnFilter) {
  TextBatcher batcher({.workers = 1, .max_batch = 4, .max_queued = 16, .window_ms = 2000});
  const std::vector<std::string> filters = {"", "faces>=4", "faces<=3", "nosuchfield=1"};
  std::vector<index::SearchResult> got(filters.size());
  std::vector<bool> failed(filters.size(), false);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < filters.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        got[i] = batcher.search(*searcher_, "a washer", top(12, filters[i]));
      } catch (const Error&) {
        failed[i] = true;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(got[0].hits.size(), 12u);
  ASSERT_FALSE(got[1].hits.empty());
  for (const index::Hit& h : got[1].hits) EXPECT_GE(h.item->faces, 4);
  ASSERT_FALSE(got[2].hits.empty());
  for (const index::Hit& h : got[2].hits) EXPECT_LE(h.item->faces, 3);
  EXPECT_EQ(got[1].hits.size() + got[2].hits.size(),
            12u);  // 6 parts have 2 or 3 faces, 6 have 4 to 6
  EXPECT_EQ(got[1].applied.to_string(), "faces>=4");
}

TEST_F(TextBatcherTest, BadOptionsAreRefused) {
  EXPECT_THROW(TextBatcher({.workers = 0}), Error);
  EXPECT_THROW(TextBatcher({.window_ms = -1}), Error);
}

}  // namespace
}  // namespace cadclip::serve
