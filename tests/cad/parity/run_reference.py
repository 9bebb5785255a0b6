#!/usr/bin/env python3
"""Writes random DeepCAD programs and what the reference builder measures on them.

    python tests/cad/parity/run_reference.py --count 2000 --seed 1 --out DIR

DIR/programs/<id>.json: the programs (random_programs.py; same seed, same
bytes). DIR/reference.jsonl: one line per program, in id order:
    {"id", "tags", "ok": true, "volume", "area", "bbox": [x0,y0,z0,x1,y1,z1],
     "faces", "solids", "warnings", "seconds"}
or  {"id", "tags", "ok": false, "class", "reason", "warnings", "seconds"}
("seconds": the reference's CPU time on that program).
built by deepcad_reference.py (OCP) in millimetres (JSON number x --unit).
--programs-only writes the programs and no reference (the determinism check).
"""
import argparse
import json
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import random_programs  # noqa: E402


def _measure_one(job):
    path, unit, symmetric_full, brep = job
    import deepcad_reference as ref  # per worker: OCP loads once per process

    started = time.process_time()
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    built = ref.build(doc, unit=unit, symmetric_full=symmetric_full)
    if built.refused is not None:
        return {"ok": False, "class": built.refused.kind, "reason": str(built.refused),
                "warnings": built.warnings, "seconds": time.process_time() - started}
    out = {"ok": True}
    out.update(ref.measure(built.shape))
    if brep:
        from OCP.BRepTools import BRepTools

        BRepTools.Write_s(built.shape, brep)
    out["warnings"] = built.warnings
    out["seconds"] = time.process_time() - started
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--count", type=int, required=True, help="programs to write")
    parser.add_argument("--seed", type=int, required=True, help="series seed")
    parser.add_argument("--out", required=True, help="output folder (created)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="reference builder processes")
    parser.add_argument("--unit", type=float, default=1.0,
                        help="millimetres per JSON unit (cadclip --assume-unit)")
    parser.add_argument("--symmetric-half", action="store_true",
                        help="Text2CAD's symmetric extent (half each side) instead of DeepCAD's")
    parser.add_argument("--programs-only", action="store_true",
                        help="write the programs, build nothing")
    parser.add_argument("--write-brep", action="store_true",
                        help="also write each built shape as DIR/brep/<id>.reference.brep")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")

    started = time.time()
    folder = os.path.join(args.out, "programs")
    os.makedirs(folder, exist_ok=True)
    ids, tags, paths = [], {}, []
    for i in range(args.count):
        doc, program_tags = random_programs.program(args.seed, i)
        pid = f"s{args.seed}_{i:05d}"
        path = os.path.join(folder, pid + ".json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(random_programs.dumps(doc))
        ids.append(pid)
        tags[pid] = program_tags
        paths.append(path)
    if args.programs_only:
        print(f"wrote {len(ids)} programs to {folder}", file=sys.stderr)
        return 0

    breps = [None] * len(paths)
    if args.write_brep:
        os.makedirs(os.path.join(args.out, "brep"), exist_ok=True)
        breps = [os.path.join(args.out, "brep", pid + ".reference.brep") for pid in ids]
    jobs = [(p, args.unit, not args.symmetric_half, b) for p, b in zip(paths, breps)]
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(_measure_one, jobs, chunksize=8)
    else:
        results = [_measure_one(j) for j in jobs]
    with open(os.path.join(args.out, "reference.jsonl"), "w", encoding="utf-8") as f:
        for pid, result in zip(ids, results):
            line = {"id": pid, "tags": tags[pid]}
            line.update(result)
            f.write(json.dumps(line) + "\n")
    refused = sum(1 for r in results if not r["ok"])
    print(f"reference: {len(ids)} programs, {len(ids) - refused} built, {refused} refused, "
          f"{time.time() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
