// Batches concurrent text searches through the text encoder: requests that
// wait while the encoder threads are busy (or arrive within a short window)
// are tokenized, encoded and searched as one batch, which costs less per
// query than one forward pass each; each text keeps its own filters. Bounded:
// beyond `max_queued` waiting texts a request is refused at once instead of
// piling up. Each request names the searcher (index version) it asks, so a
// server that swaps in a new version batches old and new requests apart.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/index/searcher.h"

namespace cadclip::serve {

struct TextBatcherOptions {
  int workers = 2;         // encoder threads, each running one batch at a time
  int max_batch = 16;      // texts per forward pass
  int max_queued = 64;     // texts waiting for an encoder; more are refused (Busy)
  double window_ms = 0.0;  // an idle encoder waits this long for more texts after the first
};

// Thrown by TextBatcher::search when `max_queued` texts are already waiting.
class Busy : public Error {
 public:
  using Error::Error;
};

class TextBatcher {
 public:
  // Throws cadclip::Error for options out of range.
  explicit TextBatcher(const TextBatcherOptions& options);
  // Stops the encoder threads; texts still waiting get an error.
  ~TextBatcher();
  TextBatcher(const TextBatcher&) = delete;
  TextBatcher& operator=(const TextBatcher&) = delete;

  // What searcher->query_text(text, options) gives; blocks until its batch
  // has run. The hits point into `searcher`, which the caller keeps while it
  // reads them. Throws Busy, cadclip::Error for k < 1, or the search's own
  // error (a bad filter answers only its own request).
  index::SearchResult search(const std::shared_ptr<const index::Searcher>& searcher,
                             const std::string& text, const index::SearchOptions& options);

  // Texts encoded and batches run so far, and texts waiting now (for tests and the log).
  int64_t texts_done() const;
  int64_t batches_done() const;
  int64_t queued() const;

 private:
  struct Request;
  void run_worker();
  void run_batch(std::vector<Request*>& batch);
  void count(size_t texts);

  TextBatcherOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // workers: work arrived, or stop
  std::deque<Request*> queue_;
  bool gathering_ = false;  // one worker at a time waits out the window
  bool stopping_ = false;
  int64_t texts_done_ = 0;
  int64_t batches_done_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace cadclip::serve
