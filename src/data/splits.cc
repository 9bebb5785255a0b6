#include "cadclip/data/splits.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"

namespace cadclip::data {

Splits read_splits(const std::filesystem::path& path) {
  const nlohmann::json doc =
      nlohmann::json::parse(read_text_file(path), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object())
    throw Error(
        format("splits file {} is not a JSON object like {{\"train\": [...], "
               "\"validation\": [...], \"test\": [...]}}",
               path.string()));
  Splits splits;
  std::map<std::string, std::string> seen;  // id -> split
  for (const auto& [key, list] : doc.items()) {
    std::vector<std::string>* into = splits.named(key == "val" ? "validation" : key);
    if (into == nullptr)
      throw Error(
          format("splits file {} has the key '{}'; only train, validation (or val) and test "
                 "are understood",
                 path.string(), key));
    if (!list.is_array())
      throw Error(format("splits file {}: '{}' is not a list of ids", path.string(), key));
    for (const auto& id : list) {
      if (!id.is_string())
        throw Error(format("splits file {}: '{}' holds {}, which is not a string id", path.string(),
                           key, id.dump()));
      const auto [it, inserted] = seen.emplace(id.get<std::string>(), key);
      if (!inserted)
        throw Error(
            format("splits file {}: id '{}' is in both '{}' and '{}'; an id belongs to one "
                   "split",
                   path.string(), it->first, it->second, key));
      into->push_back(id.get<std::string>());
    }
  }
  return splits;
}

std::string_view hash_split(std::string_view id, const SplitRatios& ratios) {
  if (!(ratios.validation >= 0 && ratios.test >= 0 && ratios.validation + ratios.test <= 1))
    throw Error(format("split ratios validation={} test={} must be >= 0 and add up to at most 1",
                       ratios.validation, ratios.test));
  const std::array<uint8_t, 32> digest = Sha256().update(id).digest();
  uint64_t top = 0;
  for (int i = 0; i < 8; ++i) top = (top << 8) | digest[i];
  const double u = static_cast<double>(top >> 11) / static_cast<double>(uint64_t{1} << 53);
  if (u < ratios.test) return "test";
  if (u < ratios.test + ratios.validation) return "validation";
  return "train";
}

std::string_view split_name(Split split) {
  switch (split) {
    case Split::kTrain:
      return "train";
    case Split::kValidation:
      return "validation";
    case Split::kTest:
      return "test";
  }
  return "train";
}

Split parse_split(std::string_view name) {
  if (name == "train") return Split::kTrain;
  if (name == "validation" || name == "val") return Split::kValidation;
  if (name == "test") return Split::kTest;
  throw Error(format("split '{}' is not train, validation or test", name));
}

void to_json(nlohmann::json& json, Split split) { json = split_name(split); }
void from_json(const nlohmann::json& json, Split& split) {
  split = parse_split(json.get<std::string>());
}

const std::vector<std::string>& Splits::of(Split split) const { return *named(split_name(split)); }

const std::vector<std::string>* Splits::named(std::string_view name) const {
  return name == "train"        ? &train
         : name == "validation" ? &validation
         : name == "test"       ? &test
                                : nullptr;
}

std::vector<std::string>* Splits::named(std::string_view name) {
  return const_cast<std::vector<std::string>*>(std::as_const(*this).named(name));
}

Splits split_by_hash(const std::vector<std::string>& ids, const SplitRatios& ratios) {
  Splits splits;
  for (const std::string& id : ids) {
    splits.named(hash_split(id, ratios))->push_back(id);
  }
  return splits;
}

void write_splits(const std::filesystem::path& path, const Splits& splits) {
  auto sorted = [](std::vector<std::string> ids) {
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  nlohmann::ordered_json doc = {{"train", sorted(splits.train)},
                                {"validation", sorted(splits.validation)},
                                {"test", sorted(splits.test)}};
  write_text_atomic(path, doc.dump(1) + "\n");
}

}  // namespace cadclip::data
