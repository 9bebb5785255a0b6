// What prepared.cc and merge.cc share: a folder's manifest, the prepare
// output folders behind a merged folder, and the check that the parts of a
// sharded prepare are all there.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cadclip::data::prepared_detail {

// manifest.json of a prepared (or merged) folder. Throws cadclip::Error
// naming the folder when there is none or it is not a JSON object.
nlohmann::json read_manifest(const std::filesystem::path& folder);

// `folder` itself, or, for a merged folder, the folders its manifest lists
// (recursively), each lexically normal.
std::vector<std::filesystem::path> sources_of(const std::filesystem::path& folder);

// Problems with the parts of sharded prepares among `sources` (their
// manifests' "shard"): a part missing ("holds parts 0, 1, 3 of a 4-way
// prepare of 2,000 inputs; part 2 is missing") or given twice. Empty: none.
std::vector<std::string> shard_set_problems(const std::vector<std::filesystem::path>& sources);

}  // namespace cadclip::data::prepared_detail
