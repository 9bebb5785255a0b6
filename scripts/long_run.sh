#!/usr/bin/env bash
# The longer run of docs/RESULTS.md: a synthetic set with a test gallery of
# more than 5,000 parts, trained for about an hour and evaluated. Resumable:
# run it again after an interruption and it continues where it stopped
# (stages whose outputs exist are skipped; training resumes from `last`).
#   scripts/long_run.sh [DIR=out/long]   env: CADCLIP_BIN, LONG_PARTS (12000),
#   LONG_EPOCHS (48), LONG_THREADS (nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || { echo "$0: $cadclip is not built; run 'make demo' (or set CADCLIP_BIN)" >&2; exit 1; }
dir=${1:-out/long}
parts=${LONG_PARTS:-12000}
epochs=${LONG_EPOCHS:-48}
threads=${LONG_THREADS:-$(nproc)}
mkdir -p "$dir"

if [ ! -f "$dir/synth/manifest.json" ]; then
  "$cadclip" synth --count "$parts" --seed 7 --out "$dir/synth"
fi
if [ ! -f "$dir/synth/splits_synth.json" ]; then
  # 50% train, 5% validation, 45% test: the test gallery is what is measured.
  cp "$dir/synth/splits.json" "$dir/synth/splits_synth.json"
  python3 scripts/resplit.py "$dir/synth/splits_synth.json" "$dir/synth/splits.json" 0.50 0.05
fi
"$cadclip" synth --stats "$dir/synth" | tee "$dir/synth_stats.txt"
python3 scripts/facts_oracle.py "$dir/synth" | tee "$dir/oracles.txt"
if [ ! -f "$dir/prepared/manifest.json" ]; then
  "$cadclip" prepare "$dir/synth/parts" --captions "$dir/synth/captions.jsonl" \
    --splits "$dir/synth/splits.json" --out "$dir/prepared"
fi
resume=()
[ -f "$dir/run/checkpoints/last.json" ] && resume=(--resume)
"$cadclip" train --data "$dir/prepared" --out "$dir/run" --epochs "$epochs" --batch-size 64 \
  --text-lr 0 --lr 1e-3 --max-text-length 128 --threads "$threads" \
  --seed 1 --checkpoint-every 50 --text-cache "$dir/text_cache.safetensors" "${resume[@]}"
"$cadclip" eval "$dir/run/checkpoints/best.json" --data "$dir/prepared" --split test \
  --save-embeddings "$dir/test_embeddings.safetensors" | tee "$dir/metrics.txt"
"$cadclip" --log-level warn eval "$dir/run/checkpoints/best.json" --data "$dir/prepared" \
  --split test --json > "$dir/metrics.json"
