// The inputs of the coming training steps, made on background threads while
// the current step trains: shard reads, the caption drawn and its tokens, the
// pairwise inputs and the collation into size groups (StepInputMaker). A
// step's inputs are a function of (epoch, step) alone, so the model sees the
// same whatever the thread count.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <utility>
#include <vector>

#include "cadclip/train/step_inputs.h"

namespace cadclip::train {

class StepLoader {
 public:
  using Make = std::function<StepInputs(int64_t epoch, int64_t step)>;
  // `plan`: the (epoch, step) pairs the run takes, in order. `threads`: steps
  // made at once ahead of the one being taken; 0 = each made when taken.
  StepLoader(Make make, std::vector<std::pair<int64_t, int64_t>> plan, int threads);
  ~StepLoader();  // waits for the steps in flight
  StepLoader(const StepLoader&) = delete;
  StepLoader& operator=(const StepLoader&) = delete;

  // The inputs of the next step of the plan, which must be (epoch, step).
  // Rethrows what making them threw.
  StepInputs take(int64_t epoch, int64_t step);

 private:
  void fill();

  Make make_;
  std::vector<std::pair<int64_t, int64_t>> plan_;
  int threads_;
  size_t next_take_ = 0, next_start_ = 0;
  std::deque<std::future<StepInputs>> in_flight_;
};

}  // namespace cadclip::train
