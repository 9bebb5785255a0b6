#!/usr/bin/env python3
"""The batch-size experiment of docs/EXPERIMENTS.md, driving the cadclip binary.

Global batch {B, 2B, 4B} x {clean, noisy captions} x seeds on one process, the
same number of samples seen by every run (same epochs); then noisy captions with
the false-negative mask off, one process with the momentum queue, and one
2-process run at B against the 1-process run at 2B. Every model is evaluated
on the clean test split (text->CAD R@1, R@5, MRR, mean over the four caption
levels).

Resumable: a run whose results/<name>.json exists is skipped; a run folder
without results is started again from scratch. Runs are ordered seed-major,
so an interrupted experiment has every configuration at its first seeds.

  python scripts/experiment_batch_size.py                  # data, runs, report
  python scripts/experiment_batch_size.py --report-only    # table + plot from results/
  python scripts/experiment_batch_size.py --list           # the runs and their commands

The plot needs matplotlib (scripts/requirements.txt); the product never uses Python.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cadclip", default=str(ROOT / "build/dev/apps/cadclip"),
                   help="the cadclip binary (copied into WORK/bin so a rebuild cannot change it mid-run)")
    p.add_argument("--work", default=str(ROOT / "build/dist/experiment"),
                   help="data, runs and results go here")
    p.add_argument("--parts", type=int, default=1200, help="synthetic parts (80%% train)")
    p.add_argument("--noise", type=float, default=0.3, help="caption noise of the noisy set")
    p.add_argument("--batch", type=int, default=16, help="B: the smallest global batch")
    p.add_argument("--epochs", type=int, default=8, help="epochs of every run (same samples seen)")
    p.add_argument("--seeds", type=int, default=3, help="seeds per configuration")
    p.add_argument("--queue", type=int, default=256, help="queue rows of the queue runs")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate of the B-Rep tower and heads")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads per process")
    p.add_argument("--list", action="store_true", help="print the runs and their commands, run nothing")
    p.add_argument("--report-only", action="store_true", help="only write the table and the plot")
    p.add_argument("--max-runs", type=int, default=0, help="stop after this many new runs (0 = all)")
    return p.parse_args()


# Small encoders: the experiment is about the loss's negatives, not capacity.
MODEL_FLAGS = ["--brep-width", "64", "--brep-layers", "2", "--brep-heads", "4", "--brep-ffn", "128",
               "--brep-dropout", "0", "--embed-dim", "128", "--text-lr", "0", "--max-text-length", "64"]


def runs(a):
    """Every run: name, caption set, per-process batch, processes, seed, mask, queue.

    Ordered so that an interrupted experiment has the most to show: every
    configuration at the first seed, then the batch grid at the other seeds,
    then the other configurations at the other seeds."""
    b = a.batch
    grid, extra = [], []
    for seed in range(1, a.seeds + 1):
        for captions in ("clean", "noisy"):
            for mult in (1, 2, 4):
                grid.append(dict(name=f"{captions}_b{mult * b}_s{seed}", group=f"{captions} global {mult * b}",
                                 captions=captions, batch=mult * b, nproc=1, seed=seed, mask=True, queue=0))
        # Noisy captions without the false-negative mask, at the largest batch
        # (where a batch holds the most captions that say the same thing).
        extra.append(dict(name=f"noisy_b{4 * b}_nomask_s{seed}", group=f"noisy global {4 * b}, no FN mask",
                          captions="noisy", batch=4 * b, nproc=1, seed=seed, mask=False, queue=0))
        for captions in ("clean", "noisy"):
            extra.append(dict(name=f"{captions}_b{b}_queue{a.queue}_s{seed}",
                              group=f"{captions} global {b} + queue {a.queue}",
                              captions=captions, batch=b, nproc=1, seed=seed, mask=True, queue=a.queue))
        if seed == 1:
            # 2 processes x B = 1 process x 2B: the same global batch and computation.
            extra.append(dict(name=f"clean_b{b}x2proc_s{seed}", group=f"clean 2 processes x {b}",
                              captions="clean", batch=b, nproc=2, seed=seed, mask=True, queue=0))
    first = [r for r in grid + extra if r["seed"] == 1]
    return first + [r for r in grid if r["seed"] > 1] + [r for r in extra if r["seed"] > 1]


def sh(cmd, log, env=None):
    with open(log, "a") as f:
        f.write("$ " + " ".join(map(str, cmd)) + "\n")
        f.flush()
        started = time.time()
        rc = subprocess.call([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT, env=env)
        f.write(f"# exit {rc} after {time.time() - started:.1f} s\n")
    if rc != 0:
        sys.exit(f"failed ({rc}): {' '.join(map(str, cmd))}; see {log}")


def prepare_data(a, work, cadclip):
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    log = work / "data.log"
    for name, noise in (("clean", 0.0), ("noisy", a.noise)):
        synth = data / name
        if not (synth / "manifest.json").exists():
            sh([cadclip, "synth", "--count", a.parts, "--seed", 1, "--noise", noise, "--workers", 1,
                "--out", synth], log)
        prepared = data / f"{name}-prepared"
        if not (prepared / "manifest.json").exists():
            sh([cadclip, "prepare", synth / "parts", "--captions", synth / "captions.jsonl",
                "--splits", synth / "splits.json", "--workers", 1, "--out", prepared], log)
    return data


def train_command(a, cadclip, data, run, out):
    cmd = [cadclip, "train", "--data", data / f"{run['captions']}-prepared", "--out", out,
           "--epochs", a.epochs, "--batch-size", run["batch"], "--lr", a.lr, "--seed", run["seed"],
           "--threads", a.threads, "--validation-split", "", *MODEL_FLAGS,
           # The frozen MiniLM features of a caption set, computed by its first run only.
           "--text-cache", data / f"{run['captions']}-text-features.safetensors"]
    if run["nproc"] > 1:
        cmd += ["--nproc", run["nproc"]]
    if not run["mask"]:
        cmd.append("--no-false-negative-mask")
    if run["queue"]:
        cmd += ["--queue", run["queue"]]
    return cmd


def eval_command(a, cadclip, data, out):
    # Every model is measured on the clean captions of the test split (the
    # same parts in both sets): noise is a property of the training data.
    return [cadclip, "eval", out, "--data", data / "clean-prepared", "--split", "test", "--json",
            "--threads", a.threads]


def do_run(a, cadclip, data, work, run):
    results = work / "results"
    results.mkdir(exist_ok=True)
    result_file = results / f"{run['name']}.json"
    if result_file.exists():
        return False
    out = work / "runs" / run["name"]
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = work / "logs" / f"{run['name']}.log"
    log.parent.mkdir(exist_ok=True)
    log.unlink(missing_ok=True)
    train = train_command(a, cadclip, data, run, out)
    started = time.time()
    sh(train, log)
    train_s = time.time() - started
    evaluation = eval_command(a, cadclip, data, out)
    report = subprocess.run([str(c) for c in evaluation], capture_output=True, text=True)
    if report.returncode != 0:
        sys.exit(f"eval failed: {report.stderr}")
    j = json.loads(report.stdout)
    levels = j["levels"]
    mean = lambda key: statistics.fmean(level["text_to_cad"][key] for level in levels)
    losses = [json.loads(line) for line in open(out / "metrics.jsonl")]
    train_lines = [r for r in losses if r.get("kind") == "train"]
    record = dict(run, train_seconds=round(train_s, 1), r1=mean("r1"), r5=mean("r5"), mrr=mean("mrr"),
                  per_level={level["level"]: level["text_to_cad"] for level in levels},
                  gallery=j["gallery"], steps=len(train_lines),
                  last_loss=train_lines[-1]["loss"] if train_lines else None,
                  masked_pairs_per_step=statistics.fmean(r.get("masked_pairs", 0) for r in train_lines),
                  masked_queue_pairs_per_step=statistics.fmean(r.get("masked_queue_pairs", 0)
                                                               for r in train_lines),
                  train_command=" ".join(map(str, train)), eval_command=" ".join(map(str, evaluation)))
    tmp = result_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.rename(result_file)
    shutil.rmtree(out / "checkpoints", ignore_errors=True)  # the metrics are what is kept
    print(f"{run['name']}: R@1 {100 * record['r1']:.1f}%  R@5 {100 * record['r5']:.1f}%  "
          f"MRR {record['mrr']:.3f}  ({train_s:.0f} s train)", flush=True)
    return True


def report(a, work):
    results = [json.loads(p.read_text()) for p in sorted((work / "results").glob("*.json"))]
    if not results:
        print("no results yet")
        return
    groups = {}
    for r in results:
        groups.setdefault(r["group"], []).append(r)
    def ms(values, scale=100, digits=1):
        if len(values) == 1:
            return f"{scale * values[0]:.{digits}f}"
        return f"{scale * statistics.fmean(values):.{digits}f} ± {scale * statistics.stdev(values):.{digits}f}"
    order = [run["group"] for run in runs(a)]
    lines = ["| configuration | seeds | text→CAD R@1 (%) | R@5 (%) | MRR | steps | masked pairs/step | train s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for group in sorted(groups, key=order.index):
        rs = groups[group]
        lines.append(f"| {group} | {len(rs)} | {ms([r['r1'] for r in rs])} | {ms([r['r5'] for r in rs])} | "
                     f"{ms([r['mrr'] for r in rs], 1, 3)} | {rs[0]['steps']} | "
                     f"{statistics.fmean(r['masked_pairs_per_step'] for r in rs):.2f} | "
                     f"{statistics.fmean(r['train_seconds'] for r in rs):.0f} |")
    levels = ("abstract", "beginner", "intermediate", "expert")
    lines += ["", "text→CAD R@1 (%) per caption level, mean ± sd over seeds:", "",
              "| configuration | " + " | ".join(levels) + " |", "|---|" + "---:|" * len(levels)]
    for group in sorted(groups, key=order.index):
        rs = groups[group]
        lines.append(f"| {group} | " + " | ".join(ms([r["per_level"][level]["r1"] for r in rs])
                                                     for level in levels) + " |")
    pair = [r for r in results if r["nproc"] == 2]
    if pair:
        p = pair[0]
        twin = work / "results" / f"clean_b{2 * a.batch}_s{p['seed']}.json"
        if twin.exists():
            t = json.loads(twin.read_text())
            lines += ["", f"2 processes x {a.batch} vs 1 process x {2 * a.batch} (seed {p['seed']}): "
                      f"R@1 {100 * p['r1']:.2f}% vs {100 * t['r1']:.2f}%, R@5 {100 * p['r5']:.2f}% vs "
                      f"{100 * t['r5']:.2f}%, MRR {p['mrr']:.4f} vs {t['mrr']:.4f}, last loss "
                      f"{p['last_loss']:.6f} vs {t['last_loss']:.6f}"]
    table = "\n".join(lines) + "\n"
    (work / "summary.md").write_text(table)
    print(table)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing: pip install -r scripts/requirements.txt for the plot")
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, metric, label in ((axes[0], "r1", "text→CAD R@1 (%)"), (axes[1], "mrr", "MRR (×100)")):
        for captions, colour in (("clean", "tab:blue"), ("noisy", "tab:red")):
            xs, ys, es = [], [], []
            for mult in (1, 2, 4):
                rs = groups.get(f"{captions} global {mult * a.batch}", [])
                if not rs:
                    continue
                values = [100 * r[metric] for r in rs]
                xs.append(mult * a.batch)
                ys.append(statistics.fmean(values))
                es.append(statistics.stdev(values) if len(values) > 1 else 0)
            if xs:
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=4, color=colour, label=f"{captions} captions")
            for suffix, marker in ((f", no FN mask", "x"), (f" + queue {a.queue}", "s")):
                for mult in (1, 4):
                    rs = groups.get(f"{captions} global {mult * a.batch}{suffix}", [])
                    if rs:
                        values = [100 * r[metric] for r in rs]
                        ax.errorbar([mult * a.batch * (1.06 if marker == "s" else 0.94)], [statistics.fmean(values)],
                                    yerr=[statistics.stdev(values) if len(values) > 1 else 0], marker=marker,
                                    linestyle="none", capsize=4, color=colour,
                                    label=f"{captions}{suffix}")
        for r in results:
            if r["nproc"] == 2:
                ax.plot([2 * a.batch * 1.04], [100 * r[metric]], marker="*", markersize=12, color="black",
                        linestyle="none", label=f"clean, 2 processes × {a.batch}")
        ax.set_xscale("log", base=2)
        ax.set_xticks([a.batch, 2 * a.batch, 4 * a.batch])
        ax.set_xticklabels([str(a.batch), str(2 * a.batch), str(4 * a.batch)])
        ax.set_xlabel("global batch (same samples seen)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{a.parts} synthetic parts, {a.epochs} epochs, test split (clean captions), mean ± sd over seeds")
    fig.tight_layout()
    fig.savefig(work / "batch_size.png", dpi=110)
    print(f"plot: {work / 'batch_size.png'}")


def main():
    a = parse_args()
    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if a.report_only:
        report(a, work)
        return
    # A private copy of the binary: a rebuild during the hour of runs must not change it.
    # Copied once; delete WORK/bin to take a new build (and WORK/results to redo the runs).
    cadclip = work / "bin" / "cadclip"
    if not cadclip.exists():
        cadclip.parent.mkdir(exist_ok=True)
        shutil.copy2(a.cadclip, cadclip)
    data = work / "data"
    if a.list:
        for run in runs(a):
            print(run["name"], ":", " ".join(map(str, train_command(a, cadclip, data, run, work / "runs" / run["name"]))))
        return
    (work / "experiment.json").write_text(json.dumps(vars(a), indent=1) + "\n")
    data = prepare_data(a, work, cadclip)
    started, done = time.time(), 0
    for run in runs(a):
        if do_run(a, cadclip, data, work, run):
            done += 1
            report(a, work)
            if a.max_runs and done >= a.max_runs:
                break
    print(f"{done} runs in {time.time() - started:.0f} s")
    report(a, work)


if __name__ == "__main__":
    main()
