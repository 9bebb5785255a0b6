#!/usr/bin/env python3
"""Training-step benchmark: cadclip's real training step against the same model
written in PyTorch-Python, same batch, same weights, same threads, same run.

The model: the default B-Rep encoder and the pretrained all-MiniLM-L6-v2 text
tower, fine-tuned (not frozen); linear heads to 256, L2 normalisation,
learnable temperature; symmetric InfoNCE with false negatives masked; loss
read back (`.item()`), backward, non-finite check of the gradients, gradient
clipping at 1, AdamW (cadclip's four parameter groups and defaults); batch 64,
fp32, CPU, deterministic algorithms (the trainer's default).

cadclip runs in bench/train/train_step_bench (release build), driven through a
pipe; it calls the trainer's functions (see its header). Python: the B-Rep
encoder of tests/model/brep_encoder_reference.py plus transformers' BertModel
(mean pooling) and the same heads, loss and optimizer, loading the weights
cadclip dumps. Before anything is timed, both towers' embeddings and the loss
must agree within 1e-5 on the same batch (eval mode, no dropout), or the
script stops. The batch is the first 64 training parts of a prepared folder
(`cadclip synth --count 200` + `cadclip prepare`, made here when --data is not
given), one caption each, caption levels in turn.

Cases alternate (cadclip, python with the same size groups, python with one
padded batch, ...), one warm-up round, then --repeats rounds; medians of the
wall time and of the process CPU time per step (the latter says more on a
loaded machine). cadclip runs with the cadclip binary's heap settings
(mallopt), python with glibc's defaults. Then
each side runs --profiles steps under the Kineto profiler (LibTorch's C++ API
on one side, torch.profiler on the other, the same profiler), and the share of
step time outside ATen operators is computed from both Chrome traces by the
same function (outside_aten below), with the time of each phase of the step
("phase:" scopes on both sides). Results: docs/PERFORMANCE.md, "Training step".

    /opt/cadclip/venv/bin/python bench/train/run.py [--build build/trainbench-release]
        [--threads 2] [--repeats 5] [--profiles 2] [--no-padded] [--data PREPARED]
        [--cadclip BIN] [--traces DIR] [--check-only]
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
sys.path.insert(0, os.path.join(ROOT, "tests", "model"))


def outside_aten(trace_path):
    """Share of the "train_step" span (wall time) on its thread that no aten::
    operator covers: the union of the intervals of every aten:: event on the
    step's thread (nested calls counted once), against the span. Returns
    (share outside, span seconds, aten:: events seen on other threads,
    {phase: seconds} from the "phase:" scopes)."""
    with open(trace_path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    step = next(e for e in events if e.get("ph") == "X" and e.get("name") == "train_step")
    begin, end, tid = float(step["ts"]), float(step["ts"]) + float(step["dur"]), step["tid"]
    spans, elsewhere, phases = [], 0, {}
    for e in events:
        name = str(e.get("name", ""))
        if e.get("ph") != "X" or not begin <= float(e["ts"]) <= end:
            continue
        if name.startswith("phase:") and e["tid"] == tid:
            phases[name[len("phase:"):]] = phases.get(name[len("phase:"):], 0) + e["dur"] / 1e6
        if not name.startswith("aten::"):
            continue
        if e["tid"] != tid:
            elsewhere += 1
            continue
        ts = float(e["ts"])
        spans.append((ts, min(end, ts + float(e["dur"]))))
    spans.sort()
    covered, reach = 0.0, begin
    for s, t in spans:
        if t > reach:
            covered += t - max(s, reach)
            reach = t
    return 1 - covered / (end - begin), (end - begin) / 1e6, elsewhere, phases


def make_data(cadclip, folder):
    for args in (["synth", "--count", "200", "--seed", "1", "--out", f"{folder}/synth"],
                 ["prepare", f"{folder}/synth/parts", "--captions",
                  f"{folder}/synth/captions.jsonl", "--splits", f"{folder}/synth/splits.json",
                  "--out", f"{folder}/prepared"]):
        subprocess.run([cadclip, "--log-level", "warn", *args], check=True)
    return f"{folder}/prepared"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/trainbench-release",
                        help="build folder holding bench/train/train_step_bench")
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads, both sides")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds")
    parser.add_argument("--profiles", type=int, default=2, help="profiled steps per side")
    parser.add_argument("--no-padded", action="store_true",
                        help="leave out the python case with one padded batch (saves a third)")
    parser.add_argument("--per-tensor-adamw", action="store_true",
                        help="add a cadclip case stepped by LibTorch's per-tensor AdamW "
                        "instead of the trainer's fused one")
    parser.add_argument("--traces", help="keep the profiler traces in this folder")
    parser.add_argument("--check-only", action="store_true",
                        help="stop after the agreement check, time nothing")
    parser.add_argument("--data", help="prepared folder (default: made here with --cadclip)")
    parser.add_argument("--cadclip", default="build/dev/apps/cadclip",
                        help="cadclip binary that makes the data when --data is not given")
    parser.add_argument("--model", default=os.environ.get(
        "CADCLIP_TEXT_MODEL", "/opt/cadclip/models/all-MiniLM-L6-v2"))
    args = parser.parse_args()
    if args.profiles < 0:
        parser.error(f"--profiles {args.profiles}: give 0 (no profiling) or more steps")
    if args.repeats < 2:
        parser.error(f"--repeats {args.repeats}: at least 2 (the first round is a warm-up)")

    from benchlib import Bench
    load_before = os.getloadavg()
    bench = Bench("training step: B-Rep encoder + MiniLM (fine-tuned), batch 64, fp32, CPU",
                  threads=args.threads)
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f} (1, 5, 15 min)")
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from safetensors import safe_open
    from transformers import BertModel
    from transformers.utils import logging as hf_logging
    import brep_encoder_reference as ref

    hf_logging.set_verbosity_error()  # the pooler weights it leaves out are expected
    hf_logging.disable_progress_bar()
    torch.use_deterministic_algorithms(True)  # as the trainer (--deterministic, the default)
    torch.utils.deterministic.fill_uninitialized_memory = False

    tmp = tempfile.TemporaryDirectory(prefix="trainbench-")
    data = args.data or make_data(args.cadclip, tmp.name)
    exe = os.path.join(args.build, "bench", "train", "train_step_bench")
    proc = subprocess.Popen([exe, data, args.model, str(args.threads), "64"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    ready = proc.stdout.readline().strip()
    if not ready.startswith("ready"):
        sys.exit(f"train_step_bench did not start (said {ready!r})")

    def ask(command):
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    dump = os.path.join(tmp.name, "step.safetensors")
    assert ask(f"dump {dump}") == "ok"
    with safe_open(dump, framework="pt") as f:
        meta = f.metadata()
        t = {k: f.get_tensor(k) for k in f.keys()}

    class PooledText(nn.Module):  # cadclip's "text" module: encoder + mean pooling
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, ids, mask):
            hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)

    class TwoTower(nn.Module):
        def __init__(self):
            super().__init__()
            names = ("width", "layers", "heads", "ffn_hidden", "face_channels", "edge_width",
                     "max_hops")
            self.brep = ref.BRepEncoder(**{k: int(meta[k]) for k in names},
                                        dropout=float(meta["dropout"]))
            self.text = PooledText(BertModel.from_pretrained(args.model, add_pooling_layer=False))
            self.brep_head = nn.Linear(int(meta["width"]), 256, bias=False)
            self.text_head = nn.Linear(self.text.encoder.config.hidden_size, 256, bias=False)
            self.log_logit_scale = nn.Parameter(torch.zeros(()))
            self.max_log_scale = math.log(float(meta["max_logit_scale"]))

        def encode_brep(self, batch):
            return F.normalize(self.brep_head(self.brep(batch)), dim=-1)

        def logit_scale(self):
            return self.log_logit_scale.clamp(max=self.max_log_scale).exp()

    model = TwoTower()
    state = {k[len("param."):]: v for k, v in t.items() if k.startswith("param.")}
    model.load_state_dict(state, strict=True)  # cadclip's weights, every one of them
    print(f"python: reference B-Rep encoder + transformers {type(model.text.encoder).__name__}"
          f" (attention {model.text.encoder.config._attn_implementation}), "
          f"{sum(p.numel() for p in model.parameters()):,} parameters")

    def batch_of(prefix):
        return {k[len(prefix):]: v for k, v in t.items() if k.startswith(prefix)}

    groups = [batch_of(f"group{g}.") for g in range(int(meta["groups"]))]
    positions = torch.cat([g.pop("positions") for g in groups])
    inverse = torch.empty_like(positions)
    inverse[positions] = torch.arange(len(positions))
    full = batch_of("full.")
    ids, mask = t["input_ids"], t["attention_mask"]
    ck, gk = t["caption_key"], t["geometry_key"]
    false_negatives = ((ck[:, None] == ck[None]) | (gk[:, None] == gk[None])) & ~torch.eye(
        len(ck), dtype=torch.bool)
    target = torch.arange(len(ck))
    print(f"batch: {len(ck)} parts in {len(groups)} size groups (face counts "
          + ", ".join(f"{int((~g['padding_mask']).sum(1).min())}-{g['padding_mask'].shape[1]}"
                      for g in groups)
          + f"), captions {int(mask.sum(1).min())}-{mask.shape[1]} tokens, "
          f"{int(false_negatives.sum())} false-negative pairs masked")

    def contrastive_loss(brep, text, scale):  # symmetric InfoNCE, false negatives masked
        logits = (scale * text @ brep.t()).masked_fill(false_negatives, float("-inf"))
        return (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2

    def forward(grouped):
        if grouped:  # cadclip's layout: each size group encoded on its own, rows reordered
            brep = torch.cat([model.encode_brep(g) for g in groups])[inverse]
        else:  # the reference as written: one batch padded to the largest part
            brep = model.encode_brep(full)
        text = F.normalize(model.text_head(model.text(ids, mask)), dim=-1)
        return brep, text, contrastive_loss(brep, text, model.logit_scale())

    # Same function before timing: embeddings and loss within 1e-5 (eval: no dropout).
    model.eval()
    worst = 0.0
    for grouped in (True, False):
        model.zero_grad()
        brep, text, loss = forward(grouped)
        diffs = {"brep": (brep - t["output.brep"]).abs().max().item(),
                 "text": (text - t["output.text"]).abs().max().item(),
                 "loss": abs(loss.item() - t["output.loss"].item())}
        worst = max(worst, *diffs.values())
        print(f"max |python - cadclip| ({'size groups' if grouped else 'one padded batch'}): "
              + ", ".join(f"{k} {v:.2e}" for k, v in diffs.items())
              + f" (loss {loss.item():.6f})")
        if grouped:
            loss.backward()
            # Per tensor: max |python - cadclip| / max |cadclip|. Tensors whose gradient is
            # zero in exact arithmetic (attention key biases: softmax ignores a per-row
            # constant) hold rounding noise on both sides; they are counted apart.
            grads = [(n, p.grad, t["grad." + n]) for n, p in model.named_parameters()
                     if p.grad is not None]
            top = max(c.abs().max().item() for _, _, c in grads)
            rel, noise = [], 0.0
            for n, g, c in grads:
                scale, diff = c.abs().max().item(), (g - c).abs().max().item()
                if scale > 1e-6 * top:
                    rel.append((diff / scale, n))
                else:
                    noise = max(noise, diff)
            rel.sort()
            print(f"gradients: {len(rel)} of {len(grads)} tensors, max |python - cadclip| / "
                  f"max |cadclip| per tensor: median {rel[len(rel) // 2][0]:.1e}, worst "
                  f"{rel[-1][0]:.1e} ({rel[-1][1]}); the other {len(grads) - len(rel)} (below "
                  f"1e-6 of the largest gradient, zero in exact arithmetic) {noise:.1e} apart")
    if worst > 1e-5:
        sys.exit("outputs differ by more than 1e-5: not timing different models")
    if args.check_only:
        ask("quit")
        return
    model.zero_grad()
    model.train()

    # cadclip's four AdamW groups and defaults (trainer.cc).
    lr, text_lr, decay = float(meta["lr"]), float(meta["text_lr"]), float(meta["weight_decay"])
    buckets = {(a, b): [] for a in (True, False) for b in (True, False)}
    for n, p in model.named_parameters():
        buckets[(n.startswith("text."), p.dim() < 2)].append(p)
    optimizer = torch.optim.AdamW(
        [{"params": buckets[(True, False)], "lr": text_lr, "weight_decay": decay},
         {"params": buckets[(True, True)], "lr": text_lr, "weight_decay": 0.0},
         {"params": buckets[(False, False)], "lr": lr, "weight_decay": decay},
         {"params": buckets[(False, True)], "lr": lr, "weight_decay": 0.0}],
        betas=(0.9, 0.98), eps=1e-6)
    params = list(model.parameters())
    clip = float(meta["grad_clip"])

    def python_step(grouped, phases=False):
        def phase(name):  # the same "phase:" scopes as the C++ side, only when profiling
            return (torch.profiler.record_function("phase:" + name) if phases
                    else contextlib.nullcontext())
        optimizer.zero_grad()
        with phase("brep forward"):
            if grouped:
                brep = torch.cat([model.encode_brep(g) for g in groups])[inverse]
            else:
                brep = model.encode_brep(full)
        with phase("text forward"):
            text = F.normalize(model.text_head(model.text(ids, mask)), dim=-1)
        with phase("loss"):
            loss = contrastive_loss(brep, text, model.logit_scale())
            loss.item()
        with phase("backward"):
            loss.backward()
        with phase("check and clip"):
            grads = [p.grad for p in params if p.grad is not None]
            found = torch.zeros(1)
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.ones(1))
            if found.item():
                sys.exit("python: non-finite gradients")
            nn.utils.clip_grad_norm_(params, clip)
        with phase("optimizer"):
            optimizer.step()
            with torch.no_grad():
                model.log_logit_scale.clamp_(max=model.max_log_scale)

    cpu = {}  # case -> CPU seconds per step (process user + system, all threads)

    def timed(name, grouped):
        def run():
            cpu_start, start = time.process_time(), time.perf_counter()
            python_step(grouped)
            cpu.setdefault(name, []).append(time.process_time() - cpu_start)
            return time.perf_counter() - start
        return run

    def cadclip_step(command="step", name="cadclip"):
        wall, cpu_seconds = (float(x) for x in ask(command).split())
        cpu.setdefault(name, []).append(cpu_seconds)
        return wall

    bench.add("cadclip", cadclip_step)
    if args.per_tensor_adamw:
        per_tensor = "cadclip, per-tensor AdamW"
        bench.add(per_tensor, lambda: cadclip_step("step-per-tensor", per_tensor))
    bench.add("python, same size groups", timed("python, same size groups", True))
    if not args.no_padded:
        bench.add("python, one padded batch", timed("python, one padded batch", False))
    bench.run(warmup=1, repeats=args.repeats)
    rows = bench.report(reference="python, same size groups")
    # CPU time of the timed rounds (the warm-up's first entries dropped).
    ref_cpu = statistics.median(cpu["python, same size groups"][1:])
    print("| case | median CPU s per step | speed vs python, same size groups |")
    print("|---|---|---|")
    for name, values in cpu.items():
        med = statistics.median(values[1:])
        rows[name]["cpu_s"] = med
        print(f"| {name} | {med:.3f} | {ref_cpu / med:.2f}x |")
    collate = statistics.median(float(ask("collate")) for _ in range(5))
    print(f"of cadclip's step: collation of the size groups {collate * 1e3:.1f} ms "
          f"(the python cases get their batches collated beforehand)")

    # Share outside ATen operators, from Kineto traces on both sides.
    if args.profiles == 0:
        print("no profiled steps (--profiles 0): the shares outside aten:: ops are not "
              "measured")
    else:
        shares = {"cadclip": [], "python": []}
        traces = args.traces or tmp.name
        os.makedirs(traces, exist_ok=True)
        for i in range(args.profiles):
            path = os.path.abspath(os.path.join(traces, f"cadclip{i}.json"))
            ask(f"profile {path}")
            shares["cadclip"].append(outside_aten(path))
            path = os.path.join(traces, f"python{i}.json")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                with torch.profiler.record_function("train_step"):
                    python_step(True, phases=True)
            prof.export_chrome_trace(path)
            shares["python"].append(outside_aten(path))
            self_aten = sum(e.self_cpu_time_total for e in prof.key_averages()
                            if e.key.startswith("aten::")) / 1e6
            step_s = shares['python'][-1][1]
            print(f"python profile {i}: torch.profiler self CPU time of aten:: ops "
                  f"{self_aten:.3f} s of {step_s:.3f} s ({1 - self_aten / step_s:.1%}"
                  f" outside; cross-check of the trace measure)")
        print("| side | step under the profiler s | outside aten:: ops | aten:: events on "
              "other threads |")
        print("|---|---|---|---|")
        for side, runs in shares.items():
            print(f"| {side} | {statistics.median(r[1] for r in runs):.3f} | "
                  f"{statistics.median(r[0] for r in runs):.1%} | {max(r[2] for r in runs)} |")
        print("\nphases under the profiler, median s (python: same size groups)")
        print("| phase | cadclip | python | python / cadclip |")
        print("|---|---|---|---|")
        for name in shares["cadclip"][0][3]:
            c = statistics.median(r[3].get(name, 0) for r in shares["cadclip"])
            p = statistics.median(r[3].get(name, 0) for r in shares["python"])
            print(f"| {name} | {c:.3f} | {p:.3f} | {p / c if c else float('nan'):.2f}x |")
    ask("quit")
    proc.wait()
    load_after = os.getloadavg()
    c = rows["cadclip"]["median_s"]
    for name in rows:
        if name != "cadclip":
            print(f"{name}: {rows[name]['median_s'] * 1e3:.0f} ms/step, cadclip "
                  f"{c * 1e3:.0f} ms/step: cadclip {rows[name]['median_s'] / c:.2f}x as fast "
                  f"(CPU time: {rows[name]['cpu_s'] / rows['cadclip']['cpu_s']:.2f}x)")
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
