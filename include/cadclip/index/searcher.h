// Searching an index folder: by text (the checkpoint's text tower), by a part
// file (ingested in a worker process), or by a part already in the index.
// Opening loads the model, the vectors and the catalog of the index's current
// version once, and holds that version (a later `cadclip index` swaps in a
// new one without removing it); a query reads nothing from the folder but
// thumbnails. Searches may run from several threads at once.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/data/brep_graph.h"
#include "cadclip/data/ingest_limits.h"
#include "cadclip/data/part_facts.h"
#include "cadclip/index/filter.h"

namespace cadclip::model {
struct BuiltModel;
}
namespace cadclip::index::detail {
struct RowSet;
}

namespace cadclip::index {

// One part of the catalog.
struct Item {
  std::string id;                 // unique in the index (the file stem, or the prepared id)
  std::string name;               // for people
  std::string source;             // the CAD file it came from ("" for a prepared library)
  std::string content_hash;       // sha256 of the source file (or of the encoded graph)
  double size_mm[3] = {0, 0, 0};  // bounding box x, y, z
  int64_t faces = 0;
  std::string thumbnail;  // file name under <index>/thumbnails/, "" when none
  std::string caption;    // a known caption, "" when none
  std::string file_type;  // the source's format: "step", "iges", "brep", "deepcad"; "" = not known
  std::string geometry_hash;  // the graph's: equal for the same part moved or exported again
  int64_t holes = -1;         // round holes (data/part_facts.h); -1 = not known
  std::vector<double> hole_diameters_mm;  // one per round hole, ascending
  std::vector<data::Shaft> shafts;        // round shafts (data/part_facts.h); empty when not known
  std::vector<int64_t> repeats;  // sizes of its sets of congruent faces (data/part_facts.h)
  data::ShapeSignature shape;    // tells a part from its mirror image
  // Catalog fields imported with `cadclip index --metadata`, in the file's column order.
  std::vector<std::pair<std::string, std::string>> metadata;

  // The extents largest first.
  std::array<double, 3> sorted_size_mm() const;
  // The value of an imported field; nullptr when the part has none.
  const std::string* field(std::string_view name) const;
};

struct Hit {
  int64_t rank = 0;  // 1 = best
  double score = 0;  // cosine similarity in [-1, 1]
  const Item* item = nullptr;
  std::vector<bool> meets;  // per fact of SearchResult::stated: whether this part meets it
};

// How a query is answered beyond its embedding.
struct SearchOptions {
  int64_t k = 10;                // results wanted (clipped to max_k and to the parts that pass)
  Filter filter;                 // conditions applied inside the vector search (index/filter.h)
  bool rank_by_facts = true;     // text queries: parts that meet more of the facts the text
                                 // states (index/query_facts.h) rank first, the embedding
                                 // ordering those that meet as many; false = embedding alone
  bool strict_numbers = false;   // text queries: the stated facts become hard conditions instead
  double same_size = 0;          // part queries: only parts whose extents, largest first, are
                                 // within ± this share of the query part's (0.1 = ±10%); 0 = off
  bool ignore_mirrored = false;  // part queries: leave out mirror images of the query part
};

struct SearchResult {
  std::vector<Hit> hits;  // best first, at most k, none scoring below a minimum score
  Filter applied;         // what was applied: given conditions, then derived ones, with origins
  std::vector<Condition> stated;  // the facts the text states that ranked the hits (empty with
                                  // strict numbers, where they are among `applied`)
  int64_t meeting_all = -1;       // candidates that meet every stated fact; -1 = none stated
  int64_t candidates = 0;         // parts that pass the conditions (all parts without any)
  int64_t mirrored_left_out = 0;  // mirror images of the query part left out
};

// The model an index searches with.
struct ModelInfo {
  std::string name;              // the checkpoint folder it was built from ("best-step912")
  std::string sha256;            // its weights' identity (model::checkpoint_identity), hex
  std::string built_from;        // the checkpoint's path when the index was built
  std::filesystem::path folder;  // where its weights were loaded from: the copy the index
                                 // carries (<index>/models/<sha256>), or --checkpoint; empty
                                 // when opened without the model
};

struct SearcherOptions {
  std::string checkpoint;      // empty = the copy the index carries (or, for an index made
                               // before indexes carried their model, the one it records);
                               // other weights are refused
  int64_t max_k = 1000;        // k is clipped to this and to the index size
  std::string worker_binary;   // cadclip executable that ingests part files; empty = this one
  data::IngestLimits limits;   // what a part file to search by may cost to ingest
  std::string search_params;   // FAISS search parameters ("nprobe=32"); empty = the index's own
  int64_t direct_rows = 4096;  // a filter (or a tier of stated facts) that passes at most this
                               // many parts is answered by scoring their stored vectors
                               // directly: exact, and cheaper than a search that skips all
                               // other parts; 0 = always through the vector index
  bool load_model = true;      // false: vectors and catalog only (item queries, duplicates);
                               // text and part queries then fail
  std::string text_matmul = "auto";  // query encoding's matmuls on the CPU: fp32, bf16, or auto
                                     // (bf16 where the CPU multiplies it natively; see
                                     // cadclip/text/matmul_precision.h)
};

class Searcher {
 public:
  // Throws cadclip::Error naming the folder when it is no index (or its
  // vectors and catalog do not belong together), or the checkpoint when it
  // differs from the one the index was built with.
  static Searcher open(const std::filesystem::path& folder, const SearcherOptions& options = {});

  int64_t size() const;
  int64_t dim() const;
  const std::filesystem::path& folder() const;          // the index folder, as opened
  const std::filesystem::path& version_folder() const;  // its version this searcher holds
  std::string checkpoint_identity() const;
  const ModelInfo& model() const;
  std::string factory() const;
  std::string_view text_matmul() const;  // "fp32" or "bf16": what query encoding runs in
  const Item* find(std::string_view id) const;

  // Query embeddings [d] fp32: the unit embedding, then the size block when
  // the model has one (model::TwoTowerImpl::search_dim).
  at::Tensor embed_text(std::string_view text) const;
  // Several texts at once: [n, d] fp32, row i equal to embed_text(texts[i])
  // up to rounding. Texts of similar token length share a forward pass (each
  // group padded to its own longest), which costs less per text than n single
  // calls: what the server's query batching is for.
  at::Tensor embed_texts(const std::vector<std::string>& texts) const;
  // A part as a query for other parts: [d] fp32, its size block zeroed
  // (parts compare by shape; SearchOptions::same_size compares sizes).
  at::Tensor embed_graph(const data::BRepGraph& graph) const;

  // The k best parts (k clipped to max_k and size()), best first.
  std::vector<Hit> search(const at::Tensor& query, int64_t k) const;
  std::vector<Hit> search_text(std::string_view text, int64_t k) const;
  // queries: [n, d] fp32 -> for each row, what search(row, k) gives, in one
  // FAISS call (an exact index then reads its vectors once for all rows).
  std::vector<std::vector<Hit>> search_many(const at::Tensor& queries, int64_t k) const;
  // Parts like one in the index; the part itself comes first. Throws
  // cadclip::Error for an unknown id.
  std::vector<Hit> search_like_item(std::string_view id, int64_t k) const;
  // Parts like a CAD file, ingested by a worker process so that a file which
  // crashes Open CASCADE costs only that process. Throws cadclip::Error with
  // the reason when the file cannot be ingested, or when built without OCCT.
  std::vector<Hit> search_like_file(const std::filesystem::path& path, int64_t k) const;

  // Queries with filters and similarity controls (SearchOptions). Throws
  // cadclip::Error for k < 1, a field no part has, an unknown id, or a part
  // file that cannot be read; same_size and ignore_mirrored need a part query.
  SearchResult query_text(std::string_view text, const SearchOptions& options) const;
  // Texts encoded together (as embed_texts), each searched with its own options.
  std::vector<SearchResult> query_texts(const std::vector<std::string>& texts,
                                        const std::vector<SearchOptions>& options) const;
  // The part itself comes first when it passes the conditions.
  SearchResult query_item(std::string_view id, const SearchOptions& options) const;
  SearchResult query_file(const std::filesystem::path& path, const SearchOptions& options) const;
  SearchResult query_graph(const data::BRepGraph& graph, const SearchOptions& options) const;
  // A query embedding ([d] fp32, unit length) of no part: filters and a
  // minimum score apply, same_size and ignore_mirrored do not.
  SearchResult query_vector(const at::Tensor& query, const SearchOptions& options) const;
  // The catalog fields imported into this index (cadclip index --metadata).
  const std::vector<std::string>& fields() const;
  // Every part in row order (the order of the vectors), and their stored
  // embeddings: [size(), dim()] fp32, row r being items()[r]'s.
  const std::vector<Item>& items() const;
  const at::Tensor& embeddings() const;
  // The rows whose parts pass `filter`'s conditions, ascending. Throws
  // cadclip::Error for a field no part has.
  std::vector<int64_t> rows_passing(const Filter& filter) const;

  // The version CURRENT names now, opened again when it is not the one this
  // searcher holds (the model is shared, not loaded again, when its weights
  // are the same); nullopt when it is the same. Throws cadclip::Error as
  // open() does.
  std::optional<Searcher> reopen_if_changed() const;
  // The version this searcher holds, as CURRENT names it ("versions/3"; "" for an
  // index made before versions).
  std::string version() const;

 private:
  // A part's stored row [d] as a query: its size block zeroed.
  at::Tensor part_query(const at::Tensor& row) const;
  struct State;
  struct QueryPart;
  // Opens the current version of `folder`, reusing `model` when it holds the
  // weights (`model_identity`) the version was made with.
  static std::shared_ptr<const State> open_state(const std::filesystem::path& folder,
                                                 const SearcherOptions& options,
                                                 std::shared_ptr<model::BuiltModel> model,
                                                 const std::string& model_identity);
  SearchResult run(const at::Tensor& query, const SearchOptions& options, Filter applied,
                   const QueryPart* part) const;
  // queries: [n, d] -> for each, the k best of `rows` (all rows when null):
  // the stored vectors scored directly when few rows pass, else FAISS.
  std::vector<std::vector<std::pair<float, int64_t>>> search_rows(const at::Tensor& queries,
                                                                  const detail::RowSet* rows,
                                                                  int64_t k) const;
  // queries: [n, d]; met: per row the stated facts it meets (-1: filtered
  // out); in_tier[t]: the rows that meet t -> for each query its k best,
  // those that meet all facts first, then one fewer, and so on, each tier in
  // the embedding's order. Only the tiers that fill k are searched.
  std::vector<std::vector<std::pair<float, int64_t>>> search_tiers(
      const at::Tensor& queries, const std::vector<int8_t>& met,
      const std::vector<int64_t>& in_tier, int64_t k) const;
  std::shared_ptr<const State> state_;
};

// True when this build can read CAD files (Open CASCADE is linked).
bool can_ingest_parts();

// Ingests one CAD file in a fresh worker process (cad::ingest_in_worker)
// under `limits`. Throws data::IngestError "<file name> could not be read as
// a part: <kind>: <reason>" when it cannot be ingested (over a limit, or a
// worker that crashed), and cadclip::Error when it is no CAD file, the worker
// cannot be started, or this build has no Open CASCADE.
data::BRepGraph ingest_isolated(const std::filesystem::path& path, const std::string& worker_binary,
                                const data::IngestLimits& limits);

}  // namespace cadclip::index
