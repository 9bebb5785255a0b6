// The NCCL communicator's collectives on a real GPU: one process, world size 1
// (NCCL refuses two ranks on one GPU). Skips without NCCL in the build or
// without a CUDA device; scripts/gpu_checks.sh runs it on a GPU machine.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <chrono>
#include <string>
#include <vector>

#include "cadclip/train/communicator.h"
#include "free_port.h"

namespace cadclip::train {
namespace {

using testing::free_port;

TEST(NcclGpu, OneProcessGathersReducesAndBroadcastsOnCuda) {
  std::string missing;
  if (!nccl_built(&missing)) GTEST_SKIP() << "no NCCL in this build: " << missing;
  // Loads the NCCL module (and LibTorch's CUDA) before anything asks for CUDA;
  // torch::cuda::device_count() first would settle on "no CUDA" in a CPU build.
  const int devices = nccl_cuda_device_count();
  if (devices < 1) GTEST_SKIP() << "no CUDA device (torch sees " << devices << ")";

  ProcessGroupOptions options;
  options.backend = "nccl";
  options.master_port = free_port();
  options.timeout = std::chrono::seconds(60);
  auto communicator = make_communicator(options);
  ASSERT_EQ(communicator->backend(), "nccl");
  ASSERT_EQ(communicator->world_size(), 1);
  ASSERT_EQ(communicator->rank(), 0);
  const at::Device cuda(at::kCUDA, 0);
  const auto on_cuda = at::TensorOptions().dtype(at::kFloat).device(cuda);

  // all_gather of a non-contiguous CUDA tensor: [4, 3], rank order, on CUDA.
  const at::Tensor x = at::arange(12, on_cuda).view({3, 4}).t();
  ASSERT_FALSE(x.is_contiguous());
  const at::Tensor gathered = communicator->all_gather(x);
  EXPECT_EQ(gathered.device(), cuda);
  EXPECT_EQ(gathered.sizes(), x.sizes());
  EXPECT_TRUE(at::equal(gathered.cpu(), x.cpu().contiguous()));
  // From the CPU: copied to the GPU for NCCL, and the result comes back.
  const at::Tensor on_cpu = at::arange(6, at::kDouble).view({2, 3});
  const at::Tensor gathered_cpu = communicator->all_gather(on_cpu);
  EXPECT_TRUE(gathered_cpu.device().is_cpu());
  EXPECT_TRUE(at::equal(gathered_cpu, on_cpu));

  // all_reduce_sum in place: the sum over one rank is the tensor itself, and
  // the caller's tensors (a non-contiguous CPU one too) are written in place.
  at::Tensor a = at::full({5}, 2.5, on_cuda);
  at::Tensor b = at::arange(4, at::kDouble).view({2, 2}).t();
  const at::Tensor b_before = b.clone();
  const void* b_data = b.data_ptr();
  std::vector<at::Tensor> tensors = {a, b};
  communicator->all_reduce_sum(tensors);
  EXPECT_TRUE(at::equal(tensors[0].cpu(), at::full({5}, 2.5, at::kFloat)));
  EXPECT_EQ(tensors[0].device(), cuda);
  EXPECT_TRUE(at::equal(tensors[1], b_before));
  EXPECT_TRUE(tensors[1].device().is_cpu());
  EXPECT_EQ(tensors[1].data_ptr(), b_data);

  // broadcast from rank 0 leaves rank 0's values.
  std::vector<at::Tensor> broadcast = {at::arange(7, on_cuda) * 3};
  communicator->broadcast(broadcast, 0);
  EXPECT_TRUE(at::equal(broadcast[0].cpu(), at::arange(7, at::kFloat) * 3));
  communicator->barrier();

  // bf16 goes through NCCL as well (the precision the GPU runs train in).
  const at::Tensor half = at::linspace(-1, 1, 8, on_cuda.dtype(at::kBFloat16));
  EXPECT_TRUE(
      at::equal(communicator->all_gather(half.view({2, 4})).cpu(), half.view({2, 4}).cpu()));
}

}  // namespace
}  // namespace cadclip::train
