"""Fixtures of the Python module's tests (ctest -L python runs each file under pytest).

ctest sets CADCLIP_BINARY (the cadclip executable of the same build, for the
command-line side of the equality tests), CADCLIP_SHARED_DATA (the shared CAD
corpus) and PYTHONPATH (the build's python/ folder, so `import cadclip` is this
build)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CADCLIP = os.environ.get("CADCLIP_BINARY", str(ROOT / "build/dev/apps/cadclip"))
SHARED = pathlib.Path(os.environ.get("CADCLIP_SHARED_DATA", str(ROOT.parent / "shared/data")))
TEXT_FIXTURE = ROOT / "tests/fixtures/text/bert"

# Small real parts of the shared corpus: STEP, BREP and IGES, one or several solids.
SHARED_PARTS = [
    "cad/occt/screw.step",
    "cad/occt/mal_ecrou.brep",
    "cad/occt/CrankArm.brep",
    "cad/aagnet/partA.step",
    "cad/brepnet/76879_65a30a82_0010_2.step",
    "cad/brepnet/127460_0dbc2c47_0.stp",
]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the cadclip command; returns the finished process (stdout and stderr as text)."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    run = subprocess.run([CADCLIP, *map(str, args)], capture_output=True, text=True, env=env)
    if check and run.returncode != 0:
        raise AssertionError(f"cadclip {' '.join(map(str, args))} failed ({run.returncode}):\n"
                             f"{run.stdout}\n{run.stderr}")
    return run


def shared_parts() -> list[pathlib.Path]:
    """The shared parts above; the test is skipped when the corpus is not there."""
    paths = [SHARED / p for p in SHARED_PARTS]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"the shared CAD corpus is not at {SHARED} (-DCADCLIP_SHARED_DATA): {missing}")
    return paths


@pytest.fixture(scope="session")
def synth(tmp_path_factory) -> pathlib.Path:
    """`cadclip synth`: 24 parametric parts as STEP (and their captions and splits)."""
    out = tmp_path_factory.mktemp("synth") / "s"
    cli("synth", "--count", 24, "--seed", 7, "--kind", "families", "--out", out)
    return out
