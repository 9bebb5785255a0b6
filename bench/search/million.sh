#!/usr/bin/env bash
# A library of a million parts (docs/PERFORMANCE.md, "A million parts"),
# start to end:
#
#   bench/search/million.sh BUILD WORK REAL_INDEX SYNTH_DIR NEW_PARTS [NOISE]
#
# BUILD holds apps/cadclip and bench/search/search_bench (release preset);
# WORK is a scratch folder (a library found there is reused); REAL_INDEX the
# `cadclip index` of real parts; SYNTH_DIR the synth folder its held-out
# captions come from; NEW_PARTS a folder of CAD files that REAL_INDEX does not
# hold, added to the million with `cadclip index --add`; NOISE the copies'
# noise (0.003, as in "Search"). Peak memory is /usr/bin/time's maximum
# resident set of each process; every step runs on one thread.
set -euo pipefail
build=$1 work=$2 real=$3 synth=$4 new_parts=$5 noise=${6:-0.003}
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/search/search_bench
mkdir -p "$work"
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M) UTC)"; }
measured() { /usr/bin/time -f "[time] %e s wall, %M KiB peak resident: $*" "$@"; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

[[ -f $work/queries.txt ]] || python3 "$here/held_out_queries.py" "$synth:validation,test" \
  --count 1000 --seed 1 --out "$work/queries.txt"
load
if [[ ! -d $work/million ]]; then
  measured "$bench" grow --from "$real" --out "$work/million" --count 1000000 --noise "$noise" \
    --factory auto --seed 1
fi
version=$work/million/$(cat "$work/million/CURRENT")
du -sh "$version"
ls -l "$version/vectors.faiss" "$version/catalog.sqlite"

load
measured "$bench" filtered --index "$work/million" --queries "$work/queries.txt" --threads 1
# How far the lists and the reranking reach, on fewer queries.
for params in "nprobe=8,rerank=64" "nprobe=32,rerank=64" "nprobe=16,rerank=0" \
  "nprobe=16,rerank=16"; do
  load
  "$bench" filtered --index "$work/million" --queries "$work/queries.txt" --threads 1 \
    --count 300 --search-params "$params"
done
load
measured "$bench" encode --index "$work/million" --queries "$work/queries.txt" --batches 1 \
  --threads 1 --rounds 300

# A batch of new part files into the million: read, embed, and added to the
# inverted file in place.
model=$(ls -d "$work"/million/models/*/ | head -1)
cp -r "$work/million" "$work/million-added"
load
# Exit status 1 says some files failed (listed in the version's failures.jsonl);
# the rest are in the index.
measured "$build/apps/cadclip" index "$model" "$new_parts" --out "$work/million-added" --add \
  --threads 1 --workers 1 || [[ $? == 1 ]]
load
measured "$bench" filtered --index "$work/million-added" --queries "$work/queries.txt" \
  --threads 1 --count 300
load
