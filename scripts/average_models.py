"""Averages the weights of two exported models (WiSE-FT, Wortsman et al. 2022,
CVPR): out = (1 - ALPHA) * A + ALPHA * B, tensor by tensor, for the B-Rep
side (model.safetensors) and the text tensors training changed
(text/changed.safetensors); everything else is A's. Both must be exports of
the same architecture (`cadclip export`, the layout of models/): typically A
the released model and B a fine-tune that started from it.

    python scripts/average_models.py A_DIR B_DIR ALPHA OUT_DIR

A_DIR and B_DIR are folders holding default.json (models/ or an export's
--out); OUT_DIR gets the same layout, its default.json with the new checksums.
"""
import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file


def read(path):
    with safe_open(str(path), framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata()


def average(a_path, b_path, alpha, out_path):
    a, metadata = read(a_path)
    b, _ = read(b_path)
    if a.keys() != b.keys():
        sys.exit(f"average_models: {a_path} and {b_path} hold different tensors "
                 f"({sorted(a.keys() ^ b.keys())[:5]}...): export both from one architecture")
    out = {}
    for name, x in a.items():
        y = b[name]
        if x.shape != y.shape:
            sys.exit(f"average_models: {name} is {x.shape} in {a_path}, {y.shape} in {b_path}")
        if np.issubdtype(x.dtype, np.floating):
            mixed = (1 - alpha) * x.astype(np.float64) + alpha * y.astype(np.float64)
            # asarray, not ascontiguousarray: that one turns a 0-d tensor into 1-d
            out[name] = np.asarray(mixed, dtype=x.dtype, order="C").reshape(x.shape)
        else:  # counters and indices are A's
            out[name] = x
    save_file(out, str(out_path), metadata=metadata)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    a_dir, b_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[4])
    alpha = float(sys.argv[3])
    if not 0 <= alpha <= 1:
        sys.exit(f"average_models: ALPHA is {alpha}; give a weight of B between 0 and 1")
    a_pointer = json.loads((a_dir / "default.json").read_text())
    b_pointer = json.loads((b_dir / "default.json").read_text())
    a_model, b_model = a_dir / a_pointer["folder"], b_dir / b_pointer["folder"]
    out_model = out_dir / a_pointer["folder"]
    shutil.copytree(a_model, out_model, dirs_exist_ok=True)
    pointer = dict(a_pointer)
    for relative, key in (("model.safetensors", "model_sha256"),
                          ("text/changed.safetensors", "text_changed_sha256")):
        if (a_model / relative).exists() != (b_model / relative).exists():
            sys.exit(f"average_models: only one of the two models has {relative}")
        if (a_model / relative).exists():
            average(a_model / relative, b_model / relative, alpha, out_model / relative)
            pointer[key] = sha256(out_model / relative)
    (out_dir / "default.json").write_text(json.dumps(pointer, indent=2) + "\n")
    print(f"{out_dir}: {1 - alpha:g} x {a_dir} + {alpha:g} x {b_dir}")


if __name__ == "__main__":
    main()
