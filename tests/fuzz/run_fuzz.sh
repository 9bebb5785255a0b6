#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its seed corpus, without
# writing into the corpus (new inputs go to a scratch folder, removed after).
#   run_fuzz.sh BINARY SEEDS SECONDS [libFuzzer options...]
# Exit status: 0 when no input crashed, hung or leaked; libFuzzer's otherwise,
# with the input written beside the build's fuzz binaries (crash-<sha1>).
set -euo pipefail
binary=$1 seeds=$2 seconds=$3
shift 3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/cadclip-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
exec_dir=$(dirname "$binary")
"$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 \
  -artifact_prefix="$exec_dir/$(basename "$binary")-" "$@" "$scratch" "$seeds"
