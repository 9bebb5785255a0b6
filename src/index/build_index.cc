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
#include "library_changes.h"
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
     "FAISS search parameters, e.g. nprobe=16 (default for IVF; 8 for SQ or PQ codes), "
     "efSearch=128 (default for HNSW), and rerank=N: a lossy index (SQ or PQ codes) orders N "
     "candidates by the exact vectors (default 64)"),
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
using detail::Changes;
using detail::Found;
using detail::Listed;
using detail::read_json_lines;
using detail::thumbnail_name;

constexpr std::string_view kDrawingPrefix = "thumbnail_";

// A part's drawing, or why there is none.
struct Drawing {
  std::string path;   // the CAD file it shows (as the ingest named it)
  fs::path svg_file;  // a prepared folder's drawing, read when its part is embedded
  bool drawn = false;
  std::string svg;
  IngestFailure none;  // when not drawn
};

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
    emb = model_.embed_parts(graphs).contiguous();
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

// The library folder (or dataset file) a run reads, and its kind.
struct Library {
  fs::path path;
  bool prepared = false;  // a prepared folder, or a dataset file listing them
};

Library check_options(const IndexOptions& o) {
  if (o.checkpoint.empty()) throw Error("cadclip index needs a checkpoint (a run folder or .json)");
  if (o.out.empty()) throw Error("cadclip index needs --out, the index folder to write");
  if (o.batch_size < 1) throw Error(format("--batch-size {} must be at least 1", o.batch_size));
  data::check_limits(o.limits);
  Library library{fs::absolute(o.library)};
  // A dataset file lists prepared folders (the parts of a sharded prepare).
  const bool listed = fs::is_regular_file(library.path);
  if (!listed && !fs::is_directory(library.path))
    throw Error(
        format("library {} is no folder: pass a folder of CAD files, a prepared folder, "
               "or a dataset file listing prepared folders",
               o.library));
  library.prepared = listed || fs::exists(library.path / "manifest.json");
  return library;
}

// What the library holds now: its parts as found, its prepared data when it
// is prepared, and the captions shown with them.
struct LibraryContents {
  std::optional<data::PreparedData> dataset;
  std::vector<Found> found;
  std::map<std::string, std::string> shown_captions;
};

LibraryContents read_library(const IndexOptions& o, const Library& library,
                             std::vector<Listed>& failures) {
  LibraryContents contents;
  if (library.prepared)
    contents.dataset = data::open_prepared(data::dataset_folders({library.path.string()}),
                                           {/*splits=*/false, /*captions_required=*/false});
  data::CaptionFile captions;
  if (!o.captions.empty()) {
    captions = data::read_captions(o.captions, {});
  } else if (library.prepared) {
    captions = contents.dataset->captions;
  }
  contents.shown_captions = first_captions(captions);
  contents.found = library.prepared ? detail::found_in_dataset(*contents.dataset)
                                    : detail::found_in_folder(library.path, failures);
  return contents;
}

// Embeds (ingesting a folder of CAD files on the way), draws and records the
// new and changed parts, counted as they come: a file that fails is neither
// added nor changed. Returns the ids embedded.
std::set<std::string> embed_changes(const IndexOptions& o, model::TwoTowerImpl& model,
                                    const LibraryContents& contents, const Changes& changes,
                                    detail::Catalog& catalog, const fs::path& out,
                                    const std::map<std::string, detail::StoredItem>& existing,
                                    IndexSummary& summary, std::vector<Listed>& warnings,
                                    std::vector<Listed>& failures) {
  Progress progress("index", {.total = static_cast<int64_t>(changes.todo.size()), .unit = "parts"});
  Embedder embedder(model, catalog, out, o, existing, summary, warnings, progress);
  if (contents.dataset) {
    embed_prepared(*contents.dataset, changes.todo, o.thumbnails, embedder);
  } else {
#ifdef CADCLIP_WITH_OCCT
    ingest_parts(o, changes.todo, embedder, failures);
#else
    (void)failures;
#endif
  }
  embedder.flush();
  progress.finish();
  return embedder.embedded();
}

// Counts what left the library, and keeps the earlier run's warnings of parts
// kept unchanged before this run's.
void settle_outcomes(const Changes& changes, std::set<std::string> redone,
                     std::map<std::string, detail::StoredItem>& existing, detail::Catalog& catalog,
                     const fs::path& out, IndexSummary& summary, std::vector<Listed>& warnings,
                     const std::vector<Listed>& failures) {
  // A part that changed into a file that fails is no longer in the library.
  for (const Listed& f : failures) {
    redone.insert(f.id);
    if (existing.count(f.id) && changes.present.count(f.id)) {
      catalog.remove(f.id);
      ++summary.removed;
    }
  }
  // A part whose file moved is counted as moved, not also as removed.
  summary.removed += static_cast<int64_t>(changes.gone.size() - changes.moved_from.size());
  std::vector<Listed> kept;
  for (Listed& w : read_listed(out / "warnings.jsonl"))
    if (changes.present.count(w.id) && !redone.count(w.id) && existing.count(w.id) &&
        existing[w.id].item.thumbnail.empty())
      kept.push_back(std::move(w));
  warnings.insert(warnings.begin(), kept.begin(), kept.end());
  summary.failed = static_cast<int64_t>(failures.size());
  summary.thumbnail_failures = static_cast<int64_t>(warnings.size());
}

void log_metadata_rows(const std::optional<detail::PartMetadata>& metadata, const IndexOptions& o) {
  if (!metadata) return;
  const std::vector<std::string> unmatched = metadata->unmatched();
  if (!unmatched.empty())
    log::warn("index", "{} rows of {} name no part of the library (by {}), e.g. '{}'",
              unmatched.size(), o.metadata, metadata->key_column(), unmatched.front());
}

}  // namespace

IndexSummary build_index(const IndexOptions& o) {
  const Library library = check_options(o);
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

  std::vector<Listed> failures;
  LibraryContents contents = read_library(o, library, failures);
  IndexSummary summary;
  catalog->begin();
  const Changes changes = detail::find_changes(
      contents.found, existing,
      {contents.shown_captions, metadata ? &*metadata : nullptr, library.path, o.add}, *catalog,
      out, summary);
  log::info("index", "{} parts in the library: {} to embed, {} unchanged, {} moved, {} removed",
            with_commas(contents.found.size()), changes.todo.size(), summary.unchanged,
            summary.moved, changes.gone.size() - changes.moved_from.size());
  detail::log_changes(changes);
  log_metadata_rows(metadata, o);
  for (const std::string& id : changes.gone) {
    const std::string thumb = existing[id].item.thumbnail;
    if (!thumb.empty()) fs::remove(out / detail::kThumbnailDir / thumb);
    catalog->remove(id);
  }
  std::vector<Listed> warnings;
  std::set<std::string> redone = embed_changes(o, *built.model, contents, changes, *catalog, out,
                                               existing, summary, warnings, failures);
  settle_outcomes(changes, std::move(redone), existing, *catalog, out, summary, warnings, failures);
  write_listed(out / "failures.jsonl", std::move(failures));
  write_listed(out / "warnings.jsonl", std::move(warnings));
  summary.version = finish_version(writer, catalog, out, o,
                                   {identity, checkpoint, library.path, built.model->search_dim(),
                                    start_empty ? fs::path() : *current},
                                   summary);
  return summary;
}

}  // namespace cadclip::index
