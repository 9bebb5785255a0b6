// The processes of a training run behind one interface. Never null: a single
// process is a world of size 1, so training code has no `if (distributed)`.
// Tensors are made contiguous at this boundary; every collective has a timeout.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace cadclip::train {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;  // "single", "gloo" or "nccl"

  // x: [n, ...], the same shape on every rank -> [world_size * n, ...], rank
  // order. No autograd; see all_gather_with_grad.
  virtual at::Tensor all_gather(const at::Tensor& x) = 0;
  // Element-wise sum over ranks, in place.
  virtual void all_reduce_sum(std::vector<at::Tensor>& tensors) = 0;
  // Copies rank `root`'s tensors into everyone's, in place.
  virtual void broadcast(std::vector<at::Tensor>& tensors, int root) = 0;
  virtual void barrier() = 0;
};

// Where the processes of a run meet (torchrun's variables).
struct ProcessGroupOptions {
  int rank = 0;                           // this process, 0 .. world_size - 1
  int world_size = 1;                     // number of processes
  int local_rank = 0;                     // rank on this machine (device choice)
  std::string master_addr = "127.0.0.1";  // host of rank 0's rendezvous store
  int master_port = 29500;                // its TCP port
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  // per collective and rendezvous
  std::string backend = "gloo";  // "gloo" (CPU; a world of 1 runs as "single") or "nccl" (CUDA)
  // The rendezvous store at master_addr:master_port is already served by
  // someone else: torchrun's agent (TORCHELASTIC_USE_AGENT_STORE=True), so
  // rank 0 joins it as a client instead of serving it.
  bool store_served_by_agent = false;
};

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT and
// TORCHELASTIC_USE_AGENT_STORE (torchrun), else SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID and the first host of SLURM_JOB_NODELIST; world_size 1 when
// neither is set. Throws cadclip::Error naming a malformed variable.
ProcessGroupOptions process_group_from_environment();

std::unique_ptr<Communicator> make_single_process_communicator();
// Gloo over TCP (CPU tensors). Its sockets bind to the interface named by
// GLOO_SOCKET_IFNAME, else to the local address that routes to master_addr
// (so that nodes with several networks use the one that reaches rank 0), or
// to 127.0.0.1 when master_addr is loopback. Throws cadclip::Error when the
// rendezvous fails within the timeout.
std::unique_ptr<Communicator> make_gloo_communicator(const ProcessGroupOptions& options);
// NCCL over the same TCP rendezvous, on cuda:local_rank (the current device
// from then on). Tensors on another device (the CPU too) are copied there for
// each collective and the results copied back: callers see their own device.
// Loads libcadclip_nccl.so, and with it LibTorch's CUDA libraries, on first
// use: call it before anything else in the process touches CUDA (LibTorch
// decides once per process whether CUDA exists). Throws cadclip::Error, before
// any rendezvous, when this build has no NCCL, the machine has no CUDA device,
// or local_rank has none; later when the rendezvous fails within the timeout.
std::unique_ptr<Communicator> make_nccl_communicator(const ProcessGroupOptions& options);
// options.backend "gloo": a single process when world_size is 1, else Gloo;
// "nccl": NCCL, also for a world of 1. Throws cadclip::Error on another name.
std::unique_ptr<Communicator> make_communicator(const ProcessGroupOptions& options);

// Whether this build of cadclip has the NCCL communicator; when not, `missing`
// (if given) says what the configure step lacked.
bool nccl_built(std::string* missing = nullptr);
// Loads the NCCL module (and LibTorch's CUDA libraries) and returns the number
// of CUDA devices it sees: 0 without a driver or a GPU. Throws cadclip::Error
// when the module is not built or cannot be loaded.
int nccl_cuda_device_count();

// x: [n, d] on every rank -> [world_size * n, d] with an exact backward: each
// rank receives the SUM over ranks of the gradient with respect to its own
// block (so that, with gradients averaged across ranks afterwards, every
// parameter gets exactly the single-process gradient of the global loss).
at::Tensor all_gather_with_grad(Communicator& communicator, const at::Tensor& x);

// Gradient averaging after backward: flattens the gradients into buckets of
// about `bucket_bytes`, all-reduces them (sum), divides by the world size and
// copies back. Parameters without a gradient are treated as zero on this rank.
void average_gradients(Communicator& communicator, const std::vector<at::Tensor>& parameters,
                       int64_t bucket_bytes = 25 << 20);

// Copies rank 0's values into every rank's parameters and buffers.
void broadcast_from_rank0(Communicator& communicator, const std::vector<at::Tensor>& tensors);

}  // namespace cadclip::train
