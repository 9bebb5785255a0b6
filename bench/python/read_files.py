"""One timed run of a reader over a list of CAD files, in a fresh process, for run.py.

    python read_files.py cadclip|brepgraph WORKERS LIST_FILE

LIST_FILE names one file per line. Prints one JSON object: files, graphs read,
failures (by kind or exception type), seconds from the first call to the last
result (imports excluded), and peak resident memory in MiB of this process
and of its largest child (the worker processes)."""

import json
import resource
import sys
import time


def peak_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0


def main() -> None:
    tool, workers, list_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(list_file, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    failures: dict[str, int] = {}
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
    print(json.dumps(dict(tool=tool, workers=workers, files=len(paths), graphs=graphs,
                          faces=faces, failures=failures, seconds=seconds,
                          peak_mib=peak_mib(resource.RUSAGE_SELF),
                          peak_child_mib=peak_mib(resource.RUSAGE_CHILDREN))))


if __name__ == "__main__":
    main()
