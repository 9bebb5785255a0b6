// What grouping a batch by size saves: the default B-Rep encoder, forward +
// backward on batches of real parts from a prepared folder, padded to the
// batch's largest graph (forward(collate(graphs))) against grouped by size
// (forward_graphs), alternating, same batches, same threads.
//   size_groups_bench PREPARED_DIR [threads=2] [batch=64] [batches=6] [overheads=4096]
// overheads: comma-separated group_overhead values to compare (attention slots).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "cadclip/data/batch.h"
#include "cadclip/data/dataset.h"
#include "cadclip/model/brep_encoder.h"
#include "common/bench_util.h"

namespace {

using namespace cadclip;

double train_step_seconds(const std::function<at::Tensor()>& forward) {
  return bench::seconds_of([&] { forward().square().sum().backward(); });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: size_groups_bench PREPARED_DIR [threads=2] [batch=64] [batches=6] "
                 "[overheads=4096]\n");
    return 2;
  }
  const int threads = bench::set_threads(argc > 2 ? std::atoi(argv[2]) : 2);
  const int batch_size = argc > 3 ? std::atoi(argv[3]) : 64;
  const int batches = argc > 4 ? std::atoi(argv[4]) : 6;
  std::vector<int64_t> overheads;
  {
    std::stringstream list(argc > 5 ? argv[5] : "4096");
    for (std::string item; std::getline(list, item, ',');) overheads.push_back(std::stoll(item));
  }
  bench::print_header("B-Rep encoder: padded batch vs grouped by size, forward + backward",
                      threads);

  const data::Dataset dataset = data::Dataset::open(argv[1]);
  torch::manual_seed(0);
  model::BRepEncoder encoder{model::BRepEncoderOptions{}};
  encoder->eval();  // no dropout: both sides compute the same function
  std::mt19937 rng(1);
  std::uniform_int_distribution<int64_t> pick(0, dataset.size() - 1);

  std::vector<double> padded, grouped_first;
  std::vector<std::vector<double>> grouped(overheads.size());
  double padded_pairs = 0, real_pairs = 0;
  for (int b = 0; b < batches + 1; ++b) {  // batch 0 warms up
    std::vector<data::BRepGraph> graphs;
    for (int i = 0; i < batch_size; ++i) graphs.push_back(dataset.graph(pick(rng)));
    std::vector<const data::BRepGraph*> pointers;
    int64_t largest = 0;
    for (const auto& g : graphs) {
      pointers.push_back(&g);
      largest = std::max(largest, g.num_faces());
      if (b > 0) real_pairs += static_cast<double>((g.num_faces() + 1) * (g.num_faces() + 1));
    }
    const double pad = train_step_seconds([&] { return encoder->forward(data::collate(graphs)); });
    std::vector<double> group(overheads.size());
    for (size_t o = 0; o < overheads.size(); ++o) {
      group[o] = train_step_seconds(
          [&] { return encoder->forward_graphs(pointers, at::kCPU, overheads[o]); });
    }
    if (b == 0) continue;
    padded_pairs += static_cast<double>(batch_size * (largest + 1) * (largest + 1));
    padded.push_back(pad);
    for (size_t o = 0; o < overheads.size(); ++o) grouped[o].push_back(group[o]);
  }
  const bench::Stats p = bench::summarize(padded);
  std::printf("batches=%d of %d parts from %s; attention slots padded / real: %.1fx\n", batches,
              batch_size, argv[1], padded_pairs / real_pairs);
  std::printf("%-28s %10s %10s %8s\n", "case", "median s", "p90 s", "speed-up");
  std::printf("%-28s %10.3f %10.3f %8s\n", "padded to the largest", p.median, p.p90, "1.00x");
  for (size_t o = 0; o < overheads.size(); ++o) {
    const bench::Stats g = bench::summarize(grouped[o]);
    const std::string name = "grouped, overhead " + std::to_string(overheads[o]);
    std::printf("%-28s %10.3f %10.3f %7.2fx\n", name.c_str(), g.median, g.p90, p.median / g.median);
  }
  return 0;
}
