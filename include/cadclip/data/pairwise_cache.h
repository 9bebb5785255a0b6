// The pairwise inputs of a dataset's models (pairwise.h), computed once per
// model on first use and kept, up to a memory budget: training reads every
// model once an epoch, and the hop counts, angles and distances of a model
// never change. Safe to use from several loader threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cadclip/data/brep_graph.h"
#include "cadclip/data/pairwise.h"

namespace cadclip::data {

class PairwiseCache {
 public:
  // For models 0 .. models - 1 (dataset indices). `max_bytes`: the memory the
  // kept inputs may take; models met after it is spent are computed at each
  // use and not kept (0: none is kept).
  PairwiseCache(int64_t models, int64_t max_bytes);

  // The pairwise inputs of model `index`, whose graph is `graph`: the kept
  // ones, or computed now (and kept while the budget allows). Throws
  // cadclip::Error when `index` is out of range.
  std::shared_ptr<const PairwiseInputs> get(int64_t index, const BRepGraph& graph);

  struct Stats {
    int64_t kept = 0;      // models whose inputs are kept
    int64_t bytes = 0;     // memory they take (vectors' capacity plus the structs)
    int64_t computed = 0;  // computations in all (kept or not)
    int64_t not_kept = 0;  // computations past the budget, not kept
  };
  Stats stats() const;

  // What one model's kept inputs take, bytes: about 12 F^2 + F for F faces.
  static int64_t bytes_of(const PairwiseInputs& inputs);

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const PairwiseInputs>> kept_;
  int64_t max_bytes_;
  Stats stats_;
};

}  // namespace cadclip::data
