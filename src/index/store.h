// The index folder's two stores, private to the index layer: the SQLite
// catalog (parts, their embeddings, the index's metadata) and the FAISS
// vector file. FAISS and SQLite types stay in store.cc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cadclip/index/searcher.h"

namespace cadclip::index::detail {

inline constexpr const char* kCatalogFile = "catalog.sqlite";
inline constexpr const char* kVectorsFile = "vectors.faiss";
inline constexpr const char* kThumbnailDir = "thumbnails";
inline constexpr int kCatalogVersion = 1;

struct StoredItem {
  Item item;
  std::vector<float> embedding;  // [d], unit length
};

class Catalog {
 public:
  // Opens (creating when `create`) <folder>/catalog.sqlite. Throws cadclip::Error.
  static Catalog open(const std::filesystem::path& folder, bool create);
  Catalog(Catalog&&) noexcept;
  Catalog& operator=(Catalog&&) noexcept;
  ~Catalog();

  std::optional<std::string> meta(const std::string& key) const;
  void set_meta(const std::string& key, const std::string& value);
  // Every part, ordered by id.
  std::vector<StoredItem> items() const;
  void put(const Item& item, std::span<const float> embedding);
  void remove(const std::string& id);
  void clear();
  void begin();
  void commit();

 private:
  Catalog() = default;
  struct Db;
  std::unique_ptr<Db> db_;
};

// An exact or approximate inner-product index over unit rows.
class VectorIndex {
 public:
  // x: [n, d] row-major. `factory` is a FAISS factory string.
  static VectorIndex build(const float* x, int64_t n, int64_t d, const std::string& factory);
  static VectorIndex read(const std::filesystem::path& path);
  VectorIndex();  // empty until assigned from build() or read()
  VectorIndex(VectorIndex&&) noexcept;
  VectorIndex& operator=(VectorIndex&&) noexcept;
  ~VectorIndex();

  // Written beside `path`, then renamed over it.
  void write(const std::filesystem::path& path) const;
  // FAISS ParameterSpace settings such as "efSearch=128"; "" = none.
  void set_search_params(const std::string& params);
  int64_t size() const;
  int64_t dim() const;
  // q: [d] -> up to k (score, row) pairs, best first. Thread-safe.
  std::vector<std::pair<float, int64_t>> search(const float* q, int64_t k) const;
  // q: [n, d] -> n lists as search() gives them, in one FAISS call on the
  // calling thread (an exact index reads its vectors once, through BLAS).
  std::vector<std::vector<std::pair<float, int64_t>>> search_many(const float* q, int64_t n,
                                                                  int64_t k) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cadclip::index::detail
