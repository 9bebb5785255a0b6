// Retrieval metrics on hand-built similarity matrices, embedding diagnostics
// and the shared-caption ceiling.
#include <gtest/gtest.h>

#include <cmath>

#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/eval/metrics.h"

namespace cadclip::eval {
namespace {

at::Tensor matrix(std::vector<float> values, int64_t rows) {
  return at::tensor(values, at::kFloat).view({rows, -1});
}

TEST(Ranks, CountEveryWrongItemScoringAtLeastTheTarget) {
  // Query 0: target 0 is best. Query 1: target 2 has two above it. Query 2:
  // target 3 ties with item 1 and shares its place: rank 2, not 1.
  const at::Tensor s = matrix({0.9f, 0.1f, 0.2f, 0.3f,  //
                               0.8f, 0.7f, 0.5f, 0.1f,  //
                               0.1f, 0.6f, 0.2f, 0.6f},
                              3);
  EXPECT_EQ(pessimistic_ranks(s, {{0}, {2}, {3}}), (std::vector<int64_t>{1, 3, 2}));
  const RetrievalMetrics m = retrieval_metrics(s, {{0}, {2}, {3}});
  EXPECT_EQ(m.queries, 3);
  EXPECT_EQ(m.gallery, 4);
  EXPECT_DOUBLE_EQ(m.r1, 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.r5, 1.0);
  EXPECT_DOUBLE_EQ(m.mrr, (1 + 1.0 / 3 + 0.5) / 3);
  EXPECT_DOUBLE_EQ(m.median_rank, 2);
  EXPECT_DOUBLE_EQ(m.mean_rank, 2);
  EXPECT_DOUBLE_EQ(m.chance_r1, 0.25);
}

TEST(Ranks, IdenticalEmbeddingsScoreLastNotFirst) {
  const int64_t n = 20;
  const at::Tensor same = at::ones({n, 8}) / std::sqrt(8.0);
  const at::Tensor s = at::matmul(same, same.t());
  Positives diagonal;
  for (int64_t i = 0; i < n; ++i) diagonal.push_back({i});
  const RetrievalMetrics m = retrieval_metrics(s, diagonal);
  EXPECT_EQ(m.r1, 0);
  EXPECT_EQ(m.r10, 0);
  EXPECT_DOUBLE_EQ(m.median_rank, n);
  EXPECT_DOUBLE_EQ(m.mrr, 1.0 / n);
  EXPECT_LE(m.r1, m.chance_r1);
}

TEST(Ranks, TheBestRankedOfSeveralCorrectItemsCounts) {
  // Items 1 and 3 are the same part (equal geometry hashes): either is a hit,
  // and neither pushes the other down.
  const at::Tensor s = matrix({0.2f, 0.5f, 0.9f, 0.7f,  //
                               0.1f, 0.8f, 0.3f, 0.8f},
                              2);
  EXPECT_EQ(pessimistic_ranks(s, {{1, 3}, {3, 1}}), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(pessimistic_ranks(s, {{1}, {3}}), (std::vector<int64_t>{3, 2}));
}

TEST(Ranks, EqualKeysAreAllHits) {
  const Positives p = positives_by_key({"h1", "h2", "h1"}, {"h1", "h3", "h2", "h1"});
  EXPECT_EQ(p, (Positives{{0, 3}, {2}, {0, 3}}));
  EXPECT_THROW(positives_by_key({"h9"}, {"h1"}), Error);
}

TEST(Ranks, ANanRowRanksLast) {
  const at::Tensor s = matrix({NAN, 0.1f, 0.2f, 0.9f, 0.1f, 0.2f}, 2);
  EXPECT_EQ(pessimistic_ranks(s, {{0}, {0}}), (std::vector<int64_t>{3, 1}));
}

TEST(Ranks, EvenQueryCountsAverageTheMiddleRanks) {
  const at::Tensor s = matrix({0.9f, 0.1f, 0.1f, 0.9f, 0.5f, 0.4f, 0.1f, 0.9f}, 4);
  const RetrievalMetrics m = retrieval_metrics(s, {{0}, {0}, {0}, {0}});  // ranks 1 2 1 2
  EXPECT_DOUBLE_EQ(m.median_rank, 1.5);
}

TEST(Ranks, RejectBadInput) {
  const at::Tensor s = at::zeros({2, 3});
  EXPECT_THROW(pessimistic_ranks(s, {{0}}), Error);
  EXPECT_THROW(pessimistic_ranks(s, {{0}, {}}), Error);
  EXPECT_THROW(pessimistic_ranks(s, {{0}, {3}}), Error);
  EXPECT_THROW(pessimistic_ranks(at::zeros({3}), {{0}}), Error);
}

TEST(Diagnostics, RandomDirectionsAreHealthy) {
  torch::manual_seed(0);
  const at::Tensor x = at::randn({400, 64});
  const at::Tensor unit = x / x.norm(2, 1, true);
  const EmbeddingDiagnostics d = diagnose_embeddings(unit);
  EXPECT_FALSE(d.collapsed) << d.reason;
  EXPECT_EQ(d.nan_count, 0);
  EXPECT_NEAR(d.mean_norm, 1.0, 1e-6);
  EXPECT_NEAR(d.mean_pairwise_cosine, 0.0, 0.01);
  EXPECT_NEAR(d.mean_dim_std, 1 / std::sqrt(64.0), 0.01);
}

TEST(Diagnostics, IdenticalRowsCollapse) {
  const at::Tensor x = at::randn({1, 32}).expand({50, 32}).contiguous();
  const EmbeddingDiagnostics d = diagnose_embeddings(x);
  EXPECT_TRUE(d.collapsed);
  EXPECT_NEAR(d.mean_pairwise_cosine, 1.0, 1e-6);
  EXPECT_NE(d.reason.find("cosine"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("identical"), std::string::npos) << d.reason;
}

TEST(Diagnostics, NanAndZeroRowsAreReported) {
  at::Tensor x = at::randn({10, 4});
  x[2][1] = NAN;
  x[5][0] = INFINITY;
  const EmbeddingDiagnostics d = diagnose_embeddings(x);
  EXPECT_TRUE(d.collapsed);
  EXPECT_EQ(d.nan_count, 1);
  EXPECT_EQ(d.inf_count, 1);
  EXPECT_EQ(d.finite_rows, 8);
  EXPECT_NE(d.reason.find("NaN"), std::string::npos) << d.reason;
  EXPECT_TRUE(diagnose_embeddings(at::zeros({5, 4})).collapsed);
}

TEST(CaptionCeiling, EqualTextsForDifferentPartsCapR1) {
  // "a plate" (modulo whitespace) describes parts 0 and 1: one of its three
  // queries must miss whichever part ranks first.
  const CaptionCeiling c =
      caption_ceiling({"a plate", "a plate", " a  plate\n", "a bolt"}, {{0}, {1}, {1}, {2}});
  EXPECT_EQ(c.queries, 4);
  EXPECT_EQ(c.shared_queries, 3);
  EXPECT_DOUBLE_EQ(c.shared_share, 0.75);
  EXPECT_DOUBLE_EQ(c.r1_ceiling, 0.75);
}

TEST(CaptionCeiling, EqualTextsForTheSamePartDoNotCap) {
  // Parts 0 and 1 have equal geometry hashes: both are correct for both queries.
  const CaptionCeiling c = caption_ceiling({"washer", "washer", "Washer"}, {{0, 1}, {1, 0}, {2}});
  EXPECT_EQ(c.shared_queries, 0);
  EXPECT_DOUBLE_EQ(c.r1_ceiling, 1.0);
}

TEST(CaptionCeiling, NoModelBeatsIt) {
  // Equal texts give equal similarity rows; the best possible rows still miss.
  const std::vector<std::string> texts = {"x", "x", "x", "y"};
  const Positives positives = {{0}, {1}, {1}, {2}};
  const at::Tensor s = matrix({0.1f, 0.9f, 0.0f,  //
                               0.1f, 0.9f, 0.0f,  //
                               0.1f, 0.9f, 0.0f,  //
                               0.0f, 0.0f, 1.0f},
                              4);
  EXPECT_LE(retrieval_metrics(s, positives).r1, caption_ceiling(texts, positives).r1_ceiling);
  EXPECT_DOUBLE_EQ(retrieval_metrics(s, positives).r1, 0.75);
}

}  // namespace
}  // namespace cadclip::eval
