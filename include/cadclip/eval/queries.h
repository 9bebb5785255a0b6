// The queries of an evaluation: the gallery models' captions at the levels
// reported, in caption-file order, each distinct text embedded once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cadclip/data/captions.h"
#include "cadclip/eval/gallery.h"

namespace cadclip::eval {

class CaptionQueries {
 public:
  // `levels` empty: every level the gallery's captions have, the known ones
  // in their natural order (abstract .. expert) and then the rest by name.
  // Throws cadclip::Error when no gallery model has a caption, or a level
  // asked for has none; `split` names the split in messages.
  CaptionQueries(const std::vector<data::Caption>& captions, const Gallery& gallery,
                 const std::vector<std::string>& levels, const std::string& split);

  const std::vector<std::string>& levels() const { return levels_; }
  const std::vector<std::string>& texts() const { return texts_; }           // [T] distinct texts
  int64_t size() const { return static_cast<int64_t>(gallery_of_.size()); }  // Q
  // The queries of levels()[level], in query order.
  const std::vector<int64_t>& of_level(size_t level) const { return of_level_[level]; }
  int64_t gallery_of(int64_t query) const { return gallery_of_[static_cast<size_t>(query)]; }
  int64_t text_of(int64_t query) const { return text_of_[static_cast<size_t>(query)]; }
  const std::vector<std::string>& ids() const { return ids_; }  // [Q] the model described
  const std::vector<std::string>& query_levels() const { return query_levels_; }  // [Q]
  // Gallery models without a caption at any reported level.
  int64_t uncaptioned(int64_t gallery_size) const;
  // Queries of `level` whose text is longer than max_length tokens;
  // full_lengths: each distinct text's length before the cut.
  int64_t cut(size_t level, std::span<const int64_t> full_lengths, int64_t max_length) const;
  // The embeddings of the distinct texts [T, d] as one row per query [Q, d].
  at::Tensor per_query(const at::Tensor& distinct) const;

 private:
  std::vector<std::string> levels_;
  std::vector<std::string> texts_;
  std::vector<std::vector<int64_t>> of_level_;
  std::vector<int64_t> gallery_of_, text_of_;
  std::vector<std::string> ids_, query_levels_;
};

}  // namespace cadclip::eval
