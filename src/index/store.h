// The index folder's two stores, private to the index layer: the SQLite
// catalog (parts, their embeddings, the index's metadata) and the FAISS
// vector file. FAISS and SQLite types stay in store.cc.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <functional>
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
  std::vector<float> embedding;  // [d], unit length; empty when read without embeddings
  int64_t row = -1;              // its vector's row in the version's vectors; -1 = not placed
                                 // yet (a part added or changed since the version was sealed)
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
  int64_t count() const;
  // Every part in the order of its vector rows (by id where rows are not
  // placed: a catalog of an earlier cadclip, or parts not placed yet, which
  // come first), one at a time, so that a million parts need not be held
  // twice. Without `embeddings`, StoredItem::embedding stays empty. From
  // `from_row` on: only the parts placed at that row or after.
  void each(const std::function<void(StoredItem&&)>& take, bool embeddings = true,
            int64_t from_row = 0) const;
  // each() into a vector.
  std::vector<StoredItem> items(bool embeddings = true) const;
  // One part's embedding; empty when there is no such part.
  std::vector<float> embedding(const std::string& id) const;
  // `row`: where its vector is, when it keeps the one it had; -1 = to be placed.
  void put(const Item& item, std::span<const float> embedding, int64_t row = -1);
  void remove(const std::string& id);
  // The rows of the parts placed, ascending.
  std::vector<int64_t> placed_rows() const;
  // Numbers the vector rows 0..count()-1: placed parts keep their order and
  // close the gaps of parts removed, then the parts not placed follow by id.
  // `afresh`: every part by id. Returns how many were placed before.
  int64_t number_rows(bool afresh);
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
  // Calls f(r) for each row in the set, ascending; a byte of eight rows out
  // costs one test, which is what a million rows under a narrow filter need.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t byte = 0; byte < bits.size(); ++byte)
      for (unsigned in = bits[byte]; in != 0; in &= in - 1)
        f(static_cast<int64_t>(byte) * 8 + std::countr_zero(in));
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
  // FAISS ParameterSpace settings such as "efSearch=128", plus our own
  // "rerank=N" (see exact_rows); "" = none.
  void set_search_params(const std::string& params);
  // The exact vectors, [size(), d] row-major, held by the caller while this
  // index searches. A lossy index (product or scalar quantised) with
  // "rerank=N" then asks FAISS for max(k, N) candidates and orders them by
  // their exact scores, so that its top k are the exact top k of what it found.
  void set_exact_rows(const float* rows);
  int64_t size() const;
  int64_t dim() const;
  // Keeps `rows` (ascending, each < size()) and numbers them 0..rows.size()-1
  // in that order, dropping the others: an update without retraining. Throws
  // cadclip::Error for an index that cannot drop rows (only inverted files can).
  void keep_rows(const std::vector<int64_t>& rows);
  // x: [n, d] -> rows size()..size()+n-1, in an index already trained.
  void append(const float* x, int64_t n);
  // q: [d] -> up to k (score, row) pairs, best first. Thread-safe. With
  // `rows`, only those rows are searched, inside FAISS (a selector): an exact
  // index stays exact; an inverted file probes nprobe / sqrt(share) lists,
  // and four times as many, up to all of them, while that is needed to
  // return min(k, rows->count) results; an HNSW graph searches its stored
  // vectors exactly.
  std::vector<std::pair<float, int64_t>> search(const float* q, int64_t k,
                                                const RowSet* rows = nullptr) const;
  // q: [n, d] -> n lists as search() gives them, in one FAISS call on the
  // calling thread (an exact index reads its vectors once, through BLAS).
  // With `rows`, every query searches only those rows, as search() does,
  // still in one call (an inverted file that finds too few for some query
  // searches the batch again with four times the lists).
  std::vector<std::vector<std::pair<float, int64_t>>> search_many(
      const float* q, int64_t n, int64_t k, const RowSet* rows = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Large libraries get an inverted file: "auto" is Flat below this many parts.
inline constexpr int64_t kAutoApproximateFrom = 20000;
// From this many parts "auto" stores 8-bit scalar codes in the lists instead
// of the vectors (a quarter of the memory), ranking what it finds by the exact
// vectors (rerank).
inline constexpr int64_t kAutoCompressedFrom = 200000;
// The candidates such an index orders by their exact scores ("rerank=N").
inline constexpr int64_t kAutoRerank = 64;
// The lists such an index probes: at 1,000,000 parts (2,048 lists) 8 lists
// found 0.983 of the exact top 10 in 1.85 ms where 16 found 0.995 in 3.28 ms
// (docs/PERFORMANCE.md, "A million parts").
inline constexpr int64_t kAutoCompressedProbe = 8;

// a . b over d floats.
float dot(const float* a, const float* b, int64_t d);

// The FAISS factory for `parts` vectors: `factory` itself unless "auto".
std::string choose_factory(const std::string& factory, int64_t parts);
// `search_params` itself unless empty, else the factory's default.
std::string default_search_params(const std::string& search_params, const std::string& factory);

// What a version records about where its vectors came from.
struct VersionFacts {
  std::string checkpoint_identity, checkpoint, library;
  std::string model_name;  // the checkpoint folder's name ("best-step912"), for people
  int64_t embed_dim = 0;
  std::string factory = "auto";    // as IndexOptions::factory
  std::string search_params;       // as IndexOptions::search_params
  std::filesystem::path previous;  // the version this one began as a copy of; "" = none
};

// The last step of writing a version: numbers the catalog's vector rows and
// writes <out>/vectors.faiss to follow them, then records the facts, the
// factory, the search parameters and the vectors' sha256 in the catalog,
// inside its open transaction (the caller commits). An inverted file of the
// previous version that was trained on between half and twice today's parts
// is kept: its removed rows dropped, new parts added, nothing retrained
// (an update costs what changed, not the library); anything else is built
// anew. Throws cadclip::Error naming the part whose embedding is not
// embed_dim long.
struct Sealed {
  std::string factory;  // the FAISS index type written
  int64_t parts = 0;    // the vectors written, one per part
  int64_t kept = 0;     // of the previous version's, kept in place; 0 = built anew
};
Sealed seal_version(Catalog& catalog, const std::filesystem::path& out, const VersionFacts& facts);

}  // namespace cadclip::index::detail
