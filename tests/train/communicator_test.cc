// Multi-process training is the single-process computation: with Gloo and
// fp64, a batch split over 2 or 3 processes (uneven too) gives the same loss
// and parameter gradients as one process on the whole batch. Also: parameter
// broadcast, and a dead rank makes the others fail within the timeout.
//
// The test binary starts copies of itself as the ranks; a rank runs the
// DistributedRank.* tests, which skip unless CADCLIP_TEST_RANK is set.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <torch/nn/functional/normalization.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss.h"
#include "free_port.h"

extern char** environ;

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kBatch = 8;

int env_int(const char* name) { return std::atoi(std::getenv(name)); }

using testing::free_port;

// Starts `world` copies of this binary running `filter`; returns their pids.
std::vector<pid_t> launch(int world, const std::string& filter, const fs::path& out,
                          const std::string& extra_env = "") {
  const int port = free_port();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<std::string> env_strings = {
        "CADCLIP_TEST_RANK=" + std::to_string(rank), "CADCLIP_TEST_WORLD=" + std::to_string(world),
        "CADCLIP_TEST_PORT=" + std::to_string(port), "CADCLIP_TEST_OUT=" + out.string(),
        "OMP_NUM_THREADS=1"};
    if (!extra_env.empty()) env_strings.push_back(extra_env);
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter_arg = "--gtest_filter=" + filter;
    char* argv[] = {self.data(), filter_arg.data(), nullptr};
    pid_t pid = 0;
    EXPECT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    pids.push_back(pid);
  }
  return pids;
}

std::vector<int> wait_all(const std::vector<pid_t>& pids) {
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

fs::path fresh_dir(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("cadclip_dist_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A tiny two-tower model in fp64 with a learnable temperature.
struct TinyTowers {
  int seed;  // seeds the generator before the layers below are initialised
  torch::nn::Linear text{(torch::manual_seed(seed), torch::nn::LinearOptions(5, 4))};
  torch::nn::Linear cad{torch::nn::LinearOptions(6, 4)};
  at::Tensor log_scale;

  explicit TinyTowers(int seed_) : seed(seed_) {
    text->to(at::kDouble);
    cad->to(at::kDouble);
    log_scale = torch::full({}, std::log(1 / 0.07), at::kDouble).set_requires_grad(true);
  }
  std::vector<at::Tensor> parameters() {
    auto p = text->parameters();
    for (auto& q : cad->parameters()) p.push_back(q);
    p.push_back(log_scale);
    return p;
  }
};

struct Data {
  at::Tensor text_in, cad_in, caption_key, geometry_key;
};

Data global_batch() {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1234);
  Data d;
  d.text_in = at::randn({kBatch, 5}, generator, at::kDouble);
  d.cad_in = at::randn({kBatch, 6}, generator, at::kDouble);
  // Rows 1 and 5 state the same facts; rows 2 and 6 share a geometry.
  d.caption_key = at::tensor(std::vector<int64_t>{10, 11, 12, 13, 14, 11, 16, 17});
  d.geometry_key = at::tensor(std::vector<int64_t>{20, 21, 22, 23, 24, 25, 22, 27});
  return d;
}

// Rows of the global batch that rank r holds when split as evenly as possible
// (e.g. 8 over 3 ranks: 3, 3, 2).
std::pair<int64_t, int64_t> share(int rank, int world) {
  const int64_t base = kBatch / world, extra = kBatch % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, base + (rank < extra ? 1 : 0)};
}

LossResult step(Communicator& comm, TinyTowers& model, const Data& d, int64_t begin, int64_t rows,
                LossKind kind) {
  using torch::nn::functional::normalize;
  const auto opts = torch::nn::functional::NormalizeFuncOptions().dim(1);
  ContrastivePairs pairs;
  pairs.text = normalize(model.text(d.text_in.narrow(0, begin, rows)), opts);
  pairs.cad = normalize(model.cad(d.cad_in.narrow(0, begin, rows)), opts);
  pairs.caption_key = d.caption_key.narrow(0, begin, rows);
  pairs.geometry_key = d.geometry_key.narrow(0, begin, rows);
  LossOptions options;
  options.kind = kind;
  const at::Tensor bias = at::full({}, -1.0, at::kDouble);
  LossResult result = contrastive_loss(comm, pairs, model.log_scale.exp(), bias, options);
  result.loss.backward();
  average_gradients(comm, model.parameters());
  return result;
}

void save_gradients(TinyTowers& model, double loss, const fs::path& path) {
  SafetensorsWriter writer;
  int i = 0;
  for (const auto& p : model.parameters()) {
    const at::Tensor g = p.grad().contiguous();
    writer.add("grad." + std::to_string(i++), DType::kF64, g.sizes().vec(),
               std::as_bytes(std::span(g.data_ptr<double>(), g.numel())));
  }
  writer.add("loss", DType::kF64, {}, std::as_bytes(std::span(&loss, 1)));
  writer.write(path);
}

at::Tensor read_f64(const SafetensorsReader& file, const std::string& name) {
  const TensorInfo& info = file.at(name);
  const auto bytes = file.bytes(info);
  return at::from_blob(const_cast<std::byte*>(bytes.data()), info.shape, at::kDouble).clone();
}

bool is_rank() { return std::getenv("CADCLIP_TEST_RANK") != nullptr; }

ProcessGroupOptions rank_options(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  ProcessGroupOptions options;
  options.rank = env_int("CADCLIP_TEST_RANK");
  options.world_size = env_int("CADCLIP_TEST_WORLD");
  options.master_port = env_int("CADCLIP_TEST_PORT");
  options.timeout = timeout;
  return options;
}

// ----------------------------------------------------------------------------
// What each rank runs.

TEST(DistributedRank, GradientStep) {
  if (!is_rank()) GTEST_SKIP() << "runs only as a rank started by the tests below";
  const auto options = rank_options();
  auto comm = make_gloo_communicator(options);
  TinyTowers model(/*seed=*/3);
  const auto [begin, rows] = share(options.rank, options.world_size);
  const LossKind kind = std::getenv("CADCLIP_TEST_SIGLIP") ? LossKind::kSigLip : LossKind::kInfoNce;
  const LossResult result = step(*comm, model, global_batch(), begin, rows, kind);
  EXPECT_EQ(result.global_count, kBatch);
  save_gradients(model, result.loss.item<double>(),
                 fs::path(std::getenv("CADCLIP_TEST_OUT")) /
                     ("rank" + std::to_string(options.rank) + ".safetensors"));
}

TEST(DistributedRank, Broadcast) {
  if (!is_rank()) GTEST_SKIP() << "runs only as a rank started by the tests below";
  const auto options = rank_options();
  auto comm = make_gloo_communicator(options);
  TinyTowers model(/*seed=*/100 + options.rank);  // every rank starts different
  broadcast_from_rank0(*comm, model.parameters());
  double checksum = 0;
  for (const auto& p : model.parameters()) checksum += p.sum().item<double>() * (p.numel() + 1);
  write_text_atomic(
      fs::path(std::getenv("CADCLIP_TEST_OUT")) / ("checksum" + std::to_string(options.rank)),
      std::to_string(checksum));
}

TEST(DistributedRank, DiesOrWaits) {
  if (!is_rank()) GTEST_SKIP() << "runs only as a rank started by the tests below";
  const auto options = rank_options(std::chrono::seconds(5));
  auto comm = make_gloo_communicator(options);
  if (options.rank == 1) ::_exit(7);  // dies without a word
  std::vector<at::Tensor> t = {at::ones({4})};
  const auto start = std::chrono::steady_clock::now();
  try {
    comm->all_reduce_sum(t);
    FAIL() << "the collective succeeded although rank 1 is dead";
  } catch (const Error& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_text_atomic(fs::path(std::getenv("CADCLIP_TEST_OUT")) / "error",
                      std::to_string(seconds) + "\n" + e.what());
  }
}

// ----------------------------------------------------------------------------
// What the test runner checks.

void expect_equal_to_single_process(int world, const std::string& extra_env, LossKind kind) {
  if (is_rank()) GTEST_SKIP();
  const auto out = fresh_dir("grad" + std::to_string(world));
  const auto codes = wait_all(launch(world, "DistributedRank.GradientStep", out, extra_env));
  for (int r = 0; r < world; ++r) ASSERT_EQ(codes[r], 0) << "rank " << r << " failed";

  auto single = make_single_process_communicator();
  TinyTowers reference(/*seed=*/3);
  const LossResult expected = step(*single, reference, global_batch(), 0, kBatch, kind);
  EXPECT_GT(expected.masked_pairs, 0) << "the batch must exercise false-negative masking";
  const auto params = reference.parameters();
  for (int r = 0; r < world; ++r) {
    const auto file = SafetensorsReader::open(out / ("rank" + std::to_string(r) + ".safetensors"));
    const double loss = read_f64(file, "loss").item<double>();
    EXPECT_NEAR(loss, expected.loss.item<double>(), 1e-12 * std::abs(loss)) << "rank " << r;
    for (size_t i = 0; i < params.size(); ++i) {
      const at::Tensor want = params[i].grad();
      const at::Tensor got = read_f64(file, "grad." + std::to_string(i));
      const double relative = ((got - want).norm() / want.norm()).item<double>();
      EXPECT_LE(relative, 1e-10) << "rank " << r << " parameter " << i;
    }
  }
}

TEST(DistributedTraining, TwoProcessesEqualOneProcessOnTheWholeBatch) {
  expect_equal_to_single_process(2, "", LossKind::kInfoNce);
}

TEST(DistributedTraining, ThreeProcessesWithAnUnevenLastBatch) {
  expect_equal_to_single_process(3, "", LossKind::kInfoNce);
}

TEST(DistributedTraining, SigLipTwoProcessesEqualOneProcess) {
  expect_equal_to_single_process(2, "CADCLIP_TEST_SIGLIP=1", LossKind::kSigLip);
}

TEST(DistributedTraining, ParametersAreBroadcastFromRankZero) {
  if (is_rank()) GTEST_SKIP();
  const auto out = fresh_dir("broadcast");
  const auto codes = wait_all(launch(3, "DistributedRank.Broadcast", out));
  for (int r = 0; r < 3; ++r) ASSERT_EQ(codes[r], 0) << "rank " << r;
  const std::string zero = read_text_file(out / "checksum0");
  EXPECT_EQ(read_text_file(out / "checksum1"), zero);
  EXPECT_EQ(read_text_file(out / "checksum2"), zero);
  TinyTowers rank0(/*seed=*/100);
  double checksum = 0;
  for (const auto& p : rank0.parameters()) checksum += p.sum().item<double>() * (p.numel() + 1);
  EXPECT_EQ(zero, std::to_string(checksum));
}

TEST(DistributedTraining, ADeadRankMakesTheOthersFailWithinTheTimeout) {
  if (is_rank()) GTEST_SKIP();
  const auto out = fresh_dir("dead");
  const auto codes = wait_all(launch(2, "DistributedRank.DiesOrWaits", out));
  EXPECT_EQ(codes[1], 7);
  ASSERT_TRUE(fs::exists(out / "error")) << "rank 0 neither failed nor reported";
  const std::string report = read_text_file(out / "error");
  EXPECT_LE(std::stod(report), 5.0 + 5.0) << report;
  EXPECT_NE(report.find("rank 0 of 2"), std::string::npos) << report;
}

}  // namespace
}  // namespace cadclip::train
