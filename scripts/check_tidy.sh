#!/usr/bin/env bash
# clang-tidy with the checks of .clang-tidy over every translation unit of
# src/, apps/ and python/, in parallel; fails on any finding. Uses the compile
# database of a configured build (default build/dev), without GCC's
# precompiled-header flags, which clang cannot read.
#   scripts/check_tidy.sh [BUILD=build/dev] [FILE.cc ...]   env: JOBS (nproc)
# With files, only those (paths from the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
shift || true
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[ -n "$tidy" ] || { echo "check_tidy: clang-tidy is not installed (apt-get install clang-tidy)" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "check_tidy: $build/compile_commands.json is missing; configure first (make configure)" >&2; exit 1; }
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" "$db/compile_commands.json" "$PWD" >"$db/files" <<'PY'
import json, re, sys
entries, root = json.load(open(sys.argv[1])), sys.argv[3]
for e in entries:
    c = e["command"]
    c = re.sub(r"\s-include\s\S*cmake_pch\S*", "", c)  # GCC's PCH: clang cannot read it
    c = re.sub(r"\s-Winvalid-pch", "", c)
    c = re.sub(r"^\S*ccache\s+", "", c)
    e["command"] = c
json.dump(entries, open(sys.argv[2], "w"))
for e in entries:
    f = e["file"]
    if f.startswith((root + "/src/", root + "/apps/", root + "/python/")) and f.endswith(".cc"):
        print(f)
PY
if [ $# -gt 0 ]; then printf '%s\n' "${@/#/$PWD/}" >"$db/files"; fi
count=$(wc -l <"$db/files")
start=$(date +%s)
status=0
xargs -P "${JOBS:-$(nproc)}" -n 1 "$tidy" -p "$db" --quiet <"$db/files" >"$db/out" 2>&1 || status=1
if [ $status -ne 0 ]; then
  grep -E "error:|warning:" -A3 "$db/out" | grep -v "warnings generated" >&2 || cat "$db/out" >&2
  echo "check_tidy: findings above ($count files, $(($(date +%s) - start)) s)" >&2
  exit 1
fi
echo "check_tidy: $count files clean ($(($(date +%s) - start)) s)"
