#!/usr/bin/env python3
"""Standard parts found by their designations, with and without the facts.

    designation_eval.py SYNTH_DIR INDEX [--split test] [--cadclip BIN] [--by-group]

SYNTH_DIR is a `cadclip synth --kind standard` (or `--kind mixed`) set and
INDEX holds all of its parts (`cadclip index PREPARED --out INDEX`). Every
caption of the standard parts of --split (by default the test split, which
holds exactly the held-out table rows: sizes never trained on) is searched
against the whole index, with the facts the text states ranking first (the
default) and with the embedding alone (--no-facts). Per caption level: R@1,
R@10 and the median rank of the part itself, and how often the first answer
is of the right group (hex bolt, nut, ...) and of the right group and size
(the same table row, length, variant and bore: an ISO 4017 M8x40 and a DIN
933 M8x40 are one size of one group). "Says" is R@1 counting a first answer
that has everything the caption states (its `facts`: "M14x90 hex bolt" states
the group, the size and the length, so an ISO 4014 M14x90 answers it as well
as the ISO 4017 one it was written for; "ISO 4017 M14x90" states the
standard too, and only that part answers it). "Bound" is the R@1 that no
ranker can beat on average by the words alone: per caption, 1 / the number
of parts of the gallery that have everything it states (the four M14x90 hex
bolts share "M14x90 hex bolt", so a ranker picks the one it was written
for a quarter of the time).

--by-group adds, per group (all levels together), R@1 and how often the
first answer has the part's size, with the facts and by the embedding
alone: where a model loses sizes.
"""
import argparse
import collections
import json
import statistics

from cadclip_search import search


def size_key(part):
    """(group, table, row, length, variant, bore) of a standard part; None for other kinds."""
    if part.get("kind") != "standard":
        return None
    p = part["params"]
    row = json.dumps(p.get("row"), sort_keys=True)
    return (part["family"], p.get("table"), row, p.get("length"), p.get("variant"), p.get("bore"))


def row_text(cells):
    """R@1, R@10, MedR, right group, right group and size, R@1 by what the caption says."""
    return "{:5.1f}% {:5.1f}% {:5.1f} {:5.1f}% {:5.1f}% {:5.1f}%".format(*cells)


def stated_values(caption_rows):
    """Per part, every value its captions state for each fact: {id: {key: {value, ...}}}."""
    out = collections.defaultdict(lambda: collections.defaultdict(set))
    for row in caption_rows:
        for key, value in (row.get("facts") or {}).items():
            out[row["id"]][key].add(json.dumps(value, sort_keys=True))
    return out


def has_all(stated, part_id, facts):
    """Whether part `part_id` has every fact of `facts` among what its captions state."""
    return all(json.dumps(v, sort_keys=True) in stated[part_id].get(k, ()) for k, v in facts.items())


def r1_bound(stated, gallery_ids, rows):
    """Mean over captions of 1 / the count of gallery parts with all the facts the caption states."""
    total = 0.0
    for row in rows:
        facts = row.get("facts") or {}
        total += 1.0 / max(1, sum(has_all(stated, p, facts) for p in gallery_ids))
    return 100 * total / len(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("synth_dir")
    parser.add_argument("index")
    parser.add_argument("--split", default="test")
    parser.add_argument("--cadclip", default="build/dev/apps/cadclip")
    parser.add_argument("--by-group", action="store_true", help="a table per group as well")
    args = parser.parse_args()
    manifest = json.load(open(f"{args.synth_dir}/manifest.json"))
    parts = {p["id"]: p for p in manifest["parts"]}
    splits = json.load(open(f"{args.synth_dir}/splits.json"))
    chosen = {i for i in splits[args.split] if parts[i].get("kind") == "standard"}
    by_level = collections.defaultdict(list)
    captions = [json.loads(line) for line in open(f"{args.synth_dir}/captions.jsonl", encoding="utf-8")]
    stated = stated_values(captions)
    for row in captions:
        if row["id"] in chosen:
            by_level[row["level"]].append(row)
    # The index holds every part of the set; a search answers at most 1,000
    # (the searcher's max_k), and a part ranked past them counts as last.
    gallery = len(parts)
    answered = len(search(args.cadclip, args.index, ["part"], gallery, facts=False)[0]["results"])
    standard = sum(p.get("kind") == "standard" for p in parts.values())
    print(f"{args.index}: gallery {gallery} parts ({standard} standard), the first {answered} "
          f"ranked; queries: the "
          f"captions of the {len(chosen)} standard parts of split {args.split}")
    print("level          queries  bound  facts read | with facts:  R@1   R@10  MedR  group   size   says | "
          "embedding alone:  R@1   R@10  MedR  group   size   says")
    by_group = collections.defaultdict(lambda: [0, 0, 0, 0, 0])  # n, r1 and size with facts, alone
    for level, rows in sorted(by_level.items()):
        texts = [" ".join(r["text"].split()) for r in rows]
        n = len(rows)
        cells = []
        for facts in (True, False):
            answers = search(args.cadclip, args.index, texts, answered, facts=facts)
            ranks, group, size, read, says = [], 0, 0, 0, 0
            for answer, row in zip(answers, rows):
                found = [r["id"] for r in answer["results"]]
                ranks.append(found.index(row["id"]) + 1 if row["id"] in found else gallery + 1)
                read += bool(answer.get("facts"))
                first = parts.get(found[0]) if found else None
                tally = by_group[parts[row["id"]]["family"]]
                tally[0] += facts
                tally[1 if facts else 3] += ranks[-1] == 1
                if first is not None:
                    group += first["family"] == parts[row["id"]]["family"]
                    size += size_key(first) == size_key(parts[row["id"]])
                    tally[2 if facts else 4] += size_key(first) == size_key(parts[row["id"]])
                    says += found[0] == row["id"] or has_all(stated, found[0], row.get("facts") or {})
            cells.append((read, 100 * sum(r == 1 for r in ranks) / n,
                          100 * sum(r <= 10 for r in ranks) / n, statistics.median(ranks),
                          100 * group / n, 100 * size / n, 100 * says / n))
        (read, *on), (_, *off) = cells
        bound = r1_bound(stated, parts.keys(), rows)
        print(f"{level:<14} {n:>7} {bound:5.1f}% {read:>11} | {'':>11} {row_text(on)} | {'':>16} {row_text(off)}")
    if args.by_group:
        print("\ngroup                      queries | with facts:  R@1   size | embedding alone:  R@1   size")
        for name, (n, r1_on, size_on, r1_off, size_off) in sorted(by_group.items()):
            cells = [100 * x / n for x in (r1_on, size_on, r1_off, size_off)]
            print(f"{name:<26} {n:>7} | {'':>11} {cells[0]:5.1f}% {cells[1]:5.1f}% | "
                  f"{'':>16} {cells[2]:5.1f}% {cells[3]:5.1f}%")


if __name__ == "__main__":
    main()
