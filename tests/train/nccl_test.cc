// The NCCL communicator on any machine: it is in this build exactly when the
// configure step said so (CADCLIP_EXPECT_NCCL), its module loads and brings
// LibTorch's CUDA with it, and without a GPU it fails at once, before any
// rendezvous, with an error that says to use Gloo (the library and the CLI).
// The collectives themselves need a GPU: nccl_gpu_test.cc.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "../apps/cli_run.h"
#include "../error_of.h"
#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/train/communicator.h"
#include "free_port.h"

namespace cadclip::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using testing::free_port;

// Rank 1 of 2 (so it is a client that would wait for rank 0's store).
ProcessGroupOptions nccl_options() {
  ProcessGroupOptions options;
  options.backend = "nccl";
  options.rank = 1;
  options.world_size = 2;
  options.local_rank = 0;
  options.master_port = free_port();  // nobody listens: a rendezvous would wait
  options.timeout = std::chrono::seconds(60);
  return options;
}

std::string error_of(const ProcessGroupOptions& options) {
  return testing::error_of([&] { make_communicator(options); });
}

TEST(NcclCommunicator, IsInThisBuildExactlyWhenTheConfigureSaidSo) {
  std::string missing;
  const bool built = nccl_built(&missing);
  EXPECT_EQ(built, CADCLIP_EXPECT_NCCL != 0);
  if (built) {
    EXPECT_TRUE(missing.empty()) << missing;
    return;
  }
  // A build without NCCL names what was missing and the way out.
  EXPECT_FALSE(missing.empty());
  const std::string error = error_of(nccl_options());
  EXPECT_NE(error.find("not in this build"), std::string::npos) << error;
  EXPECT_NE(error.find(missing), std::string::npos) << error;
  EXPECT_NE(error.find("--backend gloo"), std::string::npos) << error;
}

TEST(NcclCommunicator, LoadingTheModuleBringsLibTorchsCuda) {
  std::string missing;
  if (!nccl_built(&missing)) GTEST_SKIP() << "no NCCL in this build: " << missing;
  const auto add = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  // The CPU build links no CUDA library (the gpu preset does, through TorchConfig).
#ifndef CADCLIP_WITH_CUDA
  EXPECT_FALSE(add.hasKernelForDispatchKey(c10::DispatchKey::CUDA));
#endif
  EXPECT_GE(nccl_cuda_device_count(), 0);
  // libtorch_cuda is in the process now: CUDA kernels and hooks are registered.
  EXPECT_TRUE(add.hasKernelForDispatchKey(c10::DispatchKey::CUDA));
  EXPECT_TRUE(at::detail::getCUDAHooks().isBuilt());
}

TEST(NcclCommunicator, WithoutACudaDeviceFailsAtOnceSayingUseGloo) {
  std::string missing;
  if (!nccl_built(&missing)) GTEST_SKIP() << "no NCCL in this build: " << missing;
  if (nccl_cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const auto start = Clock::now();
  const std::string error = error_of(nccl_options());
  // Far below the 60 s rendezvous timeout: it never tried to meet rank 0.
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_NE(error.find("--backend nccl needs a CUDA device; this machine has none"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("use --backend gloo"), std::string::npos) << error;
}

TEST(NcclCommunicator, AnUnknownBackendIsRefused) {
  ProcessGroupOptions options;
  options.backend = "mpi";
  const std::string error = error_of(options);
  EXPECT_NE(error.find("unknown communication backend 'mpi'"), std::string::npos) << error;
}

TEST(NcclCommunicator, TrainWithBackendNcclStopsAtOnceWithoutAGpu) {
  std::string missing;
  if (nccl_built(&missing) && nccl_cuda_device_count() > 0)
    GTEST_SKIP() << "this machine has a CUDA device";
  // The communicator is made before the data is read, so no dataset is needed.
  const auto out =
      std::filesystem::temp_directory_path() / ("cadclip_nccl_cli_" + std::to_string(::getpid()));
  const auto start = Clock::now();
  const auto [status, output] =
      testing::run_cadclip(format("train --backend nccl --data /nonexistent --out {}", out));
  EXPECT_LT(seconds_since(start), 20.0);
  EXPECT_GT(status, 0) << output;  // exited, and with an error
  const std::string expected = nccl_built() ? "--backend nccl needs a CUDA device; this machine "
                                              "has none"
                                            : "not in this build";
  EXPECT_NE(output.find(expected), std::string::npos) << output;
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace cadclip::train
