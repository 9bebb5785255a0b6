#!/usr/bin/env python3
"""Text->CAD ranks of captioned parts in an index, with and without the facts.

    caption_ranks.py INDEX CAPTIONS.jsonl [--filter split=validation]
                     [--levels title,description] [--cadclip BIN]

Each caption (JSONL rows with id, text and level) of a part in the gallery
(the index's parts, or those passing --filter) is searched with the facts the
text states ranking first (the default) and with the embedding alone
(--no-facts); the part's own rank gives R@1, R@10 and the median rank per
level; a part of equal geometry (`cadclip duplicates`, exact) counts as
the part, as `cadclip eval` counts it. For the real checks: the 31 shared
parts and their human captions, and the held-out fold of the real
descriptions.
"""
import argparse
import collections
import json
import statistics
import subprocess
import sys

from cadclip_search import search


def geometry_twins(cadclip, index):
    """{id: set of ids of equal geometry, itself included} for the parts that have a twin."""
    run = subprocess.run([cadclip, "--log-level", "warn", "duplicates", index, "--kinds", "exact",
                          "--format", "json"], capture_output=True, text=True)
    if run.returncode not in (0, 1):  # 1: clusters found
        sys.exit(f"cadclip duplicates failed: {run.stderr[-2000:]}")
    twins = {}
    for cluster in json.loads(run.stdout)["clusters"]:
        members = {m["id"] for m in cluster["members"]}
        for m in members:
            twins[m] = members
    return twins


def ranks(cadclip, index, texts, ids, filter_text, k, facts, twins):
    """Each caption's own part's rank (k + 1 when not in the first k; a part of equal geometry
    counts as the part, as `cadclip eval` counts it), and whether facts were read."""
    out = []
    for answer, part in zip(search(cadclip, index, texts, k, filter_text, facts), ids):
        hits = twins.get(part, {part})
        found = [n for n, r in enumerate(answer["results"], 1) if r["id"] in hits]
        out.append((found[0] if found else k + 1, bool(answer.get("facts"))))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index")
    parser.add_argument("captions")
    parser.add_argument("--filter", default="")
    parser.add_argument("--levels", default="")
    parser.add_argument("--cadclip", default="build/dev/apps/cadclip")
    args = parser.parse_args()
    probe = search(args.cadclip, args.index, ["part"], 100000, args.filter, facts=False)
    gallery = {r["id"] for r in probe[0]["results"]}
    twins = geometry_twins(args.cadclip, args.index)
    levels = set(args.levels.split(",")) if args.levels else None
    by_level = collections.defaultdict(list)
    for line in open(args.captions, encoding="utf-8"):
        row = json.loads(line)
        if row["id"] in gallery and (levels is None or row.get("level") in levels):
            by_level[row.get("level", "")].append(row)
    print(f"{args.index}: gallery {len(gallery)} parts{' (' + args.filter + ')' if args.filter else ''}")
    print(f"{'level':<14}{'queries':>8}{'with facts read':>16}   "
          f"{'R@1':>6}{'R@10':>7}{'MedR':>6}   embedding alone: {'R@1':>6}{'R@10':>7}{'MedR':>6}")
    for level, rows in sorted(by_level.items()):
        texts = [" ".join(r["text"].split()) for r in rows]
        ids = [r["id"] for r in rows]
        got = {f: ranks(args.cadclip, args.index, texts, ids, args.filter, len(gallery), f, twins)
               for f in (True, False)}
        n = len(rows)

        def stats(rs):
            values = [r for r, _ in rs]
            return (100 * sum(v == 1 for v in values) / n, 100 * sum(v <= 10 for v in values) / n,
                    statistics.median(values))
        on, off = stats(got[True]), stats(got[False])
        read = sum(s for _, s in got[True])
        print(f"{level:<14}{n:>8}{read:>16}   {on[0]:>5.1f}%{on[1]:>6.1f}%{on[2]:>6.1f}"
              f"   {'':>17}{off[0]:>5.1f}%{off[1]:>6.1f}%{off[2]:>6.1f}")


if __name__ == "__main__":
    main()
