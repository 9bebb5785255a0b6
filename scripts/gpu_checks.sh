#!/usr/bin/env bash
# The checks that need a GPU, in one go, for a machine with an NVIDIA GPU and
# only PyTorch 2.11 (the torch wheel and its nvidia-* wheels), the CUDA
# toolkit, CMake, ninja and a C++ compiler: no Debian packages, no network.
# What the build needs beyond those comes in the archive that
# scripts/gpu_bundle.sh makes on the development machine (headers, libraries,
# GoogleTest's sources, the training inputs; a device run carries it). Steps:
#   1. unpack the bundle into the build folder; build GoogleTest from it;
#   2. configure the `gpu` preset (CUDA through TorchConfig, no OCCT) against
#      it; build the GPU tests and cadclip;
#   3. the tests labelled gpu: model_gpu_test (the B-Rep encoder on CUDA equals
#      the CPU, fp32 under bf16 autocast) and train_nccl_gpu_test (the NCCL
#      communicator, one process: all_gather of CUDA and CPU tensors equals
#      its input, all_reduce_sum, broadcast, barrier, bf16);
#   4. training speed: `cadclip train --device cuda --precision bf16
#      --batch-size 256` on the bundle's 256 synthetic parts (one step an
#      epoch), the MiniLM text tower fine-tuned, its weights random numbers of
#      the real shapes (the speed does not depend on their values); the median
#      samples/s of steps 6 to 30.
# A test that skips (no GPU, no NCCL) counts as a failure: nothing was checked.
# The last line is the summary:
#   gpu_checks: tests 3/3 passed | bf16 training, batch 256: 1234.5 samples/s | NCCL all-gather: equal (world size 1, 1 GPU present)
# Usage: scripts/gpu_checks.sh [build folder, default build/gpu]
# CADCLIP_GPU_BUNDLE names the archive (default build/gpu-bundle.tar.xz); set
# it empty to use the system's libraries instead (scripts/setup.sh's packages).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}
bundle=${CADCLIP_GPU_BUNDLE-build/gpu-bundle.tar.xz}
python=${CADCLIP_PYTHON:-$(command -v python3)}
steps=30
mkdir -p "$build"
build=$(cd "$build" && pwd)

echo "== machine"
nvidia-smi -L || echo "nvidia-smi: none (no NVIDIA driver?)"
gpus=$("$python" -c "import torch; print(torch.cuda.device_count())")
"$python" -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, \
'devices', torch.cuda.device_count(), 'NCCL', torch.cuda.nccl.version())"
if command -v nvcc >/dev/null; then nvcc --version | tail -1; fi
cmake --version | head -1
command -v ninja >/dev/null || { echo "gpu_checks: ninja is not on the PATH" >&2; exit 2; }

deps=$build/deps
prefix_args=()
if [ -n "$bundle" ]; then
  echo "== bundle ($bundle -> $deps)"
  [ -f "$bundle" ] || { echo "gpu_checks: no $bundle; make it with scripts/gpu_bundle.sh on" \
    "the development machine and carry it, or set CADCLIP_GPU_BUNDLE= for the system's" \
    "libraries" >&2; exit 2; }
  rm -rf "$deps"
  mkdir -p "$deps"
  # Python's tarfile rather than tar -J: xz may be missing.
  "$python" -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$bundle" "$build/deps.unpack"
  mv "$build/deps.unpack/gpu-bundle"/* "$deps/" && rm -rf "$build/deps.unpack"
  cmake -S "$deps/src/googletest" -B "$build/googletest" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$deps" >/dev/null
  cmake --build "$build/googletest" --target install -j"$(nproc)" >/dev/null
  export PATH=$deps/bin:$PATH  # its pkg-config reads only the bundle's .pc files
  prefix_args=(-DCMAKE_PREFIX_PATH="$deps" -DPKG_CONFIG_EXECUTABLE="$deps/bin/pkg-config"
               -DCADCLIP_FUZZ=OFF)
  train_inputs=$deps/train
else
  echo "== libraries the configure step looks for (system)"
  missing=()
  for header in nlohmann/json.hpp CLI/CLI.hpp gloo/algorithm.h sqlite3.h gtest/gtest.h; do
    [ -n "$(find /usr/include /usr/local/include -path "*/$header" -print -quit 2>/dev/null)" ] ||
      missing+=("$header")
  done
  for module in cpp-httplib sentencepiece icu-uc; do
    pkg-config --exists "$module" 2>/dev/null || missing+=("pkg-config:$module")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu_checks: missing ${missing[*]}: carry the bundle (scripts/gpu_bundle.sh)" >&2
    exit 2
  fi
  train_inputs=""
fi

echo "== configure ($build)"
# The preset names the GPU architecture (TORCH_CUDA_ARCH_LIST, 9.0 unless the
# environment says otherwise), which skips TorchConfig's GPU probe.
cmake --preset gpu -B "$build" -DCADCLIP_PYTHON="$python" -DCADCLIP_BUILD_BENCH=OFF \
  -DCADCLIP_NCCL=ON "${prefix_args[@]}"
echo "== build"
cmake --build "$build" --target model_gpu_test train_nccl_gpu_test cadclip -j"$(nproc)"

echo "== GPU tests"
log=$build/gpu_checks_ctest.log
set +e
ctest --test-dir "$build" -L gpu --output-on-failure -V >"$log" 2>&1
set -e
cat "$log"
total=$(sed -nE 's/.*tests failed out of ([0-9]+).*/\1/p' "$log" | tail -1)
failed=$(sed -nE 's/.* ([0-9]+) tests failed out of.*/\1/p' "$log" | tail -1)
skipped=$(grep -cE 'Test +#[0-9]+: .* Skipped' "$log" || true)
total=${total:-0} failed=${failed:-0}
passed=$((total - failed - skipped))
tests="tests $passed/$total passed"
[ "$skipped" -eq 0 ] || tests+=" ($skipped skipped: nothing checked there)"
nccl="NCCL all-gather: not checked"
if grep -qE 'NcclGpu\.OneProcessGathersReducesAndBroadcastsOnCuda .*Passed' "$log"; then
  nccl="NCCL all-gather: equal (world size 1, $gpus GPU(s) present)"
elif grep -qE 'NcclGpu\.OneProcessGathersReducesAndBroadcastsOnCuda .*(Failed|\*\*\*)' "$log"; then
  nccl="NCCL all-gather: FAILED"
fi

speed="bf16 training, batch 256: not run"
if [ -n "$train_inputs" ] && [ "$gpus" -ge 1 ]; then
  echo "== bf16 training, batch 256 ($steps steps)"
  text=$build/gpu_checks_text
  run=$build/gpu_checks_run
  rm -rf "$text" "$run"
  "$python" - "$train_inputs/text" "$text" <<'EOF'
# The MiniLM folder with random weights of the real names, dtypes and shapes.
import json, shutil, struct, sys
import torch
source, target = sys.argv[1:]
shutil.copytree(source, target)
shapes = json.load(open(f"{target}/weights.json"))
generator = torch.Generator().manual_seed(0)
header, blobs, offset = {}, [], 0
for name, entry in sorted(shapes.items()):
    shape = entry["shape"]
    if entry["dtype"] == "I64":  # position_ids
        tensor = torch.arange(shape[-1], dtype=torch.int64).expand(shape).contiguous()
    elif name.endswith("LayerNorm.weight"):
        tensor = torch.ones(shape)
    else:
        tensor = torch.randn(shape, generator=generator) * 0.02
    blob = tensor.numpy().tobytes()
    header[name] = {"dtype": entry["dtype"], "shape": shape, "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
encoded = json.dumps(header).encode()
encoded += b" " * (-len(encoded) % 8)
with open(f"{target}/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(encoded)) + encoded)
    for blob in blobs:
        f.write(blob)
EOF
  set +e
  "$build/apps/cadclip" train --data "$train_inputs/prepared" --out "$run" --text-model "$text" \
    --device cuda --precision bf16 --batch-size 256 --epochs "$steps" --validation-split "" \
    --threads "$(nproc)"
  train_rc=$?
  set -e
  if [ "$train_rc" -eq 0 ]; then
    rate=$("$python" - "$run/metrics.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
rates = [r["samples_per_s"] for r in rows if r.get("kind") == "train" and r["step"] > 5]
print(f"{statistics.median(rates):.1f} samples/s (median of {len(rates)} steps)")
EOF
    ) || rate="FAILED (no step past the fifth in $run/metrics.jsonl)"
    speed="bf16 training, batch 256: $rate"
  else
    speed="bf16 training, batch 256: FAILED (cadclip train exit $train_rc)"
  fi
fi

status=0
{ [ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ] && [ "$total" -gt 0 ]; } || status=1
[[ "$speed" != *FAILED* && "$speed" != *"not run"* ]] || status=1
[[ "$nccl" == *equal* ]] || status=1
echo "gpu_checks: $tests | $speed | $nccl"
exit "$status"
