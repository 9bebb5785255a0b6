#include "cadclip/core/size_groups.h"

#include <algorithm>
#include <limits>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip {

std::vector<std::vector<int64_t>> group_by_size(std::span<const int64_t> sizes,
                                                int64_t group_overhead, int64_t max_group_slots) {
  if (group_overhead < 0 || max_group_slots < 0) {
    throw Error(format("group_by_size: group_overhead = {} and max_group_slots = {} must be >= 0",
                       group_overhead, max_group_slots));
  }
  const int64_t n = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> order(sizes.size());
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return sizes[a] < sizes[b]; });

  // best[j]: least cost of the first j sorted items; cut[j]: where its last group starts.
  std::vector<double> best(n + 1, 0.0);
  std::vector<int64_t> cut(n + 1, 0);
  for (int64_t j = 1; j <= n; ++j) {
    const double slots = static_cast<double>(sizes[order[j - 1]] + 1);
    best[j] = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < j; ++i) {
      const double group_slots = static_cast<double>(j - i) * slots * slots;
      if (max_group_slots > 0 && j - i > 1 && group_slots > static_cast<double>(max_group_slots))
        continue;
      const double cost = best[i] + static_cast<double>(j - i) * slots * slots +
                          static_cast<double>(group_overhead);
      if (cost < best[j]) {
        best[j] = cost;
        cut[j] = i;
      }
    }
  }
  std::vector<std::vector<int64_t>> groups;
  for (int64_t j = n; j > 0; j = cut[j]) {
    groups.emplace_back(order.begin() + cut[j], order.begin() + j);
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

}  // namespace cadclip
