#!/usr/bin/env bash
# The text-space comparison of docs/RESULTS.md: the released model's recipe
# (scripts/train_release.sh: synthetic data + real descriptions, fold 0 held
# out) trained once per text space, on the same prepared data, then one table:
# the held-out real fold, held-out synthetic phrasings against seen ones, and
# seconds per step.
#   scripts/text_space_trials.sh [OUT]        (OUT defaults to out/text-space)
#   env: TRIALS ("head locked residual tuned"; tuned = residual with the last
#   TRIAL_TEXT_LAYERS (2) MiniLM layers fine-tuned), TRIAL_EPOCHS (8), and
#   RELEASE_* as in train_release.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/text-space}
trials=${TRIALS:-head locked residual tuned}
mkdir -p "$out"
for trial in $trials; do
  [ -f "$out/$trial/time.txt" ] && continue
  space=$trial layers=0
  if [ "$trial" = tuned ]; then space=residual layers=${TRIAL_TEXT_LAYERS:-2}; fi
  RELEASE_TEXT_SPACE=$space RELEASE_TEXT_LAYERS=$layers RELEASE_EPOCHS=${TRIAL_EPOCHS:-8} \
    RELEASE_EXPORT="" RELEASE_DATA="$out/data" \
    scripts/train_release.sh "$out/$trial" > "$out/$trial.log" 2>&1
done
python3 - "$out" $trials <<'PY'
import json, statistics, sys
out, trials = sys.argv[1], sys.argv[2:]
def level(report, name):
    return next((l for l in report["levels"] if l["level"] == name), None)
def mean_r1(report, names):
    vals = [level(report, n)["text_to_cad"]["r1"] for n in names if level(report, n)]
    return 100 * sum(vals) / len(vals) if vals else float("nan")
seen = ["beginner", "intermediate", "expert"]
held = [n + "_heldout" for n in seen]
print("| text space | real fold 0 R@1 | R@10 | MedR | gallery | programs seen / held-out R@1 "
      "| families seen R@1 | shared parts title / description R@1 | s per step |")
print("|---|---|---|---|---|---|---|---|---|")
for t in trials:
    try:
        real = json.load(open(f"{out}/{t}/real_fold0.json"))
        synth = json.load(open(f"{out}/{t}/synth_test.json"))
        shared = json.load(open(f"{out}/{t}/real-check/run-best.json"))
    except FileNotFoundError as e:
        print(f"| {t} | missing: {e.filename} |"); continue
    d = level(real, "description")["text_to_cad"]
    rows = [json.loads(l) for l in open(f"{out}/{t}/run/metrics.jsonl")]
    steps = [64 / r["samples_per_s"] for r in rows if r.get("kind") == "train"]
    p, f = synth["subsets"]["programs"], synth["subsets"]["families"]
    print(f"| {t} | {100*d['r1']:.1f} | {100*d['r10']:.1f} | {d['median_rank']:g} | {real['gallery']} "
          f"| {mean_r1(p, seen):.1f} / {mean_r1(p, held):.1f} | {mean_r1(f, seen):.1f} "
          f"| {100*level(shared, 'title')['text_to_cad']['r1']:.1f} / "
          f"{100*level(shared, 'description')['text_to_cad']['r1']:.1f} "
          f"| {statistics.median(steps):.2f} |")
PY
