#!/usr/bin/env bash
# BLAS sanity check: LibTorch C++ (as cadclip links it) and Python torch from
# the same wheel, same sizes and threads. Usage: bench/blas/run.sh [build/release]
set -euo pipefail
build=${1:-build/release}
"$build/bench/blas/blas_bench" 1024
py=${CADCLIP_PYTHON:-/opt/cadclip/venv/bin/python}
for t in 1 2; do
  OMP_NUM_THREADS=$t "$py" -c "
import sys; sys.path.insert(0, 'bench/common')
import torch, benchlib
torch.set_num_threads($t)
print(f'Python torch  threads=$t  matmul 1024^2 fp32: {benchlib.matmul_gflops(1024, 9):.1f} GFLOP/s')"
done
