// The reader of a prepared dataset's shards: memory-maps every shard (only
// headers and offset arrays are read on open) and returns one model's
// BRepGraph by index or id, touching only that model's bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/data/brep_graph.h"

namespace cadclip::data {

class Dataset {
 public:
  // A prepared folder: the shards listed in its manifest.json, in that order
  // (a folder written by `cadclip merge` lists the shards of other folders).
  // Throws cadclip::Error naming the folder or shard and the problem.
  static Dataset open(const std::filesystem::path& folder);
  // Several prepared folders as one: their shards folder after folder, so
  // models are numbered in that order. Ids must be distinct across them: a
  // cadclip::Error names both folders of an id found twice.
  static Dataset open(const std::vector<std::filesystem::path>& folders);
  // Explicit shard files, in the order given (models are numbered across them).
  static Dataset open_shards(const std::vector<std::filesystem::path>& shards);

  int64_t size() const;
  // Model `index` in [0, size()); throws cadclip::Error when out of range.
  BRepGraph graph(int64_t index) const;
  const std::string& id(int64_t index) const;
  int64_t num_faces(int64_t index) const;  // from the offsets, without reading the model
  int64_t num_edges(int64_t index) const;
  std::optional<int64_t> find(std::string_view id) const;

  // Access hints for the memory-mapped shards (madvise); they change no value.
  // A training run reads models in shuffled order, where the kernel's
  // read-around of each page fault (up to 128 KiB, for readers going through
  // a file in order) reads many times the bytes a model needs: kRandom turns
  // it off for every shard, kSequential (the default) back on. prefetch asks
  // the kernel to start reading exactly model `index`'s bytes now, in the
  // background, so that graph(index) finds them in memory.
  enum class Access { kSequential, kRandom };
  void advise(Access access) const;
  void prefetch(int64_t index) const;
  // Every id, in index order.
  std::vector<std::string> ids() const;

 private:
  struct State;
  struct Opener;
  std::shared_ptr<const State> state_;
};

}  // namespace cadclip::data
