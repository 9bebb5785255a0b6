#include "cadclip/train/text_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <span>

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

// Pools every text's tokens in chunks, short captions together so that
// batches carry little padding; row i of the result belongs to rows[i].
at::Tensor pool_rows(const model::TextEmbedder& embedder, const text::TokenRows& rows,
                     const TextCacheOptions& options) {
  at::NoGradGuard no_grad;
  std::unique_ptr<Progress> progress;
  if (options.leader) {
    ProgressOptions p;
    p.total = static_cast<int64_t>(rows.ids.size());
    p.unit = "captions";
    progress = std::make_unique<Progress>("text-cache", p);
  }
  return embedder.pool(rows, {.max_rows = options.chunk}, [&](int64_t texts) {
    if (progress) progress->advance(texts);
  });
}

}  // namespace

TextFeatureCache TextFeatureCache::build(model::BuiltModel& built,
                                         const model::TextEmbedder& embedder,
                                         const std::vector<data::Caption>& captions,
                                         const TrainingSet& set, const TextCacheOptions& options) {
  TextFeatureCache cache;
  cache.row_of_.assign(captions.size(), -1);
  std::vector<int64_t> used;
  for (const auto& choices : set.captions)
    for (const int64_t c : choices)
      if (cache.row_of_[static_cast<size_t>(c)] < 0) {
        cache.row_of_[static_cast<size_t>(c)] = static_cast<int64_t>(used.size());
        used.push_back(c);
      }
  std::vector<std::string> texts;
  texts.reserve(used.size());
  for (const int64_t c : used) texts.push_back(captions[static_cast<size_t>(c)].text);
  const text::TokenRows rows = embedder.tokenize(texts);
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

}  // namespace cadclip::train
