"""cadclip's B-Rep encoder (C++) against the same model in PyTorch-Python
(tests/model/brep_encoder_reference.py), same weights, same batch of 64
synthetic-size graphs, same threads; cases alternate.

    python bench/model/run.py [build/release] [threads=2] [repeats=5]

The C++ side runs as a subprocess per timed case (one warm-up inside, then one
timed run that it reports itself, so process start-up is not counted).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "bench", "common"))
sys.path.insert(0, os.path.join(root, "tests", "model"))

build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5

from benchlib import Bench  # noqa: E402  (sets threads before torch starts)

bench = Bench("B-Rep encoder, default size, batch 64", threads=threads)
import torch  # noqa: E402
import brep_encoder_reference as ref  # noqa: E402

binary = os.path.join(build, "bench", "model", "brep_encoder_bench")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "brep.safetensors")
    subprocess.run([binary, str(threads), "64", "1", "dump", path], check=True)
    model, batch, expected = ref.load(path)

# The two sides compute the same function before anything is timed.
with torch.no_grad():
    diff = (model.eval()(batch) - expected).abs().max().item()
print(f"max |python - c++| on this batch: {diff:.2e}")
if diff > 1e-5:
    sys.exit("outputs differ by more than 1e-5: not timing different models")


def cpp(mode):
    def run():
        out = subprocess.run([binary, str(threads), "64", "1", mode], check=True,
                             capture_output=True, text=True).stdout
        return float(out.strip().split("=")[1])
    return run


def python_forward():
    model.eval()
    with torch.no_grad():
        start = time.perf_counter()
        model(batch)
        return time.perf_counter() - start


def python_train():
    model.train()
    model.zero_grad()
    start = time.perf_counter()
    model(batch).pow(2).mean().backward()
    return time.perf_counter() - start


bench.add("cadclip forward", cpp("forward"))
bench.add("python forward", python_forward)
bench.add("cadclip forward+backward", cpp("train"))
bench.add("python forward+backward", python_train)
bench.run(warmup=1, repeats=repeats)
print("| case | cadclip median s | python median s | python / cadclip |")
print("|---|---|---|---|")
for case in ("forward", "forward+backward"):
    c = statistics.median(bench.times["cadclip " + case])
    p = statistics.median(bench.times["python " + case])
    print(f"| {case} | {c:.3f} | {p:.3f} | {p / c:.2f}x |")
