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
};

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun), else
// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the first host of
// SLURM_JOB_NODELIST; nullopt-like world_size 1 when neither is set.
// Throws cadclip::Error naming a malformed variable.
ProcessGroupOptions process_group_from_environment();

std::unique_ptr<Communicator> make_single_process_communicator();
// Gloo over TCP (CPU tensors). Throws cadclip::Error when the rendezvous
// fails within the timeout.
std::unique_ptr<Communicator> make_gloo_communicator(const ProcessGroupOptions& options);
// Single process when world_size is 1, else Gloo.
std::unique_ptr<Communicator> make_communicator(const ProcessGroupOptions& options);

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
