#include "cadclip/train/text_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <span>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/length_groups.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

std::string cache_key(const model::BuiltModel& built, const std::vector<data::Caption>& captions,
                      const std::vector<int64_t>& used, const TextCacheOptions& o) {
  Sha256 key;
  key.update(nlohmann::json(built.config.text.pooling).dump());
  key.update_value(built.config.text.max_length);
  key.update_value(o.chunk);
  key.update(model::text_precision_name(built.config.two_tower.text_precision));
  for (const char* file : {"config.json", "tokenizer.json", "vocab.txt", "spm.model"}) {
    const fs::path path = fs::path(built.config.text_folder) / file;
    key.update(fs::exists(path) ? sha256_file_hex(path) : std::string("-"));
  }
  // The tower's weights by value, not its weight file: a resumed run reads
  // them from a checkpoint's copy, whose file bytes differ from the
  // pretrained folder's for the same values.
  for (const auto& item : built.text.encoder->named_parameters()) {
    const at::Tensor values = item.value().detach().to(at::kCPU).contiguous();
    key.update(item.key());
    key.update(std::span(static_cast<const std::byte*>(values.const_data_ptr()), values.nbytes()));
  }
  for (const int64_t c : used) {
    key.update(captions[static_cast<size_t>(c)].text);
    key.update(std::string_view("\0", 1));
  }
  return key.hex_digest();
}

// The file's features when its key is `key`; an undefined tensor otherwise.
at::Tensor read_matching(const std::string& file, const std::string& key, bool leader) {
  if (!fs::exists(file)) return {};
  const SafetensorsReader reader = SafetensorsReader::open(file);
  const auto it = reader.metadata().find("key");
  if (it != reader.metadata().end() && it->second == key && reader.find("features") != nullptr)
    return data::read_tensor(reader, reader.at("features"));
  if (leader)
    log::info("train", "{} was made for other captions or another text model: recomputing", file);
  return {};
}

std::unique_ptr<Progress> caption_progress(int64_t total, bool leader) {
  if (!leader) return nullptr;
  ProgressOptions p;
  p.total = total;
  p.unit = "captions";
  return std::make_unique<Progress>("text-cache", p);
}

// Pools every text's tokens in chunks, short captions together so that
// batches carry little padding; row i of the result belongs to rows[i].
at::Tensor pool_rows(const model::TextEmbedder& embedder, const text::TokenRows& rows,
                     const TextCacheOptions& options) {
  at::NoGradGuard no_grad;
  const std::unique_ptr<Progress> progress =
      caption_progress(static_cast<int64_t>(rows.ids.size()), options.leader);
  return embedder.pool(rows, {.max_rows = options.chunk}, [&](int64_t texts) {
    if (progress) progress->advance(texts);
  });
}

// The captions `set` trains on, each once, in first-use order; row_of
// receives each caption's row (-1: not used).
std::vector<int64_t> used_captions(const TrainingSet& set, size_t caption_count,
                                   std::vector<int64_t>& row_of) {
  row_of.assign(caption_count, -1);
  std::vector<int64_t> used;
  for (const auto& choices : set.captions)
    for (const int64_t c : choices)
      if (row_of[static_cast<size_t>(c)] < 0) {
        row_of[static_cast<size_t>(c)] = static_cast<int64_t>(used.size());
        used.push_back(c);
      }
  return used;
}

text::TokenRows tokenize_used(const model::TextEmbedder& embedder,
                              const std::vector<data::Caption>& captions,
                              const std::vector<int64_t>& used) {
  std::vector<std::string> texts;
  texts.reserve(used.size());
  for (const int64_t c : used) texts.push_back(captions[static_cast<size_t>(c)].text);
  return embedder.tokenize(texts);
}

}  // namespace

TextFeatureCache TextFeatureCache::build(model::BuiltModel& built,
                                         const model::TextEmbedder& embedder,
                                         const std::vector<data::Caption>& captions,
                                         const TrainingSet& set, const TextCacheOptions& options) {
  TextFeatureCache cache;
  const std::vector<int64_t> used = used_captions(set, captions.size(), cache.row_of_);
  const text::TokenRows rows = tokenize_used(embedder, captions, used);
  std::string key;
  if (!options.file.empty()) {
    key = cache_key(built, captions, used, options);
    cache.features_ = read_matching(options.file, key, options.leader);
    if (cache.features_.defined() && options.leader)
      log::info("train", "text features of {} captions read from {}",
                with_commas(static_cast<int64_t>(used.size())), options.file);
  }
  if (!cache.features_.defined()) {
    cache.features_ = pool_rows(embedder, rows, options);
    if (!key.empty() && options.leader) {
      SafetensorsWriter writer;
      data::add_tensor(writer, "features", cache.features_);
      writer.set_metadata("key", key);
      writer.write(options.file);
    }
  }
  if (options.leader)
    log::info("train",
              "text tower frozen (--text-lr 0): {} captions encoded once, {} cut to {} tokens",
              with_commas(static_cast<int64_t>(used.size())), embedder.truncated(),
              built.config.text.max_length);
  return cache;
}

at::Tensor TextFeatureCache::rows(const std::vector<int64_t>& captions) const {
  std::vector<int64_t> rows;
  rows.reserve(captions.size());
  for (const int64_t c : captions) rows.push_back(row_of_[static_cast<size_t>(c)]);
  return features_.index_select(0, at::tensor(rows));
}

TextHiddenCache TextHiddenCache::build(model::BuiltModel& built,
                                       const model::TextEmbedder& embedder,
                                       const std::vector<data::Caption>& captions,
                                       const TrainingSet& set, int64_t first,
                                       const TextCacheOptions& options) {
  TextHiddenCache cache;
  cache.first_ = first;
  const std::vector<int64_t> used = used_captions(set, captions.size(), cache.row_of_);
  const text::TokenRows rows = tokenize_used(embedder, captions, used);
  cache.length_.reserve(rows.ids.size());
  cache.offset_.reserve(rows.ids.size());
  int64_t total = 0;
  for (const auto& ids : rows.ids) {
    cache.offset_.push_back(total);
    cache.length_.push_back(static_cast<int64_t>(ids.size()));
    total += static_cast<int64_t>(ids.size());
  }
  model::TwoTowerImpl& model = *built.model;
  cache.tokens_ = at::empty({total, built.text.encoder->hidden_size()}, at::kFloat);
  // Shortest first, so that each pass pads little.
  std::vector<int64_t> order(rows.ids.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return cache.length_[static_cast<size_t>(a)] < cache.length_[static_cast<size_t>(b)];
  });
  at::NoGradGuard no_grad;
  const bool was_training = model.text()->is_training();
  model.text()->eval();
  const std::unique_ptr<Progress> progress =
      caption_progress(static_cast<int64_t>(order.size()), options.leader);
  for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(options.chunk)) {
    const size_t end = std::min(order.size(), begin + static_cast<size_t>(options.chunk));
    std::vector<std::vector<int64_t>> pass;
    for (size_t i = begin; i < end; ++i) pass.push_back(rows.ids[static_cast<size_t>(order[i])]);
    const text::PaddedRows padded = text::pad_rows(pass, embedder.tokenizer().pad_id());
    const at::Tensor hidden = model
                                  .text_hidden_before(padded.ids.to(embedder.device()),
                                                      padded.mask.to(embedder.device()), first)
                                  .cpu();
    for (size_t i = begin; i < end; ++i) {
      const auto row = static_cast<size_t>(order[i]);
      cache.tokens_.narrow(0, cache.offset_[row], cache.length_[row])
          .copy_(hidden[static_cast<int64_t>(i - begin)].narrow(0, 0, cache.length_[row]));
    }
    if (progress) progress->advance(static_cast<int64_t>(end - begin));
  }
  model.text()->train(was_training);
  if (options.leader)
    log::info("train",
              "text tower: layers below {} frozen, the hidden states of {} captions computed "
              "once ({} MiB), {} cut to {} tokens",
              first, with_commas(static_cast<int64_t>(used.size())), cache.tokens_.nbytes() >> 20,
              embedder.truncated(), built.config.text.max_length);
  return cache;
}

TextHiddenCache::Rows TextHiddenCache::rows(const std::vector<int64_t>& captions) const {
  std::vector<size_t> rows;
  int64_t longest = 0;
  for (const int64_t c : captions) {
    const int64_t row = row_of_[static_cast<size_t>(c)];
    CADCLIP_CHECK(row >= 0, "caption {} is not in the hidden-state cache", c);
    rows.push_back(static_cast<size_t>(row));
    longest = std::max(longest, length_[rows.back()]);
  }
  const auto n = static_cast<int64_t>(captions.size());
  Rows out{at::zeros({n, longest, tokens_.size(1)}, at::kFloat),
           at::zeros({n, longest}, at::kLong)};
  for (int64_t i = 0; i < n; ++i) {
    const size_t row = rows[static_cast<size_t>(i)];
    out.hidden[i].narrow(0, 0, length_[row]).copy_(tokens_.narrow(0, offset_[row], length_[row]));
    out.mask[i].narrow(0, 0, length_[row]).fill_(1);
  }
  return out;
}

}  // namespace cadclip::train
