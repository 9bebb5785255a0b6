"""Reads a cadclip shard with Python's safetensors (no cadclip code) and prints
one JSON line per model: what the C++ interop test compares against."""
import json
import sys

from safetensors import safe_open

with safe_open(sys.argv[1], framework="numpy") as f:
    meta = f.metadata()
    ids = json.loads(meta["ids"])
    fo = f.get_tensor("face_offsets")
    eo = f.get_tensor("edge_offsets")
    grids = f.get_tensor("face_grids")
    src = f.get_tensor("edge_src")
    egrids = f.get_tensor("edge_grids")
    bbox = f.get_tensor("bbox_mm")
    out = {"format": meta["format"], "schema_version": meta["schema_version"], "models": []}
    for i, model_id in enumerate(ids):
        g = grids[fo[i]:fo[i + 1]]
        out["models"].append({
            "id": model_id,
            "faces": int(fo[i + 1] - fo[i]),
            "edges": int(eo[i + 1] - eo[i]),
            "grid_shape": list(g.shape),
            "grid_sum": float(g.astype("float64").sum()),
            "edge_grid_sum": float(egrids[eo[i]:eo[i + 1]].astype("float64").sum()),
            "edge_src": [int(v) for v in src[eo[i]:eo[i + 1]]],
            "bbox_mm": [float(v) for v in bbox[i]],
        })
print(json.dumps(out))
