// The size block (model/size_head.h): the numbers a caption states, the
// part side's bins, the head's probabilities, and how the two-tower model
// appends the block to what search compares.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/nn/modules/linear.h>

#include "cadclip/core/error.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/model/size_head.h"
#include "cadclip/model/text_embedding.h"
#include "random_graph.h"
#include "tiny_model.h"

namespace cadclip::model {
namespace {

namespace fs = std::filesystem;

// The k-th number in order: its log10 as the features hold it (log10 / 3),
// whether it is there, and whether a length unit followed it.
double number_at(const at::Tensor& features, int64_t row, int64_t k) {
  return 3 * features[row][k * kSizeInOrderFeatures + 1].item<double>();
}
bool number_present(const at::Tensor& features, int64_t row, int64_t k) {
  return features[row][k * kSizeInOrderFeatures].item<float>() == 1.0f;
}
bool number_is_length(const at::Tensor& features, int64_t row, int64_t k) {
  return features[row][k * kSizeInOrderFeatures + 6].item<float>() == 1.0f;
}
// The k-th largest number's log10.
double largest_at(const at::Tensor& features, int64_t row, int64_t k) {
  return 3 * features[row][kSizeNumbers * kSizeInOrderFeatures + k * kSizeValueFeatures + 1]
                 .item<double>();
}

TEST(SizeNumbers, ReadsSizesInOrderAndNotTheDimensionalityOfA3DShape) {
  const std::vector<std::string> texts = {"The 3D shape is a plate 40 mm by 12.5 mm",
                                          "DIN 912 M8x1.25", "a 3-D part, 2d sketch", "no sizes"};
  const at::Tensor f = size_number_features(texts);
  ASSERT_EQ(f.sizes(), (at::IntArrayRef{4, kSizeNumberInputs}));
  EXPECT_NEAR(number_at(f, 0, 0), std::log10(40.0), 1e-6);
  EXPECT_NEAR(number_at(f, 0, 1), std::log10(12.5), 1e-6);
  EXPECT_TRUE(number_is_length(f, 0, 0));
  EXPECT_FALSE(number_present(f, 0, 2));
  EXPECT_NEAR(number_at(f, 1, 0), std::log10(912.0), 1e-6);
  EXPECT_NEAR(number_at(f, 1, 1), std::log10(8.0), 1e-6);
  EXPECT_NEAR(number_at(f, 1, 2), std::log10(1.25), 1e-6);
  EXPECT_FALSE(number_is_length(f, 1, 1));
  EXPECT_EQ(f[2].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(f[3].abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(states_a_number("M8 nut"));
  EXPECT_TRUE(states_a_number("a 13D mystery"));  // 13 is a number: "3D" must be a word
  EXPECT_FALSE(states_a_number("The 3D shape is a ring"));
  EXPECT_FALSE(states_a_number("bent at 45 degrees"));  // an angle is no size
}

TEST(SizeNumbers, ReadsUnitsNumberWordsAndTheLargestNumbersWhereverTheyStand) {
  const std::vector<std::string> texts = {"a pipe, 2 inch", "two holes in a plate 5 by 250 by 200",
                                          "a ten mm thick plate"};
  const at::Tensor f = size_number_features(texts);
  EXPECT_NEAR(number_at(f, 0, 0), std::log10(50.8), 1e-6);  // in millimetres
  EXPECT_NEAR(number_at(f, 1, 0), std::log10(5.0), 1e-6);   // "two" counts holes
  EXPECT_NEAR(largest_at(f, 1, 0), std::log10(250.0), 1e-6);
  EXPECT_NEAR(largest_at(f, 1, 1), std::log10(200.0), 1e-6);
  EXPECT_NEAR(largest_at(f, 1, 2), std::log10(5.0), 1e-6);
  EXPECT_NEAR(number_at(f, 2, 0), std::log10(10.0), 1e-6);  // a word with a unit is a size
  EXPECT_TRUE(number_is_length(f, 2, 0));
}

TEST(SizeNumbers, ACountInWordsIsNoSize) {
  EXPECT_FALSE(states_a_number("a plate with two holes and one slot"));
  EXPECT_FALSE(states_a_number("The 3D shape is a five-sided prism"));
  EXPECT_TRUE(states_a_number("a plate with 2 holes"));  // digits may be a size
  EXPECT_EQ(size_number_features(std::vector<std::string>{"four bolts"}).abs().sum().item<float>(),
            0.0f);
}

TEST(SizeNumbers, KeepsTheFirstEightNumbers) {
  const at::Tensor f = size_number_features(std::vector<std::string>{"1 2 3 4 5 6 7 8 9 10"});
  for (int64_t k = 0; k < kSizeNumbers; ++k)
    EXPECT_NEAR(number_at(f, 0, k), std::log10(static_cast<double>(k + 1)), 1e-6);
  EXPECT_NEAR(largest_at(f, 0, 0), 1.0, 1e-6);
}

// A code's flag and the log10 of its last digit and last two digits.
bool code_present(const at::Tensor& features, int64_t row, int64_t k) {
  return features[row][kSizeNumberInputs + k * kSizeCodeFeatures].item<float>() == 1.0f;
}
double code_digits(const at::Tensor& features, int64_t row, int64_t k, int64_t last) {
  const int64_t at =
      kSizeNumberInputs + k * kSizeCodeFeatures + 1 + (last - 1) * kSizeValueFeatures;
  return 3 * features[row][at + 1].item<double>();
}

TEST(SizeNumbers, WithTheBoreReadsThreeAndFourDigitCodesByTheirLastDigits) {
  const std::vector<std::string> texts = {"608ZZ bearing", "6005-2RS", "a plate 120 by 4.5 mm",
                                          "bearing 1200"};
  const at::Tensor plain = size_number_features(texts);
  const at::Tensor f = size_number_features(texts, /*codes=*/true);
  ASSERT_EQ(f.sizes(), (at::IntArrayRef{4, size_number_inputs(true)}));
  EXPECT_TRUE(at::equal(f.narrow(1, 0, kSizeNumberInputs), plain));
  EXPECT_TRUE(code_present(f, 0, 0));
  EXPECT_NEAR(code_digits(f, 0, 0, 1), std::log10(8.0), 1e-6);  // 608: an 8 mm bore
  EXPECT_NEAR(code_digits(f, 0, 0, 2), std::log10(8.0), 1e-6);
  EXPECT_TRUE(code_present(f, 1, 0));
  EXPECT_NEAR(code_digits(f, 1, 0, 2), std::log10(5.0), 1e-6);  // 6005: 5 x 05 = 25 mm
  EXPECT_TRUE(code_present(f, 2, 0));                           // 120 has three digits...
  EXPECT_FALSE(code_present(f, 2, 1));                          // ... 4.5 mm is a size
  EXPECT_TRUE(code_present(f, 3, 0));
  EXPECT_EQ(f[3][kSizeNumberInputs + 1 + kSizeValueFeatures].item<float>(), 1.0f);  // "00"
  EXPECT_EQ(
      f.narrow(1, kSizeNumberInputs + kSizeCodeFeatures, kSizeCodeInputs - kSizeCodeFeatures)[0]
          .abs()
          .sum()
          .item<float>(),
      0.0f);
}

TEST(SizeBins, PutsASideOnItsBinAndSplitsOneBetweenTwo) {
  const int64_t bins = size_bins(25);
  EXPECT_EQ(bins, 114);
  const double step = (kSizeLogHigh - kSizeLogLow) / static_cast<double>(bins - 1);
  // Side 0 on the centre of bin 10, side 1 a quarter of the way from bin 50 to 51,
  // side 2 beyond the last bin.
  const at::Tensor sides = at::tensor({static_cast<float>(kSizeLogLow + 10 * step),
                                       static_cast<float>(kSizeLogLow + 50.25 * step), 7.0f})
                               .view({1, 3});
  const at::Tensor w = size_bin_weights(sides, bins).view({3, bins});
  for (int64_t s = 0; s < 3; ++s) EXPECT_NEAR(w[s].norm().item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(w[0][10].item<double>(), 1.0, 1e-4);
  EXPECT_NEAR(w[1][50].item<double>() / w[1][51].item<double>(), 3.0, 1e-3);
  EXPECT_NEAR(w[2][bins - 1].item<double>(), 1.0, 1e-5);
}

TEST(SizeBins, ReadTheSortedSidesOfTheBoundingBox) {
  data::BRepGraph g = testing::random_graph(4, 1);
  g.bbox_mm = {-5, 0, 10, 35, 8, 30};  // sides 40, 8, 20
  const std::array<float, 3> s = log_box_sides(g);
  EXPECT_NEAR(s[0], std::log10(8.0), 1e-6);
  EXPECT_NEAR(s[1], std::log10(20.0), 1e-6);
  EXPECT_NEAR(s[2], std::log10(40.0), 1e-6);
}

TEST(SizeHead, GivesEachSideAProbabilityOverTheBinsAroundItsMean) {
  torch::manual_seed(0);
  SizeHead head(8, 25);
  const at::Tensor inputs = at::randn({5, 8 + kSizeNumberInputs});
  const at::Tensor p = head->probabilities(inputs).view({5, 3, head->bins()});
  EXPECT_TRUE(at::allclose(p.sum(-1), at::ones({5, 3}), 1e-5, 1e-5));
  const at::Tensor mean = head->forward(inputs).mean;
  const double step = (kSizeLogHigh - kSizeLogLow) / static_cast<double>(head->bins() - 1);
  const at::Tensor peak = kSizeLogLow + p.argmax(-1).to(at::kDouble) * step;
  const at::Tensor inside = mean.to(at::kDouble).clamp(kSizeLogLow, kSizeLogHigh);
  EXPECT_LE((peak - inside).abs().max().item<double>(), step);
  // The likelihood is lowest where the sides are the means.
  EXPECT_LT(head->nll(inputs, mean.detach()).item<double>(),
            head->nll(inputs, mean.detach() + 0.5).item<double>());
}

// With the pointer, a side whose logits pick a stated number (by its place
// in the sentence or among the largest) has that number's size as its mean
// (plus the offset), to the float; a caption that states fewer numbers is
// never pointed at one it lacks.
TEST(SizeHead, WithThePointerASideIsTheStatedNumberItPicks) {
  SizeHead head(8, 25, /*bore=*/false, /*pointer=*/true);
  auto last = head->net->ptr<torch::nn::LinearImpl>(4);
  ASSERT_EQ(last->bias.size(0), 2 * 3 + 3 * kSizePointerSlots);
  {
    torch::NoGradGuard no_grad;
    last->weight.zero_();
    last->bias.zero_();
    // Side 0 picks the first number in order, side 1 the largest and adds a
    // tenth of a decade, side 2 the second largest.
    const at::Tensor logits = last->bias.narrow(0, 6, 3 * kSizePointerSlots).view({3, -1});
    logits[0][0] = 50;
    logits[1][kSizeNumbers] = 50;
    logits[2][kSizeNumbers + 1] = 50;
    last->bias[2] = 0.1;
  }
  const std::vector<std::string> texts = {"10 mm dowel pin 95 mm long",
                                          "dowel pin 95 mm long, 10 mm thick", "a 12 mm pin",
                                          "a round pin"};
  const at::Tensor inputs = at::cat({at::zeros({4, 8}), size_number_features(texts)}, 1);
  const at::Tensor mean = head->forward(inputs).mean;
  const double d95 = std::log10(95.0);
  const double d12 = std::log10(12.0);
  EXPECT_NEAR(mean[0][0].item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(mean[1][0].item<double>(), d95, 1e-5);
  for (int64_t row = 0; row < 2; ++row) {
    EXPECT_NEAR(mean[row][1].item<double>(), d95 + 0.1, 1e-5);
    EXPECT_NEAR(mean[row][2].item<double>(), 1.0, 1e-5);
  }
  EXPECT_NEAR(mean[2][0].item<double>(), d12, 1e-5);
  EXPECT_NEAR(mean[2][1].item<double>(), d12 + 0.1, 1e-5);
  // One number: no second largest, so side 2 spreads evenly over the slots
  // that are there: the number in order, as the largest, and 10 mm.
  EXPECT_NEAR(mean[2][2].item<double>(), (2 * d12 + 1) / 3, 1e-5);
  // No number: 10 mm, as the head without the pointer starts.
  for (int64_t side = 0; side < 3; ++side)
    EXPECT_NEAR(mean[3][side].item<double>(), side == 1 ? 1.1 : 1.0, 1e-5);
  TwoTowerOptions pointer_alone;
  pointer_alone.size_pointer = true;  // a pointer without a block
  EXPECT_THROW(pointer_alone.validate(), Error);
}

TEST(SizeBins, ABoreSitsInTheBinsAndNoBoreInItsOwnEntry) {
  const int64_t bins = size_bins(25);
  const at::Tensor bores =
      at::tensor({static_cast<float>(std::log10(25.0)), 1.0f, 0.0f, 0.0f}).view({2, 2});
  const at::Tensor w = bore_bin_weights(bores, bins);
  ASSERT_EQ(w.sizes(), (at::IntArrayRef{2, bins + 1}));
  EXPECT_NEAR(w[0].norm().item<double>(), 1.0, 1e-5);
  EXPECT_EQ(w[0][bins].item<float>(), 0.0f);
  // The same bins as a box side of 25 mm.
  const at::Tensor side =
      size_bin_weights(at::full({1, 3}, static_cast<float>(std::log10(25.0))), bins);
  EXPECT_TRUE(at::allclose(w[0].narrow(0, 0, bins), side[0].narrow(0, 0, bins)));
  EXPECT_EQ(w[1][bins].item<float>(), 1.0f);
  EXPECT_EQ(w[1].narrow(0, 0, bins).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(size_block_width(25, false), 3 * bins);
  EXPECT_EQ(size_block_width(25, true), 4 * bins + 1);
}

TEST(SizeHead, WithTheBoreSharesItsMassBetweenTheBoreAndNone) {
  torch::manual_seed(0);
  SizeHead head(8, 25, /*bore=*/true);
  ASSERT_EQ(head->input_width(), 8 + size_number_inputs(true));
  const at::Tensor inputs = at::randn({5, head->input_width()});
  const at::Tensor p = head->probabilities(inputs);
  const int64_t bins = head->bins();
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{5, head->block_width()}));
  EXPECT_TRUE(at::allclose(p.narrow(1, 0, 3 * bins).view({5, 3, bins}).sum(-1), at::ones({5, 3}),
                           1e-5, 1e-5));
  const SizeHeadImpl::Prediction pred = head->forward(inputs);
  const at::Tensor has = pred.bore_logit.sigmoid();
  EXPECT_TRUE(at::allclose(p.narrow(1, 3 * bins, bins).sum(-1), has, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(p.select(1, 4 * bins), 1 - has, 1e-5, 1e-5));
  // The likelihood: of a bore where the head puts one, and of its absence.
  const at::Tensor sides = pred.mean.narrow(1, 0, 3).detach();
  const at::Tensor at_mean = at::stack({pred.mean.select(1, 3).detach(), at::ones({5})}, 1);
  const at::Tensor off_mean = at_mean + at::tensor({0.5f, 0.0f});
  EXPECT_LT(head->nll(inputs, sides, at_mean).item<double>(),
            head->nll(inputs, sides, off_mean).item<double>());
  // No bore: the cross entropy of its absence alone, whatever the bore's Gaussian.
  const at::Tensor none = at::zeros({5, 2});
  const at::Tensor none_far = at::tensor({9.0f, 0.0f}).expand({5, 2});
  EXPECT_NEAR(head->nll(inputs, sides, none).item<double>(),
              head->nll(inputs, sides, none_far).item<double>(), 1e-5);
}

TEST(SizeHead, RefusesBinsPerDecadeBelowOne) {
  EXPECT_THROW(size_bins(0), Error);
  TwoTowerOptions o;
  o.size_bins_per_decade = -1;
  EXPECT_THROW(o.validate(), Error);
  o.size_bins_per_decade = 25;
  o.size_weight = 0;
  EXPECT_THROW(o.validate(), Error);
  TwoTowerOptions bore_alone;
  bore_alone.size_bore = true;  // a bore side without a block
  EXPECT_THROW(bore_alone.validate(), Error);
  o.size_weight = 0.2;
  o.size_bore = true;
  o.size_bore_weight = -1;
  EXPECT_THROW(o.validate(), Error);
}

class SizeBlock : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(3);
    built_ = build_model(testing::tiny_model_config());
    built_.model->eval();
  }
  BuiltModel built_;
};

TEST_F(SizeBlock, AModelWithoutASizeHeadSearchesItsEmbeddingsAsTheyAre) {
  EXPECT_EQ(built_.model->search_dim(), built_.model->options().embed_dim);
  const std::vector<data::BRepGraph> graphs = {testing::random_graph(4, 2)};
  c10::InferenceMode inference;
  EXPECT_TRUE(at::equal(built_.model->embed_parts(graphs), built_.model->encode_brep(graphs)));
}

TEST_F(SizeBlock, InnerProductsAreTheCosinePlusTheWeightedSizeMatch) {
  built_.model->add_size_head(25, 0.3);
  const int64_t d = built_.model->options().embed_dim;
  const int64_t b = built_.model->size_head->block_width();
  ASSERT_EQ(built_.model->search_dim(), d + b);
  std::vector<data::BRepGraph> graphs = {testing::random_graph(4, 2), testing::random_graph(5, 3)};
  graphs[0].bbox_mm = {0, 0, 0, 8, 8, 40};
  graphs[1].bbox_mm = {0, 0, 0, 100, 60, 5};
  const std::vector<std::string> texts = {"an M8 bolt 40 mm long", "a plain washer"};
  c10::InferenceMode inference;
  const at::Tensor parts = built_.model->embed_parts(graphs);
  const at::Tensor text = embed_texts(built_, texts, {});
  ASSERT_EQ(parts.sizes(), (at::IntArrayRef{2, d + b}));
  ASSERT_EQ(text.sizes(), (at::IntArrayRef{2, d + b}));
  EXPECT_TRUE(at::allclose(parts.narrow(1, 0, d), built_.model->encode_brep(graphs)));

  const at::Tensor unit_text = text.narrow(1, 0, d);
  EXPECT_TRUE(at::allclose(unit_text.norm(2, 1), at::ones({2}), 1e-5, 1e-5));
  // The text that states no number has no block.
  EXPECT_EQ(text[1].narrow(0, d, b).abs().sum().item<float>(), 0.0f);
  // cosine + w * sum over sides of p . q
  const at::Tensor p =
      built_.model->size_head->probabilities(at::cat({unit_text, size_number_features(texts)}, 1));
  at::Tensor sides = at::empty({2, 3});
  for (int64_t i = 0; i < 2; ++i) {
    const std::array<float, 3> s = log_box_sides(graphs[static_cast<size_t>(i)]);
    for (int64_t k = 0; k < 3; ++k) sides[i][k] = s[k];
  }
  const at::Tensor q = size_bin_weights(sides, built_.model->size_head->bins());
  const at::Tensor expected = at::matmul(unit_text, parts.narrow(1, 0, d).t()) +
                              0.3 * at::matmul(p, q.t()) * at::tensor({1.0f, 0.0f}).view({2, 1});
  EXPECT_TRUE(at::allclose(at::matmul(text, parts.t()), expected, 1e-5, 1e-5));

  // A part as a query for parts: its block zeroed.
  const at::Tensor query = built_.model->as_part_query(parts);
  EXPECT_TRUE(at::equal(query.narrow(1, 0, d), parts.narrow(1, 0, d)));
  EXPECT_EQ(query.narrow(1, d, b).abs().sum().item<float>(), 0.0f);
}

TEST_F(SizeBlock, WithTheBoreInnerProductsAddTheBoreSide) {
  built_.model->add_size_head(25, 1.0, /*bore=*/true);
  built_.model->set_size_weights(0.4, 0.1);
  const int64_t d = built_.model->options().embed_dim;
  const int64_t bins = built_.model->size_head->bins();
  const int64_t b = built_.model->size_head->block_width();
  ASSERT_EQ(b, 4 * bins + 1);
  ASSERT_EQ(built_.model->search_dim(), d + b);
  std::vector<data::BRepGraph> graphs = {testing::random_graph(4, 2)};
  graphs[0].bbox_mm = {0, 0, 0, 22, 22, 7};
  const std::vector<std::string> texts = {"608ZZ bearing 8x22x7"};
  c10::InferenceMode inference;
  const at::Tensor parts = built_.model->embed_parts(graphs);
  const at::Tensor text = embed_texts(built_, texts, {});
  const at::Tensor unit_text = text.narrow(1, 0, d);
  const at::Tensor p = built_.model->size_head->probabilities(
      at::cat({unit_text, size_number_features(texts, true)}, 1));
  const std::array<float, 2> bore = log_bore(graphs[0]);
  const at::Tensor q = part_size_block(std::vector<const data::BRepGraph*>{&graphs[0]}, bins, true);
  EXPECT_TRUE(at::allclose(parts.narrow(1, d, 3 * bins), std::sqrt(0.4) * q.narrow(1, 0, 3 * bins),
                           1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(parts.narrow(1, d + 3 * bins, bins + 1),
                           std::sqrt(0.1) * q.narrow(1, 3 * bins, bins + 1), 1e-6, 1e-6));
  // A random graph has no round hole: its bore side is the "none" entry.
  EXPECT_EQ(bore[1], 0.0f);
  EXPECT_EQ(q[0][4 * bins].item<float>(), 1.0f);
  const at::Tensor expected =
      at::matmul(unit_text, parts.narrow(1, 0, d).t()) +
      0.4 * at::matmul(p.narrow(1, 0, 3 * bins), q.narrow(1, 0, 3 * bins).t()) +
      0.1 * at::matmul(p.narrow(1, 3 * bins, bins + 1), q.narrow(1, 3 * bins, bins + 1).t());
  EXPECT_TRUE(at::allclose(at::matmul(text, parts.t()), expected, 1e-5, 1e-5));
}

TEST_F(SizeBlock, ACheckpointKeepsTheSizeHeadAndItsSettings) {
  built_.model->add_size_head(10, 0.5, /*bore=*/false, /*pointer=*/true);
  built_.config.two_tower.size_bins_per_decade = 10;
  built_.config.two_tower.size_weight = 0.5;
  built_.config.two_tower.size_pointer = true;
  const fs::path run = fs::temp_directory_path() / "cadclip_size_block_checkpoint";
  fs::remove_all(run);
  save_checkpoint(run, "last", built_, {});
  BuiltModel loaded = load_model_from_checkpoint(run);
  ASSERT_TRUE(loaded.model->size_head);
  EXPECT_EQ(loaded.model->options().size_bins_per_decade, 10);
  EXPECT_DOUBLE_EQ(loaded.model->options().size_weight, 0.5);
  EXPECT_TRUE(loaded.model->size_head->pointer());
  std::vector<data::BRepGraph> graphs = {testing::random_graph(4, 7)};
  graphs[0].bbox_mm = {0, 0, 0, 3, 4, 5};
  c10::InferenceMode inference;
  EXPECT_TRUE(at::allclose(loaded.model->embed_parts(graphs), built_.model->embed_parts(graphs)));
  const std::vector<std::string> texts = {"a 45 mm shaft"};
  EXPECT_TRUE(at::allclose(embed_texts(loaded, texts, {}), embed_texts(built_, texts, {})));
  fs::remove_all(run);
}

TEST(SizeBlockConfig, OlderConfigsHaveNoSizeBlock) {
  ModelConfig config;
  from_json(nlohmann::json::parse(R"({"two_tower": {"embed_dim": 16}})"), config);
  EXPECT_EQ(config.two_tower.size_bins_per_decade, 0);
  EXPECT_FALSE(config.two_tower.size_bore);
  EXPECT_FALSE(config.two_tower.size_pointer);
  config.two_tower.size_bins_per_decade = 25;
  config.two_tower.size_weight = 0.2;
  config.two_tower.size_bore = true;
  config.two_tower.size_bore_weight = 0.05;
  ModelConfig back;
  from_json(nlohmann::json(config), back);
  EXPECT_EQ(back.two_tower.size_bins_per_decade, 25);
  EXPECT_DOUBLE_EQ(back.two_tower.size_weight, 0.2);
  EXPECT_TRUE(back.two_tower.size_bore);
  EXPECT_DOUBLE_EQ(back.two_tower.size_bore_weight, 0.05);
}

}  // namespace
}  // namespace cadclip::model
