#!/usr/bin/env python3
"""How varied the seen phrasings of a synthetic set are, and how far the held-out ones lie from them.

    python3 scripts/phrasing_diversity.py SYNTH_DIR [--kind program|family|all]

Reads SYNTH_DIR/captions.jsonl (`cadclip synth` output). Numbers (and count
words) are masked to '#', so two captions that differ only in their numbers
count as one. Per level and phrasing (seen '<level>', held out
'<level>_heldout'), clean captions only:

- captions: how many;
- masked distinct: distinct masked texts, a share of the captions;
- openings: distinct first three masked words (a proxy for sentence structures);
- vocabulary: distinct masked words;
- trigrams: distinct masked word trigrams.

And per level with held-out captions, the lexical overlap of held-out with seen:

- trigram coverage: share of the held-out captions' distinct trigrams that
  seen captions of the level also use;
- vocabulary Jaccard: |seen words & held-out words| / |seen words | held-out words|;
- exact openings shared: held-out openings that seen captions also start with.
"""
import argparse
import collections
import json
import re

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
COUNT_WORDS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
               "ten", "eleven", "twelve"}


def masked_words(text):
    words = NUMBER.sub(" # ", text.lower()).replace(",", " ,").replace(";", " ;").split()
    return ["#" if w.strip(".:") in COUNT_WORDS else w for w in words]


def stats(texts):
    masked = [masked_words(t) for t in texts]
    vocab, trigrams, openings = set(), set(), set()
    for words in masked:
        vocab.update(words)
        trigrams.update(zip(words, words[1:], words[2:]))
        openings.add(tuple(words[:3]))
    return {
        "captions": len(texts),
        "distinct": len({" ".join(w) for w in masked}),
        "openings": openings,
        "vocab": vocab,
        "trigrams": trigrams,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("synth_dir")
    parser.add_argument("--kind", default="program", choices=["program", "family", "all"])
    args = parser.parse_args()
    by_level = collections.defaultdict(list)
    with open(f"{args.synth_dir}/captions.jsonl") as f:
        for line in f:
            c = json.loads(line)
            kind = c.get("kind", "family")
            if c.get("noise") is not None or (args.kind != "all" and kind != args.kind):
                continue
            by_level[c["level"]].append(c["text"])
    order = ["abstract", "beginner", "intermediate", "expert", "name"]
    levels = [l for l in order if l in by_level] + sorted(
        l for l in by_level if l not in order and not l.endswith("_heldout"))
    print(f"{args.synth_dir} ({args.kind} captions, clean)")
    print(f"{'level':<22}{'captions':>9}{'masked distinct':>17}{'openings':>10}{'vocabulary':>12}"
          f"{'trigrams':>10}")
    table = {}
    for level in levels:
        for name in (level, level + "_heldout"):
            if name not in by_level:
                continue
            s = table[name] = stats(by_level[name])
            print(f"{name:<22}{s['captions']:>9}{s['distinct']:>8} ({100 * s['distinct'] / s['captions']:5.1f}%)"
                  f"{len(s['openings']):>10}{len(s['vocab']):>12}{len(s['trigrams']):>10}")
    held = [l for l in levels if l + "_heldout" in table]
    if held:
        print()
        print(f"{'level':<14}{'held-out trigrams seen':>24}{'vocabulary Jaccard':>20}"
              f"{'held-out openings seen':>24}")
        for level in held:
            seen, out = table[level], table[level + "_heldout"]
            coverage = len(out["trigrams"] & seen["trigrams"]) / max(1, len(out["trigrams"]))
            jaccard = len(out["vocab"] & seen["vocab"]) / max(1, len(out["vocab"] | seen["vocab"]))
            openings = len(out["openings"] & seen["openings"])
            print(f"{level:<14}{100 * coverage:>23.1f}%{jaccard:>20.3f}"
                  f"{openings:>14} of {len(out['openings']):<7}")


if __name__ == "__main__":
    main()
