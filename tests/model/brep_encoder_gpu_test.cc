// The B-Rep encoder on CUDA: same embedding as on the CPU, fp32 inside a
// CUDA bf16 autocast region. Skips without a GPU.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "cadclip/data/batch.h"
#include "cadclip/model/autocast.h"
#include "cadclip/model/brep_encoder.h"
#include "random_graph.h"

namespace cadclip::model {
namespace {

TEST(BRepEncoderGpu, MatchesTheCpuAndStaysFp32UnderAutocast) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  torch::manual_seed(0);
  BRepEncoder encoder;  // the default size, as trained
  encoder->eval();
  const data::BRepBatch batch = data::collate(std::vector{
      testing::random_graph(30, 1), testing::random_graph(12, 2), testing::random_graph(55, 3)});
  torch::NoGradGuard no_grad;
  // cuDNN convolutions may use TF32 by default (matmuls do not); compare true fp32.
  const bool tf32 = at::globalContext().allowTF32CuDNN();
  at::globalContext().setAllowTF32CuDNN(false);
  const at::Tensor cpu = encoder->forward(batch);
  encoder->to(at::kCUDA);
  const data::BRepBatch on_gpu = batch.to(at::kCUDA);
  const at::Tensor gpu = encoder->forward(on_gpu);
  at::Tensor mixed;
  {
    AutocastGuard bf16(c10::DeviceType::CUDA, /*enabled=*/true, at::kBFloat16);
    mixed = encoder->forward(on_gpu);
  }
  EXPECT_EQ(gpu.scalar_type(), at::kFloat);
  EXPECT_EQ(mixed.scalar_type(), at::kFloat);
  at::globalContext().setAllowTF32CuDNN(tf32);
  EXPECT_LT((gpu.cpu() - cpu).abs().max().item<double>(), 1e-4);
  EXPECT_TRUE(at::equal(mixed, gpu));
}

}  // namespace
}  // namespace cadclip::model
