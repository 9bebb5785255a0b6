// cadclip fit-sizes (train/size_fit.h): a size block fitted to an untrained
// tiny model finds parts that differ only in the size their captions state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/InferenceMode.h>

#include "../model/tiny_model.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/train/size_fit.h"
#include "tiny_prepared.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

double best_score_mean(const SizeFitReport& report) {
  double best = -1;
  for (const SizeWeightScore& s : report.scores) best = std::max(best, s.mean);
  return best;
}

// Parts of one shape in many sizes: part i is a cube whose side is
// log-uniform from 2 mm to 2 m; its caption states the side. Every fourth
// part validates, so validation sizes lie between trained ones.
fs::path write_sized_parts(const std::string& name, int parts) {
  const fs::path folder = fs::temp_directory_path() / name;
  fs::remove_all(folder);
  data::ShardWriter writer;
  std::vector<data::Caption> captions;
  data::Splits splits;
  for (int i = 0; i < parts; ++i) {
    data::BRepGraph g = testing::random_graph(4, 11);
    const double side = 2.0 * std::pow(1000.0, static_cast<double>(i) / (parts - 1));
    const auto s = static_cast<float>(side);
    g.bbox_mm = {0, 0, 0, s, s, s};
    g.id = format("p{:03d}", i);
    g.geometry_hash = format("hash{:03d}", i);
    writer.add(g);
    captions.push_back({g.id, "abstract", format("a cube block {} mm wide", fixed(side, 1))});
    (i % 4 == 2 ? splits.validation : splits.train).push_back(g.id);
  }
  testing::write_prepared_folder(folder, writer, captions, splits);
  return folder;
}

TEST(SizeFit, FindsPartsThatDifferOnlyInTheSizeTheirCaptionsState) {
  const fs::path data = write_sized_parts("cadclip_size_fit_parts", 160);
  torch::manual_seed(5);
  model::BuiltModel built = model::build_model(testing::tiny_model_config(24));
  SizeFitOptions o;
  o.data = {data.string()};
  o.epochs = 150;
  o.batch_size = 16;
  o.lr = 3e-4;
  o.weights = {0.5, 2.0};
  const SizeFitReport report = fit_size_head(built, o);

  EXPECT_EQ(report.captions, 120);
  EXPECT_EQ(report.captions_with_numbers, 120);
  ASSERT_EQ(report.nll.size(), 150u);
  EXPECT_LT(report.nll.back(), report.nll.front() - 1.0);
  // Forty parts of one shape: the towers alone cannot tell them apart.
  EXPECT_LT(report.alone_mean, 0.3);
  ASSERT_EQ(report.scores.size(), 2u);
  const double chosen = std::max(report.scores[0].mean, report.scores[1].mean);
  EXPECT_GT(chosen, 0.6) << "validation R@1 with the block";
  EXPECT_EQ(built.config.two_tower.size_bins_per_decade, 25);
  EXPECT_DOUBLE_EQ(built.config.two_tower.size_weight, report.weight);
  EXPECT_DOUBLE_EQ(built.model->options().size_weight, report.weight);

  // Fitting twice is refused: the head would be fitted to its own block.
  EXPECT_THROW(fit_size_head(built, o), Error);
  fs::remove_all(data);
}

// With and without the bore side (which a random graph, having no round
// hole, fills with its "none" entry), with and without the pointer.
TEST(SizeFit, AReleasedModelKeepsItsSizeBlock) {
  const fs::path data = write_sized_parts("cadclip_size_fit_release", 40);
  for (const auto& [bore, points] : {std::pair{false, true}, {true, true}, {false, false}}) {
    SCOPED_TRACE(std::string(bore ? "with the bore" : "box only") +
                 (points ? ", pointer" : ", no pointer"));
    torch::manual_seed(6);
    model::BuiltModel built = model::build_model(testing::tiny_model_config(24));
    SizeFitOptions o;
    o.data = {data.string()};
    o.epochs = 2;
    o.bore = bore;
    o.pointer = points;
    const SizeFitReport report = fit_size_head(built, o);
    EXPECT_EQ(built.config.two_tower.size_bore, bore);
    EXPECT_EQ(built.config.two_tower.size_pointer, points);
    // With the bore, every pair of candidate weights was scored.
    EXPECT_EQ(report.scores.size(), bore ? o.weights.size() * o.weights.size() : o.weights.size());
    EXPECT_DOUBLE_EQ(built.model->options().size_bore_weight, report.bore_weight);
    EXPECT_DOUBLE_EQ(built.config.two_tower.size_bore_weight, report.bore_weight);
    const fs::path run = fs::temp_directory_path() / "cadclip_size_fit_run";
    const fs::path models = fs::temp_directory_path() / "cadclip_size_fit_models";
    fs::remove_all(run);
    fs::remove_all(models);
    model::save_checkpoint(run, "last", built, {});
    const fs::path pointer = model::export_model(
        run, models, {.text_base = "tests/fixtures/text/bert", .name = "sized"});
    model::BuiltModel released = model::load_model_from_checkpoint(pointer);
    ASSERT_TRUE(released.model->size_head);
    EXPECT_EQ(released.model->size_head->bore(), bore);
    EXPECT_EQ(released.model->size_head->pointer(), points);
    EXPECT_EQ(released.model->search_dim(), built.model->search_dim());
    const std::vector<std::string> texts = {"a cube block 12 mm wide", "a cube block"};
    c10::InferenceMode inference;
    const at::Tensor a = model::embed_texts(built, texts, {});
    const at::Tensor b = model::embed_texts(released, texts, {});
    // fp16 storage: close, not equal.
    EXPECT_LT((a - b).abs().max().item<double>(), 0.02);
    fs::remove_all(run);
    fs::remove_all(models);
  }
  fs::remove_all(data);
}

// The validation splits score the head every few epochs; the head kept is
// the best-scoring one, not the last: the model evaluated afresh scores what
// that round scored. Embedding dropout leaves the fit working.
TEST(SizeFit, KeepsTheHeadOfTheEpochThatScoredBest) {
  const fs::path data = write_sized_parts("cadclip_size_fit_select", 80);
  torch::manual_seed(7);
  model::BuiltModel built = model::build_model(testing::tiny_model_config(24));
  SizeFitOptions o;
  o.data = {data.string()};
  o.epochs = 24;
  o.select_every = 5;
  o.batch_size = 16;
  o.lr = 3e-3;  // fast enough that the rounds differ
  o.weights = {0.5, 2.0};
  o.embedding_dropout = 0.5;
  const SizeFitReport report = fit_size_head(built, o);
  // Epochs 5, 10, 15, 20 and the last, 24.
  ASSERT_EQ(report.rounds.size(), 5u);
  EXPECT_EQ(report.rounds.back().epoch, 24);
  double best = -1;
  int64_t best_epoch = 0;
  for (const SizeFitRound& r : report.rounds) {
    if (r.mean > best) {
      best = r.mean;
      best_epoch = r.epoch;
    }
  }
  EXPECT_EQ(report.epoch, best_epoch);
  // An earlier epoch won, so the head kept is not the one training ended with.
  EXPECT_LT(report.epoch, o.epochs);
  EXPECT_DOUBLE_EQ(report.validation_mean, best);
  EXPECT_DOUBLE_EQ(best_score_mean(report), best);

  const data::PreparedData prepared = data::open_prepared({data});
  eval::EvalOptions options;
  options.split = "validation";
  const eval::EvalReport fresh = eval::evaluate(
      *built.model, *built.text.tokenizer, built.text.max_length, prepared.dataset,
      prepared.captions.captions, prepared.splits.of(data::Split::kValidation), options);
  EXPECT_NEAR(eval::mean_text_to_cad_r1(fresh), best, 1e-9);
  fs::remove_all(data);
}

TEST(SizeFit, RefusesAFolderWithoutATrainSplitAndBadOptions) {
  SizeFitOptions o;
  EXPECT_THROW(o.validate(), Error);  // no --data
  o.data = {"x"};
  o.weights = {0.2, -1};
  EXPECT_THROW(o.validate(), Error);
  o.weights = {0.2};
  o.epochs = 0;
  EXPECT_THROW(o.validate(), Error);
  o.epochs = 1;
  o.select_every = -1;
  EXPECT_THROW(o.validate(), Error);
  o.select_every = 0;
  o.embedding_dropout = 1.0;
  EXPECT_THROW(o.validate(), Error);
  o.embedding_dropout = 0.5;
  EXPECT_NO_THROW(o.validate());
}

}  // namespace
}  // namespace cadclip::train
