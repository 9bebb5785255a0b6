"""One timed run of a reader over a list of CAD files, in a fresh process, for run.py.

    python read_files.py cadclip|brepgraph WORKERS LIST_FILE

LIST_FILE names one file per line. Prints one JSON object: files, graphs read,
failures (by kind or exception type), seconds from the first call to the last
result (imports excluded), and peak resident memory in MiB of this process
and of its largest worker process. A worker's peak is its VmHWM in /proc,
sampled every 50 ms over this process's descendants: getrusage's children
figure counts a posix_spawn/vfork child's share of this process's memory
before its exec, which is not the worker's."""

import json
import os
import resource
import sys
import threading
import time


def peak_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0


class WorkerPeak(threading.Thread):
    """The largest VmHWM among this process's descendants while it runs."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_kib = 0
        self.done = threading.Event()

    @staticmethod
    def descendants() -> list[int]:
        mine, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        kids = [int(k) for k in f.read().split()]
                except OSError:
                    continue
                mine += kids
                todo += kids
        return mine

    def run(self):
        while not self.done.wait(0.05):
            for pid in self.descendants():
                try:
                    with open(f"/proc/{pid}/status") as f:
                        for line in f:
                            if line.startswith("VmHWM:"):
                                self.peak_kib = max(self.peak_kib, int(line.split()[1]))
                except OSError:
                    pass


def main() -> None:
    tool, workers, list_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(list_file, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    failures: dict[str, int] = {}
    sampler = WorkerPeak()
    sampler.start()
    graphs = faces = 0
    if tool == "cadclip":
        import cadclip

        start = time.perf_counter()
        for r in cadclip.read_cad_many(paths, workers=workers):
            if r.ok:
                graphs += 1
                faces += r.graph.num_faces
            else:
                failures[r.error.kind] = failures.get(r.error.kind, 0) + 1
    elif tool == "brepgraph":
        import brepgraph

        start = time.perf_counter()
        for r in brepgraph.load_many(paths, workers=workers):
            if r.ok:
                graphs += len(r.graphs)
                faces += sum(g.num_faces for g in r.graphs)
            else:
                kind = r.error.split(":", 1)[0] if r.error else "error"
                failures[kind] = failures.get(kind, 0) + 1
    else:
        raise SystemExit(f"unknown tool {tool}: use cadclip or brepgraph")
    seconds = time.perf_counter() - start
    sampler.done.set()
    print(json.dumps(dict(tool=tool, workers=workers, files=len(paths), graphs=graphs,
                          faces=faces, failures=failures, seconds=seconds,
                          peak_mib=peak_mib(resource.RUSAGE_SELF),
                          peak_child_mib=sampler.peak_kib / 1024.0)))


if __name__ == "__main__":
    main()
