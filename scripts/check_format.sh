#!/usr/bin/env bash
# Fails when a C++ file of the repository (tracked, or new and not ignored, so
# that a file not yet added is checked before its commit) differs from what
# clang-format (.clang-format) would write. Fix with: scripts/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
formatter=$(command -v clang-format-14 || command -v clang-format)
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cc' '*.cpp' '*.hpp' | grep -v '^tests/fixtures/')
if [ "${1:-}" = "--fix" ]; then
  "$formatter" -i "${files[@]}"
  exit 0
fi
if ! "$formatter" --dry-run --Werror "${files[@]}" 2>/tmp/cadclip-format.log; then
  grep -E '^[^ ].*: (warning|error): ' /tmp/cadclip-format.log | cut -d: -f1 | sort -u >&2 || true
  echo "check_format: the files above are not clang-formatted; run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
