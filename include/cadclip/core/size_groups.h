// Size groups. The pairwise inputs and the attention are padded to the
// largest item of a batch, so one 200-face gear in a batch of 10-face washers
// makes every graph pay for 200^2 pairs (on the synthetic data about 25x the
// real pairs), and one long caption makes every short one pay for its length.
// group_by_size splits a batch into groups of similar sizes, each to be
// padded and encoded on its own: every item's result is the same (items never
// interact inside an encoder), only the padding goes away. The B-Rep encoder
// groups graphs by face count, text::forward_in_length_groups texts by tokens.
//
// Returns groups of positions into sizes, smallest first, that minimise sum
// over groups of (items x (largest + 1)^2 + group_overhead): group_overhead is
// the fixed cost of one more encoder pass, in attention slots. A group of
// several items holds at most max_group_slots slots (items x (largest + 1)^2;
// 0 = no cap), so that memory, which grows with a group's slots, stays
// bounded: an item over the cap is a group alone. Exact (dynamic programming
// over the size-sorted batch; ties keep their order), O(B^2). Every position
// appears exactly once; an empty input gives no groups.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cadclip {

std::vector<std::vector<int64_t>> group_by_size(std::span<const int64_t> sizes,
                                                int64_t group_overhead = 16384,
                                                int64_t max_group_slots = 0);

}  // namespace cadclip
