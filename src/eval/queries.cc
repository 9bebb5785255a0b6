#include "cadclip/eval/queries.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::eval {
namespace {

// Known levels in their natural order (abstract .. expert), then the rest by name.
std::vector<std::string> ordered_levels(const std::set<std::string>& present) {
  std::vector<std::string> out;
  for (const char* level : data::kText2CadLevels) {
    if (present.count(level)) out.emplace_back(level);
  }
  for (const std::string& level : present) {
    if (std::find(out.begin(), out.end(), level) == out.end()) out.push_back(level);
  }
  return out;
}

// The levels to report: those asked for (each once), or every level present.
std::vector<std::string> chosen_levels(const std::vector<data::Caption>& captions,
                                       const Gallery& gallery,
                                       const std::vector<std::string>& asked,
                                       const std::string& split) {
  std::set<std::string> present;
  for (const data::Caption& c : captions) {
    if (gallery.position(c.id) >= 0) present.insert(c.level);
  }
  if (asked.empty()) {
    if (present.empty()) {
      throw Error(
          format("evaluation: none of the {} models of split '{}' has a caption; the captions file "
                 "holds {} captions of other models",
                 gallery.size(), split, captions.size()));
    }
    return ordered_levels(present);
  }
  std::vector<std::string> levels;
  for (const std::string& level : asked) {
    if (!present.count(level)) {
      throw Error(
          format("evaluation: level '{}' has no caption among the {} models of split '{}'; "
                 "levels there: {}",
                 level, gallery.size(), split,
                 present.empty() ? std::string("none") : join(ordered_levels(present))));
    }
    if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
  }
  return levels;
}

}  // namespace

CaptionQueries::CaptionQueries(const std::vector<data::Caption>& captions, const Gallery& gallery,
                               const std::vector<std::string>& levels, const std::string& split)
    : levels_(chosen_levels(captions, gallery, levels, split)), of_level_(levels_.size()) {
  std::unordered_map<std::string, int64_t> text_row;
  std::unordered_map<std::string, size_t> level_slot;
  for (size_t l = 0; l < levels_.size(); ++l) level_slot.emplace(levels_[l], l);
  for (const data::Caption& c : captions) {
    const int64_t g = gallery.position(c.id);
    const auto l = level_slot.find(c.level);
    if (g < 0 || l == level_slot.end()) continue;
    const auto [it, inserted] = text_row.emplace(c.text, static_cast<int64_t>(texts_.size()));
    if (inserted) texts_.push_back(c.text);
    of_level_[l->second].push_back(size());
    gallery_of_.push_back(g);
    text_of_.push_back(it->second);
    ids_.push_back(c.id);
    query_levels_.push_back(c.level);
  }
}

int64_t CaptionQueries::uncaptioned(int64_t gallery_size) const {
  std::vector<char> captioned(static_cast<size_t>(gallery_size), 0);
  for (const int64_t g : gallery_of_) captioned[static_cast<size_t>(g)] = 1;
  return gallery_size - std::accumulate(captioned.begin(), captioned.end(), int64_t{0});
}

int64_t CaptionQueries::cut(size_t level, std::span<const int64_t> full_lengths,
                            int64_t max_length) const {
  int64_t count = 0;
  for (const int64_t q : of_level_[level])
    count += full_lengths[static_cast<size_t>(text_of(q))] > max_length;
  return count;
}

at::Tensor CaptionQueries::per_query(const at::Tensor& distinct) const {
  return distinct.index_select(0, at::tensor(text_of_, at::kLong)).contiguous();
}

}  // namespace cadclip::eval
