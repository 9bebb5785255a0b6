#!/usr/bin/env bash
# Two builds side by side on one index: `search_bench filtered` (300 queries)
# alternating A, B, A, B, then `search_bench facts` (1,000 queries) for each,
# every run on one thread, with the load average before it. For a change to
# the search: A a build of the commit before it, B one of the change
# (docs/PERFORMANCE.md, "A million parts").
#
#   bench/search/two_builds.sh BUILD_A BUILD_B INDEX QUERIES
set -euo pipefail
a=$1 b=$2 index=$3 queries=$4
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
load() { cut -d' ' -f1-3 /proc/loadavg; }
for build in "$a" "$b" "$a" "$b"; do
  echo "== $build: search_bench filtered; load average $(load)"
  "$build/bench/search/search_bench" filtered --index "$index" --queries "$queries" \
    --threads 1 --count 300 | tail -n +2
done
for build in "$a" "$b"; do
  echo "== $build: search_bench facts; load average $(load)"
  "$build/bench/search/search_bench" facts --index "$index" --queries "$queries" \
    --threads 1 --count 1000 | tail -n +2
done
