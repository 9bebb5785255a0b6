// The prepare job's inputs: files and folders named on the command line or in
// --inputs-from, searched by extension, given ids, and checked before opening.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "cad/input_checks.h"
#include "cad/prepare_job.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"

namespace cadclip::cad::prepare_detail {
namespace {

namespace fs = std::filesystem;
using data::FailureKind;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

void add_folder(const fs::path& folder, const std::set<std::string>& extensions,
                const fs::path& out, std::vector<Input>& inputs) {
  std::error_code error;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, error);
  if (error) throw Error(format("cannot read the folder {}: {}", folder.string(), error.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    const fs::path& path = it->path();
    if (it->is_directory(error)) {
      // The output folder may sit inside an input folder: its files are no inputs.
      if (same_file(path, out)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(error)) continue;
    std::string ext = lower(path.extension().string());
    if (ext.empty() || !extensions.count(ext.substr(1))) continue;
    fs::path relative = path.lexically_relative(folder);
    relative.replace_extension();
    inputs.push_back({path, relative.generic_string()});
  }
  if (error)
    throw Error(format("reading the folder {} failed: {}", folder.string(), error.message()));
}

std::vector<fs::path> listed_inputs(const PrepareOptions& o) {
  std::vector<fs::path> roots(o.inputs.begin(), o.inputs.end());
  if (!o.inputs_from.empty()) {
    const fs::path list = o.inputs_from;
    const std::string text = read_text_file(list);
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t eol = std::min(text.find('\n', pos), text.size());
      const std::string line = trim(text.substr(pos, eol - pos));
      pos = eol + 1;
      if (line.empty() || line[0] == '#') continue;
      fs::path path = line;
      if (path.is_relative()) path = list.parent_path() / path;
      roots.push_back(path);
    }
  }
  return roots;
}

}  // namespace

std::vector<Input> collect_inputs(const PrepareOptions& o, std::vector<Failure>& failures) {
  std::set<std::string> extensions;
  for (const auto& e : o.extensions) extensions.insert(lower(e.starts_with(".") ? e.substr(1) : e));
  std::vector<Input> found;
  for (const fs::path& root : listed_inputs(o)) {
    std::error_code error;
    if (fs::is_directory(root, error)) {
      add_folder(root, extensions, o.out, found);
    } else if (fs::exists(root, error)) {
      found.push_back({root, root.stem().string()});
    } else {
      throw Error(format("input {} does not exist; pass CAD files, folders, or --inputs-from LIST",
                         root.string()));
    }
  }
  std::sort(found.begin(), found.end(), [](const Input& a, const Input& b) {
    return a.id != b.id ? a.id < b.id : a.path < b.path;
  });
  std::vector<Input> inputs;
  std::set<fs::path> seen_paths;
  std::map<std::string, fs::path> seen_ids;
  for (Input& in : found) {
    // Absolute, so that a run resumed from another working folder still finds its journal entries.
    in.path = fs::absolute(in.path).lexically_normal();
    if (!seen_paths.insert(in.path).second) continue;  // the same file named twice
    FileFacts facts;
    std::optional<data::IngestFailure> failure = stat_input(in.path, facts);
    in.size = facts.size;
    in.mtime_ns = facts.mtime_ns;
    if (!failure) failure = check_id(in.id);
    if (!failure) {
      // A file that is too large still claims its id.
      const auto [it, fresh] = seen_ids.emplace(in.id, in.path);
      if (!fresh)
        failure = data::IngestFailure{
            FailureKind::kDuplicateId,
            format("{} already gives the model id '{}'; rename one of the files",
                   it->second.string(), in.id)};
    }
    if (!failure) failure = check_size(in.size, o.ingest.limits.max_file_mb);
    if (failure) {
      failures.push_back({in.path.string(), in.id, std::move(*failure)});
      continue;
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

void select_part(const PrepareOptions& o, FinishedRun& run) {
  if (o.num_shards <= 1) return;
  // The whole job's inputs by id, whatever this part holds: what tells the
  // parts of one job from those of another (cadclip merge checks it).
  std::vector<std::string> all_ids;
  for (const Input& in : run.inputs) all_ids.push_back(in.id);
  for (const Failure& f : run.failures) all_ids.push_back(f.id);
  std::sort(all_ids.begin(), all_ids.end());
  Sha256 key;
  for (const std::string& id : all_ids) key.update(id).update(std::string_view("\n", 1));

  auto mine = [&](const std::string& id) {
    if (shard_of(id, o.num_shards) == o.shard_index) return true;
    run.other_part_ids.insert(id);
    return false;
  };
  std::vector<Input> inputs;
  for (Input& in : run.inputs)
    if (mine(in.id)) inputs.push_back(std::move(in));
  std::vector<Failure> failures;
  for (Failure& f : run.failures)
    if (mine(f.id)) failures.push_back(std::move(f));
  run.inputs = std::move(inputs);
  run.failures = std::move(failures);
  run.shard = {{"index", o.shard_index},
               {"count", o.num_shards},
               {"inputs", all_ids.size()},
               {"inputs_sha256", key.hex_digest()}};
}

}  // namespace cadclip::cad::prepare_detail

namespace cadclip::cad {

int shard_of(std::string_view id, int num_shards) {
  if (num_shards < 1) throw Error(format("{} parts: a job has at least one", num_shards));
  const std::array<uint8_t, 32> digest = Sha256().update("cadclip.shard\n").update(id).digest();
  uint64_t top = 0;
  for (int i = 0; i < 8; ++i) top = (top << 8) | digest[static_cast<size_t>(i)];
  return static_cast<int>(top % static_cast<uint64_t>(num_shards));
}

}  // namespace cadclip::cad
