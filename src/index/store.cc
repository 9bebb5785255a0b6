#include "store.h"

#include <dlfcn.h>
#include <faiss/AutoTune.h>
#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/distances.h>
#include <fcntl.h>
#include <omp.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"

namespace cadclip::index::detail {

namespace fs = std::filesystem;

// ---- catalog ---------------------------------------------------------------

struct Catalog::Db {
  sqlite3* handle = nullptr;
  fs::path path;
  ~Db() {
    if (handle) sqlite3_close(handle);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(format("catalog {}: {}: {}", path.string(), what,
                       handle ? sqlite3_errmsg(handle) : "cannot open"));
  }
  void exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(handle, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      const std::string text = message ? message : "unknown error";
      sqlite3_free(message);
      throw Error(format("catalog {}: '{}' failed: {}", path.string(), sql, text));
    }
  }
};

namespace {

// A prepared statement, finalized on every exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const fs::path& path) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw Error(
          format("catalog {}: cannot prepare '{}': {}", path.string(), sql, sqlite3_errmsg(db)));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void text(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void real(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void integer(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void blob(int i, std::span<const float> v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size_bytes()), SQLITE_TRANSIENT);
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(format("catalog: statement failed: {}", sqlite3_errmsg(db_)));
  }
  std::string column_text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    return p ? std::string(p, sqlite3_column_bytes(stmt_, i)) : std::string();
  }
  double column_real(int i) const { return sqlite3_column_double(stmt_, i); }
  bool column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  std::vector<float> column_floats(int i) const {
    const int bytes = sqlite3_column_bytes(stmt_, i);
    std::vector<float> out(bytes / sizeof(float));
    if (bytes > 0) std::memcpy(out.data(), sqlite3_column_blob(stmt_, i), out.size() * 4);
    return out;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

// Columns added after the first catalog version, with their SQL types: a
// copied older catalog gets them (empty) when opened for writing, and a
// reader of an older one reads them as empty.
constexpr std::pair<const char*, const char*> kLaterColumns[] = {
    {"file_type", "TEXT"},      {"geometry_hash", "TEXT"}, {"holes", "INTEGER"},
    {"hole_diameters", "TEXT"}, {"shape", "TEXT"},         {"metadata", "TEXT"},
    {"shafts", "TEXT"},         {"repeats", "TEXT"},       {"vector_row", "INTEGER"}};

namespace {

std::vector<std::string> item_columns(sqlite3* db, const fs::path& path) {
  Statement s(db, "PRAGMA table_info(items)", path);
  std::vector<std::string> names;
  while (s.step()) names.push_back(s.column_text(1));
  return names;
}

nlohmann::json parse_json_column(const std::string& text, const std::string& id, const char* column,
                                 const fs::path& path) {
  if (text.empty()) return nullptr;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw Error(format("catalog {}: part '{}' has a damaged {} ({}); run `cadclip index` again",
                       path.string(), id, column, text.substr(0, 40)));
  return j;
}

}  // namespace

Catalog Catalog::open(const fs::path& folder, bool create) {
  Catalog catalog;
  catalog.db_ = std::make_unique<Db>();
  Db& db = *catalog.db_;
  db.path = folder / kCatalogFile;
  if (!create && !fs::exists(db.path))
    throw Error(format("{} is no cadclip index: it has no {}; make one with `cadclip index`",
                       folder.string(), kCatalogFile));
  const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(db.path.c_str(), &db.handle, flags, nullptr) != SQLITE_OK)
    db.fail("cannot open");
  sqlite3_busy_timeout(db.handle, 5000);
  if (create) {
    db.exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    db.exec(
        "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY, name TEXT, source TEXT, "
        "content_hash TEXT, size_x REAL, size_y REAL, size_z REAL, faces INTEGER, "
        "thumbnail TEXT, caption TEXT, embedding BLOB NOT NULL)");
    const std::vector<std::string> have = item_columns(db.handle, db.path);
    for (const auto& [name, type] : kLaterColumns) {
      if (std::find(have.begin(), have.end(), name) == have.end())
        db.exec(format("ALTER TABLE items ADD COLUMN {} {}", name, type).c_str());
    }
    db.exec("CREATE INDEX IF NOT EXISTS items_by_row ON items(vector_row)");
  }
  return catalog;
}

Catalog::Catalog(Catalog&&) noexcept = default;
Catalog& Catalog::operator=(Catalog&&) noexcept = default;
Catalog::~Catalog() = default;

std::optional<std::string> Catalog::meta(const std::string& key) const {
  Statement s(db_->handle, "SELECT value FROM meta WHERE key = ?", db_->path);
  s.text(1, key);
  if (!s.step()) return std::nullopt;
  return s.column_text(0);
}

void Catalog::set_meta(const std::string& key, const std::string& value) {
  Statement s(db_->handle, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", db_->path);
  s.text(1, key);
  s.text(2, value);
  s.step();
}

int64_t Catalog::count() const {
  Statement s(db_->handle, "SELECT COUNT(*) FROM items", db_->path);
  s.step();
  return s.column_int(0);
}

namespace {

// One catalog row into `row` (columns as Catalog::each selects them).
void read_item(const Statement& s, StoredItem& row, const fs::path& path) {
  Item& item = row.item;
  item.id = s.column_text(0);
  item.name = s.column_text(1);
  item.source = s.column_text(2);
  item.content_hash = s.column_text(3);
  for (int i = 0; i < 3; ++i) item.size_mm[i] = s.column_real(4 + i);
  item.faces = s.column_int(7);
  item.thumbnail = s.column_text(8);
  item.caption = s.column_text(9);
  row.embedding = s.column_floats(10);
  item.file_type = s.column_text(11);
  item.geometry_hash = s.column_text(12);
  item.holes = s.column_is_null(13) ? -1 : s.column_int(13);
  const nlohmann::json holes =
      parse_json_column(s.column_text(14), item.id, "hole_diameters", path);
  if (holes.is_array())
    for (const auto& d : holes) item.hole_diameters_mm.push_back(d.get<double>());
  const nlohmann::json shape = parse_json_column(s.column_text(15), item.id, "shape", path);
  if (shape.is_array() && shape.size() == 7) {
    for (int i = 0; i < 3; ++i) {
      item.shape.spread_mm[i] = shape[i].get<double>();
      item.shape.skew[i] = shape[3 + i].get<double>();
    }
    item.shape.handedness = shape[6].get<int>();
  }
  const nlohmann::json metadata = parse_json_column(s.column_text(16), item.id, "metadata", path);
  if (metadata.is_array())
    for (const auto& pair : metadata)
      item.metadata.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  const nlohmann::json shafts = parse_json_column(s.column_text(17), item.id, "shafts", path);
  if (shafts.is_array()) {
    for (const auto& shaft : shafts) {
      item.shafts.push_back({shaft.at(0).get<double>(), shaft.at(1).get<double>(),
                             shaft.at(2).get<double>(), shaft.at(3).get<int>()});
    }
  }
  const nlohmann::json repeats = parse_json_column(s.column_text(18), item.id, "repeats", path);
  if (repeats.is_array())
    for (const auto& n : repeats) item.repeats.push_back(n.get<int64_t>());
  row.row = s.column_is_null(19) ? -1 : s.column_int(19);
}

}  // namespace

void Catalog::each(const std::function<void(StoredItem&&)>& take, bool embeddings,
                   int64_t from_row) const {
  const std::vector<std::string> have = item_columns(db_->handle, db_->path);
  auto has = [&](const char* name) {
    return std::find(have.begin(), have.end(), name) != have.end();
  };
  std::string later;
  for (const auto& [name, type] : kLaterColumns)
    later += has(name) ? format(", {}", name) : ", NULL";
  const bool rows = has("vector_row");
  const std::string sql = format(
      "SELECT id, name, source, content_hash, size_x, size_y, size_z, faces, thumbnail, "
      "caption, {}{} FROM items {} ORDER BY {}id",
      embeddings ? "embedding" : "NULL", later,
      rows && from_row > 0 ? format("WHERE vector_row >= {}", from_row) : "",
      rows ? "vector_row, " : "");
  Statement s(db_->handle, sql.c_str(), db_->path);
  while (s.step()) {
    StoredItem row;
    read_item(s, row, db_->path);
    take(std::move(row));
  }
}

std::vector<StoredItem> Catalog::items(bool embeddings) const {
  std::vector<StoredItem> out;
  each([&](StoredItem&& s) { out.push_back(std::move(s)); }, embeddings);
  return out;
}

std::vector<float> Catalog::embedding(const std::string& id) const {
  Statement s(db_->handle, "SELECT embedding FROM items WHERE id = ?", db_->path);
  s.text(1, id);
  return s.step() ? s.column_floats(0) : std::vector<float>{};
}

std::vector<int64_t> Catalog::placed_rows() const {
  Statement s(db_->handle,
              "SELECT vector_row FROM items WHERE vector_row IS NOT NULL ORDER BY vector_row",
              db_->path);
  std::vector<int64_t> rows;
  while (s.step()) rows.push_back(s.column_int(0));
  return rows;
}

int64_t Catalog::number_rows(bool afresh) {
  if (afresh) db_->exec("UPDATE items SET vector_row = NULL");
  db_->exec(
      "UPDATE items SET vector_row = r.n FROM (SELECT id, ROW_NUMBER() OVER "
      "(ORDER BY vector_row) - 1 AS n FROM items WHERE vector_row IS NOT NULL) AS r "
      "WHERE items.id = r.id");
  Statement placed(db_->handle, "SELECT COUNT(*) FROM items WHERE vector_row IS NOT NULL",
                   db_->path);
  placed.step();
  const int64_t before = placed.column_int(0);
  Statement fresh(db_->handle,
                  "UPDATE items SET vector_row = r.n + ? FROM (SELECT id, ROW_NUMBER() OVER "
                  "(ORDER BY id) - 1 AS n FROM items WHERE vector_row IS NULL) AS r "
                  "WHERE items.id = r.id",
                  db_->path);
  fresh.integer(1, before);
  fresh.step();
  return before;
}

void Catalog::put(const Item& item, std::span<const float> embedding, int64_t row) {
  Statement s(db_->handle,
              "INSERT OR REPLACE INTO items(id, name, source, content_hash, size_x, size_y, "
              "size_z, faces, thumbnail, caption, embedding, file_type, geometry_hash, holes, "
              "hole_diameters, shape, metadata, shafts, repeats, vector_row) "
              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
              db_->path);
  s.text(1, item.id);
  s.text(2, item.name);
  s.text(3, item.source);
  s.text(4, item.content_hash);
  for (int i = 0; i < 3; ++i) s.real(5 + i, item.size_mm[i]);
  s.integer(8, item.faces);
  s.text(9, item.thumbnail);
  s.text(10, item.caption);
  s.blob(11, embedding);
  s.text(12, item.file_type);
  s.text(13, item.geometry_hash);
  if (item.holes >= 0) s.integer(14, item.holes);
  s.text(15, item.holes >= 0 ? nlohmann::json(item.hole_diameters_mm).dump() : "");
  const data::ShapeSignature& g = item.shape;
  s.text(16, nlohmann::json::array({g.spread_mm[0], g.spread_mm[1], g.spread_mm[2], g.skew[0],
                                    g.skew[1], g.skew[2], g.handedness})
                 .dump());
  nlohmann::json metadata = nlohmann::json::array();
  for (const auto& [key, value] : item.metadata) metadata.push_back({key, value});
  s.text(17, metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  nlohmann::json shafts = nlohmann::json::array();  // [diameter, from, to, axis] each
  for (const data::Shaft& shaft : item.shafts)
    shafts.push_back({shaft.diameter_mm, shaft.from_mm, shaft.to_mm, shaft.axis});
  s.text(18, shafts.dump());
  s.text(19, nlohmann::json(item.repeats).dump());
  if (row >= 0) s.integer(20, row);
  s.step();
}

void Catalog::remove(const std::string& id) {
  Statement s(db_->handle, "DELETE FROM items WHERE id = ?", db_->path);
  s.text(1, id);
  s.step();
}

void Catalog::clear() {
  db_->exec("DELETE FROM items");
  db_->exec("DELETE FROM meta");
}
void Catalog::begin() { db_->exec("BEGIN IMMEDIATE"); }
void Catalog::commit() { db_->exec("COMMIT"); }

// ---- vectors ---------------------------------------------------------------

struct VectorIndex::Impl {
  std::unique_ptr<faiss::Index> index;
  const float* exact = nullptr;  // [ntotal, d], the caller's: set_exact_rows
  int64_t rerank = 0;            // candidates to order by their exact scores; 0 = none
};

VectorIndex::VectorIndex() = default;
VectorIndex::VectorIndex(VectorIndex&&) noexcept = default;
VectorIndex& VectorIndex::operator=(VectorIndex&&) noexcept = default;
VectorIndex::~VectorIndex() = default;

namespace {

// k-means over this many rows per list trains an inverted file as well as
// over all of them (FAISS itself warns below 39 and samples above 256), and a
// million rows would cost minutes instead of seconds.
constexpr int64_t kTrainingRowsPerList = 64;

// The rows an index trains on: all of x, or an even spread of them.
std::vector<float> training_sample(const faiss::Index& index, const float* x, int64_t n,
                                   int64_t d) {
  int64_t wanted = n;
  if (const auto* ivf = dynamic_cast<const faiss::IndexIVF*>(&index))
    wanted = std::min<int64_t>(n, kTrainingRowsPerList * static_cast<int64_t>(ivf->nlist));
  std::vector<float> sample(static_cast<size_t>(wanted * d));
  for (int64_t i = 0; i < wanted; ++i)
    std::memcpy(&sample[i * d], x + (i * n / wanted) * d, d * sizeof(float));
  return sample;
}

}  // namespace

VectorIndex VectorIndex::build(const float* x, int64_t n, int64_t d, const std::string& factory) {
  VectorIndex out;
  out.impl_ = std::make_unique<Impl>();
  try {
    out.impl_->index.reset(
        faiss::index_factory(static_cast<int>(d), factory.c_str(), faiss::METRIC_INNER_PRODUCT));
    if (!out.impl_->index->is_trained) {
      if (n == 0)
        throw Error(
            format("FAISS index '{}' needs training vectors and the library is empty", factory));
      const std::vector<float> sample = training_sample(*out.impl_->index, x, n, d);
      out.impl_->index->train(static_cast<int64_t>(sample.size()) / d, sample.data());
    }
    if (n > 0) out.impl_->index->add(n, x);
  } catch (const faiss::FaissException& e) {
    throw Error(
        format("FAISS index '{}' over {} vectors of size {} failed: {}; check the "
               "factory string (e.g. Flat, HNSW32,Flat)",
               factory, n, d, e.what()));
  }
  return out;
}

VectorIndex VectorIndex::read(const fs::path& path) {
  VectorIndex out;
  out.impl_ = std::make_unique<Impl>();
  try {
    out.impl_->index.reset(faiss::read_index(path.c_str()));
  } catch (const faiss::FaissException& e) {
    throw Error(format("{}: cannot read the FAISS index: {}; rebuild it with `cadclip index`",
                       path.string(), e.what()));
  }
  return out;
}

void VectorIndex::write(const fs::path& path) const {
  const fs::path temp = path.string() + format(".tmp{}", ::getpid());
  try {
    faiss::write_index(impl_->index.get(), temp.c_str());
  } catch (const faiss::FaissException& e) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw Error(format("{}: cannot write the FAISS index: {}", path.string(), e.what()));
  }
  // On disk before the catalog that names it commits.
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  fs::rename(temp, path);
}

void VectorIndex::set_search_params(const std::string& params) {
  // "rerank=N" is ours; the rest goes to FAISS as it is.
  std::string faiss_params;
  for (size_t at = 0; at < params.size();) {
    const size_t comma = std::min(params.find(',', at), params.size());
    const std::string setting = params.substr(at, comma - at);
    at = comma + 1;
    if (setting.starts_with("rerank=")) {
      const std::string value = setting.substr(7);
      char* end = nullptr;
      const long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0)
        throw Error(
            format("search parameter '{}' needs a whole number of candidates, e.g. "
                   "rerank=64 (0 = off)",
                   setting));
      impl_->rerank = n;
    } else if (!setting.empty()) {
      faiss_params += (faiss_params.empty() ? "" : ",") + setting;
    }
  }
  if (faiss_params.empty()) return;
  try {
    faiss::ParameterSpace().set_index_parameters(impl_->index.get(), faiss_params.c_str());
  } catch (const faiss::FaissException& e) {
    throw Error(
        format("FAISS search parameters '{}' do not fit this index: {}", faiss_params, e.what()));
  }
}

void VectorIndex::set_exact_rows(const float* rows) { impl_->exact = rows; }

int64_t VectorIndex::size() const { return impl_->index->ntotal; }
int64_t VectorIndex::dim() const { return impl_->index->d; }

void VectorIndex::keep_rows(const std::vector<int64_t>& rows) {
  auto* ivf = dynamic_cast<faiss::IndexIVF*>(impl_->index.get());
  if (ivf == nullptr || ivf->direct_map.type != faiss::DirectMap::NoMap)
    throw Error("only an inverted file without a direct map can drop rows; build the index anew");
  std::vector<int64_t> renumbered(static_cast<size_t>(size()), -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    CADCLIP_CHECK(rows[i] >= 0 && rows[i] < size() && (i == 0 || rows[i] > rows[i - 1]),
                  "keep_rows: rows must ascend inside the index");
    renumbered[rows[i]] = static_cast<int64_t>(i);
  }
  faiss::InvertedLists& lists = *ivf->invlists;
  const size_t code_size = lists.code_size;
  for (size_t list = 0; list < ivf->nlist; ++list) {
    const size_t n = lists.list_size(list);
    if (n == 0) continue;
    std::vector<faiss::Index::idx_t> ids;
    std::vector<uint8_t> codes;
    {
      faiss::InvertedLists::ScopedIds old_ids(&lists, list);
      faiss::InvertedLists::ScopedCodes old_codes(&lists, list);
      for (size_t j = 0; j < n; ++j) {
        const faiss::Index::idx_t id = old_ids[j];
        if (id < 0 || id >= size())
          throw Error(
              format("the FAISS index holds row {} of {}: it is out of step with its "
                     "catalog; build the index anew",
                     id, size()));
        if (renumbered[id] < 0) continue;
        ids.push_back(renumbered[id]);
        codes.insert(codes.end(), old_codes.get() + j * code_size,
                     old_codes.get() + (j + 1) * code_size);
      }
    }
    lists.resize(list, 0);
    if (!ids.empty()) lists.add_entries(list, ids.size(), ids.data(), codes.data());
  }
  ivf->ntotal = static_cast<faiss::Index::idx_t>(rows.size());
}

void VectorIndex::append(const float* x, int64_t n) {
  if (n <= 0) return;
  faiss::Index& index = *impl_->index;
  try {
    if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(&index)) {
      // An inverted file stores each vector's label: the row it lands on.
      std::vector<faiss::Index::idx_t> ids(static_cast<size_t>(n));
      std::iota(ids.begin(), ids.end(), ivf->ntotal);
      ivf->add_with_ids(n, x, ids.data());
    } else {
      index.add(n, x);  // rows follow the ones there
    }
  } catch (const faiss::FaissException& e) {
    throw Error(format("adding {} vectors to the FAISS index failed: {}", n, e.what()));
  }
}

namespace {

// Batched searches of an exact index go through BLAS (one pass over the
// vectors for all queries) from 2 queries on, not FAISS's default 20: below
// that FAISS scans the whole matrix once per query, and a 100,000-part
// library is 100 MB. BLAS (Debian's OpenBLAS) gets one thread: the server
// runs several searches side by side, and OpenBLAS's own threads would spin
// on the cores the text encoder needs.
void configure_batched_search() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Every search through BLAS, one query too: an inverted file's coarse
    // step scores a query against every list's centroid, which FAISS's
    // plain loop did in 0.35 ms more at 2,048 lists (docs/PERFORMANCE.md).
    faiss::distance_compute_blas_threshold = 1;
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set(1);
  });
}

// Whether an index keeps its vectors as they are (scores are exact for what it finds).
bool stores_exact_vectors(const faiss::Index* index) {
  if (const auto* hnsw = dynamic_cast<const faiss::IndexHNSW*>(index)) index = hnsw->storage;
  return dynamic_cast<const faiss::IndexFlat*>(index) != nullptr ||
         dynamic_cast<const faiss::IndexIVFFlat*>(index) != nullptr;
}

}  // namespace

float dot(const float* a, const float* b, int64_t d) {
  // Eight running sums, so that the compiler may use vector lanes without
  // reordering any one sum.
  float lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8)
    for (int l = 0; l < 8; ++l) lane[l] += a[i + l] * b[i + l];
  float total = 0;
  for (; i < d; ++i) total += a[i] * b[i];
  for (const float v : lane) total += v;
  return total;
}

std::vector<std::pair<float, int64_t>> VectorIndex::search(const float* q, int64_t k,
                                                           const RowSet* rows) const {
  return std::move(search_many(q, 1, k, rows).front());
}

std::vector<std::vector<std::pair<float, int64_t>>> VectorIndex::search_many(
    const float* q, int64_t n, int64_t k, const RowSet* rows) const {
  k = std::min<int64_t>(k, size());
  if (rows) k = std::min<int64_t>(k, rows->count);
  std::vector<std::vector<std::pair<float, int64_t>>> out(
      static_cast<size_t>(std::max<int64_t>(n, 0)));
  if (k <= 0 || n <= 0) return out;
  configure_batched_search();
  // The caller's threads are the parallelism: FAISS's OpenMP team (libgomp,
  // apart from LibTorch's) would otherwise spin on the cores the text
  // encoder needs; with it, encoding one query on a 2-core box took 6x longer.
  omp_set_num_threads(1);
  const faiss::Index* index = impl_->index.get();
  // A lossy index asks for more candidates and orders them by exact scores.
  const bool rerank = impl_->rerank > 0 && impl_->exact != nullptr && !stores_exact_vectors(index);
  int64_t fetch = rerank ? std::max(k, impl_->rerank) : k;
  fetch = std::min<int64_t>(fetch, rows ? rows->count : size());
  std::vector<float> scores(n * fetch);
  std::vector<faiss::Index::idx_t> found(n * fetch);
  // True when every query got its `fetch` results.
  auto collect = [&] {
    bool whole = true;
    for (int64_t j = 0; j < n; ++j) {
      out[j].clear();
      for (int64_t i = j * fetch; i < (j + 1) * fetch; ++i)
        if (found[i] >= 0) out[j].emplace_back(scores[i], found[i]);
      whole &= static_cast<int64_t>(out[j].size()) == fetch;
    }
    return whole;
  };
  std::optional<faiss::IDSelectorBitmap> selector;
  if (rows) selector.emplace(static_cast<size_t>(size()), rows->bits.data());
  if (const auto* ivf = dynamic_cast<const faiss::IndexIVF*>(index)) {
    // An inverted file probes nprobe of its nlist lists. With a share s of
    // the rows passing, the best k that pass lie about as deep as the best
    // k / s of all rows: a little deeper at s = 50%, far deeper at 0.5%.
    // nprobe / sqrt(s) lists reach them (recall at a million parts in
    // docs/PERFORMANCE.md) without the cost of nprobe / s, which probed
    // twice the lists at 50% and all of them at 0.5%. Too few results (the
    // passing rows cluster away from the query) and the batch is searched
    // again with four times the lists, up to all of them, which is exact up
    // to the codes.
    faiss::SearchParametersIVF params;
    params.nprobe = ivf->nprobe;
    if (rows) {
      params.sel = &*selector;
      const double share = static_cast<double>(rows->count) / static_cast<double>(size());
      params.nprobe = static_cast<size_t>(
          std::min<double>(static_cast<double>(ivf->nlist),
                           std::ceil(static_cast<double>(ivf->nprobe) / std::sqrt(share))));
    }
    ivf->search(n, q, fetch, scores.data(), found.data(), &params);
    while (!collect() && rows && params.nprobe < ivf->nlist) {
      params.nprobe = std::min(ivf->nlist, 4 * params.nprobe);
      ivf->search(n, q, fetch, scores.data(), found.data(), &params);
    }
  } else if (!rows) {
    index->search(n, q, fetch, scores.data(), found.data());
    collect();
  } else {
    // An HNSW graph cannot follow a selector (FAISS 1.7): its stored vectors
    // are searched exactly instead, reading only the passing rows.
    if (const auto* hnsw = dynamic_cast<const faiss::IndexHNSW*>(index)) index = hnsw->storage;
    if (dynamic_cast<const faiss::IndexFlat*>(index) == nullptr)
      throw Error(format(
          "filters need a Flat, IVF or HNSW index; this index is none of them: rebuild it with "
          "`cadclip index --factory auto`"));
    faiss::SearchParameters params;
    params.sel = &*selector;
    index->search(n, q, fetch, scores.data(), found.data(), &params);
    collect();
  }
  if (rerank) {
    const int64_t d = dim();
    for (int64_t j = 0; j < n; ++j) {
      for (auto& [score, row] : out[j]) score = dot(q + j * d, impl_->exact + row * d, d);
      std::sort(out[j].begin(), out[j].end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      if (static_cast<int64_t>(out[j].size()) > k) out[j].resize(static_cast<size_t>(k));
    }
  }
  return out;
}

}  // namespace cadclip::index::detail

// ---- sealing a version -----------------------------------------------------

namespace cadclip::index::detail {

// Large libraries: an inverted file with about 4 sqrt(n) lists (a power of
// two), searched 16 lists deep (8 where the lists hold 8-bit codes). On 100,000 parts IVF1024,Flat
// at nprobe 16 found 0.998 of the exact top 10 and answered faster than HNSW32, which also took 20x
// longer to build (docs/PERFORMANCE.md, "Search").
std::string choose_factory(const std::string& factory, int64_t parts) {
  if (factory != "auto") return factory;
  if (parts < kAutoApproximateFrom) return "Flat";
  int64_t lists = 64;
  while (lists * 2 <= 4 * static_cast<int64_t>(std::sqrt(static_cast<double>(parts)))) lists *= 2;
  return format(parts < kAutoCompressedFrom ? "IVF{},Flat" : "IVF{},SQ8", lists);
}

std::string default_search_params(const std::string& search_params, const std::string& factory) {
  if (!search_params.empty()) return search_params;
  if (factory.find("HNSW") != std::string::npos) return "efSearch=128";
  if (factory.starts_with("IVF"))
    return factory.ends_with(",Flat")
               ? "nprobe=16"
               : format("nprobe={},rerank={}", kAutoCompressedProbe, kAutoRerank);
  return "";
}

namespace {

// The embeddings of the parts placed at `from_row` and after, in row order:
// [count - from_row, d].
std::vector<float> embeddings_from(const Catalog& catalog, int64_t from_row, int64_t count,
                                   int64_t d, const fs::path& out) {
  std::vector<float> matrix;
  matrix.reserve(static_cast<size_t>(std::max<int64_t>(count - from_row, 0) * d));
  catalog.each(
      [&](StoredItem&& s) {
        if (static_cast<int64_t>(s.embedding.size()) != d)
          throw Error(format("{}: part '{}' has an embedding of size {}, the model {}",
                             out.string(), s.item.id, s.embedding.size(), d));
        matrix.insert(matrix.end(), s.embedding.begin(), s.embedding.end());
      },
      /*embeddings=*/true, from_row);
  return matrix;
}

// The previous version's inverted file, when this version may keep it: the
// same factory (or "auto"), trained on between half and twice today's parts,
// and every part it kept still where that version placed it.
std::optional<VectorIndex> reusable_vectors(const Catalog& catalog, const VersionFacts& facts,
                                            int64_t parts, std::string& factory) {
  if (facts.previous.empty() || !fs::exists(facts.previous / kVectorsFile)) return std::nullopt;
  const std::optional<std::string> previous = catalog.meta("factory");
  const int64_t trained = std::stoll(catalog.meta("trained_parts").value_or("0"));
  if (!previous || !previous->starts_with("IVF") || trained <= 0 ||
      (facts.factory != "auto" && facts.factory != *previous) || parts > 2 * trained ||
      2 * parts < trained)
    return std::nullopt;
  VectorIndex vectors = VectorIndex::read(facts.previous / kVectorsFile);
  const std::vector<int64_t> placed = catalog.placed_rows();
  if (!placed.empty() && placed.back() >= vectors.size()) return std::nullopt;
  vectors.keep_rows(placed);
  factory = *previous;
  return vectors;
}

}  // namespace

Sealed seal_version(Catalog& catalog, const fs::path& out, const VersionFacts& facts) {
  const int64_t d = facts.embed_dim;
  const int64_t count = catalog.count();
  std::string factory = choose_factory(facts.factory, count);
  std::optional<VectorIndex> vectors = reusable_vectors(catalog, facts, count, factory);
  int64_t kept = 0;
  if (vectors) {
    // The kept rows close their gaps; the new parts follow them.
    kept = catalog.number_rows(/*afresh=*/false);
    const std::vector<float> added = embeddings_from(catalog, kept, count, d, out);
    log::info("index", "updating the FAISS '{}' index: {} vectors kept, {} added", factory, kept,
              count - kept);
    vectors->append(added.data(), count - kept);
  } else {
    catalog.number_rows(/*afresh=*/true);
    const std::vector<float> matrix = embeddings_from(catalog, 0, count, d, out);
    log::info("index", "building a FAISS '{}' index over {} vectors", factory, count);
    vectors = VectorIndex::build(matrix.data(), count, d, factory);
    catalog.set_meta("trained_parts", std::to_string(count));
  }
  CADCLIP_CHECK(vectors->size() == count, "seal_version: the vectors follow the catalog");
  const std::string search_params = default_search_params(facts.search_params, factory);
  vectors->set_search_params(search_params);
  catalog.set_meta("checkpoint_identity", facts.checkpoint_identity);
  catalog.set_meta("checkpoint", facts.checkpoint);
  catalog.set_meta("model_name", facts.model_name);
  catalog.set_meta("factory", factory);
  catalog.set_meta("search_params", search_params);
  catalog.set_meta("embed_dim", std::to_string(d));
  catalog.set_meta("library", facts.library);
  catalog.set_meta("catalog_version", std::to_string(kCatalogVersion));
  vectors->write(out / kVectorsFile);
  // The catalog names its vectors, so a version whose files do not belong
  // together is refused when opened.
  catalog.set_meta("vectors_sha256", sha256_file_hex(out / kVectorsFile));
  return {factory, count, kept};
}

}  // namespace cadclip::index::detail
