#!/bin/bash
# Multi-node training after docs/slurm/prepare_array.sh: one task per node,
# each a torchrun agent that starts one cadclip rank per GPU; the agents meet
# through c10d rendezvous on the first node. Submit with
#   sbatch --nodes=4 docs/slurm/train_multinode.sh /scratch/abc-prepared /scratch/runs/abc
# The run folder must be on a file system every node sees (rank 0 writes the
# checkpoints; every rank reads them on --resume). See docs/CLUSTER.md.
#SBATCH --job-name=cadclip-train
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --time=24:00:00
#SBATCH --output=logs/train-%j.out
set -euo pipefail
prepared=${1:?root of the prepared parts}
run=${2:?run folder}
gpus=${SLURM_GPUS_ON_NODE:-8}

# Every part of the array, found afresh: a dataset file lists them.
ls -d "$prepared"/part-* > "$prepared/parts.txt"
# Or once: cadclip merge "$prepared"/part-* --out "$prepared/all" (no shard is copied),
# then --data "$prepared/all".

head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# Requeued after a node failure, the job continues from checkpoints/last.json.
resume=()
[ -f "$run/checkpoints/last.json" ] && resume=(--resume)

# torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
# MASTER_ADDR, MASTER_PORT and TORCHELASTIC_USE_AGENT_STORE for each worker.
srun torchrun --nnodes "$SLURM_NNODES" --nproc-per-node "$gpus" \
  --rdzv-backend c10d --rdzv-endpoint "$head:29500" --rdzv-id "$SLURM_JOB_ID" \
  --no-python \
  cadclip train --data "$prepared/parts.txt" --out "$run" --backend nccl \
    --batch-size 256 --precision bf16 --epochs 20 --checkpoint-every 500 \
    --loader-threads 2 --dist-timeout 600 "${resume[@]}"

# Without torchrun, one task per GPU works too (cadclip reads SLURM_PROCID,
# SLURM_NTASKS, SLURM_LOCALID and the first host of SLURM_JOB_NODELIST):
#   #SBATCH --ntasks-per-node=8
#   MASTER_PORT=29500 srun cadclip train --data "$prepared/parts.txt" --out "$run" --backend nccl ...
