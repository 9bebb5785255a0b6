// The two-tower model with a tiny text module defined here (test-only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "cadclip/core/error.h"
#include "cadclip/core/size_groups.h"
#include "cadclip/data/batch.h"
#include "cadclip/model/two_tower.h"
#include "random_graph.h"
#include "tiny_model.h"

namespace cadclip::model {
namespace {

// Masked mean of token embeddings: the smallest module with the text tower's
// forward(input_ids, attention_mask) -> [B, H] contract.
class MeanTextImpl : public torch::nn::Module {
 public:
  MeanTextImpl(int64_t vocab, int64_t width) {
    embedding = register_module("embedding", torch::nn::Embedding(vocab, width));
    proj = register_module("proj", torch::nn::Linear(width, width));
  }
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& attention_mask) {
    const at::Tensor mask = attention_mask.unsqueeze(-1).to(at::kFloat);
    const at::Tensor pooled = proj((embedding(input_ids) * mask).sum(1) / mask.sum(1).clamp_min(1));
    last_dtype = pooled.scalar_type();
    return pooled;
  }
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear proj{nullptr};
  at::ScalarType last_dtype = at::kFloat;
};
TORCH_MODULE(MeanText);

// A linear text head and no quantity branch unless a test asks for them.
TwoTowerOptions plain_options() {
  TwoTowerOptions o;
  o.text_head_hidden = 0;
  o.quantity_width = 0;
  return o;
}

TwoTower tiny_model(TwoTowerOptions options = plain_options()) {
  torch::manual_seed(0);
  options.embed_dim = 8;
  return TwoTower(BRepEncoder(testing::tiny_brep_options()), torch::nn::AnyModule(MeanText(50, 12)),
                  /*text_width=*/12, options);
}

TEST(TwoTower, GivesUnitEmbeddingsOfTheSharedSizeFromBothTowers) {
  TwoTower model = tiny_model();
  const data::BRepBatch batch =
      data::collate(std::vector{testing::random_graph(5, 1), testing::random_graph(3, 2)});
  const at::Tensor ids = at::tensor({3, 4, 5, 0, 7, 8, 9, 10}, at::kLong).view({2, 4});
  const at::Tensor mask = at::tensor({1, 1, 1, 0, 1, 1, 1, 1}, at::kLong).view({2, 4});
  const TwoTowerOutput out = model->forward(batch, ids, mask);
  ASSERT_EQ(out.brep.sizes(), (at::IntArrayRef{2, 8}));
  ASSERT_EQ(out.text.sizes(), (at::IntArrayRef{2, 8}));
  EXPECT_TRUE(at::allclose(out.brep.norm(2, 1), at::ones({2})));
  EXPECT_TRUE(at::allclose(out.text.norm(2, 1), at::ones({2})));
  EXPECT_NEAR(out.logit_scale.item<double>(), 1 / 0.07, 1e-4);

  // Both towers, both heads and the temperature learn from a CLIP loss.
  const at::Tensor logits = out.logit_scale * at::matmul(out.brep, out.text.t());
  const at::Tensor labels = at::arange(2, at::kLong);
  (at::cross_entropy_loss(logits, labels) + at::cross_entropy_loss(logits.t(), labels)).backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
  const auto params = model->named_parameters();
  EXPECT_TRUE(params.contains("text.embedding.weight"));
  EXPECT_TRUE(params.contains("brep.final_norm.weight"));
  EXPECT_TRUE(params.contains("log_logit_scale"));
}

TEST(TwoTower, ClampsTheLogitScaleAt100) {
  TwoTower model = tiny_model();
  {
    torch::NoGradGuard no_grad;
    model->log_logit_scale.fill_(7.0);  // e^7 = 1097
  }
  EXPECT_NEAR(model->logit_scale().item<double>(), 100.0, 1e-3);
  model->clamp_logit_scale_();
  EXPECT_NEAR(model->log_logit_scale.item<double>(), std::log(100.0), 1e-6);
}

TEST(TwoTower, RunsTheTextTowerInBf16AndReturnsFp32) {
  TwoTowerOptions options = plain_options();
  options.text_precision = at::kBFloat16;
  TwoTower model = tiny_model(options);
  const at::Tensor ids = at::tensor({1, 2, 3}, at::kLong).view({1, 3});
  const at::Tensor text = model->encode_text(ids, at::ones({1, 3}, at::kLong));
  EXPECT_EQ(std::dynamic_pointer_cast<MeanTextImpl>(model->text())->last_dtype, at::kBFloat16);
  EXPECT_EQ(text.scalar_type(), at::kFloat);
  EXPECT_NEAR(text.norm().item<double>(), 1.0, 1e-5);
}

TEST(TwoTower, RejectsATextEncoderOfTheWrongWidth) {
  torch::manual_seed(0);
  TwoTower model(BRepEncoder(testing::tiny_brep_options()), torch::nn::AnyModule(MeanText(50, 12)),
                 /*text_width=*/10);
  const at::Tensor ids = at::tensor({1, 2}, at::kLong).view({1, 2});
  EXPECT_THROW(model->encode_text(ids, at::ones({1, 2}, at::kLong)), Error);
  TwoTowerOptions bad;
  bad.max_logit_scale = 5;
  EXPECT_THROW(tiny_model(bad), Error);
}

TEST(TwoTower, EncodesGraphsGroupedBySizeAsIfPaddedTogether) {
  TwoTower model = tiny_model();
  model->eval();  // no dropout: the two passes must compute the same function
  std::vector<data::BRepGraph> graphs;
  for (int i = 0; i < 9; ++i) graphs.push_back(testing::random_graph(i == 4 ? 60 : 2 + i, 10 + i));

  const at::Tensor padded = model->encode_brep(data::collate(graphs));
  const at::Tensor padded_sum = (padded * at::arange(padded.numel()).view_as(padded)).sum();
  padded_sum.backward();
  std::vector<at::Tensor> padded_grads;
  for (const auto& p : model->parameters()) {
    padded_grads.push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
    p.mutable_grad() = at::Tensor();
  }

  const at::Tensor grouped = model->encode_brep(graphs);  // more than one group here
  ASSERT_GT(group_by_size(std::vector<int64_t>{2, 3, 4, 5, 60, 7, 8, 9, 10}).size(), 1u);
  EXPECT_TRUE(at::allclose(grouped, padded, 1e-5, 1e-6));
  (grouped * at::arange(grouped.numel()).view_as(grouped)).sum().backward();
  size_t k = 0;
  for (const auto& p : model->parameters()) {
    const at::Tensor g = p.grad().defined() ? p.grad() : at::zeros_like(p);
    // fp32 sums in another order: compare against the tensor's own scale.
    const double scale = std::max(1.0, padded_grads[k].abs().max().item<double>());
    EXPECT_LE((g - padded_grads[k]).abs().max().item<double>(), 1e-5 * scale) << "parameter " << k;
    ++k;
  }
}

TEST(TwoTower, PutsAHiddenGeluLayerInTheTextHeadWhenAsked) {
  TwoTowerOptions options = plain_options();
  options.text_head_hidden = 20;
  TwoTower model = tiny_model(options);
  const auto params = model->named_parameters();
  EXPECT_EQ(params["text_hidden.weight"].sizes(), (at::IntArrayRef{20, 12}));
  EXPECT_EQ(params["text_head.weight"].sizes(), (at::IntArrayRef{8, 20}));
  const at::Tensor pooled = at::randn({3, 12});
  const at::Tensor out = model->project_text(pooled);
  EXPECT_TRUE(at::allclose(out.norm(2, 1), at::ones({3})));
  // Not a linear map any more: f(2x) is not f(x) after normalisation.
  EXPECT_FALSE(at::allclose(model->project_text(2 * pooled), out, 1e-4, 1e-5));
  EXPECT_FALSE(tiny_model()->named_parameters().contains("text_hidden.weight"));

  options.text_head_hidden = -1;
  EXPECT_THROW(tiny_model(options), Error);
}

TEST(TwoTower, ReadsTheNumbersOfEachTextThroughTheQuantityBranch) {
  TwoTowerOptions options = plain_options();
  options.quantity_width = 6;
  TwoTower model = tiny_model(options);
  const auto params = model->named_parameters();
  EXPECT_EQ(params["quantity.in.weight"].sizes(),
            (at::IntArrayRef{6, QuantityEncoderImpl::kFeatures}));
  EXPECT_EQ(params["text_head.weight"].sizes(), (at::IntArrayRef{8, 12 + 2 * 6}));
  EXPECT_TRUE(model->reads_quantities());
  EXPECT_FALSE(tiny_model()->reads_quantities());

  // Three texts with the same tokens and different numbers.
  const at::Tensor pooled = at::randn({1, 12}).expand({3, 12});
  const std::vector<std::string> texts = {"250 by 200 by 5 mm", "250 by 200 by 6 mm", "no numbers"};
  const text::QuantityBatch quantities = text::quantity_batch(texts);
  const at::Tensor out = model->project_text(pooled, quantities);
  EXPECT_TRUE(at::allclose(out.norm(2, 1), at::ones({3})));
  EXPECT_GT((out[0] - out[1]).abs().max().item<float>(), 1e-4);
  EXPECT_GT((out[0] - out[2]).abs().max().item<float>(), 1e-4);
  EXPECT_FALSE(at::isfinite(out).logical_not().any().item<bool>());
  // A row's embedding does not depend on the other rows or on their padding.
  const text::QuantityBatch first = quantities.index_select(at::tensor({0}, at::kLong));
  EXPECT_TRUE(at::allclose(model->project_text(pooled.narrow(0, 0, 1), first), out.narrow(0, 0, 1),
                           1e-5, 1e-6));

  // Every parameter of the branch gets a gradient, also with a number-free text.
  out.sum().backward();
  for (const auto& p : model->quantity->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_TRUE(at::isfinite(p.grad()).all().item<bool>());
    EXPECT_GT(p.grad().abs().sum().item<float>(), 0);
  }

  // Without quantities, a model that reads them says what to pass.
  EXPECT_THROW(model->project_text(pooled), Error);
  EXPECT_THROW(model->project_text(pooled.narrow(0, 0, 2), quantities), Error);
  options.quantity_width = -1;
  EXPECT_THROW(tiny_model(options), Error);
}

TwoTower tiny_model_in(TextSpace space) {
  TwoTowerOptions options = plain_options();
  options.text_space = space;
  options.text_head_hidden = 10;
  options.quantity_width = 4;
  torch::manual_seed(0);
  options.embed_dim = 12;  // the text width: the pretrained space itself
  return TwoTower(BRepEncoder(testing::tiny_brep_options()), torch::nn::AnyModule(MeanText(50, 12)),
                  /*text_width=*/12, options);
}

TEST(TwoTower, TheLockedTextSpaceIsThePretrainedEmbeddingWithNothingTrained) {
  TwoTower model = tiny_model_in(TextSpace::kLocked);
  for (const auto& item : model->named_parameters())
    EXPECT_FALSE(item.key().starts_with("text_") || item.key().starts_with("quantity"))
        << item.key() << ": the locked space has no text head";
  EXPECT_FALSE(model->reads_quantities());
  const at::Tensor pooled = at::randn({3, 12});
  EXPECT_TRUE(at::allclose(model->project_text(pooled),
                           pooled / pooled.norm(2, 1, /*keepdim=*/true), 1e-5, 1e-6));
  // The B-Rep side lands in that space: its head maps to the text width.
  EXPECT_EQ(model->brep_head->weight.size(0), 12);
}

TEST(TwoTower, TheResidualTextSpaceStartsLockedAndItsCorrectionLearns) {
  TwoTower model = tiny_model_in(TextSpace::kResidual);
  const std::vector<std::string> texts = {"a 40 mm flange", "a plate"};
  const text::QuantityBatch quantities = text::quantity_batch(texts);
  const at::Tensor pooled = at::randn({2, 12});
  const at::Tensor out = model->project_text(pooled, quantities);
  EXPECT_TRUE(at::allclose(out, pooled / pooled.norm(2, 1, /*keepdim=*/true), 1e-5, 1e-6))
      << "a zero correction at the start";
  out.sum().backward();
  ASSERT_TRUE(model->text_head->weight.grad().defined());
  EXPECT_GT(model->text_head->weight.grad().abs().sum().item<float>(), 0)
      << "the correction gets a gradient from the start";
}

TEST(TwoTower, TheLockedSpacesNeedTheTextWidth) {
  TwoTowerOptions options = plain_options();
  options.text_space = TextSpace::kLocked;
  EXPECT_THROW(tiny_model(options), Error) << "embed_dim 8, text width 12";
  EXPECT_EQ(parse_text_space("residual"), TextSpace::kResidual);
  EXPECT_EQ(text_space_name(TextSpace::kLocked), "locked");
  EXPECT_THROW(parse_text_space("frozen"), Error);
}

}  // namespace
}  // namespace cadclip::model
