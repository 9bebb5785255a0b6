#!/usr/bin/env bash
# The checks that need a GPU, in one go, for a machine with an NVIDIA GPU, a
# CUDA toolkit, PyTorch 2.11 (the torch wheel and its nvidia-* wheels), CMake
# and ninja. Configures the `gpu` preset (CUDA through TorchConfig, no OCCT),
# builds only the GPU test binaries and runs the tests labelled gpu:
#   - model_gpu_test: the B-Rep encoder on CUDA equals the CPU, fp32 under bf16
#     autocast (tests/model/brep_encoder_gpu_test.cc);
#   - train_nccl_gpu_test: the NCCL communicator, one process, world size 1:
#     all_gather / all_reduce_sum / broadcast / barrier on CUDA, CPU inputs
#     copied there and back, bf16 (tests/train/nccl_gpu_test.cc).
# Every test skips (and says why) without a GPU, so a "Skipped" here means the
# check did not happen. Usage: scripts/gpu_checks.sh [build folder, default build/gpu]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}
python=${CADCLIP_PYTHON:-$(command -v python3)}

echo "== machine"
nvidia-smi -L || echo "nvidia-smi: none (no NVIDIA driver?)"
"$python" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, \
'devices', torch.cuda.device_count(), 'NCCL', torch.cuda.nccl.version())"
command -v nvcc && nvcc --version | tail -1
cmake --version | head -1

# The gpu preset leaves out OCCT only; cmake/CadclipDeps.cmake still finds the
# other Debian libraries of the whole project. Say which are absent first,
# rather than failing in the middle of the configure step.
echo "== libraries the configure step looks for"
missing=()
for header in nlohmann/json.hpp CLI/CLI.hpp sqlite3.h gtest/gtest.h; do
  [ -n "$(find /usr/include /usr/local/include -path "*/$header" -print -quit 2>/dev/null)" ] ||
    missing+=("$header")
done
for module in cpp-httplib sentencepiece icu-uc; do
  pkg-config --exists "$module" 2>/dev/null || missing+=("pkg-config:$module")
done
ldconfig -p 2>/dev/null | grep -q 'libfaiss' || [ -e /usr/lib/x86_64-linux-gnu/libfaiss.a ] ||
  missing+=("libfaiss")
if [ ${#missing[@]} -gt 0 ]; then
  echo "missing: ${missing[*]}"
  echo "the gpu preset cannot configure without them (cmake/CadclipDeps.cmake needs them all);"
  echo "install or carry them, or make them optional for -DCADCLIP_WITH_CUDA=ON builds"
  exit 2
fi
echo "all found"

echo "== configure ($build)"
# Nothing here is CUDA code; naming the architecture skips TorchConfig's GPU
# probe, a try_run that CMake 3.25 cannot build with nvcc 13 ("CUDA20").
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
cmake --preset gpu -B "$build" -DCADCLIP_PYTHON="$python" -DCADCLIP_BUILD_BENCH=OFF \
  -DCADCLIP_NCCL=ON
echo "== build"
cmake --build "$build" --target model_gpu_test train_nccl_gpu_test -j"$(nproc)"
echo "== GPU tests"
log=$(mktemp)
set +e
ctest --test-dir "$build" -L gpu --output-on-failure -V 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "gpu_checks: a GPU test failed"; exit "$rc"; }
# ctest counts a skipped test as passed: fail when one did not run.
if grep -q '\[  SKIPPED \]' "$log"; then
  echo "gpu_checks: a GPU test was skipped (its reason is above): nothing was checked on a GPU"
  exit 1
fi
echo "gpu_checks: every GPU test ran and passed"
