#!/usr/bin/env python3
"""Which half of a size-block model finds a part: the cosine, the block, or both.

    size_block_parts.py EMBEDDINGS [--manifest SYNTH/manifest.json]

EMBEDDINGS is what `cadclip eval CHECKPOINT --data P --split S
--save-embeddings FILE` writes for a model with a size block
(docs/MODEL.md, "The size block"): each row is the embedding (its first
embed_dim columns, unit length) and then the block (scaled so that the
inner product of a caption's and a part's rows is cosine + weight * p . q).
Text->CAD R@1 over every caption, counted as `cadclip eval` counts (a part
of equal geometry is the part; any other part scoring as high counts
against it), by:

- the cosine alone (the towers),
- the block alone (what the caption's numbers say of the part's box),
- both (what search scores).

With --manifest (a `cadclip synth` set's), the same per group (family), and
how often the cosine's first answer is of the caption's group. Run it on a
standard set's validation split (parts of table rows trained on) and on its
test split (held-out rows) to see which half loses the designations never
trained on.
"""
import argparse
import collections
import json

import numpy as np
from safetensors import safe_open


def first_hits(scores, own):
    """Per caption, whether one of its own parts (`own`, [captions, parts] bool: the part or
    one of equal geometry) scores above every other part."""
    best_own = np.where(own, scores, -np.inf).max(1)
    return ~((scores >= best_own[:, None]) & ~own).any(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("embeddings")
    parser.add_argument("--manifest", help="a cadclip synth manifest.json: the figures per group")
    args = parser.parse_args()
    with safe_open(args.embeddings, "np") as f:
        meta = f.metadata()
        parts, texts = f.get_tensor("brep"), f.get_tensor("text")
    part_ids = json.loads(meta["brep_ids"])
    text_ids = json.loads(meta["text_ids"])
    # The embedding's rows are unit length; the block's columns follow.
    width = next(d for d in range(1, parts.shape[1] + 1)
                 if np.allclose(np.linalg.norm(parts[:, :d], axis=1), 1, atol=1e-3))
    if width == parts.shape[1]:
        raise SystemExit(f"{args.embeddings}: the rows have no size block; name a model with one")
    # A part of equal geometry counts as the part, as `cadclip eval` counts.
    hashes = np.array(json.loads(meta["brep_hashes"]))
    row = {p: i for i, p in enumerate(part_ids)}
    own = np.array([(hashes == hashes[row[t]]) if hashes[row[t]] else
                    (np.arange(len(part_ids)) == row[t]) for t in text_ids])
    cosine = texts[:, :width] @ parts[:, :width].T
    block = texts[:, width:] @ parts[:, width:].T
    hits = {"cosine": first_hits(cosine, own), "block": first_hits(block, own),
            "both": first_hits(cosine + block, own)}
    states = np.abs(texts[:, width:]).sum(1) > 0
    print(f"{args.embeddings}: {len(text_ids)} captions ({states.sum()} state a number), "
          f"{len(part_ids)} parts, embedding {width} wide, block {parts.shape[1] - width}")
    print("R@1 " + ", ".join(f"{k} {100 * v.mean():.1f}%" for k, v in hits.items()))
    if not args.manifest:
        return
    group = {p["id"]: p["family"] for p in json.load(open(args.manifest))["parts"]}
    top = cosine.argmax(1)
    right_group = np.array([group[part_ids[t]] == group[text_ids[i]] for i, t in enumerate(top)])
    print(f"cosine's first answer of the caption's group: {100 * right_group.mean():.1f}%")
    rows = collections.defaultdict(list)
    for i, t in enumerate(text_ids):
        rows[group[t]].append(i)
    print(f"{'group':26s} captions  cosine  block   both  cosine's group")
    for name, idx in sorted(rows.items(), key=lambda kv: -len(kv[1])):
        cells = "  ".join(f"{100 * hits[k][idx].mean():5.1f}" for k in ("cosine", "block", "both"))
        print(f"{name:26s} {len(idx):8d}  {cells}  {100 * right_group[idx].mean():5.1f}")


if __name__ == "__main__":
    main()
