#!/usr/bin/env bash
# The search benchmark of docs/PERFORMANCE.md (## Search), start to end:
#
#   bench/search/run.sh BUILD WORK REAL_INDEX SYNTH_DIR [NOISE]
#
# BUILD: a build folder with apps/cadclip and bench/search/search_bench
# (release preset); WORK: a scratch folder; REAL_INDEX: `cadclip index` of the
# real parts (e.g. `cadclip index CKPT PREPARED --out REAL_INDEX`); SYNTH_DIR:
# the `cadclip synth` folder those parts came from (its validation and test
# captions are the held-out queries); NOISE: per-dimension noise of the
# perturbed copies (default 0.003, see the section).
set -euo pipefail
build=$1 work=$2 real=$3 synth=$4 noise=${5:-0.003}
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/search/search_bench
mkdir -p "$work"
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M) UTC)"; }

python3 "$here/held_out_queries.py" "$synth:validation,test" --count 1000 --seed 1 \
  --out "$work/queries.txt"
[[ -d $work/flat ]] || OMP_NUM_THREADS=1 "$bench" grow --from "$real" --out "$work/flat" \
  --count 100000 --noise "$noise" --factory Flat --seed 1
[[ -d $work/ivf ]] || OMP_NUM_THREADS=2 "$bench" grow --from "$real" --out "$work/ivf" \
  --count 100000 --noise "$noise" --factory IVF1024,Flat --search-params nprobe=16 --seed 1

load
"$bench" query --index "$work/flat" --approx "$work/ivf" --queries "$work/queries.txt" \
  --threads 1 --sweep "nprobe=4;nprobe=8;nprobe=32"
load
"$bench" encode --index "$work/ivf" --queries "$work/queries.txt" --batches 1,2,4,8 \
  --threads 1 --rounds 20
for index in ivf flat; do
  for connections in 8 16; do
    echo "== $index, $connections connections"
    "$here/wrk_serve.sh" "$build/apps/cadclip" "$work/$index" "$work/queries.txt" 20 \
      "$connections" -- --threads 16
  done
done
load
