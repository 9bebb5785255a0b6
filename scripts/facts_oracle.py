#!/usr/bin/env python3
"""The best R@1 any retriever can reach on a synthetic split, per caption level.

`cadclip synth --stats` gives the family-only oracle: a retriever that knows
the query part's family and nothing else. This script gives the other end, the
facts oracle: a retriever that reads every fact a caption states (family,
counts, sizes, size class) perfectly and knows every gallery part's true
parameters. It ranks the gallery parts consistent with all those facts first,
in random order, so its expected R@1 is 1 / (consistent parts). A caption that
names only the family ("The part is a U-channel.") cannot do better than the
family-only oracle, whatever the model.

    python3 scripts/facts_oracle.py SYNTH_DIR [--split test]

SYNTH_DIR is a `cadclip synth` folder (captions.jsonl, manifest.json,
splits.json). A family part's true facts are the union of the facts its clean
captions state (every statement of a clean caption is true: tests/synth checks
it), and its size class comes from its measured bounding box with the
generator's thresholds (src/synth/captions.cc, size_word); numbers match
within the captions' rounding (0.5 mm, or 1% when larger). A program part's
true facts are the exact values in its manifest entry ('truth'), and a
program caption's numbers match within the rounding it states ('decimals':
half a unit of its last decimal; lists element by element). Programs and
family parts are told apart (their captions' registers differ), so a program
plate is never a family plate. Noisy captions (manifest 'noisy') are queries
like any other, but never define a part's facts. Levels are the four Text2CAD
levels, the name level (short names such as "M8 spacer 20mm", whose bolt size
is a fact 'bolt_size' or 'thread' like any number) and, for programs, the
held-out phrasings' '<level>_heldout'.
"""
import argparse
import collections
import json
import sys

LEVELS = ["abstract", "beginner", "intermediate", "expert", "name"]


def size_class(bbox):
    extent = max(bbox[3] - bbox[0], bbox[4] - bbox[1], bbox[5] - bbox[2])
    return "small" if extent < 30 else "medium-sized" if extent < 150 else "large"


def same(stated, true):
    if isinstance(stated, (int, float)) and isinstance(true, (int, float)):
        return abs(stated - true) <= max(0.5, 0.01 * abs(true))
    return stated == true


def same_program(stated, true, tolerance):
    if isinstance(stated, list) or isinstance(true, list):
        return (isinstance(stated, list) and isinstance(true, list) and len(stated) == len(true)
                and all(same_program(s, t, tolerance) for s, t in zip(stated, true)))
    if isinstance(stated, (int, float)) and isinstance(true, (int, float)):
        return abs(stated - true) <= tolerance
    return stated == true


def consistent(query, truth):
    facts = query["facts"]
    if query.get("kind") == "program":
        tolerance = 0.5 * 10 ** -query["decimals"] + 1e-9
        return all(k in truth and same_program(v, truth[k], tolerance) for k, v in facts.items())
    return all(k in truth and same(v, truth[k]) for k, v in facts.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("synth_dir")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    d = args.synth_dir
    captions = [json.loads(line) for line in open(f"{d}/captions.jsonl")]
    manifest = json.load(open(f"{d}/manifest.json"))
    gallery = set(json.load(open(f"{d}/splits.json"))[args.split])
    if not gallery:
        sys.exit(f"split '{args.split}' of {d}/splits.json is empty")

    truth = collections.defaultdict(dict)
    kind_of = {}
    for part in manifest["parts"]:
        if part["id"] in gallery:
            kind_of[part["id"]] = part.get("kind", "family")
            if kind_of[part["id"]] == "program":
                truth[part["id"]] = dict(part["truth"])
            else:
                truth[part["id"]]["size_class"] = size_class(part["measured"]["bbox"])
            truth[part["id"]]["family"] = part["family"]
    for c in captions:
        if c["id"] in gallery and c.get("noise") is None and kind_of[c["id"]] == "family":
            for key, value in c["facts"].items():
                truth[c["id"]].setdefault(key, value)

    by_family = collections.defaultdict(list)
    for g, t in truth.items():
        by_family[(kind_of[g], t["family"])].append((g, t))
    levels = LEVELS + sorted({c["level"] for c in captions} - set(LEVELS),
                             key=lambda l: (l.replace("_heldout", "") not in LEVELS,
                                            LEVELS.index(l.replace("_heldout", ""))
                                            if l.replace("_heldout", "") in LEVELS else 0, l))

    print(f"{d}, split {args.split}: gallery {len(gallery)} parts")
    print(f"{'level':<22}{'queries':>8}{'family oracle R@1':>20}{'facts oracle R@1':>19}"
          f"{'3x family':>11}  family-only captions")
    for level in levels:
        queries = [c for c in captions if c["id"] in gallery and c["level"] == level]
        if not queries:
            continue
        facts_r1 = family_r1 = family_only = 0.0
        for q in queries:
            facts = q["facts"]
            group = by_family.get((q.get("kind", "family"), facts.get("family")), [])
            family = [g for g, _ in group]
            matching = [g for g, t in group if consistent(q, t)]
            facts_r1 += 1 / len(matching) if q["id"] in matching else 0
            family_r1 += 1 / len(family) if q["id"] in family else 0
            family_only += set(facts) == {"family"}
        n = len(queries)
        print(f"{level:<22}{n:>8}{100 * family_r1 / n:>19.2f}%{100 * facts_r1 / n:>18.2f}%"
              f"{300 * family_r1 / n:>10.2f}%  {100 * family_only / n:.1f}%")


if __name__ == "__main__":
    main()
