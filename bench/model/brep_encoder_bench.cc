// CPU speed of the default B-Rep encoder on a batch of synthetic-size graphs
// (20-60 faces, about 2 adjacent pairs per face): collation, forward without
// gradients, and forward + backward.
//   brep_encoder_bench [threads=2] [batch=64] [repeats=5]
#include <cstdio>
#include <cstdlib>
#include <random>

#include <ATen/ATen.h>

#include "cadclip/data/batch.h"
#include "cadclip/model/brep_encoder.h"
#include "common/bench_util.h"
#include "random_graph.h"

int main(int argc, char** argv) {
  using namespace cadclip;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int batch_size = argc > 2 ? std::atoi(argv[2]) : 64;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  bench::print_header("B-Rep encoder, default size", bench::set_threads(threads));

  std::mt19937 rng(7);
  std::vector<data::BRepGraph> graphs;
  int64_t faces = 0, edges = 0, largest = 0;
  for (int i = 0; i < batch_size; ++i) {
    graphs.push_back(testing::random_graph(20 + static_cast<int>(rng() % 41), 1000 + i,
                                           /*extra_edge_share=*/1.0));
    faces += graphs.back().num_faces();
    edges += graphs.back().num_edges();
    largest = std::max(largest, graphs.back().num_faces());
  }
  torch::manual_seed(0);
  model::BRepEncoder encoder;
  int64_t parameters = 0;
  for (const at::Tensor& p : encoder->parameters()) parameters += p.numel();
  std::printf("parameters=%lld  batch=%d graphs, %lld faces (largest %lld), %lld directed edges\n",
              static_cast<long long>(parameters), batch_size, static_cast<long long>(faces),
              static_cast<long long>(largest), static_cast<long long>(edges));

  data::BRepBatch batch;
  const bench::Stats collate = bench::measure([&] { batch = data::collate(graphs); }, 1, repeats);
  encoder->eval();
  const bench::Stats forward = bench::measure(
      [&] {
        torch::NoGradGuard no_grad;
        (void)encoder->forward(batch);
      },
      1, repeats);
  const bench::Stats face_cnn = bench::measure(
      [&] {
        torch::NoGradGuard no_grad;
        (void)encoder->face_cnn->forward(batch.face_grids);
      },
      1, repeats);
  const bench::Stats bias = bench::measure(
      [&] {
        torch::NoGradGuard no_grad;
        (void)encoder->attention_bias(batch);
      },
      1, repeats);
  encoder->train();
  const bench::Stats train = bench::measure(
      [&] {
        encoder->zero_grad();
        encoder->forward(batch).pow(2).mean().backward();
      },
      1, repeats);
  std::printf("| step | median s | p10-p90 s |\n|---|---|---|\n");
  for (const auto& [name, s] :
       {std::pair{"collate", collate}, std::pair{"forward (no grad)", forward},
        std::pair{"  of which face CNN", face_cnn}, std::pair{"  of which attention bias", bias},
        std::pair{"forward + backward", train}}) {
    std::printf("| %s | %.3f | %.3f-%.3f |\n", name, s.median, s.p10, s.p90);
  }
  return 0;
}
