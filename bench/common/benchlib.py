"""Bookkeeping for benchmarks that compare cadclip with a Python reference in one
script (the method is at the top of docs/PERFORMANCE.md).

    from benchlib import Bench
    bench = Bench("text encoder", threads=2)       # sets threads, prints the BLAS line
    bench.add("cadclip", run_cadclip)              # each callable returns seconds per run
    bench.add("transformers", run_python)
    bench.run(warmup=3, repeats=15)                # alternating A B A B ...
    bench.report(reference="transformers")         # median, p10-p90, ratio, the command
"""
import os
import platform
import shlex
import statistics
import sys
import time


def set_threads(threads: int) -> None:
    """Same thread count for both sides, set before torch starts its pools."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    import torch
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process


def matmul_gflops(n: int = 1024, repeats: int = 5) -> float:
    import torch
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(2):
        a @ b
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n ** 3 / statistics.median(times) / 1e9


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


class Bench:
    def __init__(self, name: str, threads: int):
        self.name, self.threads = name, threads
        self.cases = {}
        self.times = {}
        set_threads(threads)
        import torch
        print(f"# {name}")
        print(f"command: {' '.join(shlex.quote(a) for a in sys.argv)}")
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
              f"torch {torch.__version__}; threads={threads}; "
              f"matmul 1024^2 fp32: {matmul_gflops():.1f} GFLOP/s")

    def add(self, name: str, run) -> None:
        """`run()` performs one timed unit of work and returns its seconds."""
        self.cases[name] = run
        self.times[name] = []

    def run(self, warmup: int = 3, repeats: int = 15) -> None:
        for _ in range(warmup):
            for run in self.cases.values():
                run()
        for _ in range(repeats):  # alternate, so drift hits every case alike
            for name, run in self.cases.items():
                self.times[name].append(run())

    def report(self, reference: str, unit_per_run: float = 1.0, unit: str = "") -> dict:
        ref = statistics.median(self.times[reference])
        rows = {}
        print(f"| case | median ms | p10-p90 ms | {'throughput ' + unit + '/s | ' if unit else ''}"
              f"speed vs {reference} |")
        print("|---|---|---|" + ("---|" if unit else "") + "---|")
        for name, times in self.times.items():
            med = statistics.median(times)
            rows[name] = {"median_s": med, "p10_s": percentile(times, 0.1),
                          "p90_s": percentile(times, 0.9), "speedup": ref / med}
            tput = f" {unit_per_run / med:.1f} |" if unit else ""
            print(f"| {name} | {med * 1e3:.2f} | {percentile(times, 0.1) * 1e3:.2f}-"
                  f"{percentile(times, 0.9) * 1e3:.2f} |{tput} {ref / med:.2f}x |")
        return rows
