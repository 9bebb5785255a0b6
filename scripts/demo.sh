#!/usr/bin/env bash
# The demo: on the built-in synthetic data, the real pipeline end to end:
#   synth (parametric families as STEP and sketch-and-extrude programs as
#   DeepCAD JSON, half and half) -> prepare -> train (pretrained MiniLM text
#   tower, default B-Rep encoder) -> eval on the test split, on its program and
#   family parts apart, with the oracles -> an index of the test parts,
#   searched with three example queries.
# `make demo` runs setup and the build first. Sizes can be changed:
#   CADCLIP_DEMO_PARTS (4000), CADCLIP_DEMO_PROGRAM_SHARE (0.5),
#   CADCLIP_DEMO_PROGRAM_TEST_SHARE (0.5: a held-out program gallery of about
#   1,000 parts), CADCLIP_DEMO_MINUTES (12: the whole demo's time budget; the
#   epochs are chosen from the step time measured in a short first run and
#   printed), CADCLIP_DEMO_EPOCHS (set: that many epochs, no measuring; the
#   figures are deterministic for a given epoch count), CADCLIP_DEMO_DIR (out/demo),
#   CADCLIP_DEMO_TEXT_LR (0 = the text tower frozen and its features cached; else fine-tuned),
#   CADCLIP_DEMO_TEXT_LENGTH (128 tokens; expert captions are longer and are cut, and
#   training and eval say how many)
set -euo pipefail
cd "$(dirname "$0")/.."

cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
[ -x "$cadclip" ] || { echo "$0: $cadclip is not built; run 'make demo' (or set CADCLIP_BIN)" >&2; exit 1; }
parts=${CADCLIP_DEMO_PARTS:-4000}
program_share=${CADCLIP_DEMO_PROGRAM_SHARE:-0.5}
program_test_share=${CADCLIP_DEMO_PROGRAM_TEST_SHARE:-0.5}
text_length=${CADCLIP_DEMO_TEXT_LENGTH:-128}
epochs=${CADCLIP_DEMO_EPOCHS:-}
budget_s=$(( ${CADCLIP_DEMO_MINUTES:-12} * 60 ))
text_lr=${CADCLIP_DEMO_TEXT_LR:-0}
dir=${CADCLIP_DEMO_DIR:-out/demo}
threads=$(nproc)

stage() { printf '\n=== %s\n' "$*" >&2; }
seconds() { date +%s; }
start=$(seconds)
rm -rf "$dir"
mkdir -p "$dir"

stage "1/5 synth: $parts parts (programs: $program_share), captions at four levels"
t=$(seconds)
"$cadclip" synth --kind mixed --program-share "$program_share" \
  --program-test-share "$program_test_share" --count "$parts" --seed 1 --out "$dir/synth"
synth_s=$(( $(seconds) - t ))

stage "2/5 prepare: STEP files, DeepCAD JSON (metres) and captions -> shards"
t=$(seconds)
"$cadclip" prepare "$dir/synth/parts" --captions "$dir/synth/captions.jsonl" \
  --splits "$dir/synth/splits.json" --assume-unit m --out "$dir/prepared"
prepare_s=$(( $(seconds) - t ))

if [ "$text_lr" = 0 ]; then tower="frozen, cached"; else tower="fine-tuned at $text_lr"; fi
train_options=(--data "$dir/prepared" --batch-size 64 --text-lr "$text_lr" --lr 1e-3
  --max-text-length "$text_length" --threads "$threads" --seed 1)
if [ "$text_lr" = 0 ]; then train_options+=(--text-cache "$dir/text_cache.safetensors"); fi
t=$(seconds)
if [ -z "$epochs" ]; then
  # The machine decides: a few steps and one validation-sized evaluation,
  # timed, then as many epochs as fit what is left of the budget after
  # training (the stages after it take about a fifth of the training time
  # measured here at the demo's size).
  stage "3/5 train: measuring this machine's step time (6 steps)"
  "$cadclip" train "${train_options[@]}" --epochs 1 --stop-after-steps 6 --out "$dir/probe" \
    2> "$dir/probe.log" || { cat "$dir/probe.log" >&2; exit 1; }
  step_s=$(python3 - "$dir/probe/metrics.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps = [64 / r["samples_per_s"] for r in rows if r.get("kind") == "train"][2:]
print(f"{statistics.median(steps):.3f}")
PY
)
  v=$(seconds)
  "$cadclip" --log-level warn eval "$dir/probe/checkpoints/last.json" --data "$dir/prepared" \
    --split validation --json > /dev/null
  validation_s=$(( $(seconds) - v ))
  steps_per_epoch=$(sed -n 's/.* \([0-9,]*\) training models.*/\1/p' "$dir/probe.log" | tr -d , |
    awk '{print int(($1 + 63) / 64)}')
  left=$(( budget_s - ($(seconds) - start) ))
  epochs=$(python3 -c "
left, step, per, val = $left, $step_s, $steps_per_epoch, $validation_s
epoch = per * step + val
print(max(2, min(40, int(left / 1.2 / epoch))))")
  printf '[demo] step %ss, %s steps an epoch, validation %ss, %ss of %ss left: %s epochs\n' \
    "$step_s" "$steps_per_epoch" "$validation_s" "$left" "$budget_s" "$epochs" >&2
  rm -rf "$dir/probe"
fi
stage "3/5 train: default B-Rep encoder + pretrained all-MiniLM-L6-v2 ($tower) + quantity branch, $epochs epochs"
"$cadclip" train "${train_options[@]}" --epochs "$epochs" --out "$dir/run"
train_s=$(( $(seconds) - t ))

stage "4/5 eval: test split, every caption level; its programs, families and standard parts apart"
t=$(seconds)
# One splits file per kind of part, for `cadclip eval --subset`.
python3 scripts/split_by_kind.py "$dir"
subsets=()
for kind in programs families standard; do  # a kind with no test part has no subset
  if python3 -c "import json, sys; sys.exit(not json.load(open('$dir/splits_$kind.json'))['test'])"; then
    subsets+=(--subset "$kind=$dir/splits_$kind.json")
  fi
done
eval_test() {  # CHECKPOINT NAME
  "$cadclip" eval "$1" --data "$dir/prepared" --split test "${subsets[@]}" \
    --save-embeddings "$dir/test_embeddings_$2.safetensors" --json-out "$dir/metrics_$2.json"
}
eval_test "$dir/run/checkpoints/best.json" trained | tee "$dir/metrics.txt"
cp "$dir/metrics_trained.json" "$dir/metrics.json"
# The released model (models/, trained by scripts/train_release.sh on the
# same synthetic parts' train split and real descriptions) on the same test
# split, for comparison.
released=models/default.json
if [ -f "$released" ]; then
  eval_test "$released" released > "$dir/metrics_released.txt"
  python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
def line(name):
    m = json.load(open(f"{d}/metrics_{name}.json"))
    subsets = m.get("subsets", {})
    out = []
    for kind in ("programs", "families", "standard"):
        if kind not in subsets:
            continue
        levels = subsets[kind].get("levels", [])
        out.append(kind + " " + " / ".join(
            f"{100 * l['text_to_cad']['r1']:.1f}" for l in levels
            if l["level"] in ("abstract", "beginner", "intermediate", "expert")))
    return "; ".join(out)
print("\ntext->CAD R@1 on the test split, abstract / beginner / intermediate / expert:")
print(f"  trained here   {line('trained')}")
print(f"  released model {line('released')}")
PY
fi
eval_s=$(( $(seconds) - t ))
# What the R@1 above is to be read against: the family-only oracle (knows the
# part's family, nothing else) and the facts oracle (reads every fact of the
# caption perfectly); no retriever beats the facts oracle on average.
python3 scripts/facts_oracle.py "$dir/synth" | tee "$dir/oracles.txt"

stage "5/5 index the test parts (thumbnails included) and search them"
t=$(seconds)
mkdir -p "$dir/test_parts"
python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
for i in json.load(open(f"{d}/synth/splits.json"))["test"]:
    for ext in (".step", ".json"):
        if os.path.exists(f"{d}/synth/parts/{i}{ext}"):
            os.symlink(os.path.abspath(f"{d}/synth/parts/{i}{ext}"), f"{d}/test_parts/{i}{ext}")
PY
"$cadclip" index "$dir/run/checkpoints/best.json" "$dir/test_parts" --out "$dir/index" \
  --captions "$dir/synth/captions.jsonl" --assume-unit m
"$cadclip" search "$dir/index" -k 5 \
  "a spur gear with 24 teeth and a 10 mm bore" \
  "a flange with six bolt holes on a bolt circle and a raised hub" \
  "a flat rectangular plate with a grid of holes" \
  "an L-shaped bracket with two holes"
if [ -f "$released" ]; then
  # The same parts under the released model: no training needed to search them.
  "$cadclip" index "$dir/test_parts" --out "$dir/index_released" --no-thumbnails \
    --captions "$dir/synth/captions.jsonl" --assume-unit m
  "$cadclip" search "$dir/index_released" -k 5 "a flange with six bolt holes on a bolt circle"
fi
index_s=$(( $(seconds) - t ))

total=$(( $(seconds) - start ))
printf '\npipeline: synth %ss, prepare %ss, train %ss, eval %ss, index+search %ss; total %ss (%s)\n' \
  "$synth_s" "$prepare_s" "$train_s" "$eval_s" "$index_s" "$total" "$dir"
printf 'metrics: %s/metrics.txt and metrics.json. Search in a browser:\n' "$dir"
printf '  %s serve %s/index    then open http://127.0.0.1:8600/\n' "$cadclip" "$dir"
