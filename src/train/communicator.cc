#include "cadclip/train/communicator.h"

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/autograd.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>

#include "cadclip/core/error.h"
#include "cadclip/core/log.h"
#include "train/nccl_plugin.h"

namespace cadclip::train {
namespace {

// ---------------------------------------------------------------------------
// World of one: every collective is the identity.

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string backend() const override { return "single"; }
  at::Tensor all_gather(const at::Tensor& x) override { return x.contiguous(); }
  void all_reduce_sum(std::vector<at::Tensor>&) override {}
  void broadcast(std::vector<at::Tensor>&, int) override {}
  void barrier() override {}
};

// ---------------------------------------------------------------------------
// c10d process groups: Gloo, and NCCL whose tensors live on `device`.

class ProcessGroupCommunicator final : public Communicator {
 public:
  ProcessGroupCommunicator(c10::intrusive_ptr<c10d::Backend> group, std::string backend,
                           const ProcessGroupOptions& options,
                           std::optional<c10::Device> device = std::nullopt)
      : group_(std::move(group)),
        backend_(std::move(backend)),
        options_(options),
        device_(device) {}

  ~ProcessGroupCommunicator() override {
    // Since LibTorch 2.4 a process group must be shut down before it is destroyed.
    try {
      group_->shutdown();
    } catch (const std::exception& e) {
      log::debug("dist", "shutting down the {} group: {}", backend_, e.what());
    }
  }

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }
  std::string backend() const override { return backend_; }

  at::Tensor all_gather(const at::Tensor& x) override {
    std::vector<at::Tensor> input = {on_device(x)};
    std::vector<std::vector<at::Tensor>> output(1);
    for (int r = 0; r < options_.world_size; ++r) output[0].push_back(at::empty_like(input[0]));
    wait(group_->allgather(output, input), "all_gather");
    return at::cat(output[0], 0).to(x.device());
  }

  void all_reduce_sum(std::vector<at::Tensor>& tensors) override {
    for (auto& t : tensors) {
      at::Tensor flat = on_device(t);
      std::vector<at::Tensor> one = {flat};
      c10d::AllreduceOptions opts;
      opts.reduceOp = c10d::ReduceOp::SUM;
      wait(group_->allreduce(one, opts), "all_reduce");
      if (!flat.is_same(t)) t.copy_(flat);
    }
  }

  void broadcast(std::vector<at::Tensor>& tensors, int root) override {
    for (auto& t : tensors) {
      at::Tensor flat = on_device(t);
      std::vector<at::Tensor> one = {flat};
      c10d::BroadcastOptions opts;
      opts.rootRank = root;
      wait(group_->broadcast(one, opts), "broadcast");
      if (!flat.is_same(t)) t.copy_(flat);
    }
  }

  void barrier() override {
    c10d::BarrierOptions opts;
    if (device_) opts.device_ids = {device_->index()};
    wait(group_->barrier(opts), "barrier");
  }

 private:
  // The collective's own copy: contiguous, on the group's device.
  at::Tensor on_device(const at::Tensor& t) const {
    return (device_ ? t.to(*device_) : t).contiguous();
  }

  void wait(const c10::intrusive_ptr<c10d::Work>& work, std::string_view what) {
    try {
      work->wait(options_.timeout);
    } catch (const std::exception& e) {
      throw Error(
          format("rank {} of {}: {} over {} failed or timed out after {} s: another "
                 "process probably died or hung (its own log names it). Cause: {}",
                 options_.rank, options_.world_size, what, backend_,
                 options_.timeout.count() / 1000, e.what()));
    }
  }

  c10::intrusive_ptr<c10d::Backend> group_;
  std::string backend_;
  ProcessGroupOptions options_;
  std::optional<c10::Device> device_;  // NCCL's cuda:local_rank; none for Gloo
};

// Rank 0 serves the store; everyone waits for all within the timeout.
c10::intrusive_ptr<c10d::Store> make_store(const ProcessGroupOptions& options) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(options.master_port);
  // Under torchrun the agent on the first node already serves the store.
  store_options.isServer = options.rank == 0 && !options.store_served_by_agent;
  store_options.numWorkers = static_cast<size_t>(options.world_size);
  store_options.waitWorkers = true;
  store_options.timeout = options.timeout;
  store_options.useLibUV = false;
  return c10::make_intrusive<c10d::TCPStore>(options.master_addr, store_options);
}

// ---------------------------------------------------------------------------
// The NCCL module (src/train/nccl_plugin.h), loaded once per process.

#ifdef CADCLIP_HAVE_NCCL
std::vector<std::string> nccl_module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("CADCLIP_NCCL_PLUGIN"); env != nullptr && *env != '\0')
    paths.emplace_back(env);
  paths.emplace_back(CADCLIP_NCCL_PLUGIN_PATH);
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((self.parent_path() / "../lib/libcadclip_nccl.so").string());
  return paths;
}
#endif

const detail::NcclPlugin& nccl_plugin() {
#ifndef CADCLIP_HAVE_NCCL
  throw Error(
      format("backend 'nccl' is not in this build of cadclip: {}. Use --backend gloo, or "
             "rebuild against a CUDA LibTorch with nccl.h (docs/TRAINING.md)",
             CADCLIP_NCCL_MISSING));
#else
  static std::mutex mutex;
  static const detail::NcclPlugin* plugin = nullptr;
  std::lock_guard lock(mutex);
  if (plugin != nullptr) return *plugin;
  std::string tried;
  for (const std::string& path : nccl_module_candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += format("\n  {}: no such file", path);
      continue;
    }
    // Global, as if linked: libtorch_cuda registers its kernels and CUDA hooks
    // with the LibTorch already loaded. Never unloaded.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    if (handle == nullptr) {
      tried += format("\n  {}: {}", path, ::dlerror());
      continue;
    }
    auto entry =
        reinterpret_cast<detail::NcclPluginEntry>(::dlsym(handle, detail::kNcclPluginSymbol));
    const detail::NcclPlugin* loaded = entry != nullptr ? entry() : nullptr;
    if (loaded == nullptr || loaded->abi != detail::kNcclPluginAbi) {
      tried += format("\n  {}: not a cadclip NCCL module of this version (rebuild it)", path);
      continue;
    }
    log::debug("dist", "loaded the NCCL module {} (NCCL {})", path, loaded->nccl_version);
    plugin = loaded;
    return *plugin;
  }
  throw Error(
      format("backend 'nccl': cannot load cadclip's NCCL module (set CADCLIP_NCCL_PLUGIN "
             "to its path, or rebuild the target cadclip_nccl); tried:{}",
             tried));
#endif
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1'000'000)
    throw Error(format("environment variable {}='{}' is not a non-negative integer", name, value));
  return static_cast<int>(parsed);
}

std::string first_slurm_host(std::string nodes) {
  // "node[01-04,07],gpu2" -> "node01"; "a,b" -> "a".
  const size_t bracket = nodes.find('[');
  const size_t comma = nodes.find(',');
  if (bracket != std::string::npos && (comma == std::string::npos || bracket < comma)) {
    std::string digits;
    for (size_t i = bracket + 1; i < nodes.size() && std::isdigit(nodes[i]); ++i)
      digits += nodes[i];
    return nodes.substr(0, bracket) + digits;
  }
  return comma == std::string::npos ? nodes : nodes.substr(0, comma);
}

// Autograd all-gather; the communicator travels as an address in saved_data.
class AllGatherFunction : public torch::autograd::Function<AllGatherFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            int64_t communicator_address) {
    auto* communicator = reinterpret_cast<Communicator*>(communicator_address);
    ctx->saved_data["communicator"] = communicator_address;
    ctx->saved_data["rows"] = x.size(0);
    return communicator->all_gather(x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* communicator = reinterpret_cast<Communicator*>(ctx->saved_data["communicator"].toInt());
    const int64_t rows = ctx->saved_data["rows"].toInt();
    // Every rank's gradient with respect to this rank's block, summed.
    std::vector<at::Tensor> total = {grads[0].contiguous().clone()};
    communicator->all_reduce_sum(total);
    const int64_t begin = communicator->rank() * rows;
    return {total[0].narrow(0, begin, rows), at::Tensor()};
  }
};

// The local address the kernel would send from to reach host:port (no
// packet is sent: connect on a UDP socket only picks the route).
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      status != 0)
    throw Error(
        format("MASTER_ADDR {} does not resolve: {}; set it to rank 0's address, or name "
               "this node's interface in GLOO_SOCKET_IFNAME",
               host, ::gai_strerror(status)));
  std::string address;
  for (const addrinfo* a = found; a != nullptr && address.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_DGRAM, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* raw =
          local.ss_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (::inet_ntop(local.ss_family, raw, text, sizeof text) != nullptr) address = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (address.empty())
    throw Error(
        format("no route from this node to MASTER_ADDR {}; check the address, or name "
               "this node's interface in GLOO_SOCKET_IFNAME",
               host));
  return address;
}

}  // namespace

ProcessGroupOptions process_group_from_environment() {
  ProcessGroupOptions options;
  if (std::getenv("WORLD_SIZE") != nullptr) {
    options.world_size = env_int("WORLD_SIZE", 1);
    options.rank = env_int("RANK", 0);
    options.local_rank = env_int("LOCAL_RANK", options.rank);
    if (const char* addr = std::getenv("MASTER_ADDR")) options.master_addr = addr;
    options.master_port = env_int("MASTER_PORT", options.master_port);
    const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    options.store_served_by_agent =
        agent_store != nullptr && std::string_view(agent_store) == "True";
  } else if (std::getenv("SLURM_NTASKS") != nullptr && std::getenv("SLURM_PROCID") != nullptr) {
    options.world_size = env_int("SLURM_NTASKS", 1);
    options.rank = env_int("SLURM_PROCID", 0);
    options.local_rank = env_int("SLURM_LOCALID", 0);
    if (const char* nodes = std::getenv("SLURM_JOB_NODELIST"))
      options.master_addr = first_slurm_host(nodes);
    if (const char* addr = std::getenv("MASTER_ADDR")) options.master_addr = addr;
    options.master_port = env_int("MASTER_PORT", options.master_port);
  }
  if (options.world_size < 1 || options.rank >= options.world_size)
    throw Error(format("rank {} is not within world size {}: check RANK/WORLD_SIZE (or SLURM's)",
                       options.rank, options.world_size));
  return options;
}

std::unique_ptr<Communicator> make_single_process_communicator() {
  return std::make_unique<SingleProcess>();
}

std::unique_ptr<Communicator> make_gloo_communicator(const ProcessGroupOptions& options) {
  try {
    auto store = make_store(options);
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    const bool loopback = options.master_addr == "127.0.0.1" || options.master_addr == "localhost";
    if (interface != nullptr && *interface != '\0') {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
    } else if (loopback) {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      // Gloo's default resolves this machine's hostname, which on a node with
      // several networks (or none that the name resolves to) is not the one
      // rank 0 is on, and then falls back to loopback: its peers could never
      // connect. The address this node reaches master_addr from is.
      const std::string address = local_address_towards(options.master_addr, options.master_port);
      log::debug("dist", "rank {}: Gloo binds to {} (the address towards {})", options.rank,
                 address, options.master_addr);
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(address));
    }
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, options.rank,
                                                             options.world_size, gloo_options);
    return std::make_unique<ProcessGroupCommunicator>(std::move(group), "gloo", options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(format("rank {} of {}: cannot join the Gloo group at {}:{} within {} s: {}",
                       options.rank, options.world_size, options.master_addr, options.master_port,
                       options.timeout.count() / 1000, e.what()));
  }
}

bool nccl_built(std::string* missing) {
#ifdef CADCLIP_HAVE_NCCL
  if (missing != nullptr) missing->clear();
  return true;
#else
  if (missing != nullptr) *missing = CADCLIP_NCCL_MISSING;
  return false;
#endif
}

int nccl_cuda_device_count() { return nccl_plugin().cuda_device_count(); }

std::unique_ptr<Communicator> make_nccl_communicator(const ProcessGroupOptions& options) {
  const detail::NcclPlugin& plugin = nccl_plugin();
  // Before any rendezvous: a rank without a GPU fails at once, never waits.
  const int devices = plugin.cuda_device_count();
  if (devices == 0)
    throw Error(
        format("rank {}: --backend nccl needs a CUDA device; this machine has none (no "
               "NVIDIA driver or GPU visible); use --backend gloo",
               options.rank));
  if (options.local_rank >= devices)
    throw Error(
        format("rank {}: --backend nccl puts LOCAL_RANK {} on cuda:{}, but this machine has "
               "{} CUDA device(s); start at most {} processes per machine",
               options.rank, options.local_rank, options.local_rank, devices, devices));
  // The module registered LibTorch's CUDA hooks; if something asked for CUDA
  // before it was loaded, LibTorch has settled on "no CUDA" for this process.
  if (!at::detail::getCUDAHooks().isBuilt())
    throw Error(
        format("rank {}: LibTorch's CUDA support was looked up before the NCCL module "
               "was loaded in this process; create the NCCL communicator first",
               options.rank));
  const c10::Device device(c10::kCUDA, static_cast<c10::DeviceIndex>(options.local_rank));
  try {
    auto store = make_store(options);
    auto group = plugin.make_backend(store, options.rank, options.world_size, options.local_rank,
                                     options.timeout);
    return std::make_unique<ProcessGroupCommunicator>(std::move(group), "nccl", options, device);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(format("rank {} of {}: cannot join the NCCL group at {}:{} on {} within {} s: {}",
                       options.rank, options.world_size, options.master_addr, options.master_port,
                       device.str(), options.timeout.count() / 1000, e.what()));
  }
}

std::unique_ptr<Communicator> make_communicator(const ProcessGroupOptions& options) {
  if (options.backend == "nccl") return make_nccl_communicator(options);
  if (options.backend != "gloo")
    throw Error(format("unknown communication backend '{}': use gloo (CPU) or nccl (CUDA)",
                       options.backend));
  if (options.world_size == 1) return make_single_process_communicator();
  return make_gloo_communicator(options);
}

at::Tensor all_gather_with_grad(Communicator& communicator, const at::Tensor& x) {
  if (communicator.world_size() == 1) return x;
  return AllGatherFunction::apply(x, reinterpret_cast<int64_t>(&communicator));
}

void average_gradients(Communicator& communicator, const std::vector<at::Tensor>& parameters,
                       int64_t bucket_bytes) {
  if (communicator.world_size() == 1) return;
  std::vector<at::Tensor> bucket;
  int64_t bytes = 0;
  auto flush = [&] {
    if (bucket.empty()) return;
    std::vector<at::Tensor> flats;
    for (const auto& p : bucket) {
      const at::Tensor& g = p.grad();
      flats.push_back(g.defined() ? g.reshape(-1) : at::zeros({p.numel()}, p.options()));
    }
    std::vector<at::Tensor> flat = {at::cat(flats)};
    communicator.all_reduce_sum(flat);
    // Divide only after the collective has completed (all_reduce_sum waits).
    flat[0].div_(communicator.world_size());
    int64_t offset = 0;
    for (auto& p : bucket) {
      at::Tensor averaged = flat[0].narrow(0, offset, p.numel()).view_as(p);
      if (p.grad().defined()) {
        p.mutable_grad().copy_(averaged);
      } else {
        p.mutable_grad() = averaged.clone();
      }
      offset += p.numel();
    }
    bucket.clear();
    bytes = 0;
  };
  for (const auto& p : parameters) {
    if (!p.requires_grad()) continue;
    bucket.push_back(p);
    bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (bytes >= bucket_bytes) flush();
  }
  flush();
}

void broadcast_from_rank0(Communicator& communicator, const std::vector<at::Tensor>& tensors) {
  if (communicator.world_size() == 1) return;
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> targets(tensors.begin(), tensors.end());
  communicator.broadcast(targets, 0);
}

}  // namespace cadclip::train
