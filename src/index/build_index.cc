#include "cadclip/index/build_index.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/data/ingest_failure.h"
#include "cadclip/data/part_facts.h"
#include "cadclip/data/prepared.h"
#include "cadclip/model/checkpoint_io.h"
#include "layout.h"
#include "metadata.h"
#include "store.h"

#ifdef CADCLIP_WITH_OCCT
#include "cadclip/cad/ingest_pool.h"
#endif

namespace cadclip::index {

// worker_binary is left out: a detail of the machine that ran the job, not of
// the index.
CADCLIP_OPTION_FIELDS(
    IndexOptions,
    (checkpoint, "The checkpoint the parts are embedded with (from the command line's inputs)"),
    (library, "The part library (from the command line's inputs)"),
    (out, "Index folder to write (updated when it exists)"),
    (factory,
     "FAISS factory string (Flat, IVF1024,Flat, HNSW32,Flat, ...); auto = Flat below 20,000 "
     "parts, IVF with about 4 sqrt(parts) lists below 200,000, else those lists holding 8-bit "
     "codes (SQ8) reranked by the exact vectors"),
    (search_params,
     "FAISS search parameters, e.g. nprobe=16 (default for IVF), efSearch=128 (default for "
     "HNSW), and rerank=N: a lossy index (SQ or PQ codes) orders N candidates by the exact "
     "vectors (default 64)"),
    (captions,
     "Caption file (JSONL/CSV) naming parts by id; default: the prepared folder's "
     "captions.jsonl"),
    (thumbnails, "Draw thumbnails (--no-thumbnails: do not)"),
    (batch_size, "Parts per forward pass"), (workers, "Ingest worker processes; 0 = one per core"),
    (limits, "What one CAD file of the library may cost to ingest"),
    (assume_unit, "Unit of unitless CAD files"),
    (metadata,
     "CSV of catalog fields (part number, material, project, ...): one row per part, named by "
     "an 'id' or 'file' column; filter on them with `search --filter`"),
    (update,
     "Change an existing index in place: add new files, re-embed changed ones, keep moved or "
     "renamed ones by their content, drop deleted ones; fails rather than build a new index"),
    (add,
     "As --update, but parts of the index that LIBRARY does not name stay: index a library "
     "folder by folder, or add a batch of parts to a large index"),
    (overwrite, "Rebuild an index that was made with another checkpoint"),
    (wait, "Another cadclip index writing the same folder: wait for it instead of failing"))
namespace {

namespace fs = std::filesystem;
using data::FailureKind;
using data::IngestFailure;

constexpr std::string_view kDrawingPrefix = "thumbnail_";

// One part of the library as found on disk, before embedding.
struct Found {
  Item item;
  int64_t dataset_row = -1;  // prepared library: the row in the dataset
};

// A line of failures.jsonl (a file not indexed), or of warnings.jsonl (a part
// indexed without a drawing, its kind written "thumbnail_<kind>").
struct Listed {
  std::string path, id;
  IngestFailure failure;
  bool drawing = false;
};

// A part's drawing, or why there is none.
struct Drawing {
  std::string path;   // the CAD file it shows (as the ingest named it)
  fs::path svg_file;  // a prepared folder's drawing, read when its part is embedded
  bool drawn = false;
  std::string svg;
  IngestFailure none;  // when not drawn
};

std::vector<nlohmann::json> read_json_lines(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  const std::string text = read_text_file(file);
  size_t start = 0;
  int64_t number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    ++number;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object())
      throw Error(
          format("{} line {} is not a JSON object; the file is damaged: delete it and run "
                 "the job that wrote it again",
                 file.string(), number));
    lines.push_back(std::move(j));
  }
  return lines;
}

FailureKind kind_named(const std::string& name, const fs::path& file) {
  const std::optional<FailureKind> kind = data::failure_kind_from_name(name);
  if (!kind)
    throw Error(
        format("{} names the failure kind '{}', which cadclip does not know; the file is "
               "damaged: delete it and run the job that wrote it again",
               file.string(), name));
  return *kind;
}

// The drawings of a prepared folder by id; none when it was prepared without
// thumbnails.
std::map<std::string, Drawing> read_drawings(const fs::path& prepared) {
  std::map<std::string, Drawing> drawings;
  const fs::path list = prepared / "thumbnails.jsonl";
  if (!fs::exists(list)) return drawings;
  for (const nlohmann::json& j : read_json_lines(list)) {
    Drawing d;
    d.path = j.value("path", "");
    if (j.contains("svg") && j["svg"].is_string()) {
      // Only a file of the folder's own thumbnails/ is ever copied into an index.
      const fs::path svg = j["svg"].get<std::string>();
      if (svg.parent_path() != "thumbnails" || svg.extension() != ".svg")
        throw Error(
            format("{} names the drawing '{}', which is not an .svg file in {}; the "
                   "file is damaged: prepare the folder again with --thumbnails",
                   list.string(), svg.string(), (prepared / "thumbnails").string()));
      d.svg_file = prepared / svg;
    } else {
      d.none = {kind_named(j.value("kind", "draw"), list),
                j.value("reason", "no drawing was made")};
    }
    drawings[j.value("id", "")] = std::move(d);
  }
  return drawings;
}

std::vector<Listed> read_listed(const fs::path& path) {
  std::vector<Listed> listed;
  if (!fs::exists(path)) return listed;
  for (const nlohmann::json& j : read_json_lines(path)) {
    std::string kind = j.value("kind", "");
    const bool drawing = kind.starts_with(kDrawingPrefix);
    if (drawing) kind.erase(0, kDrawingPrefix.size());
    listed.push_back({j.value("path", ""),
                      j.value("id", ""),
                      {kind_named(kind, path), j.value("reason", "")},
                      drawing});
  }
  return listed;
}

void write_listed(const fs::path& path, std::vector<Listed> listed) {
  std::sort(listed.begin(), listed.end(),
            [](const Listed& a, const Listed& b) { return a.path < b.path; });
  std::string text;
  for (const Listed& l : listed) {
    const std::string kind = (l.drawing ? std::string(kDrawingPrefix) : std::string()) +
                             std::string(data::failure_kind_name(l.failure.kind));
    text +=
        nlohmann::json{{"path", l.path}, {"id", l.id}, {"kind", kind}, {"reason", l.failure.reason}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\n";
  }
  write_text_atomic(path, text);
}

void fill_from_graph(Item& item, const data::BRepGraph& g) {
  for (int i = 0; i < 3; ++i) item.size_mm[i] = g.bbox_mm[3 + i] - g.bbox_mm[i];
  item.faces = g.num_faces();
  item.geometry_hash = g.geometry_hash;
  data::PartFacts facts = data::part_facts(g);
  item.holes = static_cast<int64_t>(facts.hole_diameters_mm.size());
  item.hole_diameters_mm = std::move(facts.hole_diameters_mm);
  item.shafts = std::move(facts.shafts);
  item.repeats = std::move(facts.repeats);
  item.shape = facts.shape;
}

// The source files a prepared folder names by id: thumbnails.jsonl lists
// each model's path (with --thumbnails); without it the file types are not known.
std::map<std::string, std::string> prepared_sources(const fs::path& prepared) {
  std::map<std::string, std::string> out;
  const fs::path list = prepared / "thumbnails.jsonl";
  if (!fs::exists(list)) return out;
  for (const nlohmann::json& j : read_json_lines(list))
    out[j.value("id", "")] = j.value("path", "");
  return out;
}

std::map<std::string, std::string> first_captions(const data::CaptionFile& file) {
  std::map<std::string, std::string> out;
  // The shortest level is the most legible under a thumbnail.
  std::map<std::string, int> level_rank;
  for (int i = 0; i < 4; ++i) level_rank[data::kText2CadLevels[i]] = i;
  std::map<std::string, int> best;
  for (const data::Caption& c : file.captions) {
    const int rank = level_rank.count(c.level) ? level_rank[c.level] : 9;
    const auto it = best.find(c.id);
    if (it == best.end() || rank < it->second) {
      best[c.id] = rank;
      out[c.id] = c.text;
    }
  }
  return out;
}

std::string thumbnail_name(const std::string& id) { return sha256_hex(id).substr(0, 24) + ".svg"; }

// Test hook: CADCLIP_DEBUG_KILL_INDEX_AT=<point> kills this process there
// (SIGKILL, as a crash or `kill -9` would), to show what a reader finds after.
void debug_kill_point(const char* point) {
  const char* at = std::getenv("CADCLIP_DEBUG_KILL_INDEX_AT");
  if (at != nullptr && std::string_view(at) == point) ::raise(SIGKILL);
}

// The next version starts as a copy of the current one: its catalog, and
// links to its drawings (a version's files never change once it is current).
void copy_version(const fs::path& from, const fs::path& to) {
  fs::copy_file(from / detail::kCatalogFile, to / detail::kCatalogFile);
  if (fs::exists(from / "warnings.jsonl"))
    fs::copy_file(from / "warnings.jsonl", to / "warnings.jsonl");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(from / detail::kThumbnailDir, ec)) {
    const fs::path target = to / detail::kThumbnailDir / entry.path().filename();
    std::error_code link_error;
    fs::create_hard_link(entry.path(), target, link_error);
    if (link_error) fs::copy_file(entry.path(), target);
  }
}

// Whether the next version starts empty rather than as a copy of `current`:
// there is none, it is incomplete, or it was built with other weights (which
// only --overwrite replaces).
bool starts_empty(const std::optional<fs::path>& current, const std::string& identity,
                  const IndexOptions& o, const fs::path& index_folder, const fs::path& checkpoint) {
  if (!current) return true;
  const detail::Catalog old = detail::Catalog::open(*current, /*create=*/false);
  const std::optional<std::string> previous = old.meta("checkpoint_identity");
  if (!previous) {
    log::warn("index", "{} is incomplete (its catalog names no checkpoint); building it anew",
              current->string());
    return true;
  }
  if (*previous == identity) {
    if (std::stoll(old.meta("catalog_version").value_or("1")) >= detail::kCatalogVersion)
      return false;
    log::info("index",
              "{} was made by an earlier cadclip, whose catalog lacks hole counts, shape "
              "signatures and file types; building it anew",
              index_folder.string());
    return true;
  }
  if (!o.overwrite)
    throw Error(
        format("{} was built with other weights (checkpoint {}); pass --overwrite to "
               "rebuild it with {}",
               index_folder.string(), old.meta("checkpoint").value_or("?"), checkpoint.string()));
  log::warn("index", "rebuilding {}: the checkpoint changed", index_folder.string());
  return true;
}

std::vector<Found> found_in_dataset(const data::PreparedData& prepared) {
  // The source files of the folders `cadclip prepare` wrote (a merged
  // folder's parts in its place).
  std::map<std::string, std::string> sources;
  for (const fs::path& folder : prepared.sources) sources.merge(prepared_sources(folder));
  const data::Dataset& dataset = prepared.dataset;
  std::vector<Found> found;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    Found f;
    f.dataset_row = i;
    f.item.id = dataset.id(i);
    f.item.name = f.item.id;
    if (const auto source = sources.find(f.item.id); source != sources.end())
      f.item.file_type = file_type_of_extension(fs::path(source->second).extension().string());
    f.item.content_hash = sha256_hex(data::encode_graph(dataset.graph(i)));
    found.push_back(std::move(f));
  }
  return found;
}

// The CAD files of `library` by path; a file whose id (its stem) an earlier
// one gives joins `failures`.
std::vector<Found> found_in_folder(const fs::path& library, std::vector<Listed>& failures) {
#ifdef CADCLIP_WITH_OCCT
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(library)) {
    if (entry.is_regular_file() && data::is_cad_path(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Found> found;
  std::set<std::string> ids;
  for (const fs::path& file : files) {
    const std::string id = file.stem().string();
    if (!ids.insert(id).second) {
      failures.push_back({file.string(),
                          id,
                          {FailureKind::kDuplicateId,
                           format("another file of the library already gives the id '{}'; "
                                  "rename one of them",
                                  id)}});
      continue;
    }
    Found f;
    f.item.id = id;
    f.item.name = id;
    f.item.source = file.string();
    f.item.file_type = file_type_of_extension(file.extension().string());
    f.item.content_hash = sha256_file_hex(file);
    found.push_back(std::move(f));
  }
  return found;
#else
  (void)failures;
  throw Error(
      format("{} is no prepared folder (no manifest.json), and this cadclip was built "
             "without Open CASCADE, so it cannot read CAD files; prepare the library "
             "on a machine with OCCT",
             library.string()));
#endif
}

// What changed in the library since the current version.
struct Changes {
  std::vector<Found*> todo;          // new and changed parts, to embed, in the order found
  std::set<std::string> present;     // every id the library holds now
  std::vector<std::string> gone;     // ids in the index that left the library
  std::vector<std::string> moved;    // "old -> new" of parts kept by their content
  std::set<std::string> moved_from;  // ids in `gone` whose content another id now holds
};

// What a part's catalog entry holds besides what embedding it gives.
struct Annotations {
  const std::map<std::string, std::string>& captions;
  const detail::PartMetadata* metadata;  // null: parts keep their earlier fields
  const fs::path& library;
  bool keep_missing = false;  // parts the library does not name stay (IndexOptions::add)
};

// Unchanged parts keep their embedding (a caption or metadata file may change
// on its own, so their captions and fields are brought up to date). A part
// whose content the index holds under another path or id (a moved, renamed
// or copied file) takes that entry's embedding, facts and drawing.
Changes find_changes(std::vector<Found>& found, std::map<std::string, detail::StoredItem>& existing,
                     const Annotations& notes, detail::Catalog& catalog, const fs::path& out,
                     IndexSummary& summary) {
  Changes changes;
  std::map<std::string, const detail::StoredItem*> by_content;
  for (const auto& [id, s] : existing) by_content.emplace(s.item.content_hash, &s);
  for (Found& f : found) {
    changes.present.insert(f.item.id);
    const auto caption = notes.captions.find(f.item.id);
    f.item.caption = caption == notes.captions.end() ? "" : caption->second;
    const auto it = existing.find(f.item.id);
    if (notes.metadata) {
      const detail::Fields* fields = notes.metadata->find(f.item, notes.library);
      f.item.metadata = fields ? *fields : detail::Fields{};
    } else if (it != existing.end()) {
      f.item.metadata = it->second.item.metadata;
    }
    if (it != existing.end() && it->second.item.content_hash == f.item.content_hash &&
        it->second.item.source == f.item.source) {
      ++summary.unchanged;
      Item& kept = it->second.item;
      if (f.item.caption != kept.caption || f.item.metadata != kept.metadata) {
        kept.caption = f.item.caption;
        kept.metadata = f.item.metadata;
        catalog.put(kept, catalog.embedding(kept.id), it->second.row);
      }
      continue;
    }
    const auto same = by_content.find(f.item.content_hash);
    if (same != by_content.end()) {
      detail::StoredItem copy = *same->second;
      copy.embedding = catalog.embedding(copy.item.id);
      const std::string from = copy.item.id;
      if (!copy.item.thumbnail.empty() && copy.item.id != f.item.id) {
        const fs::path drawings = out / detail::kThumbnailDir;
        const std::string name = thumbnail_name(f.item.id);
        std::error_code ec;
        fs::remove(drawings / name, ec);
        fs::create_hard_link(drawings / copy.item.thumbnail, drawings / name, ec);
        if (ec) fs::copy_file(drawings / copy.item.thumbnail, drawings / name);
        copy.item.thumbnail = name;
      }
      copy.item.id = f.item.id;
      copy.item.name = f.item.name;
      copy.item.source = f.item.source;
      copy.item.file_type = f.item.file_type;
      copy.item.caption = f.item.caption;
      copy.item.metadata = f.item.metadata;
      catalog.put(copy.item, copy.embedding);
      ++summary.moved;
      changes.moved.push_back(from == f.item.id ? f.item.id : from + " -> " + f.item.id);
      continue;
    }
    changes.todo.push_back(&f);
  }
  std::set<std::string> taken;  // ids whose content a moved part took
  for (const std::string& m : changes.moved) {
    const size_t arrow = m.find(" -> ");
    if (arrow != std::string::npos) taken.insert(m.substr(0, arrow));
  }
  for (const auto& [id, s] : existing) {
    if (changes.present.count(id) || notes.keep_missing) continue;
    changes.gone.push_back(id);
    if (taken.count(id)) changes.moved_from.insert(id);
  }
  return changes;
}

// Names the parts a run adds, replaces, moves and removes (a few of each).
void log_changes(const Changes& changes) {
  auto some = [](const std::vector<std::string>& ids) {
    constexpr size_t kShown = 10;
    std::vector<std::string> shown(ids.begin(), ids.begin() + std::min(ids.size(), kShown));
    return join(shown, ", ") +
           (ids.size() > kShown ? format(" and {} more", ids.size() - kShown) : "");
  };
  std::vector<std::string> todo;
  for (const Found* f : changes.todo) todo.push_back(f->item.id);
  if (!todo.empty()) log::info("index", "to embed: {}", some(todo));
  if (!changes.moved.empty()) log::info("index", "kept by content: {}", some(changes.moved));
  if (!changes.gone.empty()) log::info("index", "removed: {}", some(changes.gone));
}

// Embeds parts batch by batch in the order they are added, so that the
// batches (and so the embeddings) are those of any run over the same parts,
// and records each in the catalog with its drawing.
class Embedder {
 public:
  Embedder(model::TwoTowerImpl& model, detail::Catalog& catalog, const fs::path& out,
           const IndexOptions& o, const std::map<std::string, detail::StoredItem>& existing,
           IndexSummary& summary, std::vector<Listed>& warnings, Progress& progress)
      : model_(model),
        catalog_(catalog),
        out_(out),
        o_(o),
        existing_(existing),
        summary_(summary),
        warnings_(warnings),
        progress_(progress) {}

  // `drawing`: none when the run draws no thumbnails.
  void add(Found& part, data::BRepGraph graph, std::optional<Drawing> drawing) {
    (existing_.count(part.item.id) ? summary_.changed : summary_.added) += 1;
    embedded_.insert(part.item.id);
    batch_.push_back({&part, std::move(graph), std::move(drawing)});
    if (static_cast<int64_t>(batch_.size()) >= o_.batch_size) flush();
  }
  // A part that will not come (its file failed).
  void skip() { progress_.advance(1); }
  void flush();
  // Ids added so far.
  const std::set<std::string>& embedded() const { return embedded_; }

 private:
  struct Pending {
    Found* part;
    data::BRepGraph graph;
    std::optional<Drawing> drawing;
  };
  void record_drawing(Item& item, std::optional<Drawing>& drawing);

  model::TwoTowerImpl& model_;
  detail::Catalog& catalog_;
  const fs::path out_;
  const IndexOptions& o_;
  const std::map<std::string, detail::StoredItem>& existing_;
  IndexSummary& summary_;
  std::vector<Listed>& warnings_;
  Progress& progress_;
  std::vector<Pending> batch_;
  std::set<std::string> embedded_;
};

void Embedder::flush() {
  if (batch_.empty()) return;
  std::vector<data::BRepGraph> graphs;
  for (Pending& p : batch_) graphs.push_back(std::move(p.graph));
  at::Tensor emb;  // [b, d]
  {
    c10::InferenceMode inference;
    emb = model_.encode_brep(graphs).contiguous();
  }
  for (size_t i = 0; i < batch_.size(); ++i) {
    Item& item = batch_[i].part->item;
    fill_from_graph(item, graphs[i]);
    record_drawing(item, batch_[i].drawing);
    const at::Tensor row = emb[static_cast<int64_t>(i)].contiguous();
    catalog_.put(item, {row.data_ptr<float>(), static_cast<size_t>(row.numel())});
  }
  progress_.advance(static_cast<int64_t>(batch_.size()));
  batch_.clear();
}

void Embedder::record_drawing(Item& item, std::optional<Drawing>& drawing) {
  item.thumbnail.clear();
  const fs::path thumbnail_file = out_ / detail::kThumbnailDir / thumbnail_name(item.id);
  if (o_.thumbnails && drawing) {
    Drawing& d = *drawing;
    if (!d.svg_file.empty()) {
      if (fs::exists(d.svg_file)) {
        d.drawn = true;
        d.svg = read_text_file(d.svg_file);
      } else {
        d.none = {FailureKind::kMissing,
                  format("{} is gone; prepare the library again with --thumbnails to draw it",
                         d.svg_file.string())};
      }
    }
    if (d.drawn) {
      item.thumbnail = thumbnail_name(item.id);
      write_text_atomic(thumbnail_file, d.svg);
      ++summary_.thumbnails;
    } else {
      log::warn("index", "no thumbnail for {} ({}): {}", item.id,
                data::failure_kind_name(d.none.kind), d.none.reason);
      warnings_.push_back({d.path.empty() ? item.source : d.path, item.id, d.none,
                           /*drawing=*/true});
    }
  }
  if (item.thumbnail.empty()) fs::remove(thumbnail_file);  // a changed part's old drawing
}

// A prepared library: graphs from its shards, drawings from the
// thumbnails.jsonl of each folder `cadclip prepare --thumbnails` wrote (made
// by its workers).
void embed_prepared(const data::PreparedData& library, const std::vector<Found*>& todo,
                    bool thumbnails, Embedder& embedder) {
  const data::Dataset& dataset = library.dataset;
  std::map<std::string, Drawing> drawings;
  if (thumbnails)
    for (const fs::path& source : library.sources) drawings.merge(read_drawings(source));
  for (Found* f : todo) {
    const auto drawing = drawings.find(f->item.id);
    embedder.add(*f, dataset.graph(f->dataset_row),
                 drawing == drawings.end() ? std::nullopt : std::optional(drawing->second));
  }
}

#ifdef CADCLIP_WITH_OCCT
// A folder of CAD files: each part ingested in the ingest pool's worker
// processes, which also draw it, so that Open CASCADE's HLR runs in the same
// contained processes as the reading: a crash or hang while drawing costs
// that part its thumbnail, never the job (the worker sent the graph first).
// Parts go to the embedder in id order, whichever worker was faster (the
// order of a prepared library's shards); files that fail join `failures`.
void ingest_parts(const IndexOptions& o, std::vector<Found*> todo, Embedder& embedder,
                  std::vector<Listed>& failures) {
  std::sort(todo.begin(), todo.end(),
            [](const Found* a, const Found* b) { return a->item.id < b->item.id; });
  std::vector<cad::IngestInput> inputs;
  for (const Found* f : todo)
    inputs.push_back({fs::path(f->item.source).lexically_normal(), f->item.id, o.thumbnails});
  cad::IngestPoolOptions pool;
  pool.workers = o.workers;
  pool.ingest.assume_unit = o.assume_unit;
  pool.ingest.limits = o.limits;
  pool.worker_binary = o.worker_binary;
  // Outcomes come in any order; they are taken in the order of `inputs`.
  std::vector<std::optional<cad::IngestOutcome>> waiting(inputs.size());
  size_t next = 0;
  cad::IngestPool(pool).run(inputs, [&](cad::IngestOutcome outcome) {
    const size_t index = outcome.index;
    waiting[index] = std::move(outcome);
    for (; next < waiting.size() && waiting[next]; waiting[next++].reset()) {
      cad::IngestOutcome& done = *waiting[next];
      const std::string path = inputs[next].path.string();
      if (done.failure) {
        failures.push_back({path, done.id, std::move(*done.failure)});
        embedder.skip();
        continue;
      }
      data::BRepGraph graph =
          data::decode_graph(std::as_bytes(std::span(done.graph.data(), done.graph.size())),
                             format("the worker's graph of {}", path));
      std::optional<Drawing> drawing;
      if (o.thumbnails)
        drawing = Drawing{
            path,
            {},
            done.drawn,
            std::move(done.svg),
            done.no_drawing.value_or(IngestFailure{FailureKind::kDraw, "no drawing was made"})};
      embedder.add(*todo[next], std::move(graph), std::move(drawing));
    }
  });
}
#endif

// What the version records about how it was made.
struct Provenance {
  std::string identity;  // of the checkpoint's weights
  fs::path checkpoint, library;
  int64_t embed_dim = 0;
  fs::path previous;  // the version this one began as a copy of; "" = none
};

// Writes the vectors (following the catalog's rows: the previous version's
// inverted file updated, or built anew), the catalog's facts and the options
// used, then makes the version current. Returns its folder.
std::string finish_version(detail::IndexWriter& writer, std::optional<detail::Catalog>& catalog,
                           const fs::path& out, const IndexOptions& o, const Provenance& made,
                           IndexSummary& summary) {
  const detail::Sealed sealed =
      detail::seal_version(*catalog, out,
                           {made.identity, made.checkpoint.string(), made.library.string(),
                            made.checkpoint.filename().string(), made.embed_dim, o.factory,
                            o.search_params, made.previous});
  summary.factory = sealed.factory;
  summary.vectors_kept = sealed.kept;
  debug_kill_point("vectors");
  catalog->commit();
  catalog.reset();
  summary.parts = sealed.parts;
  write_text_atomic(out / "options.json", nlohmann::json(o).dump(2) + "\n");
  // The index carries its weights: it opens wherever the folder is moved or
  // copied, whatever the working folder, and the checkpoint may go.
  writer.store_model(made.checkpoint, made.identity);
  debug_kill_point("commit");
  return writer.commit_version().string();
}

}  // namespace

IndexSummary build_index(const IndexOptions& o) {
  if (o.checkpoint.empty()) throw Error("cadclip index needs a checkpoint (a run folder or .json)");
  if (o.out.empty()) throw Error("cadclip index needs --out, the index folder to write");
  if (o.batch_size < 1) throw Error(format("--batch-size {} must be at least 1", o.batch_size));
  data::check_limits(o.limits);
  const fs::path library = fs::absolute(o.library);
  // A dataset file lists prepared folders (the parts of a sharded prepare).
  const bool listed = fs::is_regular_file(library);
  if (!listed && !fs::is_directory(library))
    throw Error(
        format("library {} is no folder: pass a folder of CAD files, a prepared folder, "
               "or a dataset file listing prepared folders",
               o.library));
  const fs::path index_folder = fs::absolute(o.out);
  const fs::path checkpoint =
      fs::absolute(model::resolve_checkpoint(o.checkpoint)).lexically_normal();
  const std::string identity = model::checkpoint_identity(checkpoint);
  // The model first: a checkpoint that is refused (damaged, NaN) leaves the
  // index as it was, before anything was ingested or written.
  model::BuiltModel built = model::load_model_from_checkpoint(checkpoint);
  std::optional<detail::PartMetadata> metadata;
  if (!o.metadata.empty()) metadata = detail::PartMetadata::read(o.metadata);

  // One writer at a time; the new version is built beside the current one,
  // which readers keep using until it is complete and swapped in.
  detail::IndexWriter writer = detail::IndexWriter::open(index_folder, o.wait);
  const std::optional<fs::path> current = writer.current();
  const bool start_empty = starts_empty(current, identity, o, index_folder, checkpoint);
  if ((o.update || o.add) && start_empty)
    throw Error(
        format("--update and --add change an index in place, and {} {}; drop them to build it "
               "whole",
               index_folder.string(),
               current ? "cannot be updated (made with other weights, or by an earlier cadclip)"
                       : "holds no index yet"));
  const fs::path out = writer.begin_version();
  if (!start_empty) copy_version(*current, out);
  std::optional<detail::Catalog> catalog = detail::Catalog::open(out, /*create=*/true);
  // Without their embeddings: a million parts' would be held twice, and only
  // the few that move or change their notes need theirs (read by id).
  std::map<std::string, detail::StoredItem> existing;
  catalog->each([&](detail::StoredItem&& s) { existing.emplace(s.item.id, std::move(s)); },
                /*embeddings=*/false);

  // What the library holds now, and what changed.
  const bool prepared = listed || fs::exists(library / "manifest.json");
  std::vector<Listed> failures;
  std::optional<data::PreparedData> dataset;
  if (prepared)
    dataset = data::open_prepared(data::dataset_folders({library.string()}),
                                  {/*splits=*/false, /*captions_required=*/false});
  data::CaptionFile captions;
  if (!o.captions.empty()) {
    captions = data::read_captions(o.captions, {});
  } else if (prepared) {
    captions = dataset->captions;
  }
  std::vector<Found> found =
      prepared ? found_in_dataset(*dataset) : found_in_folder(library, failures);
  IndexSummary summary;
  catalog->begin();
  const std::map<std::string, std::string> shown_captions = first_captions(captions);
  const Changes changes = find_changes(
      found, existing, {shown_captions, metadata ? &*metadata : nullptr, library, o.add}, *catalog,
      out, summary);
  log::info("index", "{} parts in the library: {} to embed, {} unchanged, {} moved, {} removed",
            with_commas(found.size()), changes.todo.size(), summary.unchanged, summary.moved,
            changes.gone.size() - changes.moved_from.size());
  log_changes(changes);
  if (metadata) {
    const std::vector<std::string> unmatched = metadata->unmatched();
    if (!unmatched.empty())
      log::warn("index", "{} rows of {} name no part of the library (by {}), e.g. '{}'",
                unmatched.size(), o.metadata, metadata->key_column(), unmatched.front());
  }

  for (const std::string& id : changes.gone) {
    const std::string thumb = existing[id].item.thumbnail;
    if (!thumb.empty()) fs::remove(out / detail::kThumbnailDir / thumb);
    catalog->remove(id);
  }
  // Embed (ingesting a folder of CAD files on the way), draw, and record;
  // counted as they come: a file that fails is neither added nor changed.
  std::vector<Listed> warnings;
  std::set<std::string> redone;  // embedded again, failed, or gone from the index
  {
    Progress progress("index",
                      {.total = static_cast<int64_t>(changes.todo.size()), .unit = "parts"});
    Embedder embedder(*built.model, *catalog, out, o, existing, summary, warnings, progress);
    if (prepared) {
      embed_prepared(*dataset, changes.todo, o.thumbnails, embedder);
    } else {
#ifdef CADCLIP_WITH_OCCT
      ingest_parts(o, changes.todo, embedder, failures);
#endif
    }
    embedder.flush();
    progress.finish();
    redone = embedder.embedded();
  }
  // A part that changed into a file that fails is no longer in the library.
  for (const Listed& f : failures) {
    redone.insert(f.id);
    if (existing.count(f.id) && changes.present.count(f.id)) {
      catalog->remove(f.id);
      ++summary.removed;
    }
  }
  // A part whose file moved is counted as moved, not also as removed.
  summary.removed += static_cast<int64_t>(changes.gone.size() - changes.moved_from.size());
  // Parts without a drawing: an earlier run's for parts kept unchanged, and this run's.
  std::vector<Listed> kept;
  for (Listed& w : read_listed(out / "warnings.jsonl"))
    if (changes.present.count(w.id) && !redone.count(w.id) && existing.count(w.id) &&
        existing[w.id].item.thumbnail.empty())
      kept.push_back(std::move(w));
  warnings.insert(warnings.begin(), kept.begin(), kept.end());

  summary.failed = static_cast<int64_t>(failures.size());
  summary.thumbnail_failures = static_cast<int64_t>(warnings.size());
  write_listed(out / "failures.jsonl", std::move(failures));
  write_listed(out / "warnings.jsonl", std::move(warnings));
  summary.version = finish_version(writer, catalog, out, o,
                                   {identity, checkpoint, library, built.config.two_tower.embed_dim,
                                    start_empty ? fs::path() : *current},
                                   summary);
  return summary;
}

}  // namespace cadclip::index
