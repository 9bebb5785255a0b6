#include "cadclip/index/duplicates.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "csv_cells.h"

namespace cadclip::index {
namespace {

using detail::csv_cell;
using detail::fixed_number;

// Union-find over rows.
class Groups {
 public:
  explicit Groups(int64_t n) : parent_(static_cast<size_t>(n)) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int64_t root(int64_t r) {
    while (parent_[r] != r) r = parent_[r] = parent_[parent_[r]];
    return r;
  }
  void join(int64_t a, int64_t b) {
    a = root(a);
    b = root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int64_t> parent_;
};

bool same_size(const Item& a, const Item& b, double tolerance) {
  const auto x = a.sorted_size_mm(), y = b.sorted_size_mm();
  for (int i = 0; i < 3; ++i)
    if (std::abs(x[i] - y[i]) > 0.01 + tolerance * std::max(x[i], y[i])) return false;
  return true;
}

// The clusters of `groups` among `rows` with at least two members (and, when
// `distinct_geometry`, two geometry hashes), scored against their first.
void collect(const Searcher& searcher, const std::vector<int64_t>& rows, Groups& groups,
             const std::string& kind, bool distinct_geometry, DuplicateReport& report,
             int64_t& parts_in) {
  std::map<int64_t, std::vector<int64_t>> by_root;
  for (const int64_t r : rows) by_root[groups.root(r)].push_back(r);
  const std::vector<Item>& items = searcher.items();
  const at::Tensor& embeddings = searcher.embeddings();
  std::vector<DuplicateCluster> found;
  for (auto& [root, members] : by_root) {
    if (members.size() < 2) continue;
    if (distinct_geometry) {
      const std::string& first = items[members.front()].geometry_hash;
      const bool mixed = std::any_of(members.begin(), members.end(), [&](int64_t r) {
        return items[r].geometry_hash != first || first.empty();
      });
      if (!mixed) continue;
    }
    std::sort(members.begin(), members.end(),
              [&](int64_t a, int64_t b) { return items[a].id < items[b].id; });
    const at::Tensor scores =
        at::mv(embeddings.index_select(0, at::tensor(members, at::kLong)), embeddings[members[0]]);
    const float* s = scores.data_ptr<float>();
    DuplicateCluster cluster;
    cluster.kind = kind;
    for (size_t i = 0; i < members.size(); ++i)
      cluster.members.push_back({&items[members[i]], i == 0 ? 1.0 : static_cast<double>(s[i])});
    std::sort(cluster.members.begin() + 1, cluster.members.end(),
              [](const DuplicateMember& a, const DuplicateMember& b) {
                return a.score != b.score ? a.score > b.score : a.item->id < b.item->id;
              });
    for (const DuplicateMember& m : cluster.members)
      cluster.min_score = std::min(cluster.min_score, m.score);
    parts_in += static_cast<int64_t>(members.size());
    found.push_back(std::move(cluster));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.members.size() > b.members.size();
  });
  for (DuplicateCluster& c : found) report.clusters.push_back(std::move(c));
}

void link_exact(const std::vector<Item>& items, const std::vector<int64_t>& rows, Groups& groups) {
  std::map<std::string, int64_t> first;
  for (const int64_t r : rows) {
    if (items[r].geometry_hash.empty()) continue;
    const auto [it, fresh] = first.emplace(items[r].geometry_hash, r);
    if (!fresh) groups.join(it->second, r);
  }
}

// Mirror images have the same face count and spreads: parts sorted by them
// are compared only with their neighbours in that order.
void link_mirrored(const std::vector<Item>& items, std::vector<int64_t> rows, Groups& groups) {
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](int64_t r) { return items[r].shape.handedness == 0; }),
             rows.end());
  std::sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) {
    if (items[a].faces != items[b].faces) return items[a].faces < items[b].faces;
    return items[a].shape.spread_mm[0] < items[b].shape.spread_mm[0];
  });
  for (size_t i = 0; i < rows.size(); ++i) {
    const Item& a = items[rows[i]];
    for (size_t j = i + 1; j < rows.size(); ++j) {
      const Item& b = items[rows[j]];
      if (b.faces != a.faces || b.shape.spread_mm[0] > a.shape.spread_mm[0] * 1.005 + 0.01) break;
      if (data::mirror_images(a.shape, b.shape) && same_size(a, b, 0.005))
        groups.join(rows[i], rows[j]);
    }
  }
}

void link_near(const Searcher& searcher, const std::vector<int64_t>& rows,
               const DuplicateOptions& o, Groups& groups) {
  const std::vector<Item>& items = searcher.items();
  const at::Tensor& embeddings = searcher.embeddings();
  auto consider = [&](int64_t a, int64_t b, float score) {
    if (a != b && score >= o.min_score && same_size(items[a], items[b], o.size_tolerance))
      groups.join(a, b);
  };
  const int64_t n = static_cast<int64_t>(rows.size());
  if (n <= o.exact_up_to || n < searcher.size()) {
    if (n > o.exact_up_to)
      throw Error(
          format("{} parts pass the filter; duplicates under a filter compare every pair, which is "
                 "offered up to {} parts: narrow the filter, or run without one",
                 n, o.exact_up_to));
    const at::Tensor subset = embeddings.index_select(0, at::tensor(rows, at::kLong));
    const at::Tensor scores = at::mm(subset, subset.t()).contiguous();  // [n, n]
    const float* s = scores.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) consider(rows[i], rows[j], s[i * n + j]);
    return;
  }
  // Every part asks the vector index for its nearest parts, in chunks.
  const Item* first = items.data();
  constexpr int64_t kChunk = 1024;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    const std::vector<std::vector<Hit>> hits =
        searcher.search_many(embeddings.slice(0, start, end), o.neighbours + 1);
    for (int64_t i = start; i < end; ++i)
      for (const Hit& h : hits[i - start]) {
        if (h.score < o.min_score) break;
        consider(i, h.item - first, static_cast<float>(h.score));
      }
  }
}

}  // namespace

DuplicateReport find_duplicates(const Searcher& searcher, const DuplicateOptions& o) {
  if (!(o.min_score > -1 && o.min_score <= 1))
    throw Error(format("duplicates: the minimum score {} is not in (-1, 1]", o.min_score));
  if (!(o.size_tolerance >= 0 && o.size_tolerance < 1))
    throw Error(
        format("duplicates: the size tolerance {} is not a share in [0, 1)", o.size_tolerance));
  if (o.neighbours < 1) throw Error("duplicates: neighbours must be at least 1");
  const auto started = std::chrono::steady_clock::now();
  DuplicateReport report;
  const std::vector<int64_t> rows = searcher.rows_passing(o.filter);
  report.parts = static_cast<int64_t>(rows.size());
  const std::vector<Item>& items = searcher.items();
  if (o.exact) {
    Groups groups(searcher.size());
    link_exact(items, rows, groups);
    collect(searcher, rows, groups, "exact", false, report, report.exact_parts);
  }
  if (o.mirrored) {
    Groups groups(searcher.size());
    link_mirrored(items, rows, groups);
    collect(searcher, rows, groups, "mirrored", false, report, report.mirrored_parts);
  }
  if (o.near) {
    Groups groups(searcher.size());
    link_near(searcher, rows, o, groups);
    collect(searcher, rows, groups, "near", true, report, report.near_parts);
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

std::string duplicates_csv(const DuplicateReport& report) {
  std::string out =
      "cluster,kind,member,id,name,score,size_x_mm,size_y_mm,size_z_mm,faces,holes,file_type,"
      "geometry_hash,source\n";
  for (size_t c = 0; c < report.clusters.size(); ++c) {
    const DuplicateCluster& cluster = report.clusters[c];
    for (size_t m = 0; m < cluster.members.size(); ++m) {
      const Item& item = *cluster.members[m].item;
      out += std::to_string(c + 1) + "," + cluster.kind + "," + std::to_string(m + 1) + "," +
             csv_cell(item.id) + "," + csv_cell(item.name) + "," +
             fixed_number(cluster.members[m].score, 4) + "," + fixed_number(item.size_mm[0], 3) +
             "," + fixed_number(item.size_mm[1], 3) + "," + fixed_number(item.size_mm[2], 3) + "," +
             std::to_string(item.faces) + "," +
             (item.holes >= 0 ? std::to_string(item.holes) : "") + "," + item.file_type + "," +
             item.geometry_hash + "," + csv_cell(item.source) + "\n";
    }
  }
  return out;
}

}  // namespace cadclip::index
