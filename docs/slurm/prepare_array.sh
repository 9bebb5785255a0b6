#!/bin/bash
# cadclip prepare as a SLURM job array: each task prepares the inputs whose id
# hashes to its part (cad::shard_of) into its own folder. Submit with
#   sbatch --array=0-63 docs/slurm/prepare_array.sh /data/abc/step /scratch/abc-prepared
# (any MIN-MAX range works: the part is SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN,
# the part count SLURM_ARRAY_TASK_COUNT). A task that is preempted or times
# out resumes where it stopped when resubmitted (sbatch --array=17 ...): its
# folder's journal keeps every finished file. See docs/CLUSTER.md.
#SBATCH --job-name=cadclip-prepare
#SBATCH --cpus-per-task=32
#SBATCH --mem=64G
#SBATCH --time=04:00:00
#SBATCH --output=logs/prepare-%A_%a.out
set -euo pipefail
inputs=${1:?inputs folder}
out=${2:?output root}
captions=${CAPTIONS:-}  # optional caption file (Text2CAD CSV, JSONL, CSV)

part=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
args=("$inputs" --out "$out/part-$(printf %05d "$part")" --workers "$SLURM_CPUS_PER_TASK")
[ -n "$captions" ] && args+=(--captions "$captions")
# --shard-index and --num-shards come from SLURM_ARRAY_TASK_ID/_MIN/_COUNT.
# Exit status 1 means some inputs failed (listed in failures.jsonl): not an error here.
cadclip prepare "${args[@]}" || [ $? -eq 1 ]
