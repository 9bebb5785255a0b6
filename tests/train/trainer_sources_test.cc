// A run over several sources: each epoch draws each source's share, each
// source is validated apart and one picks `best`; --init starts from another
// checkpoint's weights and --init-anchor keeps a run near them; the locked
// text space trains the B-Rep side only; a released model (export_model)
// loads back to the same model and keeps only the text tensors training changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/text_embedding.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/trainer.h"
#include "tiny_prepared.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

fs::path test_root() {
  return fs::temp_directory_path() / ("cadclip_trainer_sources_" + std::to_string(::getpid()));
}

// A prepared folder of `models` whose last `validation` ones validate.
fs::path source(const std::string& name, std::vector<int> models, size_t validation) {
  const fs::path folder = test_root() / name;
  fs::remove_all(folder);
  testing::write_tiny_prepared(folder, models);
  data::Splits splits;
  for (size_t i = 0; i < models.size(); ++i)
    (i + validation < models.size() ? splits.train : splits.validation)
        .push_back(testing::tiny_id(models[i]));
  data::write_splits(folder / "splits.json", splits);
  return folder;
}

// The trainer tests' tiny run with a frozen text tower, validating as the
// sources' splits say.
TrainOptions tiny_run(const std::vector<fs::path>& data, const std::string& run) {
  TrainOptions o = testing::tiny_train_options(data, test_root() / run);
  o.text_lr = 0;
  o.validation_split = data::Split::kValidation;
  return o;
}

std::vector<nlohmann::json> metrics(const TrainOptions& o, const std::string& kind) {
  std::vector<nlohmann::json> rows;
  std::ifstream file(fs::path(o.out) / "metrics.jsonl");
  for (std::string line; std::getline(file, line);) {
    nlohmann::json row = nlohmann::json::parse(line);
    if (row.value("kind", "") == kind) rows.push_back(std::move(row));
  }
  return rows;
}

void run(const TrainOptions& o) {
  auto comm = make_single_process_communicator();
  train(o, *comm);
}

TEST(TrainerSources, EachSourceFillsItsShareAndIsValidatedApart) {
  const fs::path synth = source("synth", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4);
  const fs::path real = source("real", {20, 21, 22, 23, 24, 25}, 2);
  TrainOptions o = tiny_run({synth, real}, "shares");
  o.shares = {{"synth", 1.0}, {"real", 1.0}};
  o.select_by = "real";
  run(o);
  const auto sources = metrics(o, "sources");
  ASSERT_EQ(sources.size(), 1u);
  // 12 training samples (8 + 4), half from each source: the 4 real ones twice.
  EXPECT_EQ(sources[0]["sources"]["synth"]["draws_per_epoch"], 6);
  EXPECT_EQ(sources[0]["sources"]["real"]["draws_per_epoch"], 6);
  EXPECT_EQ(metrics(o, "train").size(), 2u * 3u) << "12 draws an epoch in steps of 4";
  const auto validations = metrics(o, "validation");
  ASSERT_EQ(validations.size(), 2u);
  for (const auto& v : validations) {
    EXPECT_EQ(v["sources"]["synth"]["gallery"], 4);
    EXPECT_EQ(v["sources"]["real"]["gallery"], 2);
    EXPECT_EQ(v["text_to_cad_r1"], v["sources"]["real"]["text_to_cad_r1"]) << "--select-by real";
  }
  const nlohmann::json saved =
      nlohmann::json::parse(std::ifstream(fs::path(o.out) / "options.json"));
  EXPECT_EQ(saved["shares"]["real"], 1.0) << "the shares are in the run's config";

  TrainOptions missing = tiny_run({synth, real}, "missing");
  missing.shares = {{"synth", 1.0}};
  EXPECT_THROW(run(missing), Error) << "every source needs a share";
  TrainOptions unknown = tiny_run({synth, real}, "unknown");
  unknown.select_by = "reel";
  EXPECT_THROW(run(unknown), Error);
}

// A tiny run trained into `first_run`, and the options of a one-epoch run
// `second_run` that starts from its last checkpoint at learning rate 0, so
// that nothing moves: its weights stay the ones --init loaded (or built).
std::pair<TrainOptions, TrainOptions> first_and_init(const fs::path& data,
                                                     const std::string& first_run,
                                                     const std::string& second_run) {
  TrainOptions first = tiny_run({data}, first_run);
  first.validation_split = std::nullopt;
  run(first);
  TrainOptions second = tiny_run({data}, second_run);
  second.validation_split = std::nullopt;
  second.init = (fs::path(first.out) / "checkpoints" / "last.json").string();
  second.lr = 0;
  second.epochs = 1;
  return {first, second};
}

TEST(TrainerSources, InitStartsFromAnotherCheckpointsWeights) {
  const fs::path data = source("init_data", {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  const auto [first, second] = first_and_init(data, "first", "second");
  run(second);
  const testing::TensorBytes a = testing::weight_bytes(first.out);
  const testing::TensorBytes b = testing::weight_bytes(second.out);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) EXPECT_TRUE(b.at(name) == bytes) << name;

  TrainOptions other = tiny_run({data}, "other");
  other.init = second.init;
  other.model.brep.width = 48;
  EXPECT_THROW(run(other), Error) << "another model shape";
}

TEST(TrainerSources, InitNewTextHeadKeepsEverythingElseOfTheCheckpoint) {
  const fs::path data = source("new_head_data", {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  auto [first, wider] = first_and_init(data, "new_head_first", "new_head_wider");
  wider.model.two_tower.text_head_hidden = first.model.two_tower.text_head_hidden + 24;
  EXPECT_THROW(run(wider), Error) << "a wider text head is another model without the flag";
  wider.init_new_text_head = true;
  run(wider);
  TrainOptions scratch = wider;  // the same wider model, built by a new run
  scratch.out = (test_root() / "new_head_scratch").string();
  scratch.init.clear();
  scratch.init_new_text_head = false;
  run(scratch);
  const testing::TensorBytes a = testing::weight_bytes(first.out);
  const testing::TensorBytes b = testing::weight_bytes(wider.out);
  const testing::TensorBytes built = testing::weight_bytes(scratch.out);
  int64_t fresh = 0;
  for (const auto& [name, bytes] : b) {
    // Names are "<file>:<tensor>" (weight_bytes).
    const bool head = name.find(":text_hidden.") != std::string::npos ||
                      name.find(":text_head.") != std::string::npos;
    if (head) {
      ++fresh;
      EXPECT_TRUE(built.at(name) == bytes) << name << " starts as a new run builds it";
    } else {
      EXPECT_TRUE(a.at(name) == bytes) << name << " comes from the checkpoint";
    }
  }
  EXPECT_EQ(fresh, 3) << "text_hidden's weight and bias, text_head's weight";

  TrainOptions anchored = wider;
  anchored.out = (test_root() / "new_head_anchored").string();
  anchored.init_anchor = 10;
  EXPECT_NO_THROW(run(anchored)) << "the new head has no anchor; the rest keeps one";

  TrainOptions other = wider;
  other.out = (test_root() / "new_head_other").string();
  other.model.brep.width = 48;
  EXPECT_THROW(run(other), Error) << "only the text head may differ";
  TrainOptions alone = tiny_run({data}, "new_head_alone");
  alone.init_new_text_head = true;
  EXPECT_THROW(run(alone), Error) << "the flag needs --init";
}

// Root mean square distance between the trained tensors of two runs' models.
double rms_between(const std::string& a, const std::string& b) {
  const model::BuiltModel x = model::load_model_from_checkpoint(a);
  const model::BuiltModel y = model::load_model_from_checkpoint(b);
  const auto other = y.model->named_parameters();
  double squares = 0;
  int64_t count = 0;
  for (const auto& item : x.model->named_parameters()) {
    if (item.key().starts_with("text.")) continue;  // frozen in these runs
    squares += (item.value() - other[item.key()]).square().sum().item<double>();
    count += item.value().numel();
  }
  return std::sqrt(squares / static_cast<double>(count));
}

TEST(TrainerSources, InitAnchorKeepsAFineTuneNearTheWeightsItStartedFrom) {
  const fs::path data = source("anchor_data", {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  TrainOptions first = tiny_run({data}, "anchor_first");
  run(first);
  TrainOptions free = tiny_run({data}, "anchor_free");
  free.init = (fs::path(first.out) / "checkpoints" / "last.json").string();
  free.seed = 8;
  free.epochs = 8;  // 16 steps, which take a free run well away from its start
  run(free);
  TrainOptions anchored = free;
  anchored.out = (test_root() / "anchor_held").string();
  anchored.init_anchor = 200;  // lr 3e-3: 60% of the way back after every step
  run(anchored);
  const double moved = rms_between(free.out, first.out);
  const double held = rms_between(anchored.out, first.out);
  EXPECT_GT(held, 0) << "the anchored run still learns";
  EXPECT_LT(held, 0.5 * moved) << "and stays nearer its start";

  TrainOptions alone = tiny_run({data}, "anchor_alone");
  alone.init_anchor = 10;
  EXPECT_THROW(run(alone), Error) << "an anchor needs --init";
  alone.init = free.init;
  alone.init_anchor = -1;
  EXPECT_THROW(run(alone), Error);
}

TEST(TrainerSources, TheLockedTextSpaceTrainsTheBRepSideIntoTheTextTowersSpace) {
  const fs::path data = source("locked_data", {0, 1, 2, 3, 4, 5, 6, 7}, 2);
  TrainOptions o = tiny_run({data}, "locked");
  o.model.two_tower.text_space = model::TextSpace::kLocked;
  o.model.two_tower.embed_dim = 32;  // the tiny BERT's width
  run(o);
  model::BuiltModel built = model::load_model_from_checkpoint(o.out);
  EXPECT_EQ(built.model->options().text_space, model::TextSpace::kLocked);
  const std::vector<std::string> caption = {"a plate number 3"};
  const at::Tensor pretrained = built.text.embed(caption);
  const at::Tensor text = model::embed_texts(built, caption, text::LengthGrouping{});
  EXPECT_TRUE(at::allclose(text, pretrained, 1e-4, 1e-5)) << "the pretrained embedding itself";
}

TEST(TrainerSources, AReleasedModelLoadsBackAndKeepsOnlyWhatTrainingChanged) {
  const fs::path data = source("export_data", {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  TrainOptions o = tiny_run({data}, "export_run");
  o.validation_split = std::nullopt;
  o.text_lr = 1e-3;
  o.text_train_layers = 1;
  run(o);
  model::ExportOptions e;
  e.text_base = "tests/fixtures/text/bert";
  e.name = "tiny-release";
  e.fp16 = false;
  const fs::path models = test_root() / "models";
  const fs::path pointer = model::export_model(o.out, models, e);
  const fs::path folder = models / "tiny-release";
  EXPECT_FALSE(fs::exists(folder / "text" / "model.safetensors")) << "the base is not copied";
  const SafetensorsReader changed =
      SafetensorsReader::open(folder / "text" / "changed.safetensors");
  ASSERT_FALSE(changed.tensors().empty());
  for (const TensorInfo& t : changed.tensors())
    EXPECT_NE(t.name.find("layer.1."), std::string::npos)
        << t.name << ": only the last layer trained";

  model::BuiltModel trained = model::load_model_from_checkpoint(o.out);
  model::BuiltModel released = model::load_model_from_checkpoint(pointer);
  const std::vector<std::string> texts = {"a flange number 1", "a washer"};
  EXPECT_TRUE(at::equal(model::embed_texts(trained, texts, text::LengthGrouping{}),
                        model::embed_texts(released, texts, text::LengthGrouping{})));

  // In fp16 (the default) the changed text tensors are stored in half
  // precision too, and the model embeds as the trained one does within it.
  e.fp16 = true;
  e.name = "tiny-release-fp16";
  const fs::path half_pointer = model::export_model(o.out, test_root() / "models-fp16", e);
  const SafetensorsReader half_changed = SafetensorsReader::open(
      test_root() / "models-fp16" / "tiny-release-fp16" / "text" / "changed.safetensors");
  for (const TensorInfo& t : half_changed.tensors()) EXPECT_EQ(t.dtype, DType::kF16) << t.name;
  model::BuiltModel half = model::load_model_from_checkpoint(half_pointer);
  EXPECT_TRUE(at::allclose(model::embed_texts(half, texts, text::LengthGrouping{}),
                           model::embed_texts(trained, texts, text::LengthGrouping{}),
                           /*rtol=*/0, /*atol=*/1e-2));

  // A damaged file is refused by its recorded checksum.
  {
    std::fstream f(folder / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('\x7f');
  }
  EXPECT_THROW(model::load_model_from_checkpoint(pointer), Error);
}

}  // namespace
}  // namespace cadclip::train
