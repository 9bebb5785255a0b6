#!/usr/bin/env bash
# Filtered search and duplicates at 100,000 parts (docs/PERFORMANCE.md,
# "Filtered search" and "Duplicates"), start to end:
#
#   bench/search/filtered.sh BUILD WORK REAL_INDEX SYNTH_DIR [NOISE]
#
# As bench/search/run.sh: BUILD holds apps/cadclip and bench/search/search_bench
# (release preset), WORK is a scratch folder (libraries found there are
# reused), REAL_INDEX the `cadclip index` of real parts, SYNTH_DIR the synth
# folder its held-out captions come from, NOISE the copies' noise (0.003).
set -euo pipefail
build=$1 work=$2 real=$3 synth=$4 noise=${5:-0.003}
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/search/search_bench
mkdir -p "$work"
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M) UTC)"; }

[[ -f $work/queries.txt ]] || python3 "$here/held_out_queries.py" "$synth:validation,test" \
  --count 1000 --seed 1 --out "$work/queries.txt"
[[ -d $work/ivf ]] || OMP_NUM_THREADS=2 "$bench" grow --from "$real" --out "$work/ivf" \
  --count 100000 --noise "$noise" --factory IVF1024,Flat --search-params nprobe=16 --seed 1
[[ -d $work/flat ]] || OMP_NUM_THREADS=1 "$bench" grow --from "$real" --out "$work/flat" \
  --count 100000 --noise "$noise" --factory Flat --seed 1

load
"$bench" filtered --index "$work/ivf" --queries "$work/queries.txt" --threads 1
load
"$bench" filtered --index "$work/flat" --queries "$work/queries.txt" --threads 1 --count 300
load
"$bench" duplicates --index "$work/ivf" --threads 1
load
for filter in "" "bucket<500" "bucket<50" "bucket<5"; do
  echo "== ivf, 16 connections, filter '${filter}'"
  WRK_FILTER=$filter "$here/wrk_serve.sh" "$build/apps/cadclip" "$work/ivf" "$work/queries.txt" \
    20 16 -- --threads 16
done
load
