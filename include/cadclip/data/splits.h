// Train/validation/test splits: Text2CAD's splits file
// ({"train": [...], "validation": [...], "test": [...]}), or, without one, a
// split by a hash of each id, which is deterministic and does not move an id
// when others are added or removed.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::data {

enum class Split { kTrain, kValidation, kTest };
// "train", "validation", "test"; parse_split also reads Text2CAD's "val" and
// throws cadclip::Error naming the value otherwise.
std::string_view split_name(Split split);
Split parse_split(std::string_view name);
void to_json(nlohmann::json& json, Split split);
void from_json(const nlohmann::json& json, Split& split);

struct Splits {
  std::vector<std::string> train, validation, test;

  const std::vector<std::string>& of(Split split) const;

  // The split called `name` ("train", "validation" or "test"); null for any other name.
  const std::vector<std::string>* named(std::string_view name) const;
  std::vector<std::string>* named(std::string_view name);
};

struct SplitRatios {
  double validation = 0.05;  // share of ids in validation, in [0, 1]
  double test = 0.05;        // share in test; train gets the rest (validation + test <= 1)
};

// Throws cadclip::Error naming the file when it is not such a JSON object,
// a list holds a non-string, or an id sits in two splits. "val" is accepted
// for "validation"; other keys are an error (they would be silently unused).
Splits read_splits(const std::filesystem::path& path);

// "train", "validation" or "test" for `id`: SHA-256 of the id mapped to
// [0, 1); below `test` is test, below test + validation is validation.
// Throws cadclip::Error when the ratios are out of range.
std::string_view hash_split(std::string_view id, const SplitRatios& ratios);
Splits split_by_hash(const std::vector<std::string>& ids, const SplitRatios& ratios);

// Writes the three lists (each sorted) as JSON, atomically.
void write_splits(const std::filesystem::path& path, const Splits& splits);

}  // namespace cadclip::data
