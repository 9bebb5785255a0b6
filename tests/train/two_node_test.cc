// Training across two machines, made here as two network namespaces joined by
// a veth pair (10.231.0.1 and 10.231.0.2, reachable from nowhere else): one
// `cadclip train` per namespace, started as torchrun --nnodes 2
// --nproc-per-node 1 starts its workers (RANK, LOCAL_RANK 0 on both,
// WORLD_SIZE 2, LOCAL_WORLD_SIZE 1, GROUP_RANK, MASTER_ADDR on the first
// node's veth address, MASTER_PORT), Gloo, the text tower fine-tuned under
// activation checkpointing. The run equals one process on the global batch;
// when the second node dies mid-run (its link cut, then the process killed)
// the first stops with an error naming the collective within the timeout,
// and both restarted with --resume end bitwise where an uninterrupted run
// ends. Needs root (ip netns); skipped otherwise. The namespaces are removed
// at the end, also when a check fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "../run_command.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "tiny_prepared.h"

extern char** environ;

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kMasterAddr = "10.231.0.1";
constexpr double kTimeoutS = 10;  // --dist-timeout of the ranks

using testing::run_command;

// Two namespaces joined by a veth pair, removed (with the pair) on destruction.
class TwoNodes {
 public:
  TwoNodes() {
    const std::string tag = std::to_string(::getpid());
    names_ = {"cadclip-" + tag + "-0", "cadclip-" + tag + "-1"};
    links_ = {"ccv" + tag + "a", "ccv" + tag + "b"};
    remove_stale();
    for (const std::string& step :
         {"ip netns add " + names_[0], "ip netns add " + names_[1],
          "ip link add " + links_[0] + " type veth peer name " + links_[1],
          "ip link set " + links_[0] + " netns " + names_[0],
          "ip link set " + links_[1] + " netns " + names_[1],
          "ip -n " + names_[0] + " addr add 10.231.0.1/24 dev " + links_[0],
          "ip -n " + names_[1] + " addr add 10.231.0.2/24 dev " + links_[1],
          "ip -n " + names_[0] + " link set lo up", "ip -n " + names_[1] + " link set lo up",
          "ip -n " + names_[0] + " link set " + links_[0] + " up",
          "ip -n " + names_[1] + " link set " + links_[1] + " up"}) {
      const auto [status, output] = run_command(step);
      if (status != 0) {
        error_ = format("`{}` failed ({}): {}", step, status, output);
        return;
      }
    }
  }
  ~TwoNodes() {
    for (const std::string& name : names_) run_command("ip netns del " + name);
  }
  TwoNodes(const TwoNodes&) = delete;
  TwoNodes& operator=(const TwoNodes&) = delete;

  const std::string& error() const { return error_; }
  const std::string& name(int node) const { return names_[static_cast<size_t>(node)]; }
  // Cuts node 1's link: what a machine that dies looks like to the others (no FIN, no RST).
  void cut_link(int node) {
    run_command("ip -n " + name(node) + " link set " + links_[static_cast<size_t>(node)] + " down");
  }
  void restore_link(int node) {
    run_command("ip -n " + name(node) + " link set " + links_[static_cast<size_t>(node)] + " up");
  }

 private:
  // Namespaces of earlier runs of this test whose process is gone (it crashed).
  static void remove_stale() {
    const auto [status, listing] = run_command("ip netns list");
    std::istringstream lines(listing);
    for (std::string line; std::getline(lines, line);) {
      const std::string name = line.substr(0, line.find(' '));
      if (!name.starts_with("cadclip-")) continue;
      const std::string pid = name.substr(8, name.rfind('-') - 8);
      if (!pid.empty() && !fs::exists("/proc/" + pid)) run_command("ip netns del " + name);
    }
  }

  std::vector<std::string> names_, links_;
  std::string error_;
};

// One `cadclip train` process (in namespace `netns` unless empty), its output in `log`.
struct Rank {
  pid_t pid = -1;
  fs::path log;
};

Rank start(const std::string& netns, const std::vector<std::string>& env,
           const std::string& arguments, const fs::path& log) {
  std::vector<std::string> args;
  if (!netns.empty()) args = {"ip", "netns", "exec", netns};
  args.push_back("env");
  args.insert(args.end(), env.begin(), env.end());
  args.push_back("sh");
  args.push_back("-c");
  args.push_back(format("exec {} train {} >{} 2>&1", CADCLIP_BINARY, arguments, log.string()));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Rank rank;
  rank.log = log;
  EXPECT_EQ(::posix_spawnp(&rank.pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return rank;
}

// The exit status (128 + signal when killed); -1 when it did not end within `limit_s`.
int wait_for(const Rank& rank, double limit_s) {
  const auto until = Clock::now() + std::chrono::duration<double>(limit_s);
  while (Clock::now() < until) {
    int status = 0;
    const pid_t done = ::waitpid(rank.pid, &status, WNOHANG);
    if (done == rank.pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::string log_of(const Rank& rank) {
  std::error_code error;
  return fs::exists(rank.log, error) ? read_text_file(rank.log) : std::string();
}

// torchrun --nnodes 2 --nproc-per-node 1: node `node`'s one worker.
std::vector<std::string> torchrun_env(int node) {
  return {"RANK=" + std::to_string(node),
          "LOCAL_RANK=0",
          "WORLD_SIZE=2",
          "LOCAL_WORLD_SIZE=1",
          "GROUP_RANK=" + std::to_string(node),
          std::string("MASTER_ADDR=") + kMasterAddr,
          "MASTER_PORT=29531",
          "OMP_NUM_THREADS=1",
          "OMP_WAIT_POLICY=PASSIVE"};
}

// The run's flags; `batch`: pairs per process and step.
std::string train_flags(const fs::path& data, const fs::path& text, const fs::path& out, int batch,
                        const std::string& extra) {
  return format(
      "--data {} --out {} --text-model {} --text-lr 1e-3 --activation-checkpointing "
      "--max-text-length 16 --embed-dim 16 --brep-width 32 --brep-layers 2 --brep-heads 2 "
      "--brep-ffn 48 --brep-dropout 0 --batch-size {} --epochs 4 --lr 3e-3 --warmup 0 "
      "--grad-clip 0 --validation-split '' --threads 1 --seed 11 --checkpoint-every 1 "
      "--dist-timeout {} {}",
      data.string(), out.string(), text.string(), batch, kTimeoutS, extra);
}

// A copy of the tiny BERT without dropout, so that two processes of two
// pairs each compute what one process of four does.
fs::path text_without_dropout(const fs::path& root) {
  const fs::path text = root / "bert";
  fs::create_directories(text);
  for (const auto& entry : fs::directory_iterator("tests/fixtures/text/bert"))
    fs::copy_file(entry.path(), text / entry.path().filename());
  nlohmann::json config = nlohmann::json::parse(read_text_file(text / "config.json"));
  config["hidden_dropout_prob"] = 0.0;
  config["attention_probs_dropout_prob"] = 0.0;
  write_text_atomic(text / "config.json", config.dump(2));
  return text;
}

std::vector<double> losses(const fs::path& run) {
  std::vector<double> out;
  std::ifstream in(run / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("kind", "") == "train") out.push_back(j.at("loss").get<double>());
  }
  return out;
}

// The step of the checkpoint a run's last.json names (last-step<N>); 0 when none yet.
int checkpoint_step(const fs::path& pointer) {
  std::error_code error;
  if (!fs::exists(pointer, error)) return 0;
  const std::string text = read_text_file(pointer);
  const size_t at = text.find("last-step");
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + 9);
}

// ||actual - expected|| / ||expected|| over every float tensor at once.
double relative_difference(const testing::TensorBytes& expected,
                           const testing::TensorBytes& actual) {
  double diff = 0, total = 0;
  for (const auto& [name, bytes] : expected) {
    if (!actual.contains(name) || actual.at(name).size() != bytes.size()) return INFINITY;
    const float* a = reinterpret_cast<const float*>(bytes.data());
    const float* b = reinterpret_cast<const float*>(actual.at(name).data());
    for (size_t i = 0; i < bytes.size() / sizeof(float); ++i) {
      diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
      total += double(a[i]) * a[i];
    }
  }
  return std::sqrt(diff / total);
}

// Float tensors of `expected` and `actual` (the same names): the largest
// ||actual - expected|| / ||expected|| over tensors whose expected norm is
// above `floor` times the largest one (tensors below it are rounding noise:
// attention key biases, whose gradient is zero in exact arithmetic).
double largest_relative_difference(const testing::TensorBytes& expected,
                                   const testing::TensorBytes& actual, double floor,
                                   std::string* worst) {
  auto norm = [](const std::vector<std::byte>& bytes) {
    double sum = 0;
    const float* v = reinterpret_cast<const float*>(bytes.data());
    for (size_t i = 0; i < bytes.size() / sizeof(float); ++i) sum += double(v[i]) * v[i];
    return std::sqrt(sum);
  };
  double largest_norm = 0;
  for (const auto& [name, bytes] : expected) largest_norm = std::max(largest_norm, norm(bytes));
  double largest = 0;
  for (const auto& [name, bytes] : expected) {
    const double n = norm(bytes);
    if (n <= floor * largest_norm || !actual.contains(name)) continue;
    const std::vector<std::byte>& other = actual.at(name);
    if (other.size() != bytes.size()) return INFINITY;
    double diff = 0;
    const float* a = reinterpret_cast<const float*>(bytes.data());
    const float* b = reinterpret_cast<const float*>(other.data());
    for (size_t i = 0; i < bytes.size() / sizeof(float); ++i)
      diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    if (std::sqrt(diff) / n > largest) {
      largest = std::sqrt(diff) / n;
      *worst = name;
    }
  }
  return largest;
}

// Only the float tensors (weights; AdamW moments) of a state or weights map.
testing::TensorBytes only(const testing::TensorBytes& all, const std::string& part) {
  testing::TensorBytes out;
  for (const auto& [name, bytes] : all)
    if (name.find(part) != std::string::npos) out[name] = bytes;
  return out;
}

TEST(TwoNodes, TrainLikeOneProcessOnTheGlobalBatchAndResumeAfterANodeDies) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to make network namespaces (ip netns add); run ctest as root";
  if (run_command("command -v ip").exit_code != 0)
    GTEST_SKIP() << "needs iproute2 (the `ip` command; scripts/setup.sh installs it)";
  const auto started = Clock::now();
  TwoNodes nodes;
  if (!nodes.error().empty())
    GTEST_SKIP() << "cannot make two network namespaces here: " << nodes.error();

  const fs::path root =
      fs::temp_directory_path() / ("cadclip_two_nodes_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::vector<int> models;
  for (int i = 0; i < 12; ++i) models.push_back(i);
  testing::write_tiny_prepared(root / "data", models);
  const fs::path text = text_without_dropout(root);

  // Two nodes, two pairs each; and one process on the global batch of four.
  std::vector<Rank> ranks;
  for (int node = 0; node < 2; ++node)
    ranks.push_back(start(nodes.name(node), torchrun_env(node),
                          train_flags(root / "data", text, root / "two", 2, ""),
                          root / ("two-" + std::to_string(node) + ".log")));
  const Rank single =
      start("", {"OMP_NUM_THREADS=1", "OMP_WAIT_POLICY=PASSIVE"},
            train_flags(root / "data", text, root / "one", 4, ""), root / "one.log");
  for (int node = 0; node < 2; ++node)
    ASSERT_EQ(wait_for(ranks[static_cast<size_t>(node)], 600), 0)
        << "node " << node << ":\n"
        << log_of(ranks[static_cast<size_t>(node)]);
  ASSERT_EQ(wait_for(single, 600), 0) << log_of(single);

  // 12 models, 4 a step: 3 steps an epoch, 12 in all; the same losses.
  const std::vector<double> two = losses(root / "two"), one = losses(root / "one");
  ASSERT_EQ(two.size(), 12u);
  ASSERT_EQ(one.size(), two.size());
  for (size_t s = 0; s < one.size(); ++s)
    EXPECT_NEAR(two[s], one[s], 1e-5 * std::abs(one[s])) << "step " << s + 1;
  // The same weights and the same AdamW moments (which, unlike the weights,
  // scale with the gradients: a gradient reduced twice would show here).
  std::string worst;
  const testing::TensorBytes w2 = testing::weight_bytes(root / "two");
  const testing::TensorBytes w1 = testing::weight_bytes(root / "one");
  const double weights = relative_difference(w1, w2);
  EXPECT_LE(weights, 1e-4);
  const testing::TensorBytes s2 = testing::state_bytes(root / "two");
  const testing::TensorBytes s1 = testing::state_bytes(root / "one");
  const double moments =
      largest_relative_difference(only(s1, ".exp_avg"), only(s2, ".exp_avg"), 1e-3, &worst);
  EXPECT_LE(moments, 1e-3) << worst;
  std::fprintf(stderr,
               "[two nodes] against one process: weights %.2g apart, AdamW moments %.2g (%s)\n",
               weights, moments, worst.c_str());

  // Node 1 dies after a few steps: its link goes down, then its process.
  std::vector<Rank> killed;
  for (int node = 0; node < 2; ++node)
    killed.push_back(start(nodes.name(node), torchrun_env(node),
                           train_flags(root / "data", text, root / "killed", 2, ""),
                           root / ("killed-" + std::to_string(node) + ".log")));
  const fs::path pointer = root / "killed" / "checkpoints" / "last.json";
  const auto until = Clock::now() + std::chrono::minutes(5);
  while (Clock::now() < until && checkpoint_step(pointer) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  nodes.cut_link(1);
  ::kill(killed[1].pid, SIGKILL);
  const auto died = Clock::now();
  EXPECT_EQ(wait_for(killed[1], 60), 128 + SIGKILL);
  const int status = wait_for(killed[0], kTimeoutS + 60);
  const double seconds = std::chrono::duration<double>(Clock::now() - died).count();
  const std::string log = log_of(killed[0]);
  ASSERT_NE(status, -1) << "node 0 did not stop within the timeout:\n" << log;
  EXPECT_NE(status, 0) << log;
  EXPECT_NE(log.find("rank 0 of 2"), std::string::npos) << log;
  EXPECT_NE(log.find("failed or timed out after"), std::string::npos) << log;
  EXPECT_NE(log.find("another process probably died or hung"), std::string::npos) << log;
  std::fprintf(stderr, "[two nodes] node 0 stopped %.1f s after node 1 died (timeout %.0f s)\n",
               seconds, kTimeoutS);
  ASSERT_LT(checkpoint_step(pointer), 12)
      << "the run finished before node 1 died; nothing was interrupted";

  // Both restart from the last checkpoint and end where the uninterrupted run ended.
  nodes.restore_link(1);
  std::vector<Rank> resumed;
  for (int node = 0; node < 2; ++node)
    resumed.push_back(start(nodes.name(node), torchrun_env(node),
                            train_flags(root / "data", text, root / "killed", 2, "--resume"),
                            root / ("resumed-" + std::to_string(node) + ".log")));
  for (int node = 0; node < 2; ++node)
    ASSERT_EQ(wait_for(resumed[static_cast<size_t>(node)], 600), 0)
        << "node " << node << ":\n"
        << log_of(resumed[static_cast<size_t>(node)]);
  EXPECT_NE(log_of(resumed[0]).find("resuming from"), std::string::npos) << log_of(resumed[0]);
  const testing::TensorBytes after = testing::weight_bytes(root / "killed");
  for (const auto& [name, bytes] : w2)
    EXPECT_TRUE(after.contains(name) && after.at(name) == bytes) << name << " differs";
  EXPECT_EQ(losses(root / "killed"), two);
  std::fprintf(stderr, "[two nodes] the whole test took %.1f s\n",
               std::chrono::duration<double>(Clock::now() - started).count());
  fs::remove_all(root);
}

}  // namespace
}  // namespace cadclip::train
