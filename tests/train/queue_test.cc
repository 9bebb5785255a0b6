// The momentum queue: first-in-first-out with wrap-around, refuses NaN/Inf,
// survives a save/restore exactly; the loss with queue negatives equals a
// direct computation on a hand-built case, with false negatives masked
// against the queue's keys.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "cadclip/core/error.h"
#include "cadclip/train/loss.h"
#include "cadclip/train/momentum_queue.h"

namespace cadclip::train {
namespace {

at::Tensor rows(int64_t first, int64_t n, int64_t dim) {
  // Row r holds the value first + r everywhere: easy to follow through the queue.
  return (at::arange(first, first + n, at::kFloat).unsqueeze(1) * at::ones({1, dim}));
}

at::Tensor keys(int64_t first, int64_t n) { return at::arange(first, first + n, at::kLong); }

TEST(EmbeddingQueueTest, FirstInFirstOutWithWrapAround) {
  EmbeddingQueue queue(5, 3, at::kCPU);
  EXPECT_EQ(queue.size(), 0);
  EXPECT_EQ(queue.negatives().text.size(0), 0);
  queue.enqueue(rows(0, 3, 3), -rows(0, 3, 3), keys(0, 3), keys(100, 3));
  EXPECT_EQ(queue.size(), 3);
  queue.enqueue(rows(3, 4, 3), -rows(3, 4, 3), keys(3, 4), keys(103, 4));  // 0 and 1 drop out
  EXPECT_EQ(queue.size(), 5);
  const QueueNegatives q = queue.negatives();
  // Storage order after the wrap: rows 5, 6 overwrote 0, 1.
  EXPECT_TRUE(q.caption_key.equal(at::tensor(std::vector<int64_t>{5, 6, 2, 3, 4})))
      << q.caption_key;
  EXPECT_TRUE(q.geometry_key.equal(q.caption_key + 100));
  EXPECT_TRUE(q.text.select(1, 0).equal(q.caption_key.to(at::kFloat)));
  EXPECT_TRUE(q.cad.equal(-q.text));
  // A batch longer than the queue keeps its last rows.
  queue.enqueue(rows(10, 7, 3), rows(10, 7, 3), keys(10, 7), keys(110, 7));
  std::vector<int64_t> held(queue.negatives().caption_key.data_ptr<int64_t>(),
                            queue.negatives().caption_key.data_ptr<int64_t>() + 5);
  std::sort(held.begin(), held.end());
  EXPECT_EQ(held, (std::vector<int64_t>{12, 13, 14, 15, 16}));
}

TEST(EmbeddingQueueTest, NonFiniteEmbeddingsAreRefusedAndChangeNothing) {
  EmbeddingQueue queue(4, 2, at::kCPU);
  queue.enqueue(rows(0, 2, 2), rows(0, 2, 2), keys(0, 2), keys(0, 2));
  at::Tensor bad = rows(5, 2, 2);
  bad[1][0] = std::numeric_limits<float>::quiet_NaN();
  try {
    queue.enqueue(rows(5, 2, 2), bad, keys(5, 2), keys(5, 2));
    FAIL() << "a NaN was enqueued";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0 text and 1 CAD values"), std::string::npos) << e.what();
  }
  bad[1][0] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(queue.enqueue(bad, rows(5, 2, 2), keys(5, 2), keys(5, 2)), Error);
  EXPECT_EQ(queue.size(), 2);
  EXPECT_TRUE(at::isfinite(queue.negatives().text).all().item<bool>());
}

TEST(EmbeddingQueueTest, SaveAndRestoreGiveTheSameQueueAndContinueAlike) {
  EmbeddingQueue a(6, 4, at::kCPU);
  a.enqueue(at::randn({4, 4}), at::randn({4, 4}), keys(0, 4), keys(50, 4));
  a.enqueue(at::randn({4, 4}), at::randn({4, 4}), keys(4, 4), keys(54, 4));  // wrapped
  const auto state = a.state();
  EmbeddingQueue b(6, 4, at::kCPU);
  b.load_state(state);
  EXPECT_EQ(b.size(), a.size());
  const at::Tensor text = at::randn({3, 4}), cad = at::randn({3, 4});
  a.enqueue(text, cad, keys(8, 3), keys(58, 3));
  b.enqueue(text, cad, keys(8, 3), keys(58, 3));
  for (const auto& [name, tensor] : a.state())
    EXPECT_TRUE(tensor.equal(b.state().at(name))) << name;

  EmbeddingQueue other_size(7, 4, at::kCPU);
  EXPECT_THROW(other_size.load_state(state), Error);
  EmbeddingQueue other_dim(6, 5, at::kCPU);
  EXPECT_THROW(other_dim.load_state(state), Error);
  auto missing = state;
  missing.erase("queue.position");
  EXPECT_THROW(b.load_state(missing), Error);
}

TEST(MomentumUpdateTest, MovesTheCopyTowardsTheOnlineWeights) {
  const at::Tensor online = at::full({3}, 1.0);
  at::Tensor copy = at::zeros({3});
  momentum_update({copy}, {online}, 0.9);
  EXPECT_TRUE(at::allclose(copy, at::full({3}, 0.1)));
  momentum_update({copy}, {online}, 0.9);
  EXPECT_TRUE(at::allclose(copy, at::full({3}, 0.19)));
}

at::Tensor unit_rows(const at::Tensor& x) { return x / x.norm(2, 1, true); }

// loss = mean over both directions of -log(exp(s x_i.y_i) / sum over unmasked
// candidates), written out with loops in double.
double direct_infonce(const at::Tensor& t, const at::Tensor& c, const at::Tensor& qt,
                      const at::Tensor& qc, const std::vector<int64_t>& key,
                      const std::vector<int64_t>& qkey, double scale) {
  const int64_t n = t.size(0), k = qt.size(0);
  auto dot = [](const at::Tensor& a, const at::Tensor& b) { return a.dot(b).item<double>(); };
  double total = 0;
  for (int dir = 0; dir < 2; ++dir) {
    const at::Tensor& x = dir == 0 ? t : c;     // rows
    const at::Tensor& y = dir == 0 ? c : t;     // batch candidates
    const at::Tensor& qy = dir == 0 ? qc : qt;  // queue candidates
    for (int64_t i = 0; i < n; ++i) {
      double denominator = 0;
      for (int64_t j = 0; j < n; ++j)
        if (j == i || key[i] != key[j]) denominator += std::exp(scale * dot(x[i], y[j]));
      for (int64_t j = 0; j < k; ++j)
        if (key[i] != qkey[j]) denominator += std::exp(scale * dot(x[i], qy[j]));
      total += -(scale * dot(x[i], y[i]) - std::log(denominator));
    }
  }
  return total / (2.0 * n);
}

TEST(QueueLossTest, InfoNceWithQueueMatchesADirectComputation) {
  at::manual_seed(3);
  const int64_t n = 4, k = 5, d = 6;
  const at::Tensor t = unit_rows(at::randn({n, d}, at::kDouble));
  const at::Tensor c = unit_rows(at::randn({n, d}, at::kDouble));
  const at::Tensor qt = unit_rows(at::randn({k, d}, at::kDouble));
  const at::Tensor qc = unit_rows(at::randn({k, d}, at::kDouble));
  // Caption keys: batch rows 0 and 2 say the same; queue rows 1 and 4 say what
  // batch rows 1 and 3 say (false negatives from the queue).
  const std::vector<int64_t> key = {10, 11, 10, 13};
  const std::vector<int64_t> qkey = {20, 11, 22, 23, 13};
  ContrastivePairs pairs;
  pairs.text = t;
  pairs.cad = c;
  pairs.caption_key = at::tensor(key);
  pairs.geometry_key = at::arange(100, 100 + n, at::kLong);  // no equal geometry
  QueueNegatives queue;
  queue.text = qt;
  queue.cad = qc;
  queue.caption_key = at::tensor(qkey);
  queue.geometry_key = at::arange(200, 200 + k, at::kLong);
  auto comm = make_single_process_communicator();
  const double scale = 7.5;
  const auto result =
      contrastive_loss(*comm, pairs, at::full({}, scale, at::kDouble), {}, {}, &queue);
  EXPECT_EQ(result.masked_pairs, 2);
  EXPECT_EQ(result.masked_queue, 2);
  EXPECT_NEAR(result.loss.item<double>(), direct_infonce(t, c, qt, qc, key, qkey, scale), 1e-12);

  // A geometry key shared with a queue row masks that row too.
  queue.geometry_key = at::tensor(std::vector<int64_t>{200, 201, 100, 203, 204});
  EXPECT_EQ(
      contrastive_loss(*comm, pairs, at::full({}, scale, at::kDouble), {}, {}, &queue).masked_queue,
      3);

  // Without masking every queue row is a negative; an empty queue is no queue.
  LossOptions off;
  off.mask_false_negatives = false;
  const std::vector<int64_t> unique = {1, 2, 3, 4}, qunique = {5, 6, 7, 8, 9};
  queue.geometry_key = at::arange(200, 200 + k, at::kLong);
  EXPECT_NEAR(contrastive_loss(*comm, pairs, at::full({}, scale, at::kDouble), {}, off, &queue)
                  .loss.item<double>(),
              direct_infonce(t, c, qt, qc, unique, qunique, scale), 1e-12);
  QueueNegatives empty;
  EXPECT_NEAR(
      contrastive_loss(*comm, pairs, at::full({}, scale, at::kDouble), {}, {}, &empty)
          .loss.item<double>(),
      contrastive_loss(*comm, pairs, at::full({}, scale, at::kDouble), {}, {}).loss.item<double>(),
      1e-15);
}

TEST(QueueLossTest, NoGradientFlowsIntoTheQueue) {
  const at::Tensor t = unit_rows(at::randn({3, 4})).requires_grad_(true);
  const at::Tensor c = unit_rows(at::randn({3, 4}));
  QueueNegatives queue;
  queue.text = unit_rows(at::randn({2, 4})).requires_grad_(true);
  queue.cad = unit_rows(at::randn({2, 4})).requires_grad_(true);
  queue.caption_key = at::arange(10, 12, at::kLong);
  queue.geometry_key = at::arange(20, 22, at::kLong);
  ContrastivePairs pairs{t, c, at::arange(3, at::kLong), at::arange(3, at::kLong)};
  auto comm = make_single_process_communicator();
  contrastive_loss(*comm, pairs, at::full({}, 5.0), {}, {}, &queue).loss.backward();
  EXPECT_TRUE(t.grad().defined());
  EXPECT_FALSE(queue.text.grad().defined());
  EXPECT_FALSE(queue.cad.grad().defined());
}

}  // namespace
}  // namespace cadclip::train
