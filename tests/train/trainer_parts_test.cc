// The parts of the trainer that can be read and tested alone: the schedule,
// the plan and its stop rules, a step's text embeddings (those of search),
// resume conflicts.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adamw.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "../error_of.h"
#include "../model/tiny_model.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/prepared.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/train/checkpointer.h"
#include "cadclip/train/schedule.h"
#include "cadclip/train/step_inputs.h"
#include "cadclip/train/text_cache.h"
#include "cadclip/train/train_step.h"
#include "cadclip/train/training_plan.h"
#include "tiny_prepared.h"

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

TEST(TrainingPlanTest, StartsWhereTheCheckpointLeftOffAndStopsAfterTheAskedSteps) {
  // Epoch 1 step 2 of 3 epochs of 4 steps, one step skipped before: six
  // steps asked in all leave five for this run.
  TrainingPlan plan({.epochs = 3, .steps_per_epoch = 4, .stop_after_steps = 6},
                    {.epoch = 1, .step_in_epoch = 2, .global_step = 6, .skipped = 1});
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {1, 2}, {1, 3}, {2, 0}, {2, 1}, {2, 2}};
  EXPECT_EQ(plan.steps(), expected);
  ASSERT_EQ(plan.epochs().size(), 2u);
  EXPECT_EQ(plan.epochs()[0].steps, (std::vector<int64_t>{2, 3}));
  for (size_t i = 0; i + 1 < expected.size(); ++i) {
    const AfterStep after = plan.count(expected[i].first, expected[i].second, 0.5, "");
    EXPECT_FALSE(after.stop) << i;
    EXPECT_FALSE(after.save_last) << i;
  }
  const AfterStep last = plan.count(2, 2, 0.25, "");
  EXPECT_TRUE(last.stop);
  EXPECT_TRUE(last.save_last);
  EXPECT_EQ(plan.taken(), 5);
  EXPECT_EQ(plan.global_step(), 11);
  EXPECT_DOUBLE_EQ(plan.last_loss(), 0.25);
  const RunPosition at = plan.position(2, 3, 0.5);
  EXPECT_EQ(at.global_step, 11);
  EXPECT_EQ(at.skipped, 1);
}

TEST(TrainingPlanTest, SavesEveryNStepsAndStopsWithAnErrorAfterKSkippedInARow) {
  TrainingPlan plan({.epochs = 1,
                     .steps_per_epoch = 10,
                     .max_nonfinite_steps = 2,
                     .checkpoint_every = 2,
                     .resume_from = "run/checkpoints/last.json"},
                    {});
  EXPECT_EQ(plan.step_count(), 10);
  EXPECT_FALSE(plan.count(0, 0, 1.0, "").save_last);
  EXPECT_TRUE(plan.count(0, 1, 1.0, "").save_last);
  EXPECT_FALSE(plan.count(0, 2, NAN, "loss is nan").stop);  // one in a row
  plan.count(0, 3, 1.0, "");                                // a step taken starts the count anew
  plan.count(0, 4, NAN, "loss is nan");
  const std::string error = testing::error_of([&] { plan.count(0, 5, NAN, "loss is nan"); });
  EXPECT_NE(error.find("2 non-finite steps in a row (last: loss is nan)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("run/checkpoints/last.json"), std::string::npos) << error;
  EXPECT_EQ(plan.skipped(), 3);
  EXPECT_EQ(plan.taken(), 3);
}

// A caption a step trains on embeds as search embeds it: one text path.
TEST(StepTextTest, TrainingAndSearchEmbedACaptionAlike) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("cadclip_step_text_" + std::to_string(::getpid()));
  testing::write_tiny_prepared(folder, {0, 1, 2, 3});
  const data::PreparedData data = data::open_prepared({folder});
  const std::vector<data::Caption>& captions = data.captions.captions;
  const TrainingSet set = training_set(data.dataset, captions, data.splits.train, {});
  torch::manual_seed(0);
  model::BuiltModel built = model::build_model(testing::tiny_model_config());
  built.model->eval();  // no dropout: the same function training applies, without its noise
  const model::TextEmbedder text(built);
  const StepInputMaker maker(data.dataset, captions, set, text, StepInputOptions{});
  const StepInputs in = maker.make(/*epoch=*/0, /*samples=*/{2});
  const std::string caption = captions[static_cast<size_t>(in.captions[0])].text;
  const at::Tensor searched =
      model::embed_texts(built, std::vector<std::string>{caption}, text::LengthGrouping{});

  // A tower being tuned: the step's tokens through the whole text path, with
  // gradients (the no-grad forward of search fuses the tower's linear layers,
  // which may round the last bits otherwise).
  EXPECT_TRUE(at::allclose(step_text_embeddings(text, in, nullptr).detach(), searched,
                           /*rtol=*/0, /*atol=*/1e-6));
  // A frozen tower: the caption pooled once into the feature cache, then the head.
  const TextFeatureCache cache =
      TextFeatureCache::build(built, text, captions, set, TextCacheOptions{.leader = false});
  EXPECT_TRUE(at::equal(step_text_embeddings(text, in, &cache).detach(), searched));
  // A tower tuned in its last layer: the hidden states below it cached once,
  // the step's rows through that layer with gradients.
  const int64_t layers = built.text.encoder->layer_count();
  const TextHiddenCache below = TextHiddenCache::build(built, text, captions, set, layers - 1,
                                                       TextCacheOptions{.leader = false});
  EXPECT_EQ(below.first(), layers - 1);
  EXPECT_EQ(below.size(), cache.size());
  const at::Tensor tuned = step_text_embeddings(text, in, nullptr, &below);
  EXPECT_TRUE(tuned.requires_grad());
  EXPECT_TRUE(at::allclose(tuned.detach(), searched, /*rtol=*/0, /*atol=*/1e-6));
  std::filesystem::remove_all(folder);
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
