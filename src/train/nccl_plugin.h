// The contract between the train layer and libcadclip_nccl.so, the module that
// holds the NCCL process group (cmake/CadclipNccl.cmake says why a module).
// The module makes the c10d backend; the train layer does the rest, as for Gloo.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace cadclip::train::detail {

// Raised whenever the struct below changes.
inline constexpr int kNcclPluginAbi = 1;
// The module's one exported symbol: `const NcclPlugin* cadclip_nccl_plugin()`.
inline constexpr const char* kNcclPluginSymbol = "cadclip_nccl_plugin";

struct NcclPlugin {
  int abi = kNcclPluginAbi;
  // NCCL version the module was compiled against: major * 10000 + minor * 100 + patch.
  int nccl_version = 0;
  // CUDA devices this process sees; 0 without a driver or a device. Never throws.
  int (*cuda_device_count)() = nullptr;
  // The NCCL backend of `world_size` processes meeting in `store`, bound to
  // cuda:`device` (made current), with its communicator already connected.
  // Throws cadclip::Error (or a c10 error) when it cannot.
  c10::intrusive_ptr<c10d::Backend> (*make_backend)(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size, int device,
                                                    std::chrono::milliseconds timeout) = nullptr;
};

using NcclPluginEntry = const NcclPlugin* (*)();

}  // namespace cadclip::train::detail
