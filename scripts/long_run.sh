#!/usr/bin/env bash
# The long run of docs/RESULTS.md: a mixed synthetic set (sketch-and-extrude
# programs and parametric families) with a held-out program gallery of more
# than 5,000 parts, trained for about an hour and evaluated on the whole test
# split, on its programs and on its families. Resumable: run it again after an
# interruption and it continues where it stopped (stages whose outputs exist
# are skipped; training resumes from `last`).
#   scripts/long_run.sh [DIR=out/long]   env: CADCLIP_BIN, LONG_PARTS (24000),
#   LONG_PROGRAM_SHARE (0.625), LONG_PROGRAM_TEST_SHARE (0.34), LONG_EPOCHS (12),
#   LONG_THREADS (nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || { echo "$0: $cadclip is not built; run 'make demo' (or set CADCLIP_BIN)" >&2; exit 1; }
dir=${1:-out/long}
parts=${LONG_PARTS:-24000}
program_share=${LONG_PROGRAM_SHARE:-0.625}
program_test_share=${LONG_PROGRAM_TEST_SHARE:-0.34}
epochs=${LONG_EPOCHS:-12}
threads=${LONG_THREADS:-$(nproc)}
mkdir -p "$dir"

# 24,000 parts: 15,000 programs, a third of them (5,100) in the test split;
# 9,000 family parts, a tenth in test.
if [ ! -f "$dir/synth/manifest.json" ]; then
  "$cadclip" synth --kind mixed --program-share "$program_share" \
    --program-test-share "$program_test_share" --count "$parts" --seed 7 --out "$dir/synth"
fi
"$cadclip" synth --stats "$dir/synth" | tee "$dir/synth_stats.txt"
python3 scripts/facts_oracle.py "$dir/synth" | tee "$dir/oracles.txt"
if [ ! -f "$dir/prepared/manifest.json" ]; then
  "$cadclip" prepare "$dir/synth/parts" --captions "$dir/synth/captions.jsonl" \
    --splits "$dir/synth/splits.json" --assume-unit m --out "$dir/prepared"
fi
resume=()
[ -f "$dir/run/checkpoints/last.json" ] && resume=(--resume)
"$cadclip" train --data "$dir/prepared" --out "$dir/run" --epochs "$epochs" --batch-size 64 \
  --text-lr 0 --lr 1e-3 --max-text-length 128 --threads "$threads" \
  --seed 1 --checkpoint-every 50 --text-cache "$dir/text_cache.safetensors" "${resume[@]}"

# One splits file per kind of part, for `cadclip eval --subset`.
python3 scripts/split_by_kind.py "$dir"
"$cadclip" eval "$dir/run/checkpoints/best.json" --data "$dir/prepared" --split test \
  --subset "programs=$dir/splits_programs.json" --subset "families=$dir/splits_families.json" \
  --save-embeddings "$dir/test_embeddings.safetensors" --json-out "$dir/metrics.json" |
  tee "$dir/metrics.txt"
scripts/real_check.sh "$dir/run/checkpoints/best.json" "$dir/real-check" | tee "$dir/real_check.txt"
