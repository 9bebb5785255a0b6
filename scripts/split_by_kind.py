"""Writes DIR/splits_programs.json, DIR/splits_families.json and
DIR/splits_standard.json: the splits of
SYNTH/splits.json cut down to one kind of part each (from the synth
manifest), for `cadclip eval --subset` or `--splits`.

    python3 scripts/split_by_kind.py DIR [SYNTH]     (SYNTH: DIR/synth, cadclip synth's --out)
"""
import json
import sys

d = sys.argv[1]
synth = sys.argv[2] if len(sys.argv) > 2 else f"{d}/synth"
splits = json.load(open(f"{synth}/splits.json"))
kind = {p["id"]: p.get("kind", "family")
        for p in json.load(open(f"{synth}/manifest.json"))["parts"]}
for k, name in (("program", "programs"), ("family", "families"), ("standard", "standard")):
    json.dump({s: [i for i in ids if kind.get(i) == k] for s, ids in splits.items()},
              open(f"{d}/splits_{name}.json", "w"))
