#include "cadclip/index/searcher.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <unordered_map>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/data/batch.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/text/length_groups.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/text_model.h"
#include "layout.h"
#include "store.h"

namespace cadclip::index {

namespace fs = std::filesystem;

struct Searcher::State {
  fs::path folder;
  detail::OpenedVersion version;  // held open: no writer removes it meanwhile
  SearcherOptions options;
  std::string identity;
  std::string factory;
  mutable model::BuiltModel built;  // forward() is not const; inference changes nothing
  detail::VectorIndex vectors;
  std::vector<Item> items;  // in vector row order (by id)
  std::unordered_map<std::string, int64_t> row_of;
  at::Tensor embeddings;  // [N, d] fp32, the catalog's copy of the vectors
};

namespace {

std::string required_meta(const detail::Catalog& catalog, const fs::path& folder,
                          const std::string& key) {
  std::optional<std::string> value = catalog.meta(key);
  if (!value)
    throw Error(
        format("{}: the catalog lacks '{}'; the index is incomplete, run `cadclip index` "
               "again",
               folder.string(), key));
  return *value;
}

}  // namespace

Searcher Searcher::open(const fs::path& folder, const SearcherOptions& options) {
  auto state = std::make_shared<State>();
  state->folder = fs::absolute(folder);
  state->options = options;
  state->version = detail::open_current_version(state->folder);
  const fs::path& version = state->version.folder;
  const detail::Catalog catalog = detail::Catalog::open(version, /*create=*/false);
  state->identity = required_meta(catalog, folder, "checkpoint_identity");
  state->factory = required_meta(catalog, folder, "factory");
  const std::string recorded = required_meta(catalog, folder, "checkpoint");
  const std::string checkpoint = options.checkpoint.empty() ? recorded : options.checkpoint;
  if (options.checkpoint.empty() && !fs::exists(recorded))
    throw Error(
        format("{}: the checkpoint the index was built with ({}) is gone; pass "
               "--checkpoint with the same weights, or rebuild the index",
               folder.string(), recorded));
  const std::string identity = model::checkpoint_identity(checkpoint);
  if (identity != state->identity)
    throw Error(
        format("{} was built with checkpoint {} (weights {}), and {} holds other weights "
               "({}); search it with that checkpoint, or rebuild the index with "
               "`cadclip index {} LIBRARY --out {} --overwrite`",
               folder.string(), recorded, state->identity.substr(0, 12), checkpoint,
               identity.substr(0, 12), checkpoint, folder.string()));
  state->built = model::load_model_from_checkpoint(checkpoint);

  std::vector<detail::StoredItem> stored = catalog.items();
  const fs::path vectors_file = version / detail::kVectorsFile;
  if (const std::optional<std::string> expected = catalog.meta("vectors_sha256")) {
    if (sha256_file_hex(vectors_file) != *expected)
      throw Error(
          format("{}: {} is not the file its catalog was written with (sha256 differs); the "
                 "version is damaged: run `cadclip index` again, which writes a new one",
                 folder.string(), vectors_file.string()));
  }
  state->vectors = detail::VectorIndex::read(vectors_file);
  if (state->vectors.size() != static_cast<int64_t>(stored.size()))
    throw Error(
        format("{}: the catalog holds {} parts and {} holds {} vectors; the index is out "
               "of step, run `cadclip index` again",
               folder.string(), stored.size(), detail::kVectorsFile, state->vectors.size()));
  state->vectors.set_search_params(options.search_params.empty()
                                       ? catalog.meta("search_params").value_or("")
                                       : options.search_params);
  const int64_t d = state->vectors.dim();
  state->embeddings = at::empty({static_cast<int64_t>(stored.size()), d}, at::kFloat);
  for (size_t i = 0; i < stored.size(); ++i) {
    if (static_cast<int64_t>(stored[i].embedding.size()) != d)
      throw Error(format("{}: part '{}' has an embedding of size {}, the index {}", folder.string(),
                         stored[i].item.id, stored[i].embedding.size(), d));
    std::memcpy(state->embeddings[i].data_ptr<float>(), stored[i].embedding.data(), d * 4);
    state->row_of.emplace(stored[i].item.id, static_cast<int64_t>(i));
    state->items.push_back(std::move(stored[i].item));
  }
  Searcher searcher;
  searcher.state_ = std::move(state);
  return searcher;
}

int64_t Searcher::size() const { return static_cast<int64_t>(state_->items.size()); }
int64_t Searcher::dim() const { return state_->vectors.dim(); }
const fs::path& Searcher::folder() const { return state_->folder; }
const fs::path& Searcher::version_folder() const { return state_->version.folder; }
std::string Searcher::checkpoint_identity() const { return state_->identity; }
std::string Searcher::factory() const { return state_->factory; }

const Item* Searcher::find(std::string_view id) const {
  const auto it = state_->row_of.find(std::string(id));
  return it == state_->row_of.end() ? nullptr : &state_->items[it->second];
}

at::Tensor Searcher::embed_text(std::string_view text) const {
  return embed_texts({std::string(text)})[0].contiguous();
}

at::Tensor Searcher::embed_texts(const std::vector<std::string>& texts) const {
  if (texts.empty()) return at::empty({0, dim()}, at::kFloat);
  // The encoder's cost grows with padded tokens, and queries range from 5 to
  // 100 tokens: texts of similar length run together, each group padded only
  // to its own longest. group_by_size weighs padding against one more pass
  // (its overhead here: about one typical query's worth, 32^2 slots).
  const text::LengthGrouping grouping{.max_rows = static_cast<int64_t>(texts.size()),
                                      .group_overhead = 1024};
  return model::embed_texts(state_->built, texts, grouping);
}

at::Tensor Searcher::embed_graph(const data::BRepGraph& graph) const {
  c10::InferenceMode inference;
  const std::vector<data::BRepGraph> graphs = {graph};
  return state_->built.model->encode_brep(data::collate(graphs))[0].contiguous();
}

std::vector<Hit> Searcher::search(const at::Tensor& query, int64_t k) const {
  if (query.dim() != 1 || query.size(0) != dim() || query.scalar_type() != at::kFloat)
    throw Error(format("a query must be a float vector of size {}, not {}", dim(), query.sizes()));
  if (k < 1) throw Error(format("k = {} asks for no result; ask for at least 1", k));
  k = std::min({k, state_->options.max_k, size()});
  const at::Tensor q = query.contiguous();
  std::vector<Hit> hits;
  for (const auto& [score, row] : state_->vectors.search(q.data_ptr<float>(), k)) {
    hits.push_back({static_cast<int64_t>(hits.size()) + 1, score, &state_->items[row]});
  }
  return hits;
}

std::vector<std::vector<Hit>> Searcher::search_many(const at::Tensor& queries, int64_t k) const {
  if (queries.dim() != 2 || queries.size(1) != dim() || queries.scalar_type() != at::kFloat)
    throw Error(format("queries must be a float matrix [n, {}], not {}", dim(), queries.sizes()));
  if (k < 1) throw Error(format("k = {} asks for no result; ask for at least 1", k));
  k = std::min({k, state_->options.max_k, size()});
  const at::Tensor q = queries.contiguous();
  std::vector<std::vector<Hit>> out;
  for (const auto& rows : state_->vectors.search_many(q.data_ptr<float>(), q.size(0), k)) {
    std::vector<Hit>& hits = out.emplace_back();
    for (const auto& [score, row] : rows)
      hits.push_back({static_cast<int64_t>(hits.size()) + 1, score, &state_->items[row]});
  }
  return out;
}

std::vector<Hit> Searcher::search_text(std::string_view text, int64_t k) const {
  return search(embed_text(text), k);
}

std::vector<Hit> Searcher::search_like_item(std::string_view id, int64_t k) const {
  const auto it = state_->row_of.find(std::string(id));
  if (it == state_->row_of.end())
    throw Error(format("no part '{}' in the index {}", id, state_->folder.string()));
  return search(state_->embeddings[it->second].contiguous(), k);
}

std::vector<Hit> Searcher::search_like_file(const fs::path& path, int64_t k) const {
  return search(embed_graph(ingest_isolated(path, state_->options.worker_binary)), k);
}

}  // namespace cadclip::index
