"""The whole `cadclip prepare` job on 1 and 2 worker processes, on a fixed
corpus: the STEP files of ../shared/data/cad plus synthetic parts written as
STEP by `cadclip synth` (made once, cached). Cases alternate (1, 2, 1, 2, ...).

    python bench/prepare/run.py [build/release] [repeats=3] [synth_count=200]
    python bench/prepare/run.py build/release 3 --deepcad DIR [--assume-unit m]

With --deepcad the corpus is the DeepCAD JSON files of DIR instead (e.g.
`cadclip synth --kind programs` parts, or Text2CAD's cad_json folder), read
with --assume-unit (default m, DeepCAD's metres).

Wall time is what a user waits; CPU time (the job and its workers, from
getrusage of reaped children) shows the work, which the machine's load does
not inflate. Time per face = worker ingest seconds / faces, from manifest.json.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "bench", "common"))

args = sys.argv[1:]
deepcad, assume_unit = None, "m"
if "--deepcad" in args:
    at = args.index("--deepcad")
    deepcad = os.path.abspath(args[at + 1])
    del args[at:at + 2]
if "--assume-unit" in args:
    at = args.index("--assume-unit")
    assume_unit = args[at + 1]
    del args[at:at + 2]
build = args[0] if len(args) > 0 else "build/release"
repeats = int(args[1]) if len(args) > 1 else 3
synth_count = int(args[2]) if len(args) > 2 and deepcad is None else (0 if deepcad else 200)

from benchlib import Bench  # noqa: E402

binary = os.path.abspath(os.path.join(build, "apps", "cadclip"))
shared = os.path.join(root, "..", "shared", "data", "cad")
corpus = os.path.join(tempfile.gettempdir(), "cadclip-bench-prepare")

# The corpus: links to the shared STEP files, and synthetic parts (cached by count).
step_dir = os.path.join(corpus, "step")
if not os.path.isdir(step_dir):
    os.makedirs(step_dir)
    for folder, _, files in os.walk(shared):
        for name in sorted(files):
            if name.lower().endswith((".step", ".stp")):
                sub = os.path.relpath(folder, shared).replace(os.sep, "_")
                os.symlink(os.path.abspath(os.path.join(folder, name)),
                           os.path.join(step_dir, f"{sub}_{name}"))
inputs = [deepcad] if deepcad else [step_dir]
extra = ["--assume-unit", assume_unit] if deepcad else []
synth_dir = os.path.join(corpus, f"synth{synth_count}")
has_synth = "synth" in subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
if synth_count > 0 and has_synth:
    if not os.path.isdir(os.path.join(synth_dir, "parts")):
        subprocess.run([binary, "synth", "--count", str(synth_count), "--seed", "1",
                        "--out", synth_dir], check=True, capture_output=True)
    inputs.append(os.path.join(synth_dir, "parts"))
elif synth_count > 0:
    print("note: this cadclip has no `synth` subcommand; the corpus is the shared STEP files only")

bench = Bench("prepare job (whole job, worker processes)", threads=1)
print(f"cadclip: {binary}")
print(f"corpus: {', '.join(inputs)}")
print(f"load average before: {os.getloadavg()}")

work = tempfile.mkdtemp(prefix="cadclip-bench-prepare-out-")
cpu = {}
manifests = {}


def case(workers):
    def run():
        out = os.path.join(work, f"w{workers}")
        shutil.rmtree(out, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([binary, "--log-level", "warn", "prepare", *inputs, *extra, "--out", out,
                        "--workers", str(workers)], check=False, stderr=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.setdefault(workers, []).append(after.ru_utime + after.ru_stime
                                           - before.ru_utime - before.ru_stime)
        with open(os.path.join(out, "manifest.json")) as f:
            manifests[workers] = json.load(f)
        return seconds
    return run


bench.add("1 worker", case(1))
bench.add("2 workers", case(2))
bench.run(warmup=1, repeats=repeats)
m = manifests[1]
files = m["counts"]["inputs"]
bench.report(reference="1 worker", unit_per_run=files, unit="files")
print(f"load average after: {os.getloadavg()}")
print(f"inputs {files}: prepared {m['counts']['prepared']}, failed {m['counts']['failed']}, "
      f"faces {m['faces']}, edges {m['edges']}")
for w in (1, 2):
    cpus = sorted(cpu[w])
    print(f"{w} worker(s): CPU seconds per run (job + workers), median {cpus[len(cpus) // 2]:.2f}")
    wall = manifests[w]["run"]["ingest_wall_seconds"]
    print(f"{w} worker(s): ingest phase {wall:.2f} s, {files / wall:.1f} parts/s, "
          f"{files / wall / w:.1f} parts/s per worker")
ingest = manifests[1]["run"]["ingest_seconds"]
print(f"worker ingest time per file {ingest / files * 1e3:.1f} ms, per face "
      f"{ingest / m['faces'] * 1e3:.2f} ms (1-worker run, wall clock inside the worker)")
shutil.rmtree(work, ignore_errors=True)
