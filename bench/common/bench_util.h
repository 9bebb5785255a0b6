// Bookkeeping shared by the C++ benchmarks (the method is at the top of
// docs/PERFORMANCE.md): explicit thread counts, a BLAS speed line, warm-up,
// repeated runs, median and spread.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace cadclip::bench {

struct Stats {
  double median = 0;  // seconds
  double p10 = 0;     // seconds, 10th percentile
  double p90 = 0;     // seconds, 90th percentile
  int runs = 0;
};

inline Stats summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  auto at = [&](double q) {
    return seconds[static_cast<size_t>(q * static_cast<double>(seconds.size() - 1) + 0.5)];
  };
  return {at(0.5), at(0.1), at(0.9), static_cast<int>(seconds.size())};
}

inline double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `work` `warmup` times untimed, then `repeats` times timed.
inline Stats measure(const std::function<void()>& work, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) seconds.push_back(seconds_of(work));
  return summarize(seconds);
}

// Sets LibTorch's intra-op threads and returns the count in force. (Inter-op
// threads can be set once per process only; benchmarks use none.)
inline int set_threads(int threads) {
  at::set_num_threads(threads);
  return at::get_num_threads();
}

// fp32 matmul speed of this LibTorch on this machine, GFLOP/s: printed by
// every benchmark so that a slow BLAS cannot hide behind a ratio.
inline double matmul_gflops(int n = 1024, int repeats = 5) {
  auto a = at::randn({n, n});
  auto b = at::randn({n, n});
  const Stats stats = measure([&] { (void)at::matmul(a, b); }, 2, repeats);
  return 2.0 * n * n * n / stats.median / 1e9;
}

inline void print_header(const std::string& benchmark, int threads) {
  std::printf("# %s\n", benchmark.c_str());
  std::printf("threads=%d  LibTorch matmul 1024^2 fp32: %.1f GFLOP/s\n", threads, matmul_gflops());
}

}  // namespace cadclip::bench
