"""`cadclip index` from scratch on a folder of CAD files, two cadclip builds
side by side (e.g. before and after a change), cases alternating (A, B, A, B,
...). Each run writes a fresh index folder: ingest in worker processes,
thumbnails, embedding, FAISS.

    python bench/index/run.py BINARY_A BINARY_B CHECKPOINT LIBRARY [repeats=5]

Wall time is what a user waits; CPU time (the job and its workers, from
getrusage of reaped children) shows the work, which the machine's load does
not inflate. Both builds must read the same checkpoint; the thumbnails they
draw are compared byte for byte.
"""
import filecmp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "bench", "common"))
from benchlib import Bench  # noqa: E402

if len(sys.argv) < 5:
    sys.exit(__doc__)
binaries = {"A": os.path.abspath(sys.argv[1]), "B": os.path.abspath(sys.argv[2])}
checkpoint, library = sys.argv[3], sys.argv[4]
repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 5

bench = Bench("cadclip index (whole job, from scratch)", threads=1)
for name, binary in binaries.items():
    print(f"{name}: {binary}")
print(f"library: {library} ({len(os.listdir(library))} files)")
print(f"load average before: {os.getloadavg()}")

work = tempfile.mkdtemp(prefix="cadclip-bench-index-")
cpu = {}


def case(name):
    def run():
        out = os.path.join(work, name)
        shutil.rmtree(out, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([binaries[name], "--log-level", "warn", "index", checkpoint,
                               library, "--out", out], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"{name} failed (exit {done.returncode}): {done.stdout}")
        cpu.setdefault(name, []).append(after.ru_utime + after.ru_stime
                                        - before.ru_utime - before.ru_stime)
        return seconds
    return run


bench.add("A", case("A"))
bench.add("B", case("B"))
bench.run(warmup=1, repeats=repeats)
bench.report(reference="A")
print(f"load average after: {os.getloadavg()}")
for name in binaries:
    print(f"{name}: CPU seconds per run (job + workers), median {statistics.median(cpu[name]):.2f}")
a, b = (os.path.join(work, n, "thumbnails") for n in binaries)
match, mismatch, errors = filecmp.cmpfiles(a, b, sorted(set(os.listdir(a)) | set(os.listdir(b))),
                                           shallow=False)
print(f"thumbnails: {len(match)} identical, {len(mismatch)} differ, {len(errors)} in one only")
shutil.rmtree(work, ignore_errors=True)
