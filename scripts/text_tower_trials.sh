#!/usr/bin/env bash
# The text-tower trials of docs/archive/2026-12-01-text-tower-trials.md: on
# the demo's prepared set, the same model trained four ways for the same
# number of epochs -- text tower frozen (features cached) or fine-tuned,
# captions cut at 128 or 512 tokens -- then compared by the validation after
# the last epoch (the split's programs and families together; the trainer
# writes it to metrics.jsonl). Expert captions are long (median about 490
# tokens), so 128 tokens cuts most of them.
#   scripts/text_tower_trials.sh DEMO_DIR [OUT]   (DEMO_DIR: a finished demo, e.g. out/demo)
#   env: CADCLIP_BIN, TRIAL_EPOCHS (2), TRIAL_THREADS (nproc), TRIAL_TEXT_LR (2e-5),
#   TRIALS ("frozen-128 frozen-512 tuned-128 tuned-512")
set -euo pipefail
cd "$(dirname "$0")/.."
demo=${1:?usage: scripts/text_tower_trials.sh DEMO_DIR [OUT]}
out=${2:-$demo/trials}
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
epochs=${TRIAL_EPOCHS:-2}
threads=${TRIAL_THREADS:-$(nproc)}
text_lr=${TRIAL_TEXT_LR:-2e-5}
trials=${TRIALS:-frozen-128 frozen-512 tuned-128 tuned-512}
for f in prepared/manifest.json; do
  [ -e "$demo/$f" ] || { echo "$0: $demo/$f is missing; run scripts/demo.sh first" >&2; exit 1; }
done
mkdir -p "$out"

for trial in $trials; do
  mode=${trial%-*}
  length=${trial#*-}
  run="$out/$trial"
  if [ ! -f "$run/done" ]; then
    rm -rf "$run"
    if [ "$mode" = frozen ]; then lr=0; else lr=$text_lr; fi
    start=$(date +%s)
    "$cadclip" train --data "$demo/prepared" --out "$run" --epochs "$epochs" --batch-size 64 \
      --text-lr "$lr" --lr 1e-3 --max-text-length "$length" --threads "$threads" --seed 1 \
      2> "$run.log"
    echo $(( $(date +%s) - start )) > "$run/train_seconds"
    touch "$run/done"
  fi
done

# One table: the last validation of each trial (402 parts of both kinds),
# text->CAD R@1 per level in percent.
python3 - "$out" $trials <<'PY'
import json, sys
out, trials = sys.argv[1], sys.argv[2:]
levels = ["abstract", "beginner", "intermediate", "expert"]
print("| trial | train s | " + " | ".join(levels) + " | mean |")
print("|---" * (3 + len(levels)) + "|")
for t in trials:
    records = [json.loads(line) for line in open(f"{out}/{t}/metrics.jsonl")]
    last = [r for r in records if r.get("kind") == "validation"][-1]
    row = [t, open(f"{out}/{t}/train_seconds").read().strip()]
    row += [f"{100 * last[f'{l}_text_to_cad_r1']:.1f}" for l in levels]
    row.append(f"{100 * last['text_to_cad_r1']:.1f}")
    print("| " + " | ".join(row) + " |")
PY
