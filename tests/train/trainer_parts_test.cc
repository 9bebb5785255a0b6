// The parts of the trainer that can be read and tested alone: the schedule,
// caption tokens, the validation split's choice, resume conflicts.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adamw.h>

#include <cmath>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/text/tokenizer.h"
#include "cadclip/train/checkpointer.h"
#include "cadclip/train/schedule.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/validator.h"

namespace cadclip::train {
namespace {

TEST(LearningRateScheduleTest, WarmsUpLinearlyThenFallsOnACosineToZero) {
  const LearningRateSchedule s({/*lr=*/1e-3, /*text_lr=*/1e-5, /*weight_decay=*/0.05},
                               /*total_steps=*/100, /*warmup_share=*/0.1);
  EXPECT_EQ(s.warmup_steps(), 10);
  EXPECT_DOUBLE_EQ(s.factor(0), 0.1);
  EXPECT_DOUBLE_EQ(s.factor(9), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(10), 1.0);  // the decay starts at its top
  EXPECT_NEAR(s.factor(55), 0.5, 1e-12);
  EXPECT_NEAR(s.factor(100), 0.0, 1e-12);
  EXPECT_NEAR(s.factor(1000), 0.0, 1e-12);  // past the end it stays at zero
  EXPECT_DOUBLE_EQ(s.new_modules_rate(0), 1e-4);
  for (int64_t step = 11; step < 100; ++step) EXPECT_LT(s.factor(step), s.factor(step - 1));
}

TEST(LearningRateScheduleTest, EachGroupRunsAtItsBaseRateTimesTheFactor) {
  torch::nn::Linear net(2, 2);
  const AdamWSettings settings{1e-3, 1e-5, 0.05};
  torch::optim::AdamW optimizer(adamw_groups(*net, at::Tensor(), settings));
  const LearningRateSchedule s(settings, 10, 0.0);
  s.apply(optimizer, 5);
  const std::vector<double> base = adamw_base_lr(settings);
  ASSERT_EQ(optimizer.param_groups().size(), base.size());
  for (size_t g = 0; g < base.size(); ++g)
    EXPECT_DOUBLE_EQ(
        static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups()[g].options()).lr(),
        base[g] * s.factor(5));
  torch::optim::AdamW other(net->parameters());  // one group: not the trainer's
  EXPECT_THROW(s.apply(other, 0), Error);
}

TEST(CaptionTokenizerTest, CutsLongCaptionsAtTheLimitEndingInSepAndCountsThem) {
  const auto tokenizer = text::load_tokenizer("tests/fixtures/text/bert");
  CaptionTokenizer tokens(*tokenizer, 6);
  const std::vector<int64_t> short_row = tokens("a nut");
  const std::vector<int64_t> long_row = tokens("a flange with six holes and a thin rim");
  EXPECT_EQ(tokens.truncated(), 1);
  EXPECT_EQ(short_row, tokenizer->encode("a nut"));
  EXPECT_EQ(long_row, tokenizer->encode("a flange with six holes and a thin rim", 6));
  EXPECT_EQ(long_row.back(), tokenizer->sep_id());
  const auto [ids, mask] = tokens.pad({short_row, long_row}, at::kCPU);
  EXPECT_EQ(ids.sizes(), (at::IntArrayRef{2, 6}));
  EXPECT_EQ(mask.sum().item<int64_t>(), static_cast<int64_t>(short_row.size() + 6));
  EXPECT_EQ(ids[0][static_cast<int64_t>(short_row.size())].item<int64_t>(), tokenizer->pad_id());
}

TEST(ResumeConflictsTest, NameEachFlagThatWouldBuildAnotherModel) {
  model::ModelConfig saved;
  model::ModelConfig asked = saved;
  EXPECT_TRUE(resume_conflicts(asked, saved).empty());
  asked.brep.width = saved.brep.width / 2;
  asked.two_tower.text_precision = c10::kBFloat16;
  const std::vector<std::string> conflicts = resume_conflicts(asked, saved);
  ASSERT_EQ(conflicts.size(), 2u);
  EXPECT_EQ(conflicts[0], format("--brep-width {} (the checkpoint has {})", saved.brep.width / 2,
                                 saved.brep.width));
  EXPECT_EQ(conflicts[1], "--precision bf16 (the checkpoint has fp32)");
}

}  // namespace
}  // namespace cadclip::train
