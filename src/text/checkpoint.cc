#include "cadclip/text/checkpoint.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/Generator.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>
#include <optional>

#include "cadclip/core/error.h"

namespace cadclip::text {
namespace {

using Fn = std::function<at::Tensor(const std::vector<at::Tensor>&)>;

struct FnHolder : torch::CustomClassHolder {
  explicit FnHolder(Fn f) : fn(std::move(f)) {}
  Fn fn;
};

// The RNG and autocast state a forward ran under, so that a re-run draws the
// same dropout masks and picks the same precisions.
struct RunState {
  at::Tensor cpu_rng;
  std::optional<at::Tensor> cuda_rng;
  bool autocast_cpu = false, autocast_cuda = false;
  at::ScalarType autocast_cpu_dtype = at::kBFloat16, autocast_cuda_dtype = at::kHalf;

  static RunState capture() {
    RunState state;
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      state.cpu_rng = gen.get_state();
    }
    if (at::globalContext().hasCUDA()) {
      auto gen = at::globalContext().defaultGenerator(at::Device(at::kCUDA));
      std::lock_guard<std::mutex> lock(gen.mutex());
      state.cuda_rng = gen.get_state();
    }
    state.autocast_cpu = at::autocast::is_autocast_enabled(at::kCPU);
    state.autocast_cuda = at::autocast::is_autocast_enabled(at::kCUDA);
    state.autocast_cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU);
    state.autocast_cuda_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    return state;
  }

  void apply() const {
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(cpu_rng);
    }
    if (cuda_rng) {
      auto gen = at::globalContext().defaultGenerator(at::Device(at::kCUDA));
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(*cuda_rng);
    }
    at::autocast::set_autocast_enabled(at::kCPU, autocast_cpu);
    at::autocast::set_autocast_enabled(at::kCUDA, autocast_cuda);
    at::autocast::set_autocast_dtype(at::kCPU, autocast_cpu_dtype);
    at::autocast::set_autocast_dtype(at::kCUDA, autocast_cuda_dtype);
  }
};

// Restores the caller's RNG and autocast state when the re-run ends, so that
// checkpointing leaves no trace on the random stream of the rest of the step.
class RestoreOnExit {
 public:
  RestoreOnExit() : saved_(RunState::capture()) {}
  ~RestoreOnExit() { saved_.apply(); }

 private:
  RunState saved_;
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  // `inputs` as a TensorList: autograd registers the elements of a
  // TensorList as inputs, and would treat a std::vector as one opaque value.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const Fn& fn,
                            at::TensorList input_list) {
    const std::vector<at::Tensor> inputs = input_list.vec();
    auto state = std::make_shared<RunState>(RunState::capture());
    ctx->saved_data["fn"] = c10::IValue::make_capsule(c10::make_intrusive<FnHolder>(fn));
    ctx->saved_data["cpu_rng"] = state->cpu_rng;
    if (state->cuda_rng) ctx->saved_data["cuda_rng"] = *state->cuda_rng;
    ctx->saved_data["autocast"] = std::vector<int64_t>{
        state->autocast_cpu, state->autocast_cuda, static_cast<int64_t>(state->autocast_cpu_dtype),
        static_cast<int64_t>(state->autocast_cuda_dtype)};
    ctx->save_for_backward(inputs);
    at::NoGradGuard no_grad;
    return fn(inputs);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto holder =
        c10::static_intrusive_pointer_cast<FnHolder>(ctx->saved_data["fn"].toCapsule());
    const std::vector<at::Tensor> saved = ctx->get_saved_variables();
    RunState state;
    state.cpu_rng = ctx->saved_data["cpu_rng"].toTensor();
    if (ctx->saved_data.count("cuda_rng")) state.cuda_rng = ctx->saved_data["cuda_rng"].toTensor();
    const auto flags = ctx->saved_data["autocast"].toIntVector();
    state.autocast_cpu = flags[0] != 0;
    state.autocast_cuda = flags[1] != 0;
    state.autocast_cpu_dtype = static_cast<at::ScalarType>(flags[2]);
    state.autocast_cuda_dtype = static_cast<at::ScalarType>(flags[3]);

    std::vector<at::Tensor> detached;
    detached.reserve(saved.size());
    for (const at::Tensor& input : saved) {
      if (!input.defined()) {
        detached.push_back(input);
        continue;
      }
      detached.push_back(input.detach().requires_grad_(input.requires_grad()));
    }
    at::Tensor output;
    {
      RestoreOnExit restore;
      state.apply();
      at::AutoGradMode grad_on(true);
      output = holder->fn(detached);
    }
    if (output.requires_grad()) torch::autograd::backward({output}, {grad_outputs[0]});

    torch::autograd::variable_list grads;
    grads.reserve(detached.size() + 1);
    grads.emplace_back();  // the function argument
    for (const at::Tensor& input : detached)
      grads.push_back(input.defined() && input.requires_grad() ? input.grad() : at::Tensor());
    return grads;
  }
};

}  // namespace

at::Tensor checkpoint(Fn fn, std::vector<at::Tensor> inputs) {
  bool needs_grad = false;
  for (const auto& input : inputs) needs_grad |= input.defined() && input.requires_grad();
  if (!at::GradMode::is_enabled() || !needs_grad) return fn(inputs);
  return CheckpointFunction::apply(fn, at::TensorList(inputs));
}

}  // namespace cadclip::text
