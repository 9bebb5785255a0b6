#!/usr/bin/env bash
# Are two cadclip builds the same trainer, bit for bit? Six tiny runs with
# each (frozen text tower; the same from its --text-cache file; a momentum
# queue; SigLIP with the tower fine-tuned; stopped after 5 steps and resumed;
# the same uninterrupted), then the sha256 of every run's `last` and `best`
# model and its last loss and validations, side by side. For refactors that
# must not change training: every line must say "same".
#   scripts/train_equivalence.sh OLD_CADCLIP NEW_CADCLIP [WORK=/tmp/cadclip-train-equivalence]
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2") work=${3:-/tmp/cadclip-train-equivalence}
mkdir -p "$work"
if [ ! -f "$work/prepared/manifest.json" ]; then
  "$new" --log-level error synth --count 60 --seed 5 --out "$work/synth"
  "$new" --log-level error prepare "$work/synth/parts" --captions "$work/synth/captions.jsonl" \
    --splits "$work/synth/splits.json" --out "$work/prepared"
fi
common=(--data "$work/prepared" --text-model tests/fixtures/text/bert --brep-width 32 --brep-layers 2
  --brep-heads 2 --brep-ffn 48 --embed-dim 32 --text-head-hidden 32 --quantity-width 16
  --batch-size 8 --epochs 2 --threads 2 --seed 3 --eval-batch-size 16 --max-text-length 64)
runs() {  # BIN OUT
  local bin=$1 out=$2
  rm -rf "$out"
  mkdir -p "$out"
  t() {  # NAME TRAIN-OPTIONS...
    local name=$1
    shift
    if ! OMP_WAIT_POLICY=PASSIVE "$bin" --log-level warn train "${common[@]}" --out "$out/$name" \
      "$@" >>"$out/$name.log" 2>&1; then
      tail -5 "$out/$name.log" >&2
      exit 1
    fi
  }
  t frozen --text-lr 0 --text-cache "$out/cache.safetensors"
  t frozen_from_cache --text-lr 0 --text-cache "$out/cache.safetensors"
  t queue --text-lr 0 --queue 24
  t siglip_tuned --text-lr 1e-4 --loss siglip
  t resumed --text-lr 1e-4 --stop-after-steps 5
  t resumed --text-lr 1e-4 --resume
  t uninterrupted --text-lr 1e-4
}
runs "$old" "$work/old"
runs "$new" "$work/new"
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]

def summary(run):
    ck = os.path.join(run, "checkpoints")
    sums = [json.load(open(os.path.join(ck, f"{n}.json"))).get("model_sha256", "-")
            if os.path.exists(os.path.join(ck, f"{n}.json")) else "-" for n in ("last", "best")]
    records = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    losses = [r["loss"] for r in records if r.get("kind") == "train"]
    validations = [r["text_to_cad_r1"] for r in records if r.get("kind") == "validation"]
    return sums, losses[-1], validations

differ = 0
for name in ("frozen", "frozen_from_cache", "queue", "siglip_tuned", "resumed", "uninterrupted"):
    a, b = summary(f"{work}/old/{name}"), summary(f"{work}/new/{name}")
    same = a == b
    differ += not same
    told = "same" if same else (
        f"DIFFERENT: last loss {a[1]:.6f} -> {b[1]:.6f}, validation R@1 "
        + ", ".join(f"{x:.4f}" for x in a[2]) + " -> " + ", ".join(f"{x:.4f}" for x in b[2]))
    print(f"{name:18} last {a[0][0][:16]} best {a[0][1][:16]}  {told}")
resumed, whole = summary(f"{work}/new/resumed"), summary(f"{work}/new/uninterrupted")
print(f"{'resumed = whole':18} {'same' if resumed == whole else 'DIFFERENT'}")
sys.exit(1 if differ or resumed != whole else 0)
PY
