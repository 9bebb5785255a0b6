#include "cadclip/eval/gallery.h"

#include <algorithm>
#include <unordered_set>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::eval {

Gallery::Gallery(const data::Dataset& dataset, const std::vector<std::string>& split_ids,
                 const std::string& split)
    : dataset_(dataset) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> missing_examples;
  for (const std::string& id : split_ids) {
    if (!seen.insert(id).second) continue;
    const std::optional<int64_t> row = dataset.find(id);
    if (!row) {
      ++missing_;
      if (missing_examples.size() < 5) missing_examples.push_back(id);
      continue;
    }
    position_.emplace(id, size());
    rows_.push_back(*row);
  }
  if (missing_ > 0) {
    log::warn("eval", "{} ids of split '{}' are not in the dataset (e.g. {}); they are left out",
              missing_, split, join(missing_examples));
  }
  if (rows_.empty()) {
    throw Error(
        format("evaluation: none of the {} ids of split '{}' is in the dataset ({} models); is "
               "it the split file of this prepared folder?",
               split_ids.size(), split, dataset.size()));
  }
}

int64_t Gallery::position(const std::string& id) const {
  const auto it = position_.find(id);
  return it == position_.end() ? -1 : it->second;
}

GalleryEmbeddings Gallery::embed(model::TwoTowerImpl& model, int64_t batch_size,
                                 Progress& progress) const {
  GalleryEmbeddings out;
  out.ids.reserve(rows_.size());
  out.hashes.reserve(rows_.size());
  std::vector<at::Tensor> parts;
  for (int64_t begin = 0; begin < size(); begin += batch_size) {
    const int64_t end = std::min(size(), begin + batch_size);
    std::vector<data::BRepGraph> graphs;
    graphs.reserve(end - begin);
    for (int64_t g = begin; g < end; ++g) {
      graphs.push_back(dataset_.graph(rows_[static_cast<size_t>(g)]));
      out.ids.push_back(graphs.back().id);
      out.hashes.push_back(graphs.back().geometry_hash);
    }
    parts.push_back(model.embed_parts(graphs).to(at::kCPU, at::kFloat));
    progress.advance(end - begin, {{"tower", "brep"}});
  }
  out.brep = at::cat(parts).contiguous();
  return out;
}

GeometryGroups::GeometryGroups(const std::vector<std::string>& hashes) : group_(hashes.size()) {
  std::unordered_map<std::string, int64_t> group_of;
  for (size_t g = 0; g < hashes.size(); ++g) {
    int64_t id = count();
    if (!hashes[g].empty()) id = group_of.emplace(hashes[g], id).first->second;
    if (id == count()) members_.emplace_back();
    members_[static_cast<size_t>(id)].push_back(static_cast<int64_t>(g));
    group_[g] = id;
  }
}

}  // namespace cadclip::eval
