"""Python side of the safetensors interop test (tests/core/safetensors_interop_test.cc).

  write FILE DIR   save a file with Python safetensors: every dtype Hugging Face uses,
                   special float values, metadata; DIR gets <name>.bin raw bytes and
                   expected.json (dtype, shape) for the C++ side to compare against.
  verify FILE DIR  load FILE (written by cadclip) with Python safetensors and check every
                   tensor's dtype, shape and bytes and the metadata against DIR.
"""
import json
import math
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

DTYPES = {
    "BOOL": torch.bool, "U8": torch.uint8, "I8": torch.int8, "I16": torch.int16,
    "U16": torch.uint16, "F16": torch.float16, "BF16": torch.bfloat16, "I32": torch.int32,
    "U32": torch.uint32, "F32": torch.float32, "F64": torch.float64, "I64": torch.int64,
    "U64": torch.uint64,
}
SPECIAL = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1e-6, 3.14159, 65504.0]


def raw_bytes(t: torch.Tensor) -> bytes:
    t = t.contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.dtype != torch.bool else \
        t.to(torch.uint8).numpy().tobytes()


def make_tensors():
    g = torch.Generator().manual_seed(7)
    out = {}
    for name, dtype in DTYPES.items():
        shape = (2, 5)
        if dtype == torch.bool:
            t = torch.randint(0, 2, shape, generator=g).bool()
        elif dtype.is_floating_point:
            t = torch.tensor(SPECIAL, dtype=torch.float64).reshape(shape).to(dtype)
        elif dtype in (torch.uint16, torch.uint32, torch.uint64):
            t = torch.randint(0, 30000, shape, generator=g, dtype=torch.int64).to(dtype)
        else:
            info = torch.iinfo(dtype)
            t = torch.randint(max(info.min, -2**31), min(info.max, 2**31 - 1), shape,
                              generator=g, dtype=torch.int64).to(dtype)
        out[f"layer.{name.lower()}"] = t
    out["scalar"] = torch.tensor(4.25, dtype=torch.float32)
    out["empty"] = torch.zeros((0, 3), dtype=torch.float32)
    return out


def write(path, folder):
    os.makedirs(folder, exist_ok=True)
    tensors = make_tensors()
    save_file(tensors, path, metadata={"format": "pt", "producer": "python-safetensors"})
    expected = {}
    inverse = {v: k for k, v in DTYPES.items()}
    for name, t in tensors.items():
        with open(os.path.join(folder, name + ".bin"), "wb") as f:
            f.write(raw_bytes(t))
        expected[name] = {"dtype": inverse[t.dtype], "shape": list(t.shape)}
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump({"tensors": expected,
                   "metadata": {"format": "pt", "producer": "python-safetensors"}}, f)


def verify(path, folder):
    with open(os.path.join(folder, "expected.json")) as f:
        expected = json.load(f)
    loaded = load_file(path)
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata()
    problems = []
    if metadata != expected["metadata"]:
        problems.append(f"metadata {metadata} != {expected['metadata']}")
    if set(loaded) != set(expected["tensors"]):
        problems.append(f"names {sorted(loaded)} != {sorted(expected['tensors'])}")
    inverse = {v: k for k, v in DTYPES.items()}
    for name, want in expected["tensors"].items():
        t = loaded.get(name)
        if t is None:
            continue
        if inverse[t.dtype] != want["dtype"] or list(t.shape) != want["shape"]:
            problems.append(f"{name}: {inverse[t.dtype]} {list(t.shape)} != {want}")
            continue
        with open(os.path.join(folder, name + ".bin"), "rb") as f:
            if raw_bytes(t) != f.read():
                problems.append(f"{name}: bytes differ")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"verified {len(loaded)} tensors and metadata")


if __name__ == "__main__":
    {"write": write, "verify": verify}[sys.argv[1]](sys.argv[2], sys.argv[3])
