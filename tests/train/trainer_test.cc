// The trainer end to end on a tiny prepared dataset (random graphs written
// with the shard writer) and a tiny model (small B-Rep tower, the tiny BERT of
// tests/fixtures/text/bert): it overfits, it skips and counts non-finite steps and
// stops after K in a row, it never writes or loads a sick checkpoint, a crash
// while saving leaves a loadable checkpoint, and a resumed run ends with
// bitwise the same weights as an uninterrupted one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "../apps/cli_run.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/train/trainer.h"
#include "tiny_prepared.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

// A prepared folder of `models` random graphs with one distinct caption each.
fs::path tiny_dataset(const std::string& name, int models) {
  const fs::path folder =
      fs::temp_directory_path() / ("cadclip_trainer_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  std::vector<int> numbers(static_cast<size_t>(models));
  std::iota(numbers.begin(), numbers.end(), 0);
  testing::write_tiny_prepared(folder, numbers);
  return folder;
}

using testing::expect_same_tensors;
using testing::tiny_run_options;
using testing::weight_bytes;

TEST(TrainerTest, ATinyModelOverfitsATinyDataset) {
  const fs::path data = tiny_dataset("overfit", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.batch_size = 8;
  o.epochs = 150;  // one step per epoch
  o.lr = 5e-3;
  o.text_lr = 5e-3;
  o.weight_decay = 0;
  o.validation_split = data::Split::kTrain;  // evaluate on what it trained on
  o.model.brep.dropout = 0;
  const TrainSummary summary = train(o, *make_single_process_communicator());
  EXPECT_EQ(summary.skipped, 0);
  EXPECT_DOUBLE_EQ(summary.best_validation, 1.0) << "text->CAD R@1 on the training set";
  EXPECT_TRUE(fs::exists(fs::path(o.out) / "checkpoints" / "best.json"));
  EXPECT_TRUE(fs::exists(fs::path(o.out) / "metrics.jsonl"));
  EXPECT_TRUE(fs::exists(fs::path(o.out) / "options.json"));
  EXPECT_FALSE(fs::is_empty(fs::path(o.out) / "tensorboard"));
}

TEST(TrainerTest, ANonFiniteLossIsLoggedCountedAndSkipped) {
  const fs::path data = tiny_dataset("nan", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.debug_nan_at_step = 1;
  ::testing::internal::CaptureStderr();
  const TrainSummary summary = train(o, *make_single_process_communicator());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(summary.skipped, 1);
  EXPECT_EQ(summary.steps, 3);  // 2 epochs x 2 steps, one skipped
  EXPECT_NE(log.find("step 1 (epoch 0, step 1): loss is nan; step skipped"), std::string::npos)
      << log;
  EXPECT_TRUE(
      scan_health(SafetensorsReader::open(model::resolve_checkpoint(o.out) / "model.safetensors"))
          .healthy());
}

TEST(TrainerTest, KNonFiniteStepsInARowStopTheRunWithoutASickCheckpoint) {
  const fs::path data = tiny_dataset("nan_stop", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.debug_nan_at_step = 2;
  o.debug_nan_count = 100;
  o.max_nonfinite_steps = 2;
  try {
    train(o, *make_single_process_communicator());
    FAIL() << "the run should have stopped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 non-finite steps in a row"), std::string::npos)
        << e.what();
  }
  // The checkpoint of epoch 1 is the last one, and it is healthy.
  const fs::path folder = model::resolve_checkpoint(o.out);
  EXPECT_EQ(folder.filename(), "last-step2");
  for (const char* file : {"model.safetensors", "text/model.safetensors", "state.safetensors"})
    EXPECT_TRUE(scan_health(SafetensorsReader::open(folder / file)).healthy()) << file;
}

TEST(TrainerTest, ACheckpointWithANaNPlantedInItIsRefused) {
  const fs::path data = tiny_dataset("sick", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.epochs = 1;
  train(o, *make_single_process_communicator());
  const fs::path model_file = model::resolve_checkpoint(o.out) / "model.safetensors";
  const SafetensorsReader reader = SafetensorsReader::open(model_file);
  const TensorInfo& victim = reader.at("brep_head.weight");
  const uint64_t header = 8 + [&] {
    uint64_t n = 0;
    std::ifstream(model_file, std::ios::binary).read(reinterpret_cast<char*>(&n), 8);
    return n;
  }();
  {
    std::fstream file(model_file, std::ios::in | std::ios::out | std::ios::binary);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    file.seekp(static_cast<std::streamoff>(header + victim.begin + 4 * 3));
    file.write(reinterpret_cast<const char*>(&nan), 4);
  }
  try {
    model::load_model_from_checkpoint(o.out);
    FAIL() << "a sick checkpoint was loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("brep_head.weight (1 NaN)"), std::string::npos)
        << e.what();
  }
  o.resume = true;
  EXPECT_THROW(train(o, *make_single_process_communicator()), Error);
}

TEST(TrainerTest, ACrashWhileSavingLeavesALoadableCheckpoint) {
  const fs::path data = tiny_dataset("crash", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.epochs = 1;
  train(o, *make_single_process_communicator());
  for (int attempt = 0; attempt < 4; ++attempt) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      at::set_num_threads(1);
      model::BuiltModel built = model::load_model_from_checkpoint(o.out);
      model::TrainingState state;
      for (int step = 100;; ++step) {
        state.global_step = step;
        model::save_checkpoint(o.out, "last", built, state);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 170 * attempt));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_NO_THROW(model::load_model_from_checkpoint(o.out)) << "attempt " << attempt;
  }
}

TEST(TrainerTest, AResumedRunEndsWithBitwiseTheSameWeights) {
  const fs::path data = tiny_dataset("resume", 12);
  TrainOptions whole = tiny_run_options(data, "whole");
  whole.epochs = 2;  // 3 steps per epoch
  train(whole, *make_single_process_communicator());

  TrainOptions part = tiny_run_options(data, "part");
  part.epochs = 2;
  part.stop_after_steps = 2;  // in the middle of the first epoch
  const TrainSummary first = train(part, *make_single_process_communicator());
  EXPECT_TRUE(first.stopped_early);
  part.stop_after_steps = 0;
  part.resume = true;
  train(part, *make_single_process_communicator());

  expect_same_tensors(weight_bytes(whole.out), weight_bytes(part.out));
}

using testing::state_bytes;

TEST(TrainerTest, AResumedRunWithAMomentumQueueEndsBitwiseTheSame) {
  // Trainable text tower (momentum copy of all of it) and frozen text tower
  // (cached features: the momentum text side is the momentum text head).
  for (const double text_lr : {1e-3, 0.0}) {
    SCOPED_TRACE(format("text_lr {}", text_lr));
    const fs::path data = tiny_dataset(text_lr > 0 ? "queue" : "queue_frozen", 12);
    TrainOptions whole = tiny_run_options(data, "whole");
    whole.text_lr = text_lr;
    whole.epochs = 2;  // 3 steps per epoch of 4 pairs: 24 rows through a queue of 10
    whole.queue = 10;
    whole.queue_momentum = 0.9;
    train(whole, *make_single_process_communicator());

    TrainOptions part = whole;
    part.out = (data.parent_path() / (data.filename().string() + "_part")).string();
    fs::remove_all(part.out);
    part.stop_after_steps = 4;  // in the middle of the second epoch, the queue wrapped
    EXPECT_TRUE(train(part, *make_single_process_communicator()).stopped_early);
    const auto stopped = state_bytes(part.out);
    ASSERT_TRUE(stopped.contains("queue.text") && stopped.contains("queue.position") &&
                stopped.contains("momentum.brep_head.weight"));
    EXPECT_EQ(stopped.contains("momentum.text_head.weight"), true);
    EXPECT_EQ(stopped.contains("momentum.text.encoder.embeddings.word_embeddings.weight"),
              text_lr > 0)
        << "a frozen text tower has no momentum copy of its own";
    part.stop_after_steps = 0;
    part.resume = true;
    train(part, *make_single_process_communicator());

    expect_same_tensors(weight_bytes(whole.out), weight_bytes(part.out));
    expect_same_tensors(state_bytes(whole.out), state_bytes(part.out), "state ");
    // The queue is full and was used: its keys are the training pairs' caption keys.
    const SafetensorsReader reader =
        SafetensorsReader::open(model::resolve_checkpoint(whole.out) / "state.safetensors");
    const auto position = reader.bytes(reader.at("queue.position"));
    int64_t filled = 0;
    std::memcpy(&filled, position.data() + 8, 8);
    EXPECT_EQ(filled, 10);
  }
}

TEST(TrainerTest, ATextCacheFileGivesBitwiseTheSameRunAndIsRemadeForOtherSettings) {
  const fs::path data = tiny_dataset("text_cache", 8);
  const fs::path cache = data.string() + "_features.safetensors";
  fs::remove(cache);
  TrainOptions plain = tiny_run_options(data, "plain");
  plain.text_lr = 0;
  train(plain, *make_single_process_communicator());
  TrainOptions cached = tiny_run_options(data, "cached");
  cached.text_lr = 0;
  cached.text_cache = cache.string();
  train(cached, *make_single_process_communicator());  // writes the file
  ASSERT_TRUE(fs::exists(cache));
  const auto written = fs::last_write_time(cache);
  fs::remove_all(cached.out);
  ::testing::internal::CaptureStderr();
  train(cached, *make_single_process_communicator());  // reads it
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("text features of 8 captions read from"), std::string::npos) << log;
  EXPECT_EQ(fs::last_write_time(cache), written);
  expect_same_tensors(weight_bytes(plain.out), weight_bytes(cached.out));

  cached.model.text.max_length = 8;  // other features: the file is not used, and is remade
  fs::remove_all(cached.out);
  ::testing::internal::CaptureStderr();
  train(cached, *make_single_process_communicator());
  const std::string log2 = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log2.find("was made for other captions or another text model"), std::string::npos)
      << log2;
}

// A resumed run's text tower comes from the checkpoint's copy of its folder,
// whose weight file differs in bytes, not in values, from the pretrained one.
TEST(TrainerTest, AResumedRunReadsTheTextCacheFileOfItsFirstPart) {
  const fs::path data = tiny_dataset("text_cache_resume", 8);
  const fs::path cache = data.string() + "_features.safetensors";
  fs::remove(cache);
  TrainOptions o = tiny_run_options(data, "run");
  o.text_lr = 0;
  o.text_cache = cache.string();
  o.stop_after_steps = 1;
  train(o, *make_single_process_communicator());  // writes the file
  ASSERT_TRUE(fs::exists(cache));
  const auto written = fs::last_write_time(cache);
  o.stop_after_steps = 0;
  o.resume = true;
  ::testing::internal::CaptureStderr();
  train(o, *make_single_process_communicator());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("text features of 8 captions read from"), std::string::npos) << log;
  EXPECT_EQ(fs::last_write_time(cache), written);
}

TEST(TrainerTest, ACheckpointWithoutAQueueDoesNotResumeWithOne) {
  const fs::path data = tiny_dataset("queue_mismatch", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.stop_after_steps = 1;
  train(o, *make_single_process_communicator());
  o.resume = true;
  o.queue = 4;
  try {
    train(o, *make_single_process_communicator());
    FAIL() << "a checkpoint without momentum weights was resumed with --queue";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("trained without --queue"), std::string::npos) << e.what();
  }
}

// Writes `value` over the first value of the first float32 tensor of a safetensors file.
void overwrite_first_float(const fs::path& file, float value) {
  const SafetensorsReader reader = SafetensorsReader::open(file);
  const TensorInfo* victim = nullptr;
  for (const TensorInfo& t : reader.tensors())
    if (t.dtype == DType::kF32 && t.numel() > 0 && victim == nullptr) victim = &t;
  ASSERT_NE(victim, nullptr) << file;
  uint64_t header = 0;
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(&header), 8);
  std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(8 + header + victim->begin));
  out.write(reinterpret_cast<const char*>(&value), 4);
}

TEST(TrainerTest, AResumeWithOtherModelOptionsIsRefusedNamingThem) {
  const fs::path data = tiny_dataset("resume_options", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.stop_after_steps = 1;
  train(o, *make_single_process_communicator());
  const std::string recorded = read_text_file(fs::path(o.out) / "options.json");
  TrainOptions other = o;
  other.resume = true;
  other.stop_after_steps = 0;
  other.model.brep.width = 48;
  other.model.two_tower.embed_dim = 24;
  try {
    train(other, *make_single_process_communicator());
    FAIL() << "a run was resumed with another B-Rep width and embedding size";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--brep-width 48 (the checkpoint has 32)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("--embed-dim 24 (the checkpoint has 16)"), std::string::npos) << message;
  }
  // options.json still says what the checkpoint was trained with.
  EXPECT_EQ(read_text_file(fs::path(o.out) / "options.json"), recorded);
  // The same options resume.
  o.resume = true;
  o.stop_after_steps = 0;
  EXPECT_NO_THROW(train(o, *make_single_process_communicator()));
}

TEST(TrainerTest, ACheckpointChangedAfterSavingIsRefusedEvenWithFiniteValues) {
  const fs::path data = tiny_dataset("changed", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.epochs = 1;
  train(o, *make_single_process_communicator());
  const fs::path folder = model::resolve_checkpoint(o.out);
  for (const char* file : {"model.safetensors", "text/model.safetensors"}) {
    SCOPED_TRACE(file);
    const std::string original = read_text_file(folder / file);
    overwrite_first_float(folder / file, 123.0f);
    for (const fs::path& path : {fs::path(o.out), folder.parent_path() / "last.json", folder}) {
      try {
        model::load_model_from_checkpoint(path);
        ADD_FAILURE() << "a changed " << file << " was loaded through " << path;
      } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find((folder / file).string()), std::string::npos) << message;
        EXPECT_NE(message.find("sha256"), std::string::npos) << message;
      }
    }
    write_text_atomic(folder / file, original);
    EXPECT_NO_THROW(model::load_model_from_checkpoint(o.out));
  }
  overwrite_first_float(folder / "state.safetensors", 123.0f);
  try {
    model::load_training_state(o.out);
    ADD_FAILURE() << "a changed state.safetensors was loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("state.safetensors"), std::string::npos) << e.what();
  }
}

// Counts the train records of metrics.jsonl per step.
std::map<int64_t, int> train_steps(const fs::path& run) {
  std::map<int64_t, int> steps;
  std::ifstream in(run / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      ADD_FAILURE() << "a damaged line in metrics.jsonl: " << line;
      continue;
    }
    if (j["kind"] == "train") ++steps[j["step"].get<int64_t>()];
  }
  return steps;
}

TEST(TrainerTest, AResumedRunListsEveryStepOnceInItsMetrics) {
  const fs::path data = tiny_dataset("metrics", 12);
  TrainOptions o = tiny_run_options(data, "run");
  o.stop_after_steps = 2;  // `last` at step 2
  train(o, *make_single_process_communicator());
  // A run killed after logging steps 3 and 4 but before it saved them (a
  // checkpoint every epoch), the last line cut short by the kill.
  {
    std::ofstream out(fs::path(o.out) / "metrics.jsonl", std::ios::app);
    out << R"({"kind":"train","step":3,"loss":1.0})"
        << "\n"
        << R"({"kind":"train","step":4,"loss":1.0})"
        << "\n"
        << R"({"kind":"train","st)";
  }
  o.resume = true;
  o.stop_after_steps = 0;
  train(o, *make_single_process_communicator());
  const std::map<int64_t, int> steps = train_steps(o.out);
  EXPECT_EQ(steps.size(), 6u);  // 2 epochs of 3 steps
  for (const auto& [step, count] : steps) EXPECT_EQ(count, 1) << "step " << step;
}

TEST(TrainerTest, TrainingAfreshIntoAnExistingRunSaysItReplacesIt) {
  const fs::path data = tiny_dataset("afresh", 8);
  TrainOptions o = tiny_run_options(data, "run");
  o.stop_after_steps = 1;
  train(o, *make_single_process_communicator());
  ::testing::internal::CaptureStderr();
  train(o, *make_single_process_communicator());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("already holds a run"), std::string::npos) << log;
  EXPECT_NE(log.find("--resume"), std::string::npos) << log;
  EXPECT_EQ(train_steps(o.out), (std::map<int64_t, int>{{1, 1}}))
      << "the old run's metrics are not mixed in";
}

}  // namespace
}  // namespace cadclip::train

namespace cadclip::train {
namespace {

using testing::run_cadclip;
using testing::state_bytes;

TEST(TrainerLaunchTest, TheQueueIsRefusedWithSeveralProcesses) {
  const fs::path data = tiny_dataset("queue_nproc", 4);
  const auto [status, output] =
      run_cadclip(format("train --nproc 2 --queue 16 --data {} --out {}_run --text-model "
                         "tests/fixtures/text/bert --threads 1",
                         data.string(), data.string()));
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("--queue is a single-process feature: this run has 2 processes"),
            std::string::npos)
      << output;
}

TEST(TrainerLaunchTest, TwoRanksStoppedMidEpochResumeBitwiseLikeAnUninterruptedRun) {
  // 11 models, 2 per rank and step: global batches of 4, 4 and 3, so rank 0
  // takes 2 pairs and rank 1 one in each epoch's last step, and their dropout
  // streams (B-Rep 0.1, the tiny BERT's) part ways: rank 1 must get back its
  // own RNG state, not rank 0's.
  const fs::path data = tiny_dataset("nproc_resume", 11);
  auto command = [&](const std::string& run, const std::string& extra) {
    return format(
        "train --nproc 2 --data {} --out {}_{} --text-model tests/fixtures/text/bert --epochs 2 "
        "--batch-size 2 --max-text-length 16 --embed-dim 16 --brep-width 32 --brep-layers 2 "
        "--brep-heads 2 --brep-ffn 48 --brep-dropout 0.3 --text-lr 1e-3 --validation-split '' "
        "--threads 1 --seed 5 {}",
        data.string(), data.string(), run, extra);
  };
  for (const char* run : {"whole", "part"}) fs::remove_all(data.string() + "_" + run);
  const auto whole = run_cadclip(command("whole", ""));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto first = run_cadclip(command("part", "--stop-after-steps 4"));  // epoch 2, step 1
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto stopped = state_bytes(data.string() + "_part");
  EXPECT_TRUE(stopped.contains("rng.cpu.rank0") && stopped.contains("rng.cpu.rank1"));
  EXPECT_TRUE(stopped.at("rng.cpu.rank0") != stopped.at("rng.cpu.rank1"))
      << "the ranks' RNG states should differ after an uneven last batch";
  const auto resumed = run_cadclip(command("part", "--resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_same_tensors(weight_bytes(data.string() + "_whole"),
                      weight_bytes(data.string() + "_part"));
}

TEST(TrainerLaunchTest, NprocTwoTrainsWithTwoLocalRanks) {
  const fs::path data = tiny_dataset("nproc", 10);
  const fs::path out = data.parent_path() / (data.filename().string() + "_run");
  fs::remove_all(out);
  const auto [status, output] = run_cadclip(
      format("train --nproc 2 --data {} --out {} --text-model tests/fixtures/text/bert --epochs 2 "
             "--batch-size 2 --max-text-length 16 --embed-dim 16 --brep-width 32 --brep-layers 2 "
             "--brep-heads 2 --brep-ffn 48 --validation-split train --threads 1",
             data.string(), out.string()));
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("started 2 ranks"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 1 finished"), std::string::npos) << output;
  EXPECT_NE(output.find("validation text->CAD R@1"), std::string::npos) << output;
  // 10 models, 2 per rank and step: 3 steps per epoch (the last global batch is 2).
  EXPECT_EQ(model::resolve_checkpoint(out).filename(), "last-step6");
}

}  // namespace
}  // namespace cadclip::train
