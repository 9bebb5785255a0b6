#include "selection.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "thread_sizes.h"

namespace cadclip::index::detail {
namespace {

char folded(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::optional<double> as_number(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (begin == end) return std::nullopt;
  double value = 0;
  const auto [stop, ec] = std::from_chars(text.data() + begin, text.data() + end, value);
  if (ec != std::errc() || stop != text.data() + end || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool contains_folded(std::string_view text, std::string_view part) {
  if (part.empty()) return true;
  for (size_t i = 0; i + part.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < part.size() && folded(text[i + k]) == folded(part[k])) ++k;
    if (k == part.size()) return true;
  }
  return false;
}

// The most round pieces one shaft axis holds, when they have more than one
// diameter (±1%): a stepped shaft's steps; 0 for a part with none.
int64_t steps_of(const std::vector<data::Shaft>& shafts) {
  int64_t most = 0;
  for (size_t s = 0; s < shafts.size();) {
    size_t end = s;
    double thinnest = shafts[s].diameter_mm, thickest = thinnest;
    for (; end < shafts.size() && shafts[end].axis == shafts[s].axis; ++end) {
      thinnest = std::min(thinnest, shafts[end].diameter_mm);
      thickest = std::max(thickest, shafts[end].diameter_mm);
    }
    if (thickest > 1.01 * thinnest) most = std::max(most, static_cast<int64_t>(end - s));
    s = end;
  }
  return most;
}

// A condition on a part's extents, read into closed bounds (an open bound
// moved to the next double inside it) and tested with neither a branch nor
// a short-circuit: nothing to guess wrong whatever share of a million rows
// passes, and loops over it that the compiler can vectorise. Each key's rule
// is written here once; filters test it a row at a time, the facts' pass a
// block at a time (count_extent_matches).
struct ExtentTest {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  // kDimsAny: any of several shapes (a dims condition with alternatives).
  enum class Kind { kColumn, kAnyExtent, kDims, kDimsAny, kProportions };
  struct Bounds {
    double low = -kInf;
    double high = kInf;
    // 1 inside, 0 outside: whole numbers, combined with & and | below.
    int operator()(double v) const {
      return static_cast<int>(v >= low) & static_cast<int>(v <= high);
    }
  };
  static Bounds closed(const NumberRange& r) {
    return {r.min_open ? std::nextafter(r.min, kInf) : r.min,
            r.max_open ? std::nextafter(r.max, -kInf) : r.max};
  }

  Kind kind = Kind::kColumn;
  const double* column = nullptr;            // kColumn: one axis or one sorted extent
  std::array<const double*, 3> sorted = {};  // the sorted extents, largest first
  std::array<Bounds, 3> bounds;              // kColumn, kAnyExtent: [0]; kDims: each extent
  // kDimsAny: each shape's extents, three a shape; `shapes` of them are used.
  std::array<Bounds, 3 * kMaxDimsShapes> shape_bounds;
  int shapes = 0;
  std::array<double, 2> stated = {0, 0};  // kProportions: middle and smallest / largest
  std::array<double, 2> tolerance = {kInf, kInf};
  bool negate = false;  // kColumn, kAnyExtent

  bool column_passes(int64_t r) const { return (bounds[0](column[r]) != 0) != negate; }
  bool any_passes(int64_t r) const {
    const Bounds& b = bounds[0];
    return ((b(sorted[0][r]) | b(sorted[1][r]) | b(sorted[2][r])) != 0) != negate;
  }
  bool dims_pass(int64_t r) const {
    return (bounds[0](sorted[0][r]) & bounds[1](sorted[1][r]) & bounds[2](sorted[2][r])) != 0;
  }
  bool any_shape_passes(int64_t r) const {
    int any = 0;
    for (int s = 0; s < shapes; ++s)
      any |= shape_bounds[3 * s](sorted[0][r]) & shape_bounds[3 * s + 1](sorted[1][r]) &
             shape_bounds[3 * s + 2](sorted[2][r]);
    return any != 0;
  }
  bool proportions_pass(int64_t r) const {
    const double largest = sorted[0][r];
    return (static_cast<int>(largest > 0) &
            static_cast<int>(std::abs(sorted[1][r] / largest - stated[0]) <= tolerance[0]) &
            static_cast<int>(std::abs(sorted[2][r] / largest - stated[1]) <= tolerance[1])) != 0;
  }
};

// `c` over the columns when its key is on the extents: axes, and the sorted
// extents (largest first), which every key but a single axis reads, so that
// one set of columns stays in the cache. nullopt for any other key.
std::optional<ExtentTest> read_extent_test(const Condition& c, const std::vector<double> (&axes)[3],
                                           const std::vector<double> (&sorted)[3]) {
  ExtentTest t;
  t.sorted = {sorted[0].data(), sorted[1].data(), sorted[2].data()};
  t.negate = c.negate;
  if (!c.ranges.empty()) t.bounds[0] = ExtentTest::closed(c.ranges.front());
  switch (c.key) {
    case FilterKey::kSizeX:
    case FilterKey::kSizeY:
    case FilterKey::kSizeZ:
      t.column = axes[static_cast<int>(c.key)].data();
      return t;
    case FilterKey::kLargest:
    case FilterKey::kMiddle:
    case FilterKey::kSmallest:
      t.column = sorted[static_cast<int>(c.key) - static_cast<int>(FilterKey::kLargest)].data();
      return t;
    case FilterKey::kAnyExtent:
      t.kind = ExtentTest::Kind::kAnyExtent;
      return t;
    case FilterKey::kDims:
      if (c.ranges.size() > 3) {
        t.kind = ExtentTest::Kind::kDimsAny;
        t.shapes = static_cast<int>(std::min(c.ranges.size() / 3, kMaxDimsShapes));
        for (size_t i = 0; i < 3 * static_cast<size_t>(t.shapes); ++i)
          t.shape_bounds[i] = ExtentTest::closed(c.ranges[i]);
        return t;
      }
      t.kind = ExtentTest::Kind::kDims;
      for (size_t i = 0; i < c.ranges.size() && i < 3; ++i)
        t.bounds[i] = ExtentTest::closed(c.ranges[i]);
      return t;
    case FilterKey::kProportions:  // the middle and smallest extents over the largest
      t.kind = ExtentTest::Kind::kProportions;
      for (size_t i = 1; i < c.ranges.size() && i < 3; ++i) {
        t.stated[i - 1] = c.ranges[i].min;
        t.tolerance[i - 1] = kProportionTolerance + 0.04 * c.ranges[i].min;
      }
      return t;
    default:
      return std::nullopt;
  }
}

// The facts' pass over every part is the costliest loop of a query at a
// million parts: on an x86-64 machine with AVX2 it runs in vector
// registers, chosen when the program loads; elsewhere as the baseline
// build compiles it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CADCLIP_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CADCLIP_VECTOR_CLONES
#endif

// Adds `times` to counted[i] for each row start + i that passes. Inlined
// always, so that it is compiled for the target of its caller's clone.
template <typename Passes>
[[gnu::always_inline]] inline void add_matches(const Passes& passes, int64_t start, int64_t n,
                                               int32_t times, int32_t* counted) {
  for (int64_t i = 0; i < n; ++i) counted[i] += times * static_cast<int32_t>(passes(start + i));
}

// Adds `times` to counted[i] for each row start + i that passes `t`.
CADCLIP_VECTOR_CLONES void count_extent_matches(const ExtentTest& t, int64_t start, int64_t n,
                                                int32_t times, int32_t* counted) {
  switch (t.kind) {
    case ExtentTest::Kind::kColumn:
      return add_matches([&t](int64_t r) { return t.column_passes(r); }, start, n, times, counted);
    case ExtentTest::Kind::kAnyExtent:
      return add_matches([&t](int64_t r) { return t.any_passes(r); }, start, n, times, counted);
    case ExtentTest::Kind::kDims:
      return add_matches([&t](int64_t r) { return t.dims_pass(r); }, start, n, times, counted);
    case ExtentTest::Kind::kDimsAny:
      return add_matches([&t](int64_t r) { return t.any_shape_passes(r); }, start, n, times,
                         counted);
    case ExtentTest::Kind::kProportions:
      return add_matches([&t](int64_t r) { return t.proportions_pass(r); }, start, n, times,
                         counted);
  }
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Greedy with one backtrack point: enough for '*' only.
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && folded(pattern[p]) == folded(text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

FilterColumns::FilterColumns(const std::vector<Item>& items)
    : rows_(static_cast<int64_t>(items.size())) {
  std::map<std::string, size_t> field_index;
  std::vector<std::map<std::string, int32_t>> value_index;
  hole_start_.push_back(0);
  hole_set_start_.push_back(0);
  shaft_start_.push_back(0);
  repeat_start_.push_back(0);
  for (size_t r = 0; r < items.size(); ++r) {
    const Item& item = items[r];
    const std::array<double, 3> sorted = item.sorted_size_mm();
    for (int i = 0; i < 3; ++i) {
      axis_[i].push_back(item.size_mm[i]);
      sorted_[i].push_back(sorted[i]);
    }
    faces_.push_back(item.faces);
    holes_.push_back(item.holes);
    hole_diameters_.insert(hole_diameters_.end(), item.hole_diameters_mm.begin(),
                           item.hole_diameters_mm.end());
    hole_start_.push_back(static_cast<int64_t>(hole_diameters_.size()));
    // The diameters are ascending: a set is a run of diameters within 1% of its first.
    for (size_t h = 0; h < item.hole_diameters_mm.size();) {
      size_t end = h;
      while (end < item.hole_diameters_mm.size() &&
             item.hole_diameters_mm[end] <= 1.01 * item.hole_diameters_mm[h] + 0.01)
        ++end;
      hole_set_counts_.push_back(static_cast<int64_t>(end - h));
      h = end;
    }
    hole_set_start_.push_back(static_cast<int64_t>(hole_set_counts_.size()));
    shafts_.insert(shafts_.end(), item.shafts.begin(), item.shafts.end());
    shaft_start_.push_back(static_cast<int64_t>(shafts_.size()));
    repeats_.insert(repeats_.end(), item.repeats.begin(), item.repeats.end());
    repeat_start_.push_back(static_cast<int64_t>(repeats_.size()));
    most_steps_.push_back(steps_of(item.shafts));
    file_type_.push_back(item.file_type);
    for (const auto& [name, value] : item.metadata) {
      auto [it, added] = field_index.emplace(name, field_names_.size());
      if (added) {
        field_names_.push_back(name);
        field_columns_.emplace_back();
        field_columns_.back().row_value.assign(items.size(), -1);
        value_index.emplace_back();
      }
      Field& field = field_columns_[it->second];
      auto [v, fresh] =
          value_index[it->second].emplace(value, static_cast<int32_t>(field.values.size()));
      if (fresh) {
        field.values.push_back(value);
        field.numbers.push_back(as_number(value));
      }
      field.row_value[r] = v->second;
    }
  }
}

template <typename Use>
void FilterColumns::with_extent_test(const Condition& c, Use&& apply) const {
  const ExtentTest t = *read_extent_test(c, axis_, sorted_);  // with_test: an extent key
  switch (t.kind) {
    case ExtentTest::Kind::kColumn:
      apply([&t](int64_t r) { return t.column_passes(r); });
      return;
    case ExtentTest::Kind::kAnyExtent:
      apply([&t](int64_t r) { return t.any_passes(r); });
      return;
    case ExtentTest::Kind::kDims:
      apply([&t](int64_t r) { return t.dims_pass(r); });
      return;
    case ExtentTest::Kind::kDimsAny:
      apply([&t](int64_t r) { return t.any_shape_passes(r); });
      return;
    case ExtentTest::Kind::kProportions:
      apply([&t](int64_t r) { return t.proportions_pass(r); });
      return;
  }
}

template <typename Use>
void FilterColumns::with_hole_test(const Condition& c, Use&& apply) const {
  const NumberRange range = c.ranges.empty() ? NumberRange{} : c.ranges.front();
  switch (c.key) {
    case FilterKey::kHoles:
      // A part whose holes were never counted passes no hole condition.
      apply([&](int64_t r) {
        return holes_[r] >= 0 && range.contains(static_cast<double>(holes_[r])) != c.negate;
      });
      return;
    case FilterKey::kEqualHoles:
    case FilterKey::kHoleCount:
      apply([&](int64_t r) {
        if (holes_[r] < 0) return false;
        bool any = c.key == FilterKey::kHoleCount && range.contains(static_cast<double>(holes_[r]));
        for (int64_t h = hole_set_start_[r]; h < hole_set_start_[r + 1] && !any; ++h)
          any = range.contains(static_cast<double>(hole_set_counts_[h]));
        return any != c.negate;
      });
      return;
    case FilterKey::kThread:
      apply([&](int64_t r) { return meets_thread(r, c); });
      return;
    case FilterKey::kClearance: {
      const MetricThread thread = metric_thread(range.min);
      apply([&](int64_t r) {
        for (int64_t h = hole_start_[r]; h < hole_start_[r + 1]; ++h)
          if (is_clearance_diameter(thread, hole_diameters_[h])) return true;
        return false;
      });
      return;
    }
    default:  // kHoleDiameter
      apply([&](int64_t r) {
        if (holes_[r] < 0) return false;
        bool any = false;
        for (int64_t h = hole_start_[r]; h < hole_start_[r + 1] && !any; ++h)
          any = range.contains(hole_diameters_[h]);
        return any != c.negate;
      });
      return;
  }
}

const FilterColumns::Field& FilterColumns::field_named(const std::string& name) const {
  const auto at = std::find(field_names_.begin(), field_names_.end(), name);
  if (at == field_names_.end())
    throw Error(field_names_.empty()
                    ? format("no part of this index has catalog fields, so '{}' cannot be "
                             "filtered on; import them with `cadclip index --metadata "
                             "parts.csv`",
                             name)
                    : format("no part of this index has the catalog field '{}'; its fields "
                             "are {}",
                             name, join(field_names_, ", ")));
  return field_columns_[at - field_names_.begin()];
}

template <typename Use>
void FilterColumns::with_field_test(const Condition& c, Use&& apply) const {
  const Field& field = field_named(c.field);
  // Each distinct value is matched once; rows look their value up.
  std::vector<uint8_t> matches(field.values.size());
  for (size_t v = 0; v < field.values.size(); ++v) {
    bool m = false;
    if (!c.ranges.empty()) {
      m = field.numbers[v] && c.ranges.front().contains(*field.numbers[v]);
    } else {
      for (const std::string& pattern : c.values) {
        m = m || (c.contains ? contains_folded(field.values[v], pattern)
                             : glob_match(pattern, field.values[v]));
      }
    }
    matches[v] = m != c.negate;
  }
  // A part without the field matches "!=" (it is not that value) and nothing else.
  apply([&](int64_t r) {
    const int32_t v = field.row_value[r];
    return v < 0 ? c.negate : matches[v] != 0;
  });
}

template <typename Use>
void FilterColumns::with_test(const Condition& c, Use&& apply) const {
  const NumberRange range = c.ranges.empty() ? NumberRange{} : c.ranges.front();
  switch (c.key) {
    case FilterKey::kSizeX:
    case FilterKey::kSizeY:
    case FilterKey::kSizeZ:
    case FilterKey::kLargest:
    case FilterKey::kMiddle:
    case FilterKey::kSmallest:
    case FilterKey::kAnyExtent:
    case FilterKey::kDims:
    case FilterKey::kProportions:
      with_extent_test(c, apply);
      return;
    case FilterKey::kHoles:
    case FilterKey::kEqualHoles:
    case FilterKey::kHoleCount:
    case FilterKey::kThread:
    case FilterKey::kClearance:
    case FilterKey::kHoleDiameter:
      with_hole_test(c, apply);
      return;
    case FilterKey::kFaces:
      apply([&](int64_t r) { return range.contains(static_cast<double>(faces_[r])) != c.negate; });
      return;
    case FilterKey::kRepeats:
      apply([&](int64_t r) {
        bool any = false;
        for (int64_t i = repeat_start_[r]; i < repeat_start_[r + 1] && !any; ++i)
          any = range.contains(static_cast<double>(repeats_[i]));
        return any != c.negate;
      });
      return;
    case FilterKey::kSteps:
      apply([&](int64_t r) {
        return range.contains(static_cast<double>(most_steps_[r])) != c.negate;
      });
      return;
    case FilterKey::kFileType:
      apply([&](int64_t r) {
        const bool any =
            std::find(c.values.begin(), c.values.end(), file_type_[r]) != c.values.end();
        return any != c.negate;
      });
      return;
    case FilterKey::kField:
      with_field_test(c, apply);
      return;
  }
}

bool FilterColumns::meets_thread(int64_t r, const Condition& c) const {
  const MetricThread thread = metric_thread(c.ranges.front().min);
  bool threaded_hole = false;
  for (int64_t h = hole_start_[r]; h < hole_start_[r + 1] && !threaded_hole; ++h)
    threaded_hole = is_thread_diameter(thread, hole_diameters_[h]);
  const int64_t first = shaft_start_[r], end = shaft_start_[r + 1];
  if (c.ranges.size() < 2) {
    if (threaded_hole) return true;
    for (int64_t s = first; s < end; ++s)
      if (is_thread_diameter(thread, shafts_[s].diameter_mm)) return true;
    return false;
  }
  const double length = c.ranges[1].min;
  const double tolerance = std::max(1.0, kThreadLengthTolerance * length);
  // A screw: the thread-sized pieces of one axis, joined where they touch,
  // run the stated length (the head and the tip chamfer are not counted).
  for (int64_t s = first; s < end;) {
    const int axis = shafts_[s].axis;
    double run_from = 0, run_to = 0;
    bool open = false;
    for (; s < end && shafts_[s].axis == axis; ++s) {  // ordered by axis, then start
      const data::Shaft& shaft = shafts_[s];
      if (!is_thread_diameter(thread, shaft.diameter_mm)) continue;
      if (open && shaft.from_mm <= run_to + 0.5) {
        run_to = std::max(run_to, shaft.to_mm);
      } else {
        if (open && std::abs(run_to - run_from - length) <= tolerance) return true;
        run_from = shaft.from_mm;
        run_to = shaft.to_mm;
        open = true;
      }
    }
    if (open && std::abs(run_to - run_from - length) <= tolerance) return true;
  }
  // A threaded part without a screw (a standoff, a threaded rod end): the
  // part is that long.
  if (!threaded_hole) return false;
  for (int i = 0; i < 3; ++i)
    if (std::abs(axis_[i][r] - length) <= tolerance) return true;
  return false;
}

RowSet FilterColumns::select(std::span<const Condition> conditions) const {
  // Every row to begin with; each condition tests only the rows still in,
  // eight to a byte, and clears those that fail it.
  RowSet rows(rows_);
  std::fill(rows.bits.begin(), rows.bits.end(), static_cast<uint8_t>(0xFF));
  if (rows_ % 8 != 0) rows.bits.back() = static_cast<uint8_t>((1u << (rows_ % 8)) - 1);
  // No branch on a test's outcome: under a filter that keeps half the
  // parts, a branch per row guessed wrong half the time and cost more than
  // the tests.
  for (const Condition& c : conditions) {
    with_test(c, [&](auto&& passes) {
      for (size_t byte = 0; byte < rows.bits.size(); ++byte) {
        unsigned in = rows.bits[byte];
        const int64_t first = static_cast<int64_t>(byte) * 8;
        if (in == 0xFFu) {
          unsigned out = 0;
          for (int bit = 0; bit < 8; ++bit)
            out |= static_cast<unsigned>(static_cast<bool>(passes(first + bit))) << bit;
          in = out;
        } else {
          for (unsigned left = in; left != 0; left &= left - 1) {
            const int bit = std::countr_zero(left);
            in &= ~(static_cast<unsigned>(!passes(first + bit)) << bit);
          }
        }
        rows.bits[byte] = static_cast<uint8_t>(in);
      }
    });
  }
  rows.count = 0;
  for (const uint8_t byte : rows.bits) rows.count += std::popcount(byte);
  return rows;
}

std::vector<int8_t> FilterColumns::facts_met(std::span<const Condition> facts,
                                             const RowSet* within) const {
  CADCLIP_CHECK(facts.size() < 128, "facts_met: at most 127 facts");
  std::vector<int8_t> met(static_cast<size_t>(rows_), 0);
  // A block of rows at a time, every fact over it: the block's columns come
  // from memory once rather than once a fact (a query states two or three
  // facts on the extents, whose columns are 24 MB at a million parts). A
  // catalog field's test matches all the field's values first, which is not
  // worth doing once a block: with one, the block is the whole catalog.
  const bool fields = std::any_of(facts.begin(), facts.end(), [](const Condition& c) {
    return c.key == FilterKey::kField || c.key == FilterKey::kFileType;
  });
  // A fact stated twice ("width 25 mm, height 25 mm": an extent of 25 twice)
  // is tested once and counted twice.
  std::vector<std::pair<const Condition*, int>> distinct;
  std::vector<std::string> keys;
  for (const Condition& c : facts) {
    std::string key = conditions_key(std::span(&c, 1));
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (at != keys.end()) {
      ++distinct[at - keys.begin()].second;
    } else {
      keys.push_back(std::move(key));
      distinct.emplace_back(&c, 1);
    }
  }
  std::vector<std::optional<ExtentTest>> extent_tests;
  for (const auto& [fact, times] : distinct)
    extent_tests.push_back(read_extent_test(*fact, axis_, sorted_));
  // Counted in 32-bit integers a block at a time, then stored as bytes.
  const int64_t block = fields ? std::max<int64_t>(rows_, 1) : 4096;
  std::vector<int32_t> counted(static_cast<size_t>(std::min(block, rows_)));
  for (int64_t start = 0; start < rows_; start += block) {
    const int64_t n = std::min(rows_ - start, block);
    std::fill(counted.begin(), counted.begin() + n, 0);
    for (size_t j = 0; j < distinct.size(); ++j) {
      const auto& [fact, times] = distinct[j];
      if (extent_tests[j]) {
        count_extent_matches(*extent_tests[j], start, n, times, counted.data());
        continue;
      }
      with_test(*fact, [&, times = times](auto&& passes) {
        for (int64_t i = 0; i < n; ++i) counted[i] += passes(start + i) ? times : 0;
      });
    }
    for (int64_t i = 0; i < n; ++i) met[start + i] = static_cast<int8_t>(counted[i]);
  }
  // Outside the filter: -1, set without a branch (all bits of a negative
  // one), which half the rows would guess wrong under a 50% filter.
  if (within)
    for (int64_t r = 0; r < rows_; ++r)
      met[r] = static_cast<int8_t>(met[r] | -static_cast<int>(!within->has(r)));
  return met;
}

bool FilterColumns::meets(int64_t row, const Condition& condition) const {
  bool result = false;
  with_test(condition, [&](auto&& passes) { result = passes(row); });
  return result;
}

std::string conditions_key(std::span<const Condition> conditions) {
  std::string key;
  auto put = [&key](const auto& value) {
    key.append(reinterpret_cast<const char*>(&value), sizeof value);
  };
  auto put_text = [&](const std::string& text) {
    put(text.size());
    key += text;
  };
  put(conditions.size());  // a key read from the start ends where it ends
  for (const Condition& c : conditions) {
    put(c.key);
    put(c.ranges.size());
    for (const NumberRange& r : c.ranges) {
      put(r.min);
      put(r.max);
      put(r.min_open);
      put(r.max_open);
    }
    put(c.values.size());
    for (const std::string& v : c.values) put_text(v);
    put(c.contains);
    put(c.negate);
    put_text(c.field);
  }
  return key;
}

std::shared_ptr<const RowSet> SelectionCache::select(const FilterColumns& columns,
                                                     std::span<const Condition> conditions) {
  std::string key = conditions_key(conditions);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = recent_.begin(); it != recent_.end(); ++it) {
      if (it->first != key) continue;
      recent_.splice(recent_.begin(), recent_, it);
      return recent_.front().second;
    }
  }
  // Selected outside the lock: two threads that miss on one filter both
  // select it, and neither waits for the other's pass.
  auto rows = std::make_shared<const RowSet>(columns.select(conditions));
  const std::lock_guard<std::mutex> lock(mutex_);
  recent_.emplace_front(std::move(key), rows);
  if (recent_.size() > capacity_) recent_.pop_back();
  return rows;
}

}  // namespace cadclip::index::detail
