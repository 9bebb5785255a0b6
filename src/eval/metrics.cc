#include "cadclip/eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/json_fields.h"

namespace cadclip::eval {

CADCLIP_JSON_FIELDS(RetrievalMetrics, queries, gallery, r1, r5, r10, mrr, median_rank, mean_rank,
                    chance_r1)
CADCLIP_JSON_FIELDS(EmbeddingDiagnostics, count, dim, nan_count, inf_count, finite_rows, mean_norm,
                    mean_dim_std, mean_pairwise_cosine, collapsed, reason)
CADCLIP_JSON_FIELDS(CaptionCeiling, queries, shared_queries, shared_share, r1_ceiling)

namespace {

// Sorted, deduplicated correct items of query q, checked against the gallery.
std::vector<int64_t> checked_positives(const Positives& positives, size_t q, int64_t gallery) {
  std::vector<int64_t> items = positives[q];
  if (items.empty()) {
    throw Error(
        format("retrieval metrics: query {} has no correct gallery item; every query needs "
               "at least one (drop queries whose part is not in the gallery)",
               q));
  }
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  if (items.front() < 0 || items.back() >= gallery) {
    throw Error(
        format("retrieval metrics: query {} names gallery item {}, but the gallery has {} "
               "items (valid 0..{})",
               q, items.front() < 0 ? items.front() : items.back(), gallery, gallery - 1));
  }
  return items;
}

std::string normalise_text(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

Positives positives_by_key(const std::vector<std::string>& query_keys,
                           const std::vector<std::string>& gallery_keys) {
  std::unordered_map<std::string, std::vector<int64_t>> items;
  for (size_t g = 0; g < gallery_keys.size(); ++g) {
    items[gallery_keys[g]].push_back(static_cast<int64_t>(g));
  }
  Positives out;
  out.reserve(query_keys.size());
  for (size_t q = 0; q < query_keys.size(); ++q) {
    const auto found = items.find(query_keys[q]);
    if (found == items.end()) {
      throw Error(
          format("retrieval metrics: query {} has key '{}', which no gallery item has; "
                 "the gallery must hold every query's part",
                 q, query_keys[q]));
    }
    out.push_back(found->second);
  }
  return out;
}

std::vector<int64_t> pessimistic_ranks(const at::Tensor& similarity, const Positives& positives) {
  if (similarity.dim() != 2) {
    throw Error(
        format("retrieval metrics: the similarity matrix has shape {}; expected [queries, "
               "gallery]",
               similarity.sizes()));
  }
  const int64_t q_count = similarity.size(0), g_count = similarity.size(1);
  if (static_cast<int64_t>(positives.size()) != q_count) {
    throw Error(
        format("retrieval metrics: {} queries in the similarity matrix but {} lists of "
               "correct items; pass one list per query",
               q_count, positives.size()));
  }
  // fp32 is exact for scores that came as fp32, and a 5,000 x 5,000 matrix
  // stays at 100 MB.
  const at::Tensor scores = similarity.detach().to(at::kCPU, at::kFloat).contiguous();
  const float* s = scores.data_ptr<float>();
  std::vector<int64_t> ranks(q_count);
  std::vector<char> is_positive(g_count, 0);
  for (int64_t q = 0; q < q_count; ++q) {
    const std::vector<int64_t> items = checked_positives(positives, q, g_count);
    const float* row = s + q * g_count;
    const int64_t worst = g_count - static_cast<int64_t>(items.size()) + 1;
    if (std::any_of(row, row + g_count, [](float v) { return std::isnan(v); })) {
      ranks[q] = worst;
      continue;
    }
    float best = -INFINITY;
    for (int64_t g : items) {
      best = std::max(best, row[g]);
      is_positive[g] = 1;
    }
    int64_t ahead = 0;
    for (int64_t g = 0; g < g_count; ++g) ahead += (!is_positive[g] && row[g] >= best);
    for (int64_t g : items) is_positive[g] = 0;
    ranks[q] = 1 + ahead;
  }
  return ranks;
}

RetrievalMetrics retrieval_metrics(const at::Tensor& similarity, const Positives& positives) {
  const std::vector<int64_t> ranks = pessimistic_ranks(similarity, positives);
  RetrievalMetrics m;
  m.queries = static_cast<int64_t>(ranks.size());
  m.gallery = similarity.size(1);
  if (ranks.empty()) return m;
  double rank_sum = 0;
  for (size_t q = 0; q < ranks.size(); ++q) {
    const int64_t r = ranks[q];
    m.r1 += r <= 1;
    m.r5 += r <= 5;
    m.r10 += r <= 10;
    m.mrr += 1.0 / static_cast<double>(r);
    rank_sum += static_cast<double>(r);
    std::set<int64_t> unique(positives[q].begin(), positives[q].end());
    m.chance_r1 += static_cast<double>(unique.size()) / static_cast<double>(m.gallery);
  }
  const double n = static_cast<double>(ranks.size());
  m.r1 /= n;
  m.r5 /= n;
  m.r10 /= n;
  m.mrr /= n;
  m.mean_rank = rank_sum / n;
  m.chance_r1 /= n;
  std::vector<int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  m.median_rank = sorted.size() % 2 ? static_cast<double>(sorted[mid])
                                    : 0.5 * static_cast<double>(sorted[mid - 1] + sorted[mid]);
  return m;
}

std::string EmbeddingDiagnostics::summary() const {
  return format("n={} d={} nan={} inf={} norm={} std={} cos={}{}", count, dim, nan_count, inf_count,
                fixed(mean_norm, 3), fixed(mean_dim_std, 4), fixed(mean_pairwise_cosine, 3),
                collapsed ? " COLLAPSED: " + reason : "");
}

EmbeddingDiagnostics diagnose_embeddings(const at::Tensor& embeddings,
                                         const CollapseThresholds& thresholds) {
  if (embeddings.dim() != 2) {
    throw Error(format("embedding diagnostics: embeddings have shape {}; expected [n, d]",
                       embeddings.sizes()));
  }
  EmbeddingDiagnostics out;
  const at::Tensor x = embeddings.detach().to(at::kCPU, at::kDouble);
  out.count = x.size(0);
  out.dim = x.size(1);
  out.nan_count = x.isnan().sum().item<int64_t>();
  out.inf_count = x.isinf().sum().item<int64_t>();
  const at::Tensor finite = x.isfinite().all(1);
  const at::Tensor rows = x.index({finite});
  out.finite_rows = rows.size(0);

  std::vector<std::string> reasons;
  if (out.nan_count || out.inf_count) {
    reasons.push_back(format("{} NaN and {} Inf values in {} of {} rows", out.nan_count,
                             out.inf_count, out.count - out.finite_rows, out.count));
  }
  if (out.finite_rows > 0) {
    const at::Tensor norms = rows.norm(2, 1);
    out.mean_norm = norms.mean().item<double>();
    if (out.mean_norm < 1e-6) reasons.push_back("every row has norm ~0");
  }
  if (out.finite_rows >= 2 && out.mean_norm >= 1e-6) {
    const double n = static_cast<double>(out.finite_rows);
    out.mean_dim_std = rows.std(0, /*unbiased=*/false).mean().item<double>();
    const at::Tensor unit = rows / rows.norm(2, 1, /*keepdim=*/true).clamp_min(1e-12);
    const double total = unit.sum(0).pow(2).sum().item<double>();
    const double self = unit.pow(2).sum().item<double>();
    out.mean_pairwise_cosine = (total - self) / (n * (n - 1));
    const double relative_std =
        out.mean_dim_std * std::sqrt(static_cast<double>(out.dim)) / out.mean_norm;
    if (out.mean_pairwise_cosine > thresholds.max_mean_cosine) {
      reasons.push_back(format("mean pairwise cosine {} > {}: the rows point one way",
                               fixed(out.mean_pairwise_cosine, 3), thresholds.max_mean_cosine));
    }
    if (relative_std < thresholds.min_relative_std) {
      reasons.push_back(
          format("per-dimension spread {} x the random level < {}: the rows are "
                 "nearly identical",
                 fixed(relative_std, 4), thresholds.min_relative_std));
    }
  }
  out.collapsed = !reasons.empty();
  for (size_t i = 0; i < reasons.size(); ++i) out.reason += (i ? "; " : "") + reasons[i];
  return out;
}

CaptionCeiling caption_ceiling(const std::vector<std::string>& query_texts,
                               const Positives& positives) {
  if (query_texts.size() != positives.size()) {
    throw Error(
        format("caption ceiling: {} query texts but {} lists of correct items; pass one "
               "of each per query",
               query_texts.size(), positives.size()));
  }
  CaptionCeiling out;
  out.queries = static_cast<int64_t>(query_texts.size());
  if (out.queries == 0) return out;

  std::unordered_map<std::string, std::vector<size_t>> groups;
  for (size_t q = 0; q < query_texts.size(); ++q) {
    groups[normalise_text(query_texts[q])].push_back(q);
  }
  int64_t reachable = 0;
  for (const auto& [text, members] : groups) {
    std::map<int64_t, int64_t> hits;  // gallery item -> queries of the group it is correct for
    std::vector<std::set<int64_t>> sets;
    for (size_t q : members) {
      if (positives[q].empty()) {
        throw Error(
            format("caption ceiling: query {} has no correct gallery item; every query "
                   "needs at least one",
                   q));
      }
      sets.emplace_back(positives[q].begin(), positives[q].end());
      for (int64_t g : sets.back()) ++hits[g];
    }
    int64_t best = 0;
    for (const auto& [item, count] : hits) best = std::max(best, count);
    reachable += best;
    for (const std::set<int64_t>& own : sets) out.shared_queries += hits.size() > own.size();
  }
  out.shared_share = static_cast<double>(out.shared_queries) / static_cast<double>(out.queries);
  out.r1_ceiling = static_cast<double>(reachable) / static_cast<double>(out.queries);
  return out;
}

}  // namespace cadclip::eval
