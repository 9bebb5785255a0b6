// Time and peak memory of the default B-Rep encoder on one large graph, the
// cost that sets the ingest face limit (docs/INGEST.md):
//   brep_encoder_sizes_bench FACES [mode=forward|train|mixed] [threads=1] [repeats=2]
// forward: the graph alone through forward_graphs without gradients, as
// `cadclip index` and part searches embed it (collation included). mixed: the
// same graph in a batch of 32 with 31 synthetic-size graphs (20-60 faces), to
// show that size grouping keeps the small ones off its padding. train: forward
// + backward of the graph alone. Run one size per process (sizes.py does):
// peak memory is the process's high-water mark.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "cadclip/data/batch.h"
#include "cadclip/model/brep_encoder.h"
#include "common/bench_util.h"
#include "random_graph.h"

namespace {

using namespace cadclip;

// Resident memory now, MiB (/proc/self/statm: pages).
double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

// The process's resident high-water mark, MiB.
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: brep_encoder_sizes_bench FACES [forward|train|mixed] [threads] "
                 "[repeats]\n");
    return 2;
  }
  const int faces = std::atoi(argv[1]);
  const std::string mode = argc > 2 ? argv[2] : "forward";
  const int threads = bench::set_threads(argc > 3 ? std::atoi(argv[3]) : 1);
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 2;
  if (faces < 1 || (mode != "forward" && mode != "train" && mode != "mixed")) {
    std::fprintf(stderr, "brep_encoder_sizes_bench: FACES >= 1, mode forward, train or mixed\n");
    return 2;
  }

  // About 3 B-Rep edges per face, as in real parts (each edge joins two
  // faces in both directions): 6 directed edges per face.
  std::vector<data::BRepGraph> graphs{testing::random_graph(faces, 7, /*extra_edge_share=*/2.0)};
  if (mode == "mixed") {
    std::mt19937 rng(7);
    for (int i = 0; i < 31; ++i)
      graphs.push_back(testing::random_graph(20 + static_cast<int>(rng() % 41), 1000 + i, 1.0));
  }
  std::vector<const data::BRepGraph*> pointers;
  for (const data::BRepGraph& g : graphs) pointers.push_back(&g);

  torch::manual_seed(0);
  model::BRepEncoder encoder;
  const double before = rss_mib();
  const auto forward = [&] {
    torch::NoGradGuard no_grad;
    encoder->eval();
    (void)encoder->forward_graphs(pointers, at::kCPU);
  };
  const auto train = [&] {
    encoder->train();
    encoder->zero_grad();
    encoder->forward_graphs(pointers, at::kCPU).pow(2).mean().backward();
  };
  const bench::Stats s =
      mode == "train" ? bench::measure(train, 0, repeats) : bench::measure(forward, 0, repeats);
  std::printf(
      "faces=%d directed_edges=%lld graphs=%zu mode=%s threads=%d seconds=%.3f "
      "rss_before_mib=%.0f peak_rss_mib=%.0f\n",
      faces, static_cast<long long>(graphs.front().num_edges()), graphs.size(), mode.c_str(),
      threads, s.median, before, peak_rss_mib());
  return 0;
}
