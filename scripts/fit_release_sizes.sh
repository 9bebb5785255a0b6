#!/usr/bin/env bash
# Fits the released model's size block (docs/MODEL.md, "The size block";
# models/MODEL_CARD.md): `cadclip fit-sizes` on a model without one, from the
# train splits of the demo's synthetic set, a standard-parts set and the real
# descriptions of ../shared/data/real/cadfusion-val (folds 1-4; fold 0
# validates), the weight chosen on their validation splits; then measures
# and exports it.
#
#   scripts/fit_release_sizes.sh CHECKPOINT [DIR]     (DIR defaults to out/sizes)
#
# CHECKPOINT is the model without a size block (the third run of
# scripts/train_release.sh). Resumable: prepared folders are kept. Settings
# (environment):
#   SIZES_EXPORT (models)   where the model is exported; "" = not exported
#   SIZES_DATA (DIR/data)   the prepared data
#   SIZES_BORE (1)          1: the block's fourth side, the central bore
#                           (`fit-sizes --bore`, released: docs/RESULTS.md,
#                           "The pointer and the bore"); 0: the box alone
set -euo pipefail
cd "$(dirname "$0")/.."
checkpoint=${1:?usage: scripts/fit_release_sizes.sh CHECKPOINT [DIR]}
dir=${2:-out/sizes}
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || cadclip=build/dev/apps/cadclip
[ -x "$cadclip" ] || { echo "$0: build cadclip first (make build, or set CADCLIP_BIN)" >&2; exit 1; }
export_to=${SIZES_EXPORT-models}
data=${SIZES_DATA:-$dir/data}
bore_flag=()
[ "${SIZES_BORE:-1}" = 1 ] && bore_flag=(--bore)
real=../shared/data/real/cadfusion-val
threads=$(nproc)
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$dir" "$data"
stage() { printf '\n=== %s\n' "$*" >&2; }
start=$(date +%s)
if [ ! -f "$data/demo/manifest.json" ]; then
  stage "the demo's synthetic set: 4,000 programs and family parts"
  "$cadclip" synth --kind mixed --program-share 0.5 --program-test-share 0.5 --count 4000 \
    --seed 1 --out "$data/demo-parts"
  "$cadclip" prepare "$data/demo-parts/parts" --captions "$data/demo-parts/captions.jsonl" \
    --splits "$data/demo-parts/splits.json" --assume-unit m --out "$data/demo"
fi
if [ ! -f "$data/std/manifest.json" ]; then
  stage "standard parts: 1,500, held-out table rows in the test split"
  "$cadclip" synth --kind standard --count 1500 --seed 11 --out "$data/std-parts"
  "$cadclip" prepare "$data/std-parts/parts" --captions "$data/std-parts/captions.jsonl" \
    --splits "$data/std-parts/splits.json" --out "$data/std"
fi
if [ ! -f "$data/real/manifest.json" ]; then
  stage "real descriptions: cadfusion-val (DeepCAD JSON in metres)"
  "$cadclip" prepare "$real/json" --captions "$real/captions.jsonl" --splits "$real/splits.json" \
    --assume-unit m --out "$data/real"
fi
stage "fit the size block"
rm -rf "$dir/fit"
"$cadclip" fit-sizes "$checkpoint" --data "$data/demo" --data "$data/std" --data "$data/real" \
  --out "$dir/fit" --threads "$threads" "${bore_flag[@]}"
fitted=$dir/fit/checkpoints/last.json
stage "measure: the real fold, the demo's and the standard set's test splits, the shared parts"
python3 scripts/split_by_kind.py "$dir" "$data/demo-parts"
"$cadclip" eval "$fitted" --data "$data/real" --split validation --json-out "$dir/real_fold0.json" |
  tee "$dir/real_fold0.txt"
"$cadclip" eval "$fitted" --data "$data/demo" --split test \
  --subset "programs=$dir/splits_programs.json" --subset "families=$dir/splits_families.json" \
  --json-out "$dir/demo_test.json" | tee "$dir/demo_test.txt"
"$cadclip" eval "$fitted" --data "$data/std" --split test --json-out "$dir/std_test.json" |
  tee "$dir/std_test.txt"
scripts/real_check.sh "$fitted" "$dir/real-check" | tee "$dir/shared_parts.txt"
printf 'size block %s: %ss\n' "$dir" "$(( $(date +%s) - start ))" | tee "$dir/time.txt"
if [ -n "$export_to" ]; then
  stage "export to $export_to"
  "$cadclip" export "$fitted" --out "$export_to" --name cadclip-minilm
fi
