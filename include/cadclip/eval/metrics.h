// Retrieval metrics over a query x gallery similarity matrix (ties ranked
// pessimistically, several correct items per query), embedding diagnostics
// with a collapse verdict, and the R@1 ceiling that shared captions impose.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace cadclip::eval {

// The correct gallery items of each query: positives[q] lists gallery indices
// (parts with equal geometry hashes are all correct); none may be empty.
using Positives = std::vector<std::vector<int64_t>>;

// positives[q] = every gallery item g with gallery_keys[g] == query_keys[q].
// With geometry hashes as keys, parts with equal geometry all count as hits:
// text->CAD uses the hash of each caption's part as query key and the
// gallery's hashes; CAD->text the reverse; CAD->CAD the hashes on both sides.
// (Use the model id as key where a hash is missing.) Throws cadclip::Error
// naming the first query whose key is not in the gallery.
Positives positives_by_key(const std::vector<std::string>& query_keys,
                           const std::vector<std::string>& gallery_keys);

struct RetrievalMetrics {
  int64_t queries = 0;             // Q
  int64_t gallery = 0;             // G
  double r1 = 0, r5 = 0, r10 = 0;  // share of queries ranked within 1, 5, 10, in [0, 1]
  double mrr = 0;                  // mean of 1 / rank
  double median_rank = 0;          // the middle rank (mean of the two middle ones for even Q)
  double mean_rank = 0;
  double chance_r1 = 0;  // R@1 of a random ranking: mean over queries of |positives| / G
};

// Rank of each query's best-ranked correct item, pessimistic about ties: with
// s* the best score among the query's correct items,
//   rank = 1 + #{gallery items that are not correct for the query and score >= s*}
// so a target shares its place with every equal score, and identical
// embeddings rank every query last (G - |positives| + 1), never first. A
// query whose row holds a NaN also ranks last.
// similarity: [Q, G] (any floating dtype and device). Throws cadclip::Error
// when shapes disagree, a query has no correct item or an index is out of range.
std::vector<int64_t> pessimistic_ranks(const at::Tensor& similarity, const Positives& positives);

// similarity: [Q, G]; see pessimistic_ranks.
RetrievalMetrics retrieval_metrics(const at::Tensor& similarity, const Positives& positives);

// Embedding diagnostics of one tower.
struct EmbeddingDiagnostics {
  int64_t count = 0;                // n rows
  int64_t dim = 0;                  // d
  int64_t nan_count = 0;            // NaN elements
  int64_t inf_count = 0;            // +-Inf elements
  int64_t finite_rows = 0;          // rows without NaN or Inf; the statistics below use only these
  double mean_norm = 0;             // mean L2 norm of a row
  double mean_dim_std = 0;          // mean over dimensions of the standard deviation across rows
  double mean_pairwise_cosine = 0;  // mean cosine over pairs of distinct rows
  bool collapsed = false;           // unusable embeddings: see reason
  std::string reason;               // why collapsed; empty when not

  // One line for logs, e.g. "n=512 d=256 nan=0 inf=0 norm=1.000 std=0.061 cos=0.031".
  std::string summary() const;
};

struct CollapseThresholds {
  // Collapsed when the mean pairwise cosine exceeds this: the rows point one way.
  double max_mean_cosine = 0.9;
  // Collapsed when mean_dim_std * sqrt(d) / mean_norm is below this; random
  // directions give about 1, identical rows 0.
  double min_relative_std = 0.05;
};

// embeddings: [n, d]. Collapsed also when any value is NaN or Inf, or every
// finite row has norm ~0. Needs n >= 2 to judge the spread.
EmbeddingDiagnostics diagnose_embeddings(const at::Tensor& embeddings,
                                         const CollapseThresholds& thresholds = {});

// What captions shared word for word by several parts allow. Texts are
// compared after trimming and collapsing runs of whitespace (case kept: the
// tokenizer, not this function, decides whether case matters).
struct CaptionCeiling {
  int64_t queries = 0;         // Q
  int64_t shared_queries = 0;  // queries whose exact text is also the caption of another query
                               // with a correct part that is not correct for this one
  double shared_share = 0;     // shared_queries / Q
  // The best text->gallery R@1 any model can reach when equal texts get equal
  // embeddings: each group of equal texts has one top item, which is a hit
  // for at most the queries of the group it is correct for.
  double r1_ceiling = 1;
};

// query_texts[q] is query q's caption; positives as above (same length).
CaptionCeiling caption_ceiling(const std::vector<std::string>& query_texts,
                               const Positives& positives);

// The JSON forms in eval's report (docs/EVAL.md): every field by its name.
void to_json(nlohmann::json& json, const RetrievalMetrics& metrics);
void to_json(nlohmann::json& json, const EmbeddingDiagnostics& diagnostics);
void to_json(nlohmann::json& json, const CaptionCeiling& ceiling);

}  // namespace cadclip::eval
