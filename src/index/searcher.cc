#include "cadclip/index/searcher.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/part_facts.h"
#include "cadclip/index/query_facts.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/model/size_head.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/text/length_groups.h"
#include "cadclip/text/matmul_precision.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/text_model.h"
#include "layout.h"
#include "selection.h"
#include "store.h"

namespace cadclip::index {

namespace fs = std::filesystem;

struct Searcher::State {
  fs::path folder;
  detail::OpenedVersion version;  // held open: no writer removes it meanwhile
  std::string version_name;       // "versions/<n>", "" for an index made before versions
  SearcherOptions options;
  std::string identity;
  ModelInfo model;
  std::string factory;
  text::MatmulPrecision text_matmul = text::MatmulPrecision::kFloat32;
  // Shared with the searchers of later versions made with the same weights;
  // forward() is not const, and inference changes nothing.
  std::shared_ptr<model::BuiltModel> built;
  detail::VectorIndex vectors;
  std::vector<Item> items;  // in vector row order (by id)
  std::unordered_map<std::string, int64_t> row_of;
  at::Tensor embeddings;   // [N, d] fp32, the catalog's copy of the vectors
  int64_t size_block = 0;  // the vectors' last columns that are the size block (model/size_head.h)
  detail::FilterColumns columns;              // the items' facts, for filters
  mutable detail::SelectionCache selections;  // the rows of recent filters
};

// The part a part query came from: what same_size and ignore_mirrored compare.
struct Searcher::QueryPart {
  std::array<double, 3> sorted_size_mm{};
  int64_t faces = 0;
  data::ShapeSignature shape;
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

// The columns of the index's vectors that are the model's size block
// (model/size_head.h), which a search by part leaves out: the model's, or
// its config's when the index is opened without it.
int64_t size_block_width(const model::BuiltModel* built, const fs::path& checkpoint) {
  if (built) return built->model->search_dim() - built->model->options().embed_dim;
  if (!fs::exists(checkpoint / "config.json")) return 0;
  const model::TwoTowerOptions towers =
      model::read_model_config(checkpoint / "config.json").two_tower;
  return towers.size_bins_per_decade > 0
             ? model::size_block_width(towers.size_bins_per_decade, towers.size_bore)
             : 0;
}

std::string version_name(const fs::path& index, const fs::path& version) {
  if (version == index) return "";
  return version.lexically_relative(index).generic_string();
}

}  // namespace

std::array<double, 3> Item::sorted_size_mm() const {
  std::array<double, 3> s = {size_mm[0], size_mm[1], size_mm[2]};
  std::sort(s.rbegin(), s.rend());
  return s;
}

const std::string* Item::field(std::string_view name) const {
  for (const auto& [key, value] : metadata)
    if (key == name) return &value;
  return nullptr;
}

Searcher Searcher::open(const fs::path& folder, const SearcherOptions& options) {
  Searcher searcher;
  searcher.state_ = open_state(folder, options, nullptr, "");
  return searcher;
}

std::optional<Searcher> Searcher::reopen_if_changed() const {
  const std::string now = detail::current_version_name(state_->folder);
  if (now == state_->version_name) return std::nullopt;
  Searcher searcher;
  searcher.state_ = open_state(state_->folder, state_->options, state_->built, state_->identity);
  if (searcher.state_->version_name == state_->version_name) return std::nullopt;
  return searcher;
}

std::string Searcher::version() const { return state_->version_name; }

std::shared_ptr<const Searcher::State> Searcher::open_state(
    const fs::path& folder, const SearcherOptions& options,
    std::shared_ptr<model::BuiltModel> model, const std::string& model_identity) {
  auto state = std::make_shared<State>();
  state->folder = fs::absolute(folder);
  state->options = options;
  state->text_matmul = text::parse_matmul_precision(options.text_matmul, "text_matmul");
  state->version = detail::open_current_version(state->folder);
  const fs::path& version = state->version.folder;
  state->version_name = version_name(state->folder, version);
  const detail::Catalog catalog = detail::Catalog::open(version, /*create=*/false);
  state->identity = required_meta(catalog, folder, "checkpoint_identity");
  state->factory = required_meta(catalog, folder, "factory");
  const std::string recorded = required_meta(catalog, folder, "checkpoint");
  state->model.sha256 = state->identity;
  state->model.built_from = recorded;
  state->model.name = catalog.meta("model_name").value_or(fs::path(recorded).filename().string());
  // The copy the index carries; an index made before indexes carried their
  // model names the checkpoint by the path it was built from.
  const fs::path carried = detail::model_folder(state->folder, state->identity);
  const fs::path checkpoint = !options.checkpoint.empty() ? fs::path(options.checkpoint)
                              : fs::exists(carried / "model.safetensors") ? carried
                                                                          : fs::path(recorded);
  if (model && model_identity == state->identity) {
    state->built = std::move(model);
    state->model.folder = checkpoint;
  } else if (options.load_model) {
    if (options.checkpoint.empty() && !fs::exists(checkpoint))
      throw Error(
          format("{}: the index carries no copy of its model ({} is missing), and the checkpoint "
                 "it was built with ({}) is gone; pass --checkpoint with the same weights "
                 "(sha256 {}), or rebuild the index with `cadclip index`, which stores the model "
                 "in the index",
                 folder.string(), carried.string(), recorded, state->identity.substr(0, 16)));
    const std::string identity = model::checkpoint_identity(checkpoint);
    if (identity != state->identity)
      throw Error(
          format("{} was built with checkpoint {} (weights {}), and {} holds other weights "
                 "({}); search it with that checkpoint, or rebuild the index with "
                 "`cadclip index {} LIBRARY --out {} --overwrite`",
                 folder.string(), recorded, state->identity.substr(0, 12), checkpoint.string(),
                 identity.substr(0, 12), checkpoint.string(), folder.string()));
    state->built =
        std::make_shared<model::BuiltModel>(model::load_model_from_checkpoint(checkpoint));
    state->model.folder = checkpoint;
  }
  state->size_block = size_block_width(state->built.get(), checkpoint);

  const fs::path vectors_file = version / detail::kVectorsFile;
  if (const std::optional<std::string> expected = catalog.meta("vectors_sha256")) {
    if (sha256_file_hex(vectors_file) != *expected)
      throw Error(
          format("{}: {} is not the file its catalog was written with (sha256 differs); the "
                 "version is damaged: run `cadclip index` again, which writes a new one",
                 folder.string(), vectors_file.string()));
  }
  state->vectors = detail::VectorIndex::read(vectors_file);
  const int64_t parts = catalog.count();
  if (state->vectors.size() != parts)
    throw Error(
        format("{}: the catalog holds {} parts and {} holds {} vectors; the index is out "
               "of step, run `cadclip index` again",
               folder.string(), parts, detail::kVectorsFile, state->vectors.size()));
  state->vectors.set_search_params(options.search_params.empty()
                                       ? catalog.meta("search_params").value_or("")
                                       : options.search_params);
  // Parts one at a time, straight into their rows: a million parts' vectors
  // are held once.
  const int64_t d = state->vectors.dim();
  state->embeddings = at::empty({parts, d}, at::kFloat);
  state->items.reserve(static_cast<size_t>(parts));
  state->row_of.reserve(static_cast<size_t>(parts));
  float* rows = state->embeddings.data_ptr<float>();
  catalog.each([&](detail::StoredItem&& stored) {
    const auto row = static_cast<int64_t>(state->items.size());
    if (static_cast<int64_t>(stored.embedding.size()) != d)
      throw Error(format("{}: part '{}' has an embedding of size {}, the index {}", folder.string(),
                         stored.item.id, stored.embedding.size(), d));
    if (stored.row >= 0 && stored.row != row)
      throw Error(
          format("{}: part '{}' names vector row {} where row {} is due; the index is "
                 "out of step, run `cadclip index` again",
                 folder.string(), stored.item.id, stored.row, row));
    CADCLIP_CHECK(row < parts, "the catalog grew while it was read");
    std::memcpy(rows + row * d, stored.embedding.data(), d * sizeof(float));
    state->row_of.emplace(stored.item.id, row);
    state->items.push_back(std::move(stored.item));
  });
  CADCLIP_CHECK(static_cast<int64_t>(state->items.size()) == parts, "the catalog shrank");
  state->vectors.set_exact_rows(rows);
  state->columns = detail::FilterColumns(state->items);
  return state;
}

int64_t Searcher::size() const { return static_cast<int64_t>(state_->items.size()); }
int64_t Searcher::dim() const { return state_->vectors.dim(); }
const fs::path& Searcher::folder() const { return state_->folder; }
const fs::path& Searcher::version_folder() const { return state_->version.folder; }
std::string Searcher::checkpoint_identity() const { return state_->identity; }
const ModelInfo& Searcher::model() const { return state_->model; }
std::string Searcher::factory() const { return state_->factory; }
std::string_view Searcher::text_matmul() const {
  return text::matmul_precision_name(state_->text_matmul);
}

const Item* Searcher::find(std::string_view id) const {
  const auto it = state_->row_of.find(std::string(id));
  return it == state_->row_of.end() ? nullptr : &state_->items[it->second];
}

at::Tensor Searcher::embed_text(std::string_view text) const {
  return embed_texts({std::string(text)})[0].contiguous();
}

namespace {

void need_model(const std::shared_ptr<model::BuiltModel>& built, const fs::path& folder) {
  if (!built)
    throw Error(
        format("{} was opened without its model (load_model = false), so it cannot "
               "embed a text or a part",
               folder.string()));
}

}  // namespace

at::Tensor Searcher::embed_texts(const std::vector<std::string>& texts) const {
  need_model(state_->built, state_->folder);
  if (texts.empty()) return at::empty({0, dim()}, at::kFloat);
  // The encoder's cost grows with padded tokens, and queries range from 5 to
  // 100 tokens: texts of similar length run together, each group padded only
  // to its own longest. group_by_size weighs padding against one more pass
  // (its overhead here: about one typical query's worth, 32^2 slots).
  const text::LengthGrouping grouping{.max_rows = static_cast<int64_t>(texts.size()),
                                      .group_overhead = 1024};
  const text::TextMatmulScope precision(state_->text_matmul);
  return model::embed_texts(*state_->built, texts, grouping);
}

at::Tensor Searcher::embed_graph(const data::BRepGraph& graph) const {
  need_model(state_->built, state_->folder);
  c10::InferenceMode inference;
  const std::vector<data::BRepGraph> graphs = {graph};
  return part_query(state_->built->model->embed_parts(graphs)[0]);
}

at::Tensor Searcher::part_query(const at::Tensor& row) const {
  if (state_->size_block == 0) return row.contiguous();
  at::Tensor out = row.clone();
  out.narrow(0, dim() - state_->size_block, state_->size_block).zero_();
  return out;
}

std::vector<Hit> Searcher::search(const at::Tensor& query, int64_t k) const {
  if (query.dim() != 1 || query.size(0) != dim() || query.scalar_type() != at::kFloat)
    throw Error(format("a query must be a float vector of size {}, not {}", dim(), query.sizes()));
  if (k < 1) throw Error(format("k = {} asks for no result; ask for at least 1", k));
  k = std::min({k, state_->options.max_k, size()});
  const at::Tensor q = query.contiguous();
  std::vector<Hit> hits;
  for (const auto& [score, row] : state_->vectors.search(q.data_ptr<float>(), k)) {
    hits.push_back({static_cast<int64_t>(hits.size()) + 1, score, &state_->items[row], {}});
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
      hits.push_back({static_cast<int64_t>(hits.size()) + 1, score, &state_->items[row], {}});
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
  return search(part_query(state_->embeddings[it->second]), k);
}

std::vector<Hit> Searcher::search_like_file(const fs::path& path, int64_t k) const {
  return search(
      embed_graph(ingest_isolated(path, state_->options.worker_binary, state_->options.limits)), k);
}

const std::vector<std::string>& Searcher::fields() const { return state_->columns.fields(); }
const std::vector<Item>& Searcher::items() const { return state_->items; }
const at::Tensor& Searcher::embeddings() const { return state_->embeddings; }

std::vector<int64_t> Searcher::rows_passing(const Filter& filter) const {
  std::vector<int64_t> rows;
  if (filter.conditions.empty()) {
    rows.resize(static_cast<size_t>(size()));
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }
  const detail::RowSet set = state_->columns.select(filter.conditions);
  rows.reserve(static_cast<size_t>(set.count));
  set.for_each([&](int64_t r) { rows.push_back(r); });
  return rows;
}

namespace {

bool mirrored(const Item& item, const std::array<double, 3>& size, int64_t faces,
              const data::ShapeSignature& shape) {
  if (item.faces != faces) return false;
  const std::array<double, 3> own = item.sorted_size_mm();
  for (int i = 0; i < 3; ++i)
    if (std::abs(own[i] - size[i]) > 0.01 + 0.005 * std::max(own[i], size[i])) return false;
  return data::mirror_images(item.shape, shape);
}

std::string percent_text(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", share * 100);
  return text;
}

}  // namespace

SearchResult Searcher::run(const at::Tensor& query, const SearchOptions& o, Filter applied,
                           const QueryPart* part) const {
  if (query.dim() != 1 || query.size(0) != dim() || query.scalar_type() != at::kFloat)
    throw Error(format("a query must be a float vector of size {}, not {}", dim(), query.sizes()));
  if (o.k < 1) throw Error(format("k = {} asks for no result; ask for at least 1", o.k));
  if (!(o.same_size >= 0 && o.same_size < 1))
    throw Error(format("same size ± {}% is out of range; give a share from 0 to 100%",
                       percent_text(o.same_size)));
  if (!part && (o.same_size > 0 || o.ignore_mirrored))
    throw Error(
        "'same size' and 'ignore mirrored' compare with a query part: search by a part "
        "(a file or an indexed part's id), not by text");
  if (part && o.same_size > 0) {
    Condition c;
    c.key = FilterKey::kDims;
    for (const double v : part->sorted_size_mm)
      c.ranges.push_back({v * (1 - o.same_size), v * (1 + o.same_size), false, false});
    c.origin = FilterOrigin::kSameSize;
    c.because = format("same size as the query part ±{}%", percent_text(o.same_size));
    applied.conditions.push_back(std::move(c));
  }
  const int64_t k = std::min({o.k, state_->options.max_k, size()});
  const at::Tensor q = query.contiguous();
  SearchResult result;
  std::vector<std::pair<float, int64_t>> found;
  if (applied.conditions.empty() && !(part && o.ignore_mirrored)) {
    result.candidates = size();
    found = state_->vectors.search(q.data_ptr<float>(), k);
  } else {
    std::shared_ptr<const detail::RowSet> rows =
        state_->selections.select(state_->columns, applied.conditions);
    if (part && o.ignore_mirrored) {
      auto kept = std::make_shared<detail::RowSet>(*rows);
      rows->for_each([&](int64_t r) {
        if (mirrored(state_->items[r], part->sorted_size_mm, part->faces, part->shape)) {
          kept->remove(r);
          ++result.mirrored_left_out;
        }
      });
      rows = std::move(kept);
    }
    result.candidates = rows->count;
    found = std::move(search_rows(q.unsqueeze(0), rows.get(), k).front());
  }
  for (const auto& [score, row] : found) {
    // Hits come best first, so the first one below the minimum ends them:
    // what is left is the exact top k of the parts that score enough.
    if (applied.min_score && score < *applied.min_score) break;
    result.hits.push_back(
        {static_cast<int64_t>(result.hits.size()) + 1, score, &state_->items[row], {}});
  }
  result.applied = std::move(applied);
  return result;
}

SearchResult Searcher::query_text(std::string_view text, const SearchOptions& options) const {
  return query_texts({std::string(text)}, {options}).front();
}

namespace {

// queries: [n, d]; embeddings: [N, d] -> for each query the k best of `rows`,
// best first (equal scores: the lower row first). The rows are read in
// place: gathering them into one matrix for a product cost more than the
// product saves at these sizes.
std::vector<std::vector<std::pair<float, int64_t>>> score_rows(const at::Tensor& queries,
                                                               const at::Tensor& embeddings,
                                                               const std::vector<int64_t>& rows,
                                                               int64_t k) {
  const int64_t n = queries.size(0), d = queries.size(1);
  std::vector<std::vector<std::pair<float, int64_t>>> out(static_cast<size_t>(n));
  k = std::min<int64_t>(k, static_cast<int64_t>(rows.size()));
  if (k <= 0) return out;
  const float* q = queries.data_ptr<float>();
  const float* e = embeddings.data_ptr<float>();
  auto better = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  for (int64_t j = 0; j < n; ++j) {
    std::vector<std::pair<float, int64_t>>& scored = out[j];
    scored.reserve(rows.size());
    for (const int64_t r : rows) scored.emplace_back(detail::dot(q + j * d, e + r * d, d), r);
    std::partial_sort(scored.begin(), scored.begin() + k, scored.end(), better);
    scored.resize(static_cast<size_t>(k));
  }
  return out;
}

// Texts that share their conditions and stated facts: one search.
struct QueryGroup {
  std::vector<size_t> members;    // positions in the batch
  std::vector<Condition> stated;  // the facts that rank (soft)
};

}  // namespace

std::vector<std::vector<std::pair<float, int64_t>>> Searcher::search_rows(
    const at::Tensor& queries, const detail::RowSet* rows, int64_t k) const {
  const int64_t n = queries.size(0);
  const float* q = queries.data_ptr<float>();
  if (!rows) return state_->vectors.search_many(q, n, k);
  // Few passing rows: their stored vectors scored directly, one pass for
  // the texts that share the filter (SearcherOptions::direct_rows).
  if (rows->count <= state_->options.direct_rows) {
    std::vector<int64_t> passing;
    passing.reserve(static_cast<size_t>(rows->count));
    rows->for_each([&](int64_t r) { passing.push_back(r); });
    return score_rows(queries, state_->embeddings, passing, k);
  }
  return state_->vectors.search_many(q, n, k, rows);
}

std::vector<std::vector<std::pair<float, int64_t>>> Searcher::search_tiers(
    const at::Tensor& queries, const std::vector<int8_t>& met, const std::vector<int64_t>& in_tier,
    int64_t k) const {
  const int facts = static_cast<int>(in_tier.size()) - 1;
  // The tiers that fill k, from the top; the ones below are never searched.
  int lowest = facts;
  for (int64_t taken = in_tier[facts]; taken < k && lowest > 0;) taken += in_tier[--lowest];
  // Each tier's rows: a list when few enough to score directly, else a bit
  // set for the vector index, eight rows a byte.
  std::vector<std::vector<int64_t>> rows_of(in_tier.size());
  std::vector<std::optional<detail::RowSet>> set_of(in_tier.size());
  for (int t = lowest; t <= facts; ++t) {
    if (in_tier[t] == 0) continue;
    if (in_tier[t] <= state_->options.direct_rows) {
      rows_of[t].reserve(static_cast<size_t>(in_tier[t]));
      for (int64_t r = 0; r < size(); ++r)
        if (met[r] == t) rows_of[t].push_back(r);  // rarely true: guessed right
      continue;
    }
    detail::RowSet& set = set_of[t].emplace(size());
    for (size_t byte = 0; byte < set.bits.size(); ++byte) {
      const int64_t first = static_cast<int64_t>(byte) * 8;
      unsigned in = 0;
      for (int bit = 0; bit < 8 && first + bit < size(); ++bit)
        in |= static_cast<unsigned>(met[first + bit] == t) << bit;
      set.bits[byte] = static_cast<uint8_t>(in);
    }
    set.count = in_tier[t];
  }

  const int64_t n = queries.size(0);
  std::vector<std::vector<std::pair<float, int64_t>>> found(static_cast<size_t>(n));
  int64_t taken = 0;
  for (int t = facts; t >= lowest && taken < k; --t) {
    if (in_tier[t] == 0) continue;
    const int64_t wanted = k - taken;
    const std::vector<std::vector<std::pair<float, int64_t>>> tier_found =
        set_of[t] ? state_->vectors.search_many(queries.data_ptr<float>(), n, wanted, &*set_of[t])
                  : score_rows(queries, state_->embeddings, rows_of[t], wanted);
    for (int64_t j = 0; j < n; ++j)
      found[j].insert(found[j].end(), tier_found[j].begin(), tier_found[j].end());
    taken += std::min(in_tier[t], wanted);
  }
  return found;
}

std::vector<SearchResult> Searcher::query_texts(const std::vector<std::string>& texts,
                                                const std::vector<SearchOptions>& options) const {
  CADCLIP_CHECK(texts.size() == options.size(), "query_texts: one options per text");
  std::vector<SearchResult> out(texts.size());
  if (texts.empty()) return out;
  const at::Tensor embedded = embed_texts(texts);
  // Texts whose conditions and stated facts are the same rank the same rows
  // the same way: each such group is one search (one FAISS call, or one
  // product over the passing rows, per tier of facts met), whatever the
  // number of texts in it.
  std::map<std::string, QueryGroup> groups;
  std::vector<Filter> applied(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const SearchOptions& o = options[i];
    if (o.k < 1) throw Error(format("k = {} asks for no result; ask for at least 1", o.k));
    applied[i] = o.filter;
    std::vector<Condition> stated;
    if (o.strict_numbers || o.rank_by_facts) stated = conditions_stated_in(texts[i]);
    if (o.strict_numbers) {
      for (Condition& c : stated) applied[i].conditions.push_back(std::move(c));
      stated.clear();
    }
    if (o.same_size != 0 || o.ignore_mirrored) {
      // Part controls on a text: run() refuses them with its message.
      out[i] = run(embedded[static_cast<int64_t>(i)], o, std::move(applied[i]), nullptr);
      continue;
    }
    QueryGroup& group =
        groups[detail::conditions_key(applied[i].conditions) + detail::conditions_key(stated)];
    group.members.push_back(i);
    group.stated = std::move(stated);
  }
  for (const auto& [key, group] : groups) {
    const std::vector<size_t>& members = group.members;
    const Filter& conditions = applied[members.front()];
    int64_t k = 1;
    for (const size_t i : members) k = std::max(k, options[i].k);
    k = std::min({k, state_->options.max_k, size()});
    const at::Tensor queries =
        embedded
            .index_select(
                0, at::tensor(std::vector<int64_t>(members.begin(), members.end()), at::kLong))
            .contiguous();
    std::shared_ptr<const detail::RowSet> passing;
    if (!conditions.conditions.empty())
      passing = state_->selections.select(state_->columns, conditions.conditions);
    const int64_t candidates = passing ? passing->count : size();
    // Found rows per text, best first: with stated facts, the rows that meet
    // all of them, then those that meet one fewer, and so on.
    std::vector<std::vector<std::pair<float, int64_t>>> found;
    int64_t meeting_all = -1;
    if (group.stated.empty()) {
      found = search_rows(queries, passing.get(), k);
    } else {
      const std::vector<int8_t> met = state_->columns.facts_met(group.stated, passing.get());
      // Rows per tier, in one pass; rows outside a filter (-1) are counted
      // apart, so that the pass never branches on a row's tier.
      std::vector<int64_t> counts(group.stated.size() + 2, 0);
      for (const int8_t m : met) ++counts[m + 1];
      const std::vector<int64_t> in_tier(counts.begin() + 1, counts.end());
      meeting_all = in_tier.back();
      found = search_tiers(queries, met, in_tier, k);
    }
    for (size_t j = 0; j < members.size(); ++j) {
      const size_t i = members[j];
      SearchResult& result = out[i];
      result.candidates = candidates;
      result.meeting_all = meeting_all;
      for (const auto& [score, row] : found[j]) {
        if (static_cast<int64_t>(result.hits.size()) >= options[i].k) break;
        // Below the minimum score: left out. Without facts the hits come best
        // first, so the first one ends them.
        if (applied[i].min_score && score < *applied[i].min_score) {
          if (group.stated.empty()) break;
          continue;
        }
        Hit hit{static_cast<int64_t>(result.hits.size()) + 1, score, &state_->items[row], {}};
        for (const Condition& c : group.stated) hit.meets.push_back(state_->columns.meets(row, c));
        result.hits.push_back(std::move(hit));
      }
      result.applied = std::move(applied[i]);
      result.stated = group.stated;
    }
  }
  return out;
}

SearchResult Searcher::query_item(std::string_view id, const SearchOptions& options) const {
  const auto it = state_->row_of.find(std::string(id));
  if (it == state_->row_of.end())
    throw Error(format("no part '{}' in the index {}", id, state_->folder.string()));
  const Item& item = state_->items[it->second];
  QueryPart part{item.sorted_size_mm(), item.faces, item.shape};
  return run(part_query(state_->embeddings[it->second]), options, options.filter, &part);
}

SearchResult Searcher::query_graph(const data::BRepGraph& graph,
                                   const SearchOptions& options) const {
  QueryPart part;
  for (int i = 0; i < 3; ++i) part.sorted_size_mm[i] = graph.bbox_mm[3 + i] - graph.bbox_mm[i];
  std::sort(part.sorted_size_mm.rbegin(), part.sorted_size_mm.rend());
  part.faces = graph.num_faces();
  part.shape = data::part_facts(graph).shape;
  return run(embed_graph(graph), options, options.filter, &part);
}

SearchResult Searcher::query_vector(const at::Tensor& query, const SearchOptions& options) const {
  return run(query, options, options.filter, nullptr);
}

SearchResult Searcher::query_file(const fs::path& path, const SearchOptions& options) const {
  return query_graph(ingest_isolated(path, state_->options.worker_binary, state_->options.limits),
                     options);
}

}  // namespace cadclip::index
