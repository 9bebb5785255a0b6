#include "cadclip/eval/scorer.h"

#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace cadclip::eval {

Scorer::Scorer(const CaptionQueries& queries, const GeometryGroups& groups, at::Tensor brep,
               at::Tensor text)
    : queries_(queries), groups_(groups), brep_(std::move(brep)), text_(std::move(text)) {}

LevelReport Scorer::level(size_t level) const {
  const std::vector<int64_t>& qs = queries_.of_level(level);
  const int64_t g_count = brep_.size(0);
  LevelReport out;
  out.level = queries_.levels()[level];
  const at::Tensor text = text_.index_select(0, at::tensor(qs, at::kLong));  // [Ql, d]

  Positives to_cad(qs.size());
  std::vector<std::string> query_texts(qs.size());
  std::vector<std::vector<int64_t>> group_captions(groups_.count());  // group -> local queries
  std::vector<char> captioned(g_count, 0);
  for (size_t j = 0; j < qs.size(); ++j) {
    const int64_t g = queries_.gallery_of(qs[j]);
    to_cad[j] = groups_.same_part(g);
    query_texts[j] = queries_.texts()[queries_.text_of(qs[j])];
    group_captions[groups_.of(g)].push_back(static_cast<int64_t>(j));
    captioned[g] = 1;
  }
  out.text_to_cad = retrieval_metrics(at::matmul(text, brep_.t()), to_cad);
  out.ceiling = caption_ceiling(query_texts, to_cad);

  // Gallery items with a caption at this level, in gallery order, against the level's captions.
  std::vector<int64_t> models;
  Positives to_text;
  for (int64_t g = 0; g < g_count; ++g) {
    if (!captioned[g]) continue;
    models.push_back(g);
    to_text.push_back(group_captions[groups_.of(g)]);
  }
  const at::Tensor brep = brep_.index_select(0, at::tensor(models, at::kLong));
  out.cad_to_text = retrieval_metrics(at::matmul(brep, text.t()), to_text);
  return out;
}

RetrievalMetrics Scorer::cad_to_cad() const {
  Positives self(brep_.size(0));
  for (size_t g = 0; g < self.size(); ++g) self[g] = groups_.same_part(static_cast<int64_t>(g));
  return retrieval_metrics(at::matmul(brep_, brep_.t()), self);
}

}  // namespace cadclip::eval
