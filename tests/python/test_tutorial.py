"""Runs the code of docs/PYTHON.md from the tutorial on, block by block, in an
empty folder: ```sh blocks with bash, ```python blocks each as a script, with
the venv's python first on PATH (so `python -m cadclip` is this build's)."""

import os
import pathlib
import re
import subprocess
import sys

import cadclip
from conftest import ROOT


def blocks() -> list[tuple[str, str]]:
    text = (ROOT / "docs/PYTHON.md").read_text()
    start = text.index("## Tutorial")
    end = text.index("## Reference")
    return re.findall(r"```(sh|python)\n(.*?)```", text[start:end], re.S)


def test_the_tutorial_runs(tmp_path):
    found = blocks()
    assert [kind for kind, _ in found].count("python") >= 4, "the tutorial lost its code"
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    env["PATH"] = os.pathsep.join([str(pathlib.Path(sys.executable).parent), env["PATH"]])
    # The blocks run elsewhere: they import the cadclip this test imported.
    env["PYTHONPATH"] = str(pathlib.Path(cadclip.__file__).resolve().parents[1])
    outputs = []
    for number, (kind, code) in enumerate(found, 1):
        if kind == "sh":
            command = ["bash", "-euo", "pipefail", "-c", code]
        else:
            script = tmp_path / f"block{number}.py"
            script.write_text(code)
            command = [sys.executable, str(script)]
        run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert run.returncode == 0, f"block {number} ({kind}) failed:\n{code}\n{run.stdout}\n{run.stderr}"
        outputs.append(run.stdout)
    everything = "\n".join(outputs)
    read = re.search(r"(\d+) of (\d+) files read", everything)
    assert read and read.group(1) == read.group(2) == "120", everything
    assert "test accuracy" in everything and "BRepGraph('" in everything
    print(everything)
