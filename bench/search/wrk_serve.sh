#!/usr/bin/env bash
# Server throughput: starts `cadclip serve INDEX` on a free port, loads it with
# wrk pinned to one core (taskset), prints wrk's figures and the load average
# before and after, and stops the server.
#
#   bench/search/wrk_serve.sh CADCLIP INDEX QUERIES [SECONDS] [CONNECTIONS] [-- serve options]
#
# e.g. bench/search/wrk_serve.sh build/index-release/apps/cadclip /tmp/big-ivf queries.txt \
#        20 8 -- --encoders 2 --max-batch 16
# WRK_FILTER='bucket<50' makes every query carry that filter.
set -euo pipefail
cadclip=$1 index=$2 queries=$3
seconds=${4:-20} connections=${5:-8}
shift $(($# < 5 ? $# : 5))
[[ ${1:-} == -- ]] && shift
here=$(cd "$(dirname "$0")" && pwd)
wrk_core=${WRK_CORE:-1}

log=$(mktemp)
"$cadclip" serve "$index" --port 0 "$@" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$log"' EXIT
# A million-part index takes a minute or more to open.
for _ in $(seq 3000); do
  grep -q '^serving' "$log" && break
  kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
url=$(grep -o 'http://[0-9.]*:[0-9]*' "$log" | head -1)
echo "server: $cadclip serve $index $* -> $url"
# Warm-up: the first queries load lazy parts of LibTorch and fault in the index.
taskset -c "$wrk_core" wrk -t1 -c2 -d3s -s "$here/wrk_queries.lua" "$url" -- "$queries" \
  "${WRK_FILTER:-}" >/dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c "$wrk_core" wrk -t1 -c"$connections" -d"${seconds}s" --latency --timeout 10s \
  -s "$here/wrk_queries.lua" "$url" -- "$queries" "${WRK_FILTER:-}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
