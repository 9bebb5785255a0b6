#!/usr/bin/env python3
"""Held-out caption queries for bench/search: captions of parts the checkpoint
never trained on, one per line, in a seeded random order.

  held_out_queries.py --count 1000 --seed 1 --out queries.txt \
      SYNTH_DIR[:SPLIT,SPLIT] ...

Each argument is a `cadclip synth` folder (captions.jsonl, splits.json); with
`:validation,test` only the parts of those splits count (the folder the model
trained on), without it every part (a folder made with another seed, which the
model never saw).
"""
import argparse
import json
import random
import sys
from pathlib import Path


def captions_of(spec: str) -> list[str]:
    folder, _, splits = spec.partition(":")
    folder = Path(folder)
    keep = None
    if splits:
        table = json.loads((folder / "splits.json").read_text())
        keep = set()
        for name in splits.split(","):
            if name not in table:
                sys.exit(f"{folder}/splits.json has no split '{name}' (it has {sorted(table)})")
            keep.update(table[name])
    out = []
    with open(folder / "captions.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if keep is None or row["id"] in keep:
                out.append(" ".join(row["text"].split()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", help="SYNTH_DIR or SYNTH_DIR:split,split")
    parser.add_argument("--count", type=int, default=1000, help="queries to write")
    parser.add_argument("--seed", type=int, default=1, help="order of the sample")
    parser.add_argument("--out", required=True, help="file to write, one query per line")
    args = parser.parse_args()
    captions = sorted({c for spec in args.folders for c in captions_of(spec) if c})
    random.Random(args.seed).shuffle(captions)
    chosen = captions[: args.count]
    Path(args.out).write_text("\n".join(chosen) + "\n", encoding="utf-8")
    print(f"{len(chosen)} held-out captions (of {len(captions)} distinct) -> {args.out}")


if __name__ == "__main__":
    main()
