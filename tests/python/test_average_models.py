"""scripts/average_models.py: the weighted mean of two exported models, tensor
by tensor, in the layout and with the checksums `cadclip` checks."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "average_models.py"


def export(folder, scale, extra=None):
    """A tiny export: default.json and a model folder with the two weight files."""
    model = folder / "m"
    (model / "text").mkdir(parents=True)
    tensors = {
        "log_logit_scale": np.array(2.0 * scale, dtype=np.float32),  # 0-d, as training writes it
        "brep.w": (np.arange(6, dtype=np.float16).reshape(2, 3) * scale),
        "brep.steps": np.array([7, 8], dtype=np.int64),
    }
    tensors.update(extra or {})
    save_file(tensors, str(model / "model.safetensors"), metadata={"format": "pt"})
    save_file({"layer.5.w": np.full((4,), scale, dtype=np.float16)},
              str(model / "text" / "changed.safetensors"))
    (model / "config.json").write_text("{}")
    (folder / "default.json").write_text(json.dumps({"folder": "m", "model_sha256": "x"}))
    return folder


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True)


def read(path):
    with safe_open(str(path), framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata()


def test_mean_is_weighted_and_keeps_shapes_types_and_checksums(tmp_path):
    a = export(tmp_path / "a", 1.0)
    b = export(tmp_path / "b", 3.0)
    result = run(a, b, 0.25, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    model, metadata = read(out / "m" / "model.safetensors")
    assert metadata == {"format": "pt"}
    assert model["log_logit_scale"].shape == ()
    assert model["log_logit_scale"] == np.float32(0.75 * 2 + 0.25 * 6)
    assert model["brep.w"].dtype == np.float16
    np.testing.assert_array_equal(model["brep.w"], np.arange(6).reshape(2, 3) * 1.5)
    np.testing.assert_array_equal(model["brep.steps"], [7, 8])  # integers are A's
    text, _ = read(out / "m" / "text" / "changed.safetensors")
    np.testing.assert_array_equal(text["layer.5.w"], np.full((4,), 1.5))
    pointer = json.loads((out / "default.json").read_text())
    for relative, key in (("model.safetensors", "model_sha256"),
                          ("text/changed.safetensors", "text_changed_sha256")):
        assert pointer[key] == hashlib.sha256((out / "m" / relative).read_bytes()).hexdigest()


def test_released_model_averaged_with_itself_is_byte_identical(tmp_path):
    result = run(ROOT / "models", ROOT / "models", 0.5, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    released = json.loads((ROOT / "models" / "default.json").read_text())
    averaged = json.loads((tmp_path / "out" / "default.json").read_text())
    assert averaged == released


def test_different_architectures_and_bad_weights_are_refused(tmp_path):
    a = export(tmp_path / "a", 1.0)
    b = export(tmp_path / "b", 1.0, extra={"brep.more": np.zeros(2, dtype=np.float32)})
    result = run(a, b, 0.5, tmp_path / "out")
    assert result.returncode != 0
    assert "different tensors" in result.stderr and "brep.more" in result.stderr
    result = run(a, a, 1.5, tmp_path / "out2")
    assert result.returncode != 0 and "between 0 and 1" in result.stderr
