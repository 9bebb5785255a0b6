#include "cadclip/model/text_embedding.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

namespace cadclip::model {
namespace {

std::vector<std::string> texts_at(std::span<const std::string> texts,
                                  std::span<const int64_t> rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const int64_t i : rows) out.push_back(texts[static_cast<size_t>(i)]);
  return out;
}

}  // namespace

TextEmbedder::TextEmbedder(TwoTowerImpl& model, const text::Tokenizer& tokenizer,
                           int64_t max_length)
    : model_(model), tokenizer_(tokenizer), max_length_(max_length) {}

TextEmbedder::TextEmbedder(BuiltModel& built)
    : TextEmbedder(*built.model, *built.text.tokenizer, built.text.max_length) {}

std::vector<int64_t> TextEmbedder::tokenize(std::string_view text) const {
  int64_t full_length = 0;
  std::vector<int64_t> ids = text::encode_cut(tokenizer_, text, max_length_, &full_length);
  truncated_ += static_cast<int64_t>(ids.size()) < full_length;
  return ids;
}

text::TokenRows TextEmbedder::tokenize(std::span<const std::string> texts) const {
  text::TokenRows rows = text::tokenize_rows(tokenizer_, texts, max_length_);
  truncated_ += rows.truncated;
  return rows;
}

at::Tensor TextEmbedder::pool_batch(std::span<const std::vector<int64_t>> rows) const {
  const auto [ids, mask] = text::pad_rows(rows, tokenizer_.pad_id());
  return model_.pool_text(ids.to(device()), mask.to(device()));
}

at::Tensor TextEmbedder::pool_batch_from(const at::Tensor& hidden, const at::Tensor& mask,
                                         int64_t first) const {
  return model_.pool_text_from(hidden.to(device()), mask.to(device()), first);
}

at::Tensor TextEmbedder::project(const at::Tensor& pooled,
                                 const text::QuantityBatch& quantities) const {
  return model_.project_text(pooled, quantities);
}

at::Tensor TextEmbedder::pool(const text::TokenRows& rows, const text::LengthGrouping& grouping,
                              const PassDone& done) const {
  return text::forward_in_length_groups(
      rows, tokenizer_.pad_id(), grouping, device(),
      [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t> pass) {
        at::Tensor pooled = model_.pool_text(ids, mask);
        if (done) done(static_cast<int64_t>(pass.size()));
        return pooled;
      });
}

at::Tensor TextEmbedder::embed(std::span<const std::string> texts, const text::TokenRows& rows,
                               const text::LengthGrouping& grouping, PooledTextCache* cache,
                               const PassDone& done) const {
  if (texts.empty()) return at::empty({0, model_.search_dim()}, at::kFloat);
  const at::Tensor embedded = text::forward_in_length_groups(
      rows, tokenizer_.pad_id(), grouping, device(),
      [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t> pass) {
        const std::vector<std::string> group = texts_at(texts, pass);
        at::Tensor embedded = project(pool_ids(ids, mask, group, cache), quantities(group));
        if (done) done(static_cast<int64_t>(pass.size()));
        return embedded;
      });
  return model_.with_text_sizes(embedded, texts);
}

// From the cache when it holds every text of the pass, else from the tower.
at::Tensor TextEmbedder::pool_ids(const at::Tensor& ids, const at::Tensor& mask,
                                  std::span<const std::string> texts,
                                  PooledTextCache* cache) const {
  if (cache == nullptr) return model_.pool_text(ids, mask);
  if (std::all_of(texts.begin(), texts.end(),
                  [&](const std::string& t) { return cache->pooled.contains(t); })) {
    std::vector<at::Tensor> rows;
    rows.reserve(texts.size());
    for (const std::string& t : texts) rows.push_back(cache->pooled.at(t));
    return at::stack(rows).to(device());
  }
  at::Tensor pooled = model_.pool_text(ids, mask);
  for (size_t i = 0; i < texts.size(); ++i)
    cache->pooled[texts[i]] = pooled[static_cast<int64_t>(i)].cpu();
  return pooled;
}

text::QuantityBatch TextEmbedder::quantities(std::span<const std::string> texts) const {
  if (!model_.reads_quantities()) return {};
  return text::quantity_batch(texts).to(device());
}

c10::Device TextEmbedder::device() const { return model_.brep_head->weight.device(); }

at::Tensor embed_texts(BuiltModel& built, std::span<const std::string> texts,
                       const text::LengthGrouping& grouping) {
  c10::InferenceMode inference;
  const TextEmbedder embedder(built);
  return embedder.embed(texts, embedder.tokenize(texts), grouping);
}

}  // namespace cadclip::model
