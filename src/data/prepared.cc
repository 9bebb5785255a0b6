#include "cadclip/data/prepared.h"

#include <algorithm>
#include <map>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "data/prepared_parts.h"

namespace cadclip::data {

namespace fs = std::filesystem;

namespace prepared_detail {

nlohmann::json read_manifest(const fs::path& folder) {
  const fs::path path = folder / "manifest.json";
  std::error_code error;
  if (!fs::exists(path, error))
    throw Error(
        format("{} has no manifest.json; is it a folder written by `cadclip prepare` or "
               "`cadclip merge`? (an unfinished prepare run writes it last)",
               folder.string()));
  nlohmann::json manifest =
      nlohmann::json::parse(read_text_file(path), nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object())
    throw Error(format("{} is not a JSON object; prepare the dataset again", path.string()));
  return manifest;
}

namespace {

void add_sources(const fs::path& folder, std::vector<fs::path>& out, int depth) {
  if (depth > 16)
    throw Error(format("{}: merged folders nest more than 16 deep; does one list itself?",
                       folder.string()));
  const nlohmann::json manifest = read_manifest(folder);
  const auto merged = manifest.find("merged");
  if (merged == manifest.end() || !merged->is_object()) {
    out.push_back(folder.lexically_normal());
    return;
  }
  const auto parts = merged->find("folders");
  if (parts == merged->end() || !parts->is_array())
    throw Error(format("{}: 'merged' has no 'folders' list; run cadclip merge again",
                       (folder / "manifest.json").string()));
  for (const auto& part : *parts) {
    if (!part.is_object() || !part.contains("path") || !part["path"].is_string())
      throw Error(format("{}: a 'merged.folders' entry has no 'path'; run cadclip merge again",
                         (folder / "manifest.json").string()));
    add_sources((folder / part["path"].get<std::string>()).lexically_normal(), out, depth + 1);
  }
}

// The part of a sharded prepare that a folder holds.
struct Part {
  int index = 0;
  int count = 1;
  int64_t inputs = 0;
  std::string key;
  fs::path folder;
};

}  // namespace

std::vector<fs::path> sources_of(const fs::path& folder) {
  std::vector<fs::path> out;
  add_sources(folder, out, 0);
  return out;
}

std::vector<std::string> shard_set_problems(const std::vector<fs::path>& sources) {
  // One set per prepare job: the same part count over the same inputs.
  std::map<std::pair<int, std::string>, std::vector<Part>> sets;
  for (const fs::path& folder : sources) {
    const nlohmann::json manifest = read_manifest(folder);
    const auto shard = manifest.find("shard");
    if (shard == manifest.end() || !shard->is_object()) continue;
    Part part;
    part.index = shard->value("index", 0);
    part.count = shard->value("count", 1);
    part.inputs = shard->value("inputs", int64_t{0});
    part.key = shard->value("inputs_sha256", std::string());
    part.folder = folder;
    sets[{part.count, part.key}].push_back(part);
  }
  std::vector<std::string> problems;
  for (const auto& [key, parts] : sets) {
    const int count = key.first;
    std::map<int, fs::path> seen;
    for (const Part& p : parts) {
      const auto [it, fresh] = seen.emplace(p.index, p.folder);
      if (!fresh)
        problems.push_back(
            format("part {} of the {}-way prepare of {} inputs is given twice: {} "
                   "and {}",
                   p.index, count, with_commas(p.inputs), it->second.string(), p.folder.string()));
    }
    std::vector<std::string> missing;
    for (int i = 0; i < count; ++i)
      if (!seen.count(i)) missing.push_back(std::to_string(i));
    if (!missing.empty()) {
      std::vector<std::string> present;
      for (const auto& [index, folder] : seen)
        present.push_back(format("{} ({})", index, folder.string()));
      problems.push_back(
          format("parts {} of the {}-way prepare of {} inputs are missing (given: "
                 "{}); their models are not in the dataset",
                 join(missing), count, with_commas(parts.front().inputs), join(present)));
    }
  }
  return problems;
}

}  // namespace prepared_detail

namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

CaptionFile read_folder_captions(const fs::path& folder, bool required) {
  const fs::path file = folder / "captions.jsonl";
  std::error_code error;
  if (!required && !fs::exists(file, error)) {
    CaptionFile none;
    none.path = file;
    none.format = "jsonl";
    return none;
  }
  CaptionOptions options;
  options.format = "jsonl";
  return read_captions(file, options);
}

// Several folders' captions as one prepare writes them: sorted by id, each
// id's captions in their order.
CaptionFile merge_captions(std::vector<CaptionFile> files) {
  CaptionFile merged;
  merged.path = files.front().path;
  merged.format = "jsonl";
  for (CaptionFile& file : files) {
    merged.rows += file.rows;
    merged.empty += file.empty;
    for (CaptionProblem& p : file.problems)
      merged.problems.push_back({p.line, format("{}: {}", file.path.string(), p.reason)});
    merged.captions.insert(merged.captions.end(), std::make_move_iterator(file.captions.begin()),
                           std::make_move_iterator(file.captions.end()));
  }
  std::stable_sort(merged.captions.begin(), merged.captions.end(),
                   [](const Caption& a, const Caption& b) { return a.id < b.id; });
  return merged;
}

Splits merge_splits(const std::vector<fs::path>& folders, const std::vector<Splits>& each) {
  Splits merged;
  std::map<std::string, std::pair<Split, size_t>> where;  // id -> split, folder
  for (size_t f = 0; f < each.size(); ++f) {
    for (const Split split : {Split::kTrain, Split::kValidation, Split::kTest}) {
      for (const std::string& id : each[f].of(split)) {
        const auto [it, fresh] = where.emplace(id, std::make_pair(split, f));
        if (fresh) {
          merged.named(split_name(split))->push_back(id);
        } else if (it->second.first != split) {
          throw Error(
              format("model id '{}' is in split '{}' of {} but in '{}' of {}; a model "
                     "belongs to one split: correct one of the splits.json files",
                     id, split_name(it->second.first),
                     (folders[it->second.second] / "splits.json").string(), split_name(split),
                     (folders[f] / "splits.json").string()));
        }
      }
    }
  }
  for (auto* list : {&merged.train, &merged.validation, &merged.test})
    std::sort(list->begin(), list->end());
  return merged;
}

}  // namespace

std::vector<fs::path> dataset_folders(const std::vector<std::string>& paths) {
  std::vector<fs::path> folders;
  for (const std::string& given : paths) {
    const fs::path path = given;
    std::error_code error;
    if (fs::is_directory(path, error)) {
      folders.push_back(path);
      continue;
    }
    if (!fs::is_regular_file(path, error))
      throw Error(
          format("dataset {} does not exist; pass a prepared folder, or a dataset file "
                 "that lists prepared folders one per line",
                 given));
    const std::string text = read_text_file(path);
    size_t listed = 0, pos = 0;
    int64_t line_number = 0;
    while (pos < text.size()) {
      const size_t eol = std::min(text.find('\n', pos), text.size());
      const std::string line = trim(text.substr(pos, eol - pos));
      pos = eol + 1;
      ++line_number;
      if (line.empty() || line[0] == '#') continue;
      fs::path folder = line;
      if (folder.is_relative()) folder = path.parent_path() / folder;
      if (!fs::is_directory(folder, error))
        throw Error(
            format("dataset file {} line {} names {}, which is no folder; list prepared "
                   "folders, one per line",
                   given, line_number, folder.string()));
      folders.push_back(folder.lexically_normal());
      ++listed;
    }
    if (listed == 0)
      throw Error(
          format("dataset file {} names no folder; list prepared folders, one per line "
                 "('#' starts a comment)",
                 given));
  }
  return folders;
}

PreparedData open_prepared(const std::vector<fs::path>& folders, const PreparedParts& parts) {
  if (folders.empty()) throw Error("no prepared dataset was given: pass --data FOLDER");
  PreparedData d;
  d.folders = folders;
  for (const fs::path& folder : folders) {
    const std::vector<fs::path> sources = prepared_detail::sources_of(folder);
    d.sources.insert(d.sources.end(), sources.begin(), sources.end());
  }
  for (const std::string& problem : prepared_detail::shard_set_problems(d.sources))
    log::warn("data", "{}", problem);
  if (folders.size() == 1) {
    d.dataset = Dataset::open(folders.front());
    d.captions = read_folder_captions(folders.front(), parts.captions_required);
    if (parts.splits) d.splits = read_splits(folders.front() / "splits.json");
    return d;
  }
  d.dataset = Dataset::open(folders);
  std::vector<CaptionFile> captions;
  std::vector<Splits> splits;
  for (const fs::path& folder : folders) {
    captions.push_back(read_folder_captions(folder, parts.captions_required));
    if (parts.splits) splits.push_back(read_splits(folder / "splits.json"));
  }
  d.captions = merge_captions(std::move(captions));
  if (parts.splits) d.splits = merge_splits(folders, splits);
  return d;
}

}  // namespace cadclip::data
