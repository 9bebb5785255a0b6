// Texts to a two-tower model's text embeddings in five stages: tokenise, cut
// to the length limit, group by length, pool (the text tower), project (the
// quantity branch and the text head). The one text path of training, its
// feature cache, evaluation, search, `cadclip embed` and the Python module.
#pragma once

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cadclip/model/model_config.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/length_groups.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/tokenizer.h"

namespace cadclip::model {

// Pooled text-tower features by text, for a tower that does not change
// between calls (a frozen tower validated every epoch, one checkpoint scored
// on several subsets): each text runs through the tower once. A cached row
// comes from the pass its text was first pooled in: bitwise what the tower
// gives again when the passes are the same; for other passes it may differ
// in the last bits, as another batching of the same texts would.
struct PooledTextCache {
  std::unordered_map<std::string, at::Tensor> pooled;  // text -> [text_width] fp32 on the CPU
};

class TextEmbedder {
 public:
  // Called after each pass of a bulk run with the number of texts it held.
  using PassDone = std::function<void(int64_t texts)>;

  // Cuts texts at max_length tokens with [CLS]/[SEP] (at least 2).
  TextEmbedder(TwoTowerImpl& model, const text::Tokenizer& tokenizer, int64_t max_length);
  // The built model's own tokenizer and length limit.
  explicit TextEmbedder(BuiltModel& built);
  TextEmbedder(const TextEmbedder&) = delete;
  TextEmbedder& operator=(const TextEmbedder&) = delete;

  int64_t max_length() const { return max_length_; }
  const text::Tokenizer& tokenizer() const { return tokenizer_; }
  c10::Device device() const;  // the model's

  // Tokenise and cut (as transformers' truncation=True: the first pieces,
  // then [SEP]). Safe to call from several threads; counts the texts it cuts.
  std::vector<int64_t> tokenize(std::string_view text) const;
  text::TokenRows tokenize(std::span<const std::string> texts) const;
  int64_t truncated() const { return truncated_; }  // texts cut so far

  // One batch in its own order (a training step): token rows padded to the
  // longest -> pooled [b, text_width] on the model's device, under the
  // caller's grad mode.
  at::Tensor pool_batch(std::span<const std::vector<int64_t>> rows) const;
  // Hidden states entering the tower's layer `first` [b, T, width] and their
  // mask [b, T] (cached below the layers a run trains) -> pooled [b,
  // text_width] on the model's device, under the caller's grad mode.
  at::Tensor pool_batch_from(const at::Tensor& hidden, const at::Tensor& mask, int64_t first) const;
  // Pooled features [b, text_width] on the model's device and the quantities
  // of the same texts (ignored unless the model reads them) -> [b, embed_dim],
  // unit rows.
  at::Tensor project(const at::Tensor& pooled, const text::QuantityBatch& quantities) const;

  // Bulk runs over every row of `rows` in the passes `grouping` makes
  // (text/length_groups.h), in input order, fp32 on the CPU, under the
  // caller's grad mode. Pooled features [n, text_width]:
  at::Tensor pool(const text::TokenRows& rows, const text::LengthGrouping& grouping,
                  const PassDone& done = {}) const;
  // Embeddings [n, search_dim] of `texts` tokenized as `rows`: unit rows of
  // embed_dim, then the size block when the model has a size head
  // (TwoTowerImpl::with_text_sizes). A
  // pass whose texts `cache` (may be null) holds all reads their pooled
  // features from it; the others pool and add theirs.
  at::Tensor embed(std::span<const std::string> texts, const text::TokenRows& rows,
                   const text::LengthGrouping& grouping, PooledTextCache* cache = nullptr,
                   const PassDone& done = {}) const;

 private:
  at::Tensor pool_ids(const at::Tensor& ids, const at::Tensor& mask,
                      std::span<const std::string> texts, PooledTextCache* cache) const;
  text::QuantityBatch quantities(std::span<const std::string> texts) const;

  TwoTowerImpl& model_;
  const text::Tokenizer& tokenizer_;
  int64_t max_length_;
  mutable std::atomic<int64_t> truncated_ = 0;
};

// texts -> [n, search_dim] fp32 on the CPU (TextEmbedder::embed), in input order ([0,
// search_dim] for none): TextEmbedder(built).embed in inference mode, in the
// groups `grouping` makes. The searcher, `cadclip embed --checkpoint` and the
// Python module's Model.embed_text; the same texts and grouping give the same bits.
at::Tensor embed_texts(BuiltModel& built, std::span<const std::string> texts,
                       const text::LengthGrouping& grouping);

}  // namespace cadclip::model
