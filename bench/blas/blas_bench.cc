// Is BLAS fast here? fp32 matmul GFLOP/s of cadclip's LibTorch at 1 and 2
// threads; bench/blas/run.sh prints the Python torch figure beside it.
#include <cstdio>
#include <cstdlib>

#include "common/bench_util.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  for (int threads : {1, 2}) {
    cadclip::bench::set_threads(threads);
    std::printf("LibTorch C++  threads=%d  matmul %d^2 fp32: %.1f GFLOP/s\n", threads, n,
                cadclip::bench::matmul_gflops(n, 9));
  }
  return 0;
}
