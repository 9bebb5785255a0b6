#include "library_changes.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/data/cad_formats.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/graph_codec.h"

namespace cadclip::index::detail {

namespace fs = std::filesystem;
using data::FailureKind;

namespace {

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

}  // namespace

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

std::string thumbnail_name(const std::string& id) { return sha256_hex(id).substr(0, 24) + ".svg"; }

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

Changes find_changes(std::vector<Found>& found, std::map<std::string, StoredItem>& existing,
                     const Annotations& notes, Catalog& catalog, const fs::path& out,
                     IndexSummary& summary) {
  Changes changes;
  std::map<std::string, const StoredItem*> by_content;
  for (const auto& [id, s] : existing) by_content.emplace(s.item.content_hash, &s);
  for (Found& f : found) {
    changes.present.insert(f.item.id);
    const auto caption = notes.captions.find(f.item.id);
    f.item.caption = caption == notes.captions.end() ? "" : caption->second;
    const auto it = existing.find(f.item.id);
    if (notes.metadata) {
      const Fields* fields = notes.metadata->find(f.item, notes.library);
      f.item.metadata = fields ? *fields : Fields{};
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
      StoredItem copy = *same->second;
      copy.embedding = catalog.embedding(copy.item.id);
      const std::string from = copy.item.id;
      if (!copy.item.thumbnail.empty() && copy.item.id != f.item.id) {
        const fs::path drawings = out / kThumbnailDir;
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

}  // namespace cadclip::index::detail
