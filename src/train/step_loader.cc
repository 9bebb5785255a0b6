#include "cadclip/train/step_loader.h"

#include "cadclip/core/error.h"

namespace cadclip::train {

StepLoader::StepLoader(Make make, std::vector<std::pair<int64_t, int64_t>> plan, int threads)
    : make_(std::move(make)), plan_(std::move(plan)), threads_(threads) {
  if (threads < 0) throw Error(format("{} loader threads; use 0 or more", threads));
  fill();
}

StepLoader::~StepLoader() {
  for (auto& f : in_flight_)
    if (f.valid()) f.wait();
}

void StepLoader::fill() {
  while (static_cast<int>(in_flight_.size()) < threads_ && next_start_ < plan_.size()) {
    // Named copies, not structured bindings: C++20 lets a lambda capture
    // those, but clang 14 (clang-tidy here) does not.
    const int64_t epoch = plan_[next_start_].first, step = plan_[next_start_].second;
    ++next_start_;
    in_flight_.push_back(
        std::async(std::launch::async, [this, epoch, step] { return make_(epoch, step); }));
  }
}

StepInputs StepLoader::take(int64_t epoch, int64_t step) {
  CADCLIP_CHECK(next_take_ < plan_.size() && plan_[next_take_] == std::make_pair(epoch, step),
                "step loader: asked for epoch {} step {} out of plan", epoch, step);
  ++next_take_;
  if (threads_ == 0) {
    ++next_start_;
    return make_(epoch, step);
  }
  std::future<StepInputs> ready = std::move(in_flight_.front());
  in_flight_.pop_front();
  fill();
  return ready.get();
}

}  // namespace cadclip::train
