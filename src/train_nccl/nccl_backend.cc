// libcadclip_nccl.so: the NCCL process group for cadclip's NCCL communicator.
// Loaded by the train layer with dlopen (src/train/nccl_plugin.h), so that
// processes that never use NCCL never load LibTorch's CUDA libraries.
#include <c10/cuda/CUDAFunctions.h>
#include <nccl.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <cstdlib>

#include "cadclip/core/error.h"
#include "train/nccl_plugin.h"

namespace cadclip::train::detail {
namespace {

int cuda_device_count() {
  // c10's count: 0 (not an exception) without a driver or a device.
  return static_cast<int>(c10::cuda::device_count());
}

c10::intrusive_ptr<c10d::Backend> make_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                               int rank, int world_size, int device,
                                               std::chrono::milliseconds timeout) {
  const int devices = cuda_device_count();
  if (device < 0 || device >= devices)
    throw Error(format("rank {}: NCCL needs cuda:{}, but this process sees {} CUDA device(s)", rank,
                       device, devices));
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(device));
  // Blocking wait: Work::wait(timeout) then throws when a peer died or hung,
  // and the watchdog does not tear the process down first (with blocking wait
  // ProcessGroupNCCL turns TORCH_NCCL_ASYNC_ERROR_HANDLING off). Read by the
  // constructor; a value the user set wins.
  ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
  const at::Device cuda(at::kCUDA, static_cast<c10::DeviceIndex>(device));
  group->setBoundDeviceId(cuda);
  // Connects now (every rank does the same), so that a missing peer shows at
  // start, within the store's timeout, rather than at the first collective.
  group->eagerConnectSingleDevice(cuda);
  return group;
}

const NcclPlugin kPlugin{
    .abi = kNcclPluginAbi,
    .nccl_version = NCCL_MAJOR * 10000 + NCCL_MINOR * 100 + NCCL_PATCH,
    .cuda_device_count = &cuda_device_count,
    .make_backend = &make_backend,
};

}  // namespace
}  // namespace cadclip::train::detail

extern "C" __attribute__((visibility("default"))) const cadclip::train::detail::NcclPlugin*
cadclip_nccl_plugin() {
  return &cadclip::train::detail::kPlugin;
}
