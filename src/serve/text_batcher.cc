#include "cadclip/serve/text_batcher.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>

#include "cadclip/core/format.h"

namespace cadclip::serve {

struct TextBatcher::Request {
  std::shared_ptr<const index::Searcher> searcher;
  std::string text;
  index::SearchOptions options;
  std::promise<index::SearchResult> answer;
};

TextBatcher::TextBatcher(const TextBatcherOptions& options) : options_(options) {
  if (options.workers < 1 || options.max_batch < 1 || options.max_queued < 1 ||
      options.window_ms < 0)
    throw Error(
        format("text batching: workers ({}), max batch ({}) and max queued ({}) must be "
               "positive and the window ({} ms) not negative",
               options.workers, options.max_batch, options.max_queued, options.window_ms));
  for (int i = 0; i < options.workers; ++i) workers_.emplace_back([this] { run_worker(); });
}

TextBatcher::~TextBatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  for (Request* r : queue_)
    r->answer.set_exception(std::make_exception_ptr(Error("the server is shutting down")));
  queue_.clear();
}

index::SearchResult TextBatcher::search(const std::shared_ptr<const index::Searcher>& searcher,
                                        const std::string& text,
                                        const index::SearchOptions& options) {
  if (options.k < 1)
    throw Error(format("k = {} asks for no result; ask for at least 1", options.k));
  Request request{searcher, text, options, {}};
  std::future<index::SearchResult> answer = request.answer.get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Error("the server is shutting down");
    if (static_cast<int>(queue_.size()) >= options_.max_queued)
      throw Busy(format("the server is busy ({} text queries waiting); try again shortly",
                        options_.max_queued));
    queue_.push_back(&request);
  }
  wake_.notify_one();
  return answer.get();
}

int64_t TextBatcher::texts_done() const {
  std::lock_guard lock(mutex_);
  return texts_done_;
}

int64_t TextBatcher::batches_done() const {
  std::lock_guard lock(mutex_);
  return batches_done_;
}

int64_t TextBatcher::queued() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void TextBatcher::run_worker() {
  const auto window = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(options_.window_ms));
  const auto full = [this] { return static_cast<int>(queue_.size()) >= options_.max_batch; };
  std::vector<Request*> batch;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || (!queue_.empty() && !gathering_); });
    if (stopping_) return;
    // Texts that queued while every encoder was busy form a batch at once;
    // a lone text waits up to the window for company (one worker at a time).
    if (window.count() > 0 && !full()) {
      gathering_ = true;
      wake_.wait_until(lock, std::chrono::steady_clock::now() + window,
                       [&] { return stopping_ || full(); });
      gathering_ = false;
      wake_.notify_all();  // another worker may take what is left
      if (stopping_) return;
      if (queue_.empty()) continue;
    }
    // A fair share of what waits, so that the other encoders get work too.
    const size_t workers = static_cast<size_t>(options_.workers);
    const size_t n =
        std::min((queue_.size() + workers - 1) / workers, static_cast<size_t>(options_.max_batch));
    batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    run_batch(batch);
    lock.lock();
  }
}

void TextBatcher::count(size_t texts) {
  std::lock_guard lock(mutex_);
  texts_done_ += static_cast<int64_t>(texts);
  ++batches_done_;
}

void TextBatcher::run_batch(std::vector<Request*>& batch) {
  // Requests of one searcher (index version) run together; a swap in the
  // middle of a batch splits it in two.
  std::vector<std::vector<Request*>> groups;
  for (Request* r : batch) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<Request*>& g) {
      return g.front()->searcher == r->searcher;
    });
    if (same == groups.end()) {
      groups.push_back({r});
    } else {
      same->push_back(r);
    }
  }
  count(batch.size());  // before answering, so that an answered caller sees it counted
  for (std::vector<Request*>& group : groups) {
    std::vector<std::string> texts;
    std::vector<index::SearchOptions> options;
    for (const Request* r : group) {
      texts.push_back(r->text);
      options.push_back(r->options);
    }
    std::vector<index::SearchResult> results;
    try {
      results = group.front()->searcher->query_texts(texts, options);
    } catch (...) {
      // One request's error (a filter naming an unknown field) must not
      // answer the others: then each is run alone.
      if (group.size() > 1) {
        for (Request* r : group) {
          try {
            r->answer.set_value(r->searcher->query_text(r->text, r->options));
          } catch (...) {
            r->answer.set_exception(std::current_exception());
          }
        }
        continue;
      }
      group.front()->answer.set_exception(std::current_exception());
      continue;
    }
    // A request may end (and its Request go away) as soon as it is answered.
    for (size_t i = 0; i < group.size(); ++i) group[i]->answer.set_value(std::move(results[i]));
  }
}

}  // namespace cadclip::serve
