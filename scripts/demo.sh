#!/usr/bin/env bash
# The demo: on the built-in synthetic data, the real pipeline end to end:
#   synth -> prepare -> train (pretrained MiniLM text tower, default B-Rep
#   encoder) -> eval on the test split -> the metrics table.
# `make demo` runs setup and the build first. Sizes can be changed:
#   CADCLIP_DEMO_PARTS (2000), CADCLIP_DEMO_EPOCHS (see below), CADCLIP_DEMO_DIR (out/demo)
set -euo pipefail
cd "$(dirname "$0")/.."

cadclip=${CADCLIP_BIN:-build/dev/apps/cadclip}
parts=${CADCLIP_DEMO_PARTS:-2000}
epochs=${CADCLIP_DEMO_EPOCHS:-12}
dir=${CADCLIP_DEMO_DIR:-out/demo}
threads=$(nproc)

stage() { printf '\n=== %s\n' "$*" >&2; }
seconds() { date +%s; }
start=$(seconds)
rm -rf "$dir"
mkdir -p "$dir"

stage "1/4 synth: $parts parametric parts with captions at four levels"
t=$(seconds)
"$cadclip" synth --count "$parts" --seed 1 --out "$dir/synth"
synth_s=$(( $(seconds) - t ))

stage "2/4 prepare: STEP files and captions -> shards"
t=$(seconds)
"$cadclip" prepare "$dir/synth/parts" --captions "$dir/synth/captions.jsonl" \
  --splits "$dir/synth/splits.json" --out "$dir/prepared"
prepare_s=$(( $(seconds) - t ))

stage "3/4 train: default B-Rep encoder + pretrained all-MiniLM-L6-v2 (frozen, cached), $epochs epochs"
t=$(seconds)
"$cadclip" train --data "$dir/prepared" --out "$dir/run" --epochs "$epochs" --batch-size 64 \
  --text-lr 0 --lr 1e-3 --max-text-length 128 --threads "$threads" --seed 1
train_s=$(( $(seconds) - t ))

stage "4/4 eval: test split, every caption level"
t=$(seconds)
"$cadclip" eval "$dir/run/checkpoints/best.json" --data "$dir/prepared" --split test \
  --save-embeddings "$dir/test_embeddings.safetensors" | tee "$dir/metrics.txt"
"$cadclip" eval "$dir/run/checkpoints/best.json" --data "$dir/prepared" --split test --json \
  --log-level warn > "$dir/metrics.json"
eval_s=$(( $(seconds) - t ))

total=$(( $(seconds) - start ))
printf '\npipeline: synth %ss, prepare %ss, train %ss, eval %ss; total %ss (%s)\n' \
  "$synth_s" "$prepare_s" "$train_s" "$eval_s" "$total" "$dir"
