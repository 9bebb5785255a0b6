// Words the filter language and the query reading share (private to the
// index layer).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/index/filter.h"

namespace cadclip::index::detail {

// A key of the filter language by one of its names ("size", "largest", ...).
struct KeyName {
  std::string_view name;
  FilterKey key;
  bool length;  // a length in millimetres (units allowed); else a count
};
// The key named `name` (lower case); nullptr for a catalog field's name.
const KeyName* find_key(std::string_view name);

std::string lower(std::string_view text);
// A length unit's factor to millimetres ("mm" 1, "in" 25.4, ...); nullopt
// for a word that is no unit.
std::optional<double> unit_factor(std::string_view word);
// A proportions condition's ranges: the extents (any scale, any order) as
// points at their ratio to the largest, largest first.
std::vector<NumberRange> proportions_of(std::vector<double> extents);

}  // namespace cadclip::index::detail
