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
#include "cadclip/core/log.h"
#include "cadclip/core/progress.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/graph_codec.h"
#include "cadclip/model/checkpoint_io.h"
#include "layout.h"
#include "store.h"

#ifdef CADCLIP_WITH_OCCT
#include "cadclip/cad/ingest.h"
#include "cadclip/cad/prepare.h"
#endif

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kAutoApproximateFrom = 20000;

// One part of the library as found on disk, before embedding.
struct Found {
  Item item;
  int64_t dataset_row = -1;  // prepared library: the row in the dataset
};

struct Failure {
  std::string path, id, kind, reason;
};

// A part's drawing as a prepare run with thumbnails left it (thumbnails.jsonl):
// the SVG file, or why there is none.
struct Drawing {
  fs::path svg;  // empty: none
  std::string path, kind, reason;
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

// The drawings of a prepared folder by id; none when it was prepared without
// thumbnails.
std::map<std::string, Drawing> read_drawings(const fs::path& prepared) {
  std::map<std::string, Drawing> drawings;
  if (!fs::exists(prepared / "thumbnails.jsonl")) return drawings;
  for (const nlohmann::json& j : read_json_lines(prepared / "thumbnails.jsonl")) {
    Drawing d;
    d.path = j.value("path", "");
    if (j.contains("svg") && j["svg"].is_string()) {
      // Only a file of the folder's own thumbnails/ is ever copied into an index.
      const fs::path svg = j["svg"].get<std::string>();
      if (svg.parent_path() != "thumbnails" || svg.extension() != ".svg")
        throw Error(
            format("{} names the drawing '{}', which is not an .svg file in {}; the "
                   "file is damaged: prepare the folder again with --thumbnails",
                   (prepared / "thumbnails.jsonl").string(), svg.string(),
                   (prepared / "thumbnails").string()));
      d.svg = prepared / svg;
    } else {
      d.kind = j.value("kind", "draw");
      d.reason = j.value("reason", "no drawing was made");
    }
    drawings[j.value("id", "")] = std::move(d);
  }
  return drawings;
}

// Large libraries: an inverted file with about 4 sqrt(n) lists (a power of
// two), searched 16 lists deep. On 100,000 parts IVF1024,Flat at nprobe 16
// found 0.998 of the exact top 10 and answered faster than HNSW32, which also
// took 20x longer to build (docs/PERFORMANCE.md, "Search").
std::string choose_factory(const IndexOptions& o, int64_t parts) {
  if (o.factory != "auto") return o.factory;
  if (parts < kAutoApproximateFrom) return "Flat";
  int64_t lists = 64;
  while (lists * 2 <= 4 * static_cast<int64_t>(std::sqrt(static_cast<double>(parts)))) lists *= 2;
  return format("IVF{},Flat", lists);
}

std::string default_search_params(const IndexOptions& o, const std::string& factory) {
  if (!o.search_params.empty()) return o.search_params;
  if (factory.find("HNSW") != std::string::npos) return "efSearch=128";
  if (factory.starts_with("IVF")) return "nprobe=16";
  return "";
}

void fill_from_graph(Item& item, const data::BRepGraph& g) {
  for (int i = 0; i < 3; ++i) item.size_mm[i] = g.bbox_mm[3 + i] - g.bbox_mm[i];
  item.faces = g.num_faces();
}

std::map<std::string, std::string> first_captions(const fs::path& path) {
  std::map<std::string, std::string> out;
  if (path.empty()) return out;
  const data::CaptionFile file = data::read_captions(path, {});
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

// [n, d] embeddings of graphs, batch by batch.
at::Tensor embed_graphs(model::TwoTowerImpl& model, const std::vector<data::BRepGraph>& graphs) {
  c10::InferenceMode inference;
  return model.encode_brep(graphs).contiguous();
}

std::vector<Failure> read_failures(const fs::path& path) {
  std::vector<Failure> failures;
  if (!fs::exists(path)) return failures;
  for (const nlohmann::json& j : read_json_lines(path))
    failures.push_back(
        {j.value("path", ""), j.value("id", ""), j.value("kind", ""), j.value("reason", "")});
  return failures;
}

void write_failures(const fs::path& path, std::vector<Failure> failures) {
  std::sort(failures.begin(), failures.end(),
            [](const Failure& a, const Failure& b) { return a.path < b.path; });
  std::string text;
  for (const Failure& f : failures) {
    text += nlohmann::json{{"path", f.path}, {"id", f.id}, {"kind", f.kind}, {"reason", f.reason}}
                .dump() +
            "\n";
  }
  write_text_atomic(path, text);
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

}  // namespace

IndexSummary build_index(const IndexOptions& o) {
  if (o.checkpoint.empty()) throw Error("cadclip index needs a checkpoint (a run folder or .json)");
  if (o.out.empty()) throw Error("cadclip index needs --out, the index folder to write");
  if (o.batch_size < 1) throw Error(format("--batch-size {} must be at least 1", o.batch_size));
  const fs::path library = fs::absolute(o.library);
  if (!fs::is_directory(library))
    throw Error(format("library {} is no folder: pass a folder of CAD files or a prepared folder",
                       o.library));
  const fs::path index_folder = fs::absolute(o.out);
  const fs::path checkpoint = model::resolve_checkpoint(o.checkpoint);
  const std::string identity = model::checkpoint_identity(checkpoint);
  // The model first: a checkpoint that is refused (damaged, NaN) leaves the
  // index as it was, before anything was ingested or written.
  model::BuiltModel built = model::load_model_from_checkpoint(checkpoint);

  // One writer at a time; the new version is built beside the current one,
  // which readers keep using until it is complete and swapped in.
  detail::IndexWriter writer = detail::IndexWriter::open(index_folder, o.wait);
  const std::optional<fs::path> current = writer.current();
  bool start_empty = !current.has_value();
  if (current) {
    const detail::Catalog old = detail::Catalog::open(*current, /*create=*/false);
    const std::optional<std::string> previous = old.meta("checkpoint_identity");
    if (!previous) {
      log::warn("index", "{} is incomplete (its catalog names no checkpoint); building it anew",
                current->string());
      start_empty = true;
    } else if (*previous != identity) {
      if (!o.overwrite)
        throw Error(format(
            "{} was built with other weights (checkpoint {}); pass --overwrite to "
            "rebuild it with {}",
            index_folder.string(), old.meta("checkpoint").value_or("?"), checkpoint.string()));
      log::warn("index", "rebuilding {}: the checkpoint changed", index_folder.string());
      start_empty = true;
    }
  }
  const fs::path out = writer.begin_version();
  if (!start_empty) copy_version(*current, out);

  std::optional<detail::Catalog> catalog_holder = detail::Catalog::open(out, /*create=*/true);
  detail::Catalog& catalog = *catalog_holder;
  std::map<std::string, detail::StoredItem> existing;
  for (detail::StoredItem& s : catalog.items()) existing.emplace(s.item.id, std::move(s));

  // What the library holds now.
  const bool prepared = fs::exists(library / "manifest.json");
  fs::path captions_path = o.captions;
  if (captions_path.empty() && prepared && fs::exists(library / "captions.jsonl"))
    captions_path = library / "captions.jsonl";
  const std::map<std::string, std::string> captions = first_captions(captions_path);
  std::vector<Found> found;
  std::vector<Failure> failures;
  std::optional<data::Dataset> dataset;
  if (prepared) {
    dataset = data::Dataset::open(library);
    for (int64_t i = 0; i < dataset->size(); ++i) {
      Found f;
      f.dataset_row = i;
      f.item.id = dataset->id(i);
      f.item.name = f.item.id;
      f.item.content_hash = sha256_hex(data::encode_graph(dataset->graph(i)));
      found.push_back(std::move(f));
    }
  } else {
#ifdef CADCLIP_WITH_OCCT
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(library)) {
      if (entry.is_regular_file() && data::is_cad_path(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::set<std::string> ids;
    for (const fs::path& file : files) {
      const std::string id = file.stem().string();
      if (!ids.insert(id).second) {
        failures.push_back({file.string(), id, "duplicate_id",
                            format("another file of the library already gives the id '{}'; "
                                   "rename one of them",
                                   id)});
        continue;
      }
      Found f;
      f.item.id = id;
      f.item.name = id;
      f.item.source = file.string();
      f.item.content_hash = sha256_file_hex(file);
      found.push_back(std::move(f));
    }
#else
    throw Error(
        format("{} is no prepared folder (no manifest.json), and this cadclip was built "
               "without Open CASCADE, so it cannot read CAD files; prepare the library "
               "on a machine with OCCT",
               library.string()));
#endif
  }

  // What changed.
  IndexSummary summary;
  std::vector<Found*> todo;
  std::set<std::string> present;
  for (Found& f : found) {
    present.insert(f.item.id);
    const auto it = existing.find(f.item.id);
    if (it != existing.end() && it->second.item.content_hash == f.item.content_hash &&
        it->second.item.source == f.item.source) {
      ++summary.unchanged;
      const auto caption = captions.find(f.item.id);
      const std::string now = caption == captions.end() ? "" : caption->second;
      if (now != it->second.item.caption) {  // a caption file may change on its own
        it->second.item.caption = now;
        catalog.put(it->second.item, it->second.embedding);
      }
      continue;
    }
    const auto caption = captions.find(f.item.id);
    if (caption != captions.end()) f.item.caption = caption->second;
    todo.push_back(&f);
  }
  std::vector<std::string> gone;
  for (const auto& [id, s] : existing) {
    if (!present.count(id)) gone.push_back(id);
  }
  log::info("index", "{} parts in the library: {} to embed, {} unchanged, {} removed",
            with_commas(found.size()), todo.size(), summary.unchanged, gone.size());

  // Graphs of what must be embedded, and drawings of them by id.
  std::vector<std::pair<Found*, data::BRepGraph>> graphs;
  std::map<std::string, Drawing> drawings;
  // A prepared library has no CAD sources to draw from here, only the drawings
  // of `cadclip prepare --thumbnails`, made by its workers.
  if (prepared && o.thumbnails) drawings = read_drawings(library);
  if (prepared) {
    for (Found* f : todo) graphs.emplace_back(f, data::BRepGraph{});  // read batch by batch
  } else if (!todo.empty()) {
#ifdef CADCLIP_WITH_OCCT
    cad::PrepareOptions prepare;
    for (Found* f : todo) prepare.inputs.push_back(f->item.source);
    prepare.out = (out / "work" / "prepared").string();
    prepare.workers = o.workers;
    prepare.file_timeout_s = o.file_timeout_s;
    prepare.ingest.assume_unit = o.assume_unit;
    prepare.overwrite = true;
    prepare.worker_binary = o.worker_binary;
    // The workers that read the shapes draw them too (protocol in
    // src/cad/prepare_protocol.h), so that Open CASCADE's HLR runs in the same
    // contained processes as the reading: a crash or hang while drawing costs
    // that part its thumbnail, never the job. The part itself stays indexed,
    // since its embedding needs only the graph, which the worker sent before
    // drawing; the reason goes to warnings.jsonl.
    prepare.thumbnails = o.thumbnails;
    fs::remove_all(prepare.out);
    cad::run_prepare(prepare);
    drawings = read_drawings(prepare.out);
    const data::Dataset ingested = data::Dataset::open(prepare.out);
    std::map<std::string, Found*> by_id;
    for (Found* f : todo) by_id[f->item.id] = f;
    for (int64_t i = 0; i < ingested.size(); ++i) {
      const auto it = by_id.find(ingested.id(i));
      if (it != by_id.end()) graphs.emplace_back(it->second, ingested.graph(i));
    }
    for (Failure& f : read_failures(fs::path(prepare.out) / "failures.jsonl"))
      failures.push_back(std::move(f));
#endif
  }

  // Counted after ingest: a file that failed is neither added nor changed.
  for (const auto& [found_part, graph] : graphs)
    (existing.count(found_part->item.id) ? summary.changed : summary.added) += 1;

  // Embed, draw, and record.
  std::vector<std::string> failed_ids;
  for (const Failure& f : failures) failed_ids.push_back(f.id);
  catalog.begin();
  for (const std::string& id : gone) {
    const std::string thumb = existing[id].item.thumbnail;
    if (!thumb.empty()) fs::remove(out / detail::kThumbnailDir / thumb);
    catalog.remove(id);
  }
  // A part that changed into a file that fails is no longer in the library.
  for (const std::string& id : failed_ids) {
    if (existing.count(id) && present.count(id)) {
      catalog.remove(id);
      ++summary.removed;
    }
  }
  summary.removed += static_cast<int64_t>(gone.size());
  // Parts without a drawing: this run's, and an earlier run's for parts kept unchanged.
  std::vector<Failure> warnings;
  std::set<std::string> redone(failed_ids.begin(), failed_ids.end());  // or gone from the index
  for (const auto& [found_part, graph] : graphs) redone.insert(found_part->item.id);
  for (Failure& w : read_failures(out / "warnings.jsonl"))
    if (present.count(w.id) && !redone.count(w.id) && existing.count(w.id) &&
        existing[w.id].item.thumbnail.empty())
      warnings.push_back(std::move(w));
  Progress progress("index", {.total = static_cast<int64_t>(graphs.size()), .unit = "parts"});
  for (size_t start = 0; start < graphs.size(); start += o.batch_size) {
    const size_t end = std::min(graphs.size(), start + static_cast<size_t>(o.batch_size));
    std::vector<data::BRepGraph> batch;
    for (size_t i = start; i < end; ++i) {
      if (graphs[i].first->dataset_row >= 0)
        graphs[i].second = dataset->graph(graphs[i].first->dataset_row);
      batch.push_back(graphs[i].second);
    }
    const at::Tensor emb = embed_graphs(*built.model, batch);  // [b, d]
    for (size_t i = start; i < end; ++i) {
      Item& item = graphs[i].first->item;
      fill_from_graph(item, graphs[i].second);
      item.thumbnail.clear();
      const fs::path thumbnail_file = out / detail::kThumbnailDir / thumbnail_name(item.id);
      const auto drawing = drawings.find(item.id);
      if (o.thumbnails && drawing != drawings.end()) {
        if (!drawing->second.svg.empty() && !fs::exists(drawing->second.svg)) {
          drawing->second.kind = "missing";
          drawing->second.reason =
              format("{} is gone; prepare the library again with --thumbnails to draw it",
                     drawing->second.svg.string());
          drawing->second.svg.clear();
        }
        if (!drawing->second.svg.empty()) {
          item.thumbnail = thumbnail_name(item.id);
          write_text_atomic(thumbnail_file, read_text_file(drawing->second.svg));
          ++summary.thumbnails;
        } else {
          log::warn("index", "no thumbnail for {} ({}): {}", item.id, drawing->second.kind,
                    drawing->second.reason);
          warnings.push_back({drawing->second.path.empty() ? item.source : drawing->second.path,
                              item.id, "thumbnail_" + drawing->second.kind,
                              drawing->second.reason});
        }
      }
      if (item.thumbnail.empty()) fs::remove(thumbnail_file);  // a changed part's old drawing
      const at::Tensor row = emb[static_cast<int64_t>(i - start)].contiguous();
      catalog.put(item, {row.data_ptr<float>(), static_cast<size_t>(row.numel())});
      graphs[i].second = data::BRepGraph{};
    }
    progress.advance(static_cast<int64_t>(end - start));
  }
  progress.finish();
#ifdef CADCLIP_WITH_OCCT
  fs::remove_all(out / "work");
#endif

  // The vectors, always rebuilt from the catalog so that they follow its order.
  const std::vector<detail::StoredItem> all = catalog.items();
  const int64_t d = built.config.two_tower.embed_dim;
  std::vector<float> matrix;
  matrix.reserve(all.size() * d);
  for (const detail::StoredItem& s : all) {
    if (static_cast<int64_t>(s.embedding.size()) != d)
      throw Error(format("{}: part '{}' has an embedding of size {}, the model {}", out.string(),
                         s.item.id, s.embedding.size(), d));
    matrix.insert(matrix.end(), s.embedding.begin(), s.embedding.end());
  }
  summary.factory = choose_factory(o, static_cast<int64_t>(all.size()));
  const std::string search_params = default_search_params(o, summary.factory);
  log::info("index", "building a FAISS '{}' index over {} vectors", summary.factory, all.size());
  detail::VectorIndex vectors = detail::VectorIndex::build(
      matrix.data(), static_cast<int64_t>(all.size()), d, summary.factory);
  vectors.set_search_params(search_params);
  catalog.set_meta("checkpoint_identity", identity);
  catalog.set_meta("checkpoint", checkpoint.string());
  catalog.set_meta("factory", summary.factory);
  catalog.set_meta("search_params", search_params);
  catalog.set_meta("embed_dim", std::to_string(d));
  catalog.set_meta("library", library.string());
  catalog.set_meta("catalog_version", std::to_string(detail::kCatalogVersion));
  vectors.write(out / detail::kVectorsFile);
  // The catalog names its vectors, so a version whose files do not belong
  // together is refused when opened.
  catalog.set_meta("vectors_sha256", sha256_file_hex(out / detail::kVectorsFile));
  debug_kill_point("vectors");
  catalog.commit();
  catalog_holder.reset();

  summary.parts = static_cast<int64_t>(all.size());
  summary.failed = static_cast<int64_t>(failures.size());
  write_failures(out / "failures.jsonl", failures);
  summary.thumbnail_failures = static_cast<int64_t>(warnings.size());
  write_failures(out / "warnings.jsonl", warnings);
  nlohmann::json used = {{"checkpoint", o.checkpoint},
                         {"library", o.library},
                         {"out", o.out},
                         {"factory", o.factory},
                         {"search_params", o.search_params},
                         {"captions", o.captions},
                         {"thumbnails", o.thumbnails},
                         {"batch_size", o.batch_size},
                         {"workers", o.workers},
                         {"file_timeout_s", o.file_timeout_s},
                         {"assume_unit", o.assume_unit},
                         {"overwrite", o.overwrite},
                         {"wait", o.wait}};
  write_text_atomic(out / "options.json", used.dump(2) + "\n");
  debug_kill_point("commit");
  summary.version = writer.commit_version().string();
  return summary;
}

}  // namespace cadclip::index
