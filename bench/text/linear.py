#!/usr/bin/env python3
"""MiniLM's linear layers: at::linear (MKL sgemm) against oneDNN on reordered weights.

Why cadclip's no-grad text encoder runs its linear layers through
mkldnn::_linear_pointwise (src/text/layers.h): one timed run is the 24 GEMMs
of one all-MiniLM-L6-v2 forward (6 layers x query/key/value fused 384->1152,
attention output 384->384, intermediate 384->1536, output 1536->384; random
weights of those shapes, 42 MB, so they stream from memory as the model's do),
on 15 rows (a batch-1 caption) and on 4,608 rows (128 captions padded to 36).
Same process, alternating runs, one thread by default.

    /opt/cadclip/venv/bin/python bench/text/linear.py [--threads 1] [--repeats 30]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))

SHAPES = [(1152, 384), (384, 384), (1536, 384), (384, 1536)]  # (out, in) per layer
LAYERS = 6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    from benchlib import Bench, set_threads
    import time
    import torch
    import torch.nn.functional as F

    set_threads(args.threads)
    torch.manual_seed(0)
    layers = [(torch.randn(n, k) * 0.05, torch.randn(n) * 0.05)
              for _ in range(LAYERS) for (n, k) in SHAPES]
    times = []
    for _ in range(5):  # what a no-grad forward after a weight update pays once
        start = time.perf_counter()
        reordered = [torch.ops.mkldnn._reorder_linear_weight(w, None) for w, _ in layers]
        times.append(time.perf_counter() - start)
    print(f"reordering the 24 weights for oneDNN: median {sorted(times)[2] * 1e3:.1f} ms")
    for rows in (15, 4608):
        bench = Bench(f"MiniLM's 24 linear layers on {rows} rows", threads=args.threads)
        inputs = {k: torch.randn(rows, k) for _, k in SHAPES}
        with torch.inference_mode():
            worst = max((torch.ops.mkldnn._linear_pointwise(
                inputs[w.shape[1]], p, b, "none", [], "") - F.linear(inputs[w.shape[1]], w, b))
                .abs().max().item() for (w, b), p in zip(layers, reordered))
        print(f"largest difference oneDNN vs at::linear: {worst:.2e}")

        def mkl():
            with torch.inference_mode():
                start = time.perf_counter()
                for w, b in layers:
                    F.linear(inputs[w.shape[1]], w, b)
                return time.perf_counter() - start

        def onednn():
            with torch.inference_mode():
                start = time.perf_counter()
                for (w, b), p in zip(layers, reordered):
                    torch.ops.mkldnn._linear_pointwise(inputs[w.shape[1]], p, b, "none", [], "")
                return time.perf_counter() - start

        bench.add("at::linear (MKL sgemm)", mkl)
        bench.add("oneDNN, weights reordered once", onednn)
        bench.run(warmup=3, repeats=args.repeats if rows < 100 else max(5, args.repeats // 3))
        bench.report(reference="at::linear (MKL sgemm)")
        print()


if __name__ == "__main__":
    main()
