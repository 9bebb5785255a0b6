"""How much of a part's size a frozen sentence encoder's pooled vector holds:
a probe from all-MiniLM-L6-v2 caption embeddings to the part's three sorted
log bounding-box sides, fitted on the training split's captions and scored
(R^2 per side) on the test split's, per caption level; once linear (what a
linear text head can read) and once with one hidden GELU layer (what
`cadclip train --text-head-hidden` can read).

    python bench/text/probe_sizes.py SYNTH_DIR PREPARED_DIR [model folder]

SYNTH_DIR: `cadclip synth --out` (captions.jsonl, splits.json);
PREPARED_DIR: `cadclip prepare --out` of it (one shard is enough: its parts).
"""
import glob
import json
import os
import sys

import numpy as np
import torch
from safetensors import safe_open
from sentence_transformers import SentenceTransformer

synth, prepared = sys.argv[1], sys.argv[2]
model_dir = sys.argv[3] if len(sys.argv) > 3 else "/opt/cadclip/models/all-MiniLM-L6-v2"
torch.set_num_threads(1)
torch.manual_seed(0)

log_sides = {}
for shard in sorted(glob.glob(os.path.join(prepared, "shards", "*.safetensors"))):
    f = safe_open(shard, "np")
    ids = json.loads(f.metadata()["ids"])
    box = f.get_tensor("bbox_mm")
    sides = np.sort(np.log(box[:, 3:] - box[:, :3] + 1e-3), 1)
    log_sides.update(zip(ids, sides))
rows = [json.loads(line) for line in open(os.path.join(synth, "captions.jsonl"))]
rows = [r for r in rows if r["id"] in log_sides]
train_ids = set(json.load(open(os.path.join(synth, "splits.json")))["train"])

encoder = SentenceTransformer(model_dir, device="cpu")
x = torch.tensor(encoder.encode([r["text"] for r in rows], batch_size=128))
y = torch.tensor(np.stack([log_sides[r["id"]] for r in rows])).float()
level = np.array([r["level"] for r in rows])
train = np.array([r["id"] in train_ids for r in rows])
y = (y - y[train].mean(0)) / y[train].std(0)


def probe(name, model, epochs):
    opt = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-4)
    for _ in range(epochs):
        opt.zero_grad()
        ((model(x[train]) - y[train]) ** 2).mean().backward()
        opt.step()
    with torch.no_grad():
        predicted = model(x)
    for lv in ["abstract", "beginner", "intermediate", "expert"]:
        k = torch.tensor(~train & (level == lv))
        r2 = 1 - ((predicted[k] - y[k]) ** 2).mean(0) / y[k].var(0)
        print(f"{name:8s} {lv:13s} R^2 of sorted log sides: "
              + " ".join(f"{v:.3f}" for v in r2.tolist()))


probe("linear", torch.nn.Linear(x.shape[1], 3), 300)
probe("hidden", torch.nn.Sequential(torch.nn.Linear(x.shape[1], 512), torch.nn.GELU(),
                                    torch.nn.Linear(512, 3)), 600)
