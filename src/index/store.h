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
// 2: file type, geometry hash, holes, shape signature and imported fields per part.
inline constexpr int kCatalogVersion = 2;

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

// The rows a search may return: one bit per vector row (bit r % 8 of byte r / 8).
struct RowSet {
  std::vector<uint8_t> bits;
  int64_t count = 0;  // rows in the set
  explicit RowSet(int64_t rows = 0) : bits(static_cast<size_t>((rows + 7) / 8), 0) {}
  bool has(int64_t r) const { return (bits[r >> 3] >> (r & 7)) & 1; }
  void add(int64_t r) {
    if (!has(r)) ++count;
    bits[r >> 3] |= static_cast<uint8_t>(1u << (r & 7));
  }
  void remove(int64_t r) {
    if (has(r)) --count;
    bits[r >> 3] &= static_cast<uint8_t>(~(1u << (r & 7)));
  }
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
  // q: [d] -> up to k (score, row) pairs, best first. Thread-safe. With
  // `rows`, only those rows are searched, inside FAISS (a selector): an exact
  // index stays exact; an inverted file probes more lists the fewer rows
  // pass, all of them when that is needed to return min(k, rows->count)
  // results; an HNSW graph searches its stored vectors exactly.
  std::vector<std::pair<float, int64_t>> search(const float* q, int64_t k,
                                                const RowSet* rows = nullptr) const;
  // q: [n, d] -> n lists as search() gives them, in one FAISS call on the
  // calling thread (an exact index reads its vectors once, through BLAS).
  // With `rows`, every query searches only those rows, as search() does,
  // still in one call (an inverted file that finds too few for some query
  // searches the batch once more with every list).
  std::vector<std::vector<std::pair<float, int64_t>>> search_many(
      const float* q, int64_t n, int64_t k, const RowSet* rows = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Large libraries get an inverted file: "auto" is Flat below this many parts.
inline constexpr int64_t kAutoApproximateFrom = 20000;

// The FAISS factory for `parts` vectors: `factory` itself unless "auto".
std::string choose_factory(const std::string& factory, int64_t parts);
// `search_params` itself unless empty, else the factory's default.
std::string default_search_params(const std::string& search_params, const std::string& factory);

// What a version records about where its vectors came from.
struct VersionFacts {
  std::string checkpoint_identity, checkpoint, library;
  std::string model_name;  // the checkpoint folder's name ("best-step912"), for people
  int64_t embed_dim = 0;
  std::string factory = "auto";  // as IndexOptions::factory
  std::string search_params;     // as IndexOptions::search_params
};

// The last step of writing a version: builds the vectors from the catalog
// (so that they follow its order) into <out>/vectors.faiss and records the
// facts, the factory, the search parameters and the vectors' sha256 in the
// catalog, inside its open transaction (the caller commits). Throws
// cadclip::Error naming the part whose embedding is not embed_dim long.
// Returns the factory used; `parts` gets the catalog's part count.
std::string seal_version(Catalog& catalog, const std::filesystem::path& out,
                         const VersionFacts& facts, int64_t* parts = nullptr);

}  // namespace cadclip::index::detail
