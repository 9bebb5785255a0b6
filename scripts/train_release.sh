#!/usr/bin/env bash
# Trains the released model (models/, docs/MODEL_CARD.md): the demo's
# synthetic data (programs, families) and the real human descriptions of
# ../shared/data/real/cadfusion-val (folds 1-4 train, fold 0 validates and
# picks the checkpoint), then measures it and exports it.
#
#   scripts/train_release.sh [DIR]          (DIR defaults to out/release)
#
# The released model is three runs of it: the defaults from scratch, a run
# with RELEASE_STANDARD_SHARE=0.3 that starts from the first's model, and
# one on the second's data that starts from its model and tunes MiniLM's
# last two layers (models/MODEL_CARD.md, "Training", has the commands).
#
# Resumable: each stage keeps what it finished (prepared folders, the text
# cache, checkpoints: training continues with --resume); run it again after an
# interruption. Settings (environment):
#   RELEASE_TEXT_SPACE (residual)  head | locked | residual (docs/RESULTS.md)
#   RELEASE_TEXT_LAYERS (0)        > 0: also fine-tune the last N MiniLM layers
#   RELEASE_TEXT_LR (3e-5)         their learning rate (with RELEASE_TEXT_LAYERS)
#   RELEASE_EPOCHS (18)            passes over an epoch's draws
#   RELEASE_REAL_SHARE (0.4)       share of each epoch drawn from the real descriptions
#   RELEASE_STANDARD_SHARE (0.1)   share of the synthetic parts that are standard parts
#   RELEASE_INIT ("")              a checkpoint to start from (cadclip train --init); "" = from scratch
#   RELEASE_LR (1e-3)              the peak learning rate
#   RELEASE_SEED (1)               the seed of shuffling, caption choice and a fresh model
#   RELEASE_EXPORT (models)        where the model is exported; "" = not exported
#   RELEASE_DATA (DIR/data)        the prepared data, shared by runs of other settings
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-out/release}
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || cadclip=build/dev/apps/cadclip
[ -x "$cadclip" ] || { echo "$0: build cadclip first (make build, or set CADCLIP_BIN)" >&2; exit 1; }
space=${RELEASE_TEXT_SPACE:-residual}
layers=${RELEASE_TEXT_LAYERS:-0}
text_lr=${RELEASE_TEXT_LR:-3e-5}
epochs=${RELEASE_EPOCHS:-18}
real_share=${RELEASE_REAL_SHARE:-0.4}
standard_share=${RELEASE_STANDARD_SHARE:-0.1}
init=${RELEASE_INIT:-}
lr=${RELEASE_LR:-1e-3}
seed=${RELEASE_SEED:-1}
export_to=${RELEASE_EXPORT-models}
data=${RELEASE_DATA:-$dir/data}
real=../shared/data/real/cadfusion-val
threads=$(nproc)
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$dir" "$data"
stage() { printf '\n=== %s\n' "$*" >&2; }
start=$(date +%s)

# The demo's synthetic data, seed for seed, so that the demo's test split is
# held out of the released model's training too.
if [ ! -f "$data/synth/manifest.json" ]; then
  stage "synthetic data: the demo's 4,000 parts, $standard_share of them standard parts"
  "$cadclip" synth --kind mixed --program-share 0.5 --program-test-share 0.5 --count 4000 \
    --standard-share "$standard_share" --seed 1 --out "$data/synth-parts"
  "$cadclip" prepare "$data/synth-parts/parts" --captions "$data/synth-parts/captions.jsonl" \
    --splits "$data/synth-parts/splits.json" --assume-unit m --out "$data/synth"
fi
if [ ! -f "$data/real/manifest.json" ]; then
  stage "real descriptions: cadfusion-val (DeepCAD JSON in metres)"
  "$cadclip" prepare "$real/json" --captions "$real/captions.jsonl" --splits "$real/splits.json" \
    --assume-unit m --out "$data/real"
fi

text_options=(--text-lr 0 --text-cache "$data/text_cache.safetensors")
if [ "$layers" -gt 0 ]; then text_options=(--text-lr "$text_lr" --text-train-layers "$layers"); fi
embed_dim=256
if [ "$space" != head ]; then embed_dim=384; fi
init_options=()
if [ -n "$init" ]; then init_options=(--init "$init"); fi
stage "train: text space $space, last $layers text layers tuned, $epochs epochs, real share $real_share"
"$cadclip" train --data "$data/synth" --data "$data/real" \
  --share "synth=$(python3 -c "print(1 - $real_share)")" --share "real=$real_share" \
  --select-by real --text-space "$space" --embed-dim "$embed_dim" "${text_options[@]}" \
  "${init_options[@]}" --epochs "$epochs" --batch-size 64 --lr "$lr" --max-text-length 128 \
  --threads "$threads" --seed "$seed" --out "$dir/run" --resume
train_s=$(( $(date +%s) - start ))

stage "measure: the real fold held out of training, the synthetic test split, the shared parts"
best=$dir/run/checkpoints/best.json
python3 scripts/split_by_kind.py "$dir" "$data/synth-parts"
"$cadclip" eval "$best" --data "$data/real" --split validation --json-out "$dir/real_fold0.json" |
  tee "$dir/real_fold0.txt"
"$cadclip" eval "$best" --data "$data/synth" --split test \
  --subset "programs=$dir/splits_programs.json" --subset "families=$dir/splits_families.json" \
  --subset "standard=$dir/splits_standard.json" \
  --json-out "$dir/synth_test.json" | tee "$dir/synth_test.txt"
scripts/real_check.sh "$best" "$dir/real-check" | tee "$dir/shared_parts.txt"
printf 'release run %s: training and data %ss, total %ss\n' "$dir" "$train_s" \
  "$(( $(date +%s) - start ))" | tee "$dir/time.txt"

if [ -n "$export_to" ]; then
  stage "export to $export_to"
  "$cadclip" export "$best" --out "$export_to" --name cadclip-minilm
fi
