// CPU speed of the default B-Rep encoder on a batch of synthetic-size graphs
// (20-60 faces, about 2 adjacent pairs per face).
//   brep_encoder_bench [threads=2] [batch=64] [repeats=5] [mode=table|forward|train|dump] [file]
// table: collation, forward without gradients (with its face CNN and
// attention-bias parts), forward + backward. forward/train: one warm-up, then
// prints "seconds=<median>" (run.py alternates these with the Python
// reference). dump: writes the weights, the batch and the options to `file`
// for the Python reference.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <ATen/ATen.h>

#include "cadclip/core/safetensors.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/model/brep_encoder.h"
#include "common/bench_util.h"
#include "random_graph.h"
#include "reference_dump.h"

namespace {

using namespace cadclip;

void dump(model::BRepEncoder& encoder, const data::BRepBatch& batch, const std::string& path) {
  SafetensorsWriter file;
  for (const auto& p : encoder->named_parameters()) {
    data::add_tensor(file, "param." + p.key(), p.value().detach());
  }
  for (const auto& [name, tensor] : batch.named_tensors()) {
    data::add_tensor(file, "batch." + name, tensor);
  }
  {
    torch::NoGradGuard no_grad;
    encoder->eval();
    data::add_tensor(file, "output", encoder->forward(batch));
  }
  const model::BRepEncoderOptions& o = encoder->options();
  cadclip::testing::add_brep_options(file, o);
  file.write(path);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int batch_size = argc > 2 ? std::atoi(argv[2]) : 64;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string mode = argc > 4 ? argv[4] : "table";
  bench::set_threads(threads);

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
  data::BRepBatch batch = data::collate(graphs);
  const auto forward = [&] {
    torch::NoGradGuard no_grad;
    encoder->eval();
    (void)encoder->forward(batch);
  };
  const auto train = [&] {
    encoder->train();
    encoder->zero_grad();
    encoder->forward(batch).pow(2).mean().backward();
  };

  if (mode == "dump") {
    if (argc < 6) {
      std::fprintf(stderr, "brep_encoder_bench: mode dump needs a file to write\n");
      return 2;
    }
    dump(encoder, batch, argv[5]);
    return 0;
  }
  if (mode == "forward" || mode == "train") {
    const bench::Stats s =
        mode == "forward" ? bench::measure(forward, 1, repeats) : bench::measure(train, 1, repeats);
    std::printf("seconds=%.6f\n", s.median);
    return 0;
  }

  bench::print_header("B-Rep encoder, default size", threads);
  int64_t parameters = 0;
  for (const at::Tensor& p : encoder->parameters()) parameters += p.numel();
  std::printf("parameters=%lld  batch=%d graphs, %lld faces (largest %lld), %lld directed edges\n",
              static_cast<long long>(parameters), batch_size, static_cast<long long>(faces),
              static_cast<long long>(largest), static_cast<long long>(edges));
  const bench::Stats collate = bench::measure([&] { batch = data::collate(graphs); }, 1, repeats);
  const bench::Stats forward_stats = bench::measure(forward, 1, repeats);
  encoder->eval();
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
  const bench::Stats train_stats = bench::measure(train, 1, repeats);
  std::printf("| step | median s | p10-p90 s |\n|---|---|---|\n");
  for (const auto& [name, s] :
       {std::pair{"collate", collate}, std::pair{"forward (no grad)", forward_stats},
        std::pair{"  of which face CNN", face_cnn}, std::pair{"  of which attention bias", bias},
        std::pair{"forward + backward", train_stats}}) {
    std::printf("| %s | %.3f | %.3f-%.3f |\n", name, s.median, s.p10, s.p90);
  }
  return 0;
}
