// Filters over a whole catalog (private to the index layer): the parts'
// facts held in columns, so that the conditions of a query are checked
// against every part in well under a millisecond per 100,000 parts, giving
// the set of rows the vector search may return.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cadclip/index/filter.h"
#include "cadclip/index/searcher.h"
#include "store.h"

namespace cadclip::index::detail {

class FilterColumns {
 public:
  FilterColumns() = default;
  explicit FilterColumns(const std::vector<Item>& items);

  // The rows that pass every condition. Throws cadclip::Error for a field
  // that no part of the catalog has, naming the fields it has.
  RowSet select(std::span<const Condition> conditions) const;
  // Per row, how many of `facts` the part meets (the soft ranking's tiers),
  // or -1 for a row outside `within` when it is given. Throws as select() does.
  std::vector<int8_t> facts_met(std::span<const Condition> facts, const RowSet* within) const;
  // Whether the part in `row` meets `condition`. Throws as select() does.
  bool meets(int64_t row, const Condition& condition) const;
  // The imported field names, in the order first seen.
  const std::vector<std::string>& fields() const { return field_names_; }

 private:
  struct Field {
    std::vector<std::string> values;             // distinct values as imported
    std::vector<std::optional<double>> numbers;  // each value read as a number, when it is one
    std::vector<int32_t> row_value;              // per row: index into values, -1 = none
  };
  // Calls apply(test), where test(row) tells whether the part in `row` meets
  // `c`: each key's rule is written once, and each caller runs its own loop
  // over a concrete, inlined test.
  template <typename Use>
  void with_test(const Condition& c, Use&& apply) const;
  // with_test for the keys on a part's extents, on its holes and threads,
  // and on a catalog field.
  template <typename Use>
  void with_extent_test(const Condition& c, Use&& apply) const;
  template <typename Use>
  void with_hole_test(const Condition& c, Use&& apply) const;
  template <typename Use>
  void with_field_test(const Condition& c, Use&& apply) const;
  // The catalog field `name`; throws cadclip::Error naming the fields there are.
  const Field& field_named(const std::string& name) const;
  bool meets_thread(int64_t row, const Condition& c) const;

  int64_t rows_ = 0;
  std::vector<double> axis_[3];    // extent along x, y, z
  std::vector<double> sorted_[3];  // extents, largest first
  std::vector<int64_t> faces_, holes_;
  std::vector<int64_t> hole_start_;  // row r's diameters: hole_diameters_[start[r], start[r + 1])
  std::vector<double> hole_diameters_;
  std::vector<int64_t> hole_set_start_;   // row r's sets of equal holes: hole_set_counts_[...]
  std::vector<int64_t> hole_set_counts_;  // holes in each set of one diameter (±1%)
  std::vector<int64_t> shaft_start_;      // row r's shafts: shafts_[start[r], start[r + 1])
  std::vector<data::Shaft> shafts_;
  std::vector<int64_t> repeat_start_;  // row r's sets of congruent faces: repeats_[...]
  std::vector<int64_t> repeats_;
  std::vector<int64_t> most_steps_;  // per row, the most shaft pieces on one axis (see kSteps)
  std::vector<std::string> file_type_;
  std::vector<std::string> field_names_;
  std::vector<Field> field_columns_;
};

// The conditions as one string, equal exactly when they select the same rows
// the same way: every number to the bit, every value, in order (origins and
// `because` aside).
std::string conditions_key(std::span<const Condition> conditions);

// The rows of the filters selected most recently, by conditions_key:
// a user who keeps a filter while typing one query after another, or a
// server answering many clients under one filter, pays its pass over the
// catalog once. A catalog version never changes, so an entry never goes
// stale; at most `capacity` entries (each a bit per row: 125 KB at a million
// parts). Thread-safe.
class SelectionCache {
 public:
  explicit SelectionCache(size_t capacity = 16) : capacity_(capacity) {}
  // The rows passing `conditions` (columns.select), from the cache when the
  // same conditions were selected recently.
  std::shared_ptr<const RowSet> select(const FilterColumns& columns,
                                       std::span<const Condition> conditions);

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const RowSet>>> recent_;  // newest first
};

// Case-insensitive match of `text` against `pattern`, where '*' matches any
// run of characters.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace cadclip::index::detail
