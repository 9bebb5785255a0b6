"""cadclip.read_cad_many beside brepgraph.load_many (PyPI brepgraph, on the OCP
wheels) on the same STEP files, with the same worker counts, in alternating
runs, each in a fresh Python process (read_files.py): parts per second, peak
memory of the calling process and of its largest worker, and failures on a
malformed corpus the benchmark writes itself (truncated, garbage, empty files)
with whether the calling process survived. docs/PYTHON.md has the results.

    /opt/cadclip/venv/bin/python bench/python/run.py [--synth 100] [--rounds 3]
        [--workers 1 2] [--cadclip build/release/apps/cadclip] [--work build/bench-python]

PYTHONPATH must let `import cadclip` find the module (the installed one, or
<build>/python). brepgraph 0.3.0 is installed with pip into WORK/brepgraph
(--no-deps --target: it is pure Python; the OCP module it imports, from
cadquery-ocp, is served by the venv's cadquery-ocp-novtk of the same version),
so the venv's own packages stay as scripts/requirements.txt has them.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BREPGRAPH = "brepgraph==0.3.0"


def sh(args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kw)


def ensure_brepgraph(target: pathlib.Path) -> None:
    if (target / "brepgraph").is_dir():
        return
    print(f"[bench] pip install --no-deps --target {target} {BREPGRAPH}", file=sys.stderr)
    sh([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
        "--target", target, BREPGRAPH])


def corpus(work: pathlib.Path, cadclip: str, synth: int) -> list[str]:
    """The shared corpus's STEP files and `cadclip synth` STEP parts."""
    shared = ROOT.parent / "shared/data/cad"
    files = sorted(str(p) for p in shared.rglob("*") if p.suffix.lower() in (".step", ".stp"))
    out = work / f"synth{synth}"
    if not (out / "manifest.json").is_file():  # written last: a finished synth run
        shutil.rmtree(out, ignore_errors=True)
        sh([cadclip, "synth", "--count", synth, "--seed", 11, "--kind", "families", "--out", out])
    files += sorted(str(p) for p in (out / "parts").rglob("*.step"))
    return files


def malformed(work: pathlib.Path, good: list[str]) -> list[str]:
    """Truncated copies of real files, garbage bytes under a .step name, empty files."""
    folder = work / "malformed"
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for i, path in enumerate(good[:6]):
        data = pathlib.Path(path).read_bytes()
        for share in (0.3, 0.7):
            p = folder / f"truncated_{i}_{int(share * 100)}.step"
            p.write_bytes(data[: int(len(data) * share)])
            made.append(p)
    for i in range(4):
        p = folder / f"garbage_{i}.step"
        p.write_bytes(os.urandom(4096 * (i + 1)))
        made.append(p)
    p = folder / "header_only.step"
    p.write_text("ISO-10303-21;\nHEADER;\nENDSEC;\nDATA;\n")
    made.append(p)
    for i in range(2):
        p = folder / f"empty_{i}.step"
        p.write_bytes(b"")
        made.append(p)
    return [str(p) for p in made]


def run_once(tool: str, workers: int, files: list[str], work: pathlib.Path, env: dict) -> dict:
    list_file = work / f"list_{tool}_{workers}_{len(files)}.txt"
    list_file.write_text("\n".join(files) + "\n")
    p = subprocess.run([sys.executable, str(HERE / "read_files.py"), tool, str(workers),
                        str(list_file)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return dict(tool=tool, workers=workers, files=len(files), crashed=True,
                    returncode=p.returncode, stderr=p.stderr[-400:])
    result = json.loads(p.stdout.strip().splitlines()[-1])
    result["crashed"] = False
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--synth", type=int, default=100, help="synthetic STEP parts to add")
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs per tool and count")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cadclip", default=str(ROOT / "build/release/apps/cadclip"))
    ap.add_argument("--work", default=str(ROOT / "build/bench-python"))
    ap.add_argument("--json", help="also write every run to this file")
    a = ap.parse_args()
    work = pathlib.Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    ensure_brepgraph(work / "brepgraph")
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work / "brepgraph"),
                                                      env.get("PYTHONPATH")]))
    files = corpus(work, a.cadclip, a.synth)
    bad = malformed(work, files)
    runs = []
    for r in range(a.rounds):
        for workers in a.workers:
            order = ["cadclip", "brepgraph"] if (r + workers) % 2 == 0 else ["brepgraph", "cadclip"]
            for tool in order:
                res = run_once(tool, workers, files, work, env)
                res["round"] = r
                runs.append(res)
                print(f"[bench] round {r} {tool} workers={workers}: "
                      + (f"{res['graphs']}/{res['files']} in {res['seconds']:.2f}s"
                         if not res["crashed"] else f"CRASHED rc={res['returncode']}"),
                      file=sys.stderr)
    bad_runs = []
    for workers in a.workers:
        for tool in ("cadclip", "brepgraph"):
            res = run_once(tool, workers, bad + files[:2], work, env)
            bad_runs.append(res)

    print(f"\n{len(files)} STEP files ({len(files) - a.synth} shared, {a.synth} synthetic); "
          f"median of {a.rounds} alternating runs; load {os.getloadavg()[0]:.2f}\n")
    print("| reader | workers | parts read | failed | parts/s | files/s | peak MiB caller | "
          "peak MiB worker |")
    print("|---|---|---|---|---|---|---|---|")
    for workers in a.workers:
        for tool in ("cadclip", "brepgraph"):
            mine = [x for x in runs if x["tool"] == tool and x["workers"] == workers
                    and not x["crashed"]]
            if not mine:
                print(f"| {tool} | {workers} | crashed | | | | | |")
                continue
            rate = statistics.median(x["graphs"] / x["seconds"] for x in mine)
            files_rate = statistics.median(x["files"] / x["seconds"] for x in mine)
            failed = sum(mine[0]["failures"].values())
            print(f"| {tool} | {workers} | {mine[0]['graphs']} | {failed} | {rate:.2f} | "
                  f"{files_rate:.2f} | "
                  f"{max(x['peak_mib'] for x in mine):.0f} | "
                  f"{max(x['peak_child_mib'] for x in mine):.0f} |")
    print(f"\nMalformed corpus: {len(bad)} files (truncated, garbage, header only, empty) "
          "and 2 good ones\n")
    print("| reader | workers | caller survived | good read | failures reported |")
    print("|---|---|---|---|---|")
    for x in bad_runs:
        if x["crashed"]:
            print(f"| {x['tool']} | {x['workers']} | no (exit {x['returncode']}) | - | - |")
        else:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(x["failures"].items()))
            print(f"| {x['tool']} | {x['workers']} | yes | {x['graphs']} | "
                  f"{sum(x['failures'].values())} ({kinds}) |")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(dict(runs=runs, malformed=bad_runs), indent=1))


if __name__ == "__main__":
    main()
