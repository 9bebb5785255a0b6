#!/usr/bin/env python3
"""Ranking by the facts a query states, measured against the embedding alone.

    facts_eval.py SYNTH_DIR INDEX [--split test] [--per-level 200] [--cadclip BIN]

INDEX holds SYNTH_DIR's parts with a catalog field `split` (made with
`cadclip index PREPARED --metadata splits.csv`, one row `id,split` per part);
the gallery is the parts of --split. Two tables come out:

1. Caption retrieval per level (seen and held-out phrasings): text->CAD R@1
   and R@10 of each part's own captions, with the facts (the default) and
   with --no-facts, up to --per-level captions per level (seeded sample).
2. Generated engineer queries, from the test parts' true facts in the
   manifest ("flange with six bolt holes", "plate 120 x 80 x 10 mm with four
   holes", "tube 40 mm outside, 30 inside"): the share whose first answer
   meets every fact the query states, with and without the facts. A part
   meets a fact when the search says so ('meets' of the facts run); the
   embedding's first answer is looked up among the facts run's answers.
"""
import argparse
import collections
import json
import random

from cadclip_search import search

WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
         9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}


def family_noun(family):
    return family.replace("_", " ")


def engineer_queries(manifest, gallery, rng):
    """(query, part id) pairs from each gallery family part's measured facts."""
    queries = []
    for part in manifest["parts"]:
        if part["id"] not in gallery or part.get("kind", "family") != "family":
            continue
        noun = family_noun(part["family"])
        box = part["measured"]["bbox"]
        dims = sorted((round(box[3 + i] - box[i]) for i in range(3)), reverse=True)
        sets = sorted(part["measured"].get("holes", []), key=lambda s: -s["count"])
        forms = []
        if sets and sets[0]["count"] >= 2:
            n = sets[0]["count"]
            count = WORDS.get(n, str(n))
            forms.append(f"{noun} with {count} bolt holes" if part["family"] == "flange"
                         else f"{noun} with {count} equal holes")
            forms.append(f"{noun} {dims[0]} x {dims[1]} mm with {n} holes of "
                         f"{sets[0]['diameter']:g} mm")
        if dims[2] >= 1:
            forms.append(f"{noun} {dims[0]} x {dims[1]} x {dims[2]} mm")
        if part["family"] in ("tube", "bushing", "spacer", "ring", "washer") and sets:
            forms.append(f"{noun} {dims[0]} mm outside, {sets[-1]['diameter']:g} inside")
        params = part.get("params", {})
        counted = {"spur_gear": ("teeth", "teeth"), "tslot_profile": ("slots", "T-slots")}
        if part["family"] in counted:
            key, word = counted[part["family"]]
            if params.get(key, 0) >= 3:
                forms = [f"{noun} with {WORDS.get(params[key], params[key])} {word}"]
        if part["family"] == "stepped_shaft" and len(params.get("diameters", [])) >= 2:
            n = len(params["diameters"])
            forms = [f"{noun} with {WORDS.get(n, n)} steps"]
        if forms:
            queries.append((rng.choice(forms), part["id"]))
    return queries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("synth_dir")
    parser.add_argument("index")
    parser.add_argument("--split", default="test")
    parser.add_argument("--per-level", type=int, default=200)
    parser.add_argument("--cadclip", default="build/dev/apps/cadclip")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    d = args.synth_dir
    gallery = set(json.load(open(f"{d}/splits.json"))[args.split])
    manifest = json.load(open(f"{d}/manifest.json"))
    kind = {p["id"]: p.get("kind", "family") for p in manifest["parts"]}
    by_level = collections.defaultdict(list)
    for line in open(f"{d}/captions.jsonl"):
        c = json.loads(line)
        if c["id"] in gallery and c.get("noise") is None:
            by_level[(kind[c["id"]], c["level"])].append(c)

    print(f"{d}, split {args.split}: gallery {len(gallery)} parts; index {args.index}")
    print(f"{'kind':<8}{'level':<22}{'queries':>8}{'R@1 emb':>9}{'R@1 facts':>11}"
          f"{'R@10 emb':>10}{'R@10 facts':>12}")
    for (k, level), captions in sorted(by_level.items()):
        sample = rng.sample(captions, min(args.per_level, len(captions)))
        texts = [" ".join(c["text"].split()) for c in sample]
        ranks = {}
        for facts in (False, True):
            answers = search(args.cadclip, args.index, texts, 10, f"split={args.split}", facts)
            ranks[facts] = [next((r["rank"] for r in a["results"] if r["id"] == c["id"]), 11)
                            for a, c in zip(answers, sample)]
        n = len(sample)
        r1 = {f: 100 * sum(r == 1 for r in ranks[f]) / n for f in ranks}
        r10 = {f: 100 * sum(r <= 10 for r in ranks[f]) / n for f in ranks}
        print(f"{k:<8}{level:<22}{n:>8}{r1[False]:>8.1f}%{r1[True]:>10.1f}%"
              f"{r10[False]:>9.1f}%{r10[True]:>11.1f}%")

    queries = engineer_queries(manifest, gallery, rng)
    texts = [q for q, _ in queries]
    with_facts = search(args.cadclip, args.index, texts, 300, f"split={args.split}", True)
    alone = search(args.cadclip, args.index, texts, 1, f"split={args.split}", False)
    met = {True: 0, False: 0}
    read = undecided = 0
    for a, b in zip(with_facts, alone):
        if not a.get("facts"):
            continue
        read += 1
        # The parts that meet every fact come first in the facts run: when
        # all of them are among its answers, a part missing there meets fewer.
        meets = {r["id"]: all(r["meets"]) for r in a["results"]}
        undecided += a["meeting_all"] > len(a["results"]) and b["results"][0]["id"] not in meets
        met[True] += bool(a["results"]) and all(a["results"][0]["meets"])
        met[False] += bool(b["results"]) and meets.get(b["results"][0]["id"], False)
    print(f"\nengineer queries: {len(texts)} generated, {read} with facts read; first answer "
          f"meets every stated fact: embedding alone {100 * met[False] / max(read, 1):.1f}%, "
          f"with the facts {100 * met[True] / max(read, 1):.1f}% ({undecided} undecided, counted "
          f"as not met)")
    for q, _ in queries[:8]:
        print(f"  e.g. {q}")


if __name__ == "__main__":
    main()
