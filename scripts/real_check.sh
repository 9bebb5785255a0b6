#!/usr/bin/env bash
# The small real check: a trained checkpoint ranks the 31 real CAD files of
# ../shared/data/cad by the captions a person wrote for them
# (../shared/data/captions/shared-cad.jsonl, levels `title` and `description`;
# never trained on). Chance R@1 is 1/31 = 3.2%.
#
#   scripts/real_check.sh CHECKPOINT [OUT]       (OUT defaults to out/real-check)
#
# The corpus is prepared once into OUT/prepared and reused; the metrics table
# goes to stdout and OUT/<checkpoint name>.json.
set -euo pipefail
cd "$(dirname "$0")/.."

checkpoint=${1:?usage: scripts/real_check.sh CHECKPOINT [OUT]}
out=${2:-out/real-check}
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || cadclip=build/dev/apps/cadclip
shared=../shared/data
[ -d "$shared/cad" ] || { echo "real_check: $shared/cad is missing (the shared data beside the checkout)" >&2; exit 1; }

if [ ! -f "$out/prepared/manifest.json" ]; then
  "$cadclip" prepare "$shared/cad" --captions "$shared/captions/shared-cad.jsonl" \
    --splits "$shared/captions/shared-cad.splits.json" --out "$out/prepared" >&2
fi
name=$(basename "$(dirname "$(dirname "$checkpoint")")")-$(basename "$checkpoint" .json)
"$cadclip" eval "$checkpoint" --data "$out/prepared" --split test --levels title,description
"$cadclip" --log-level warn eval "$checkpoint" --data "$out/prepared" --split test \
  --levels title,description --json > "$out/$name.json"
