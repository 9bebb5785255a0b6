// The gallery of an evaluation: the split's distinct models that the dataset
// holds, in split order, their B-Rep embeddings, and which of them are one
// part (equal geometry hashes), so that each counts as a hit for the other.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cadclip/core/progress.h"
#include "cadclip/data/dataset.h"
#include "cadclip/model/two_tower.h"

namespace cadclip::eval {

// The B-Rep side of an evaluation, in gallery order.
struct GalleryEmbeddings {
  std::vector<std::string> ids;     // [G]
  std::vector<std::string> hashes;  // [G] geometry hashes (may be empty strings)
  at::Tensor brep;                  // [G, d] fp32 CPU, unit rows
};

class Gallery {
 public:
  // `split_ids` may repeat ids (counted once); `split` names the split in
  // messages. Logs a warning naming ids the dataset lacks; throws
  // cadclip::Error when it holds none of them.
  Gallery(const data::Dataset& dataset, const std::vector<std::string>& split_ids,
          const std::string& split);

  int64_t size() const { return static_cast<int64_t>(rows_.size()); }
  int64_t missing() const { return missing_; }  // split ids not in the dataset, left out
  // The gallery position of model `id`; -1 when it is not in the gallery.
  int64_t position(const std::string& id) const;

  // Reads the models and runs the B-Rep tower over them in batches of
  // batch_size, advancing `progress` by each batch. Under the caller's grad
  // mode, on the model's device.
  GalleryEmbeddings embed(model::TwoTowerImpl& model, int64_t batch_size, Progress& progress) const;

 private:
  const data::Dataset& dataset_;
  std::vector<int64_t> rows_;                          // dataset index of each gallery item
  std::unordered_map<std::string, int64_t> position_;  // id -> gallery position
  int64_t missing_ = 0;
};

// Gallery items with equal (non-empty) geometry hashes: one part, whichever
// file it came from.
class GeometryGroups {
 public:
  explicit GeometryGroups(const std::vector<std::string>& hashes);
  int64_t count() const { return static_cast<int64_t>(members_.size()); }
  int64_t of(int64_t item) const { return group_[static_cast<size_t>(item)]; }
  // The gallery items of a group, in gallery order.
  const std::vector<int64_t>& members(int64_t group) const {
    return members_[static_cast<size_t>(group)];
  }
  // The items that are the same part as `item` (itself included).
  const std::vector<int64_t>& same_part(int64_t item) const { return members(of(item)); }

 private:
  std::vector<int64_t> group_;                 // [G] group of each item
  std::vector<std::vector<int64_t>> members_;  // group -> items
};

}  // namespace cadclip::eval
