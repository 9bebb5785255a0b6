#!/usr/bin/env python3
"""Would a size block in the embedding find parts by the sizes a caption states?

    size_code_probe.py --train FOLDER... --choose-on SPEC... --gallery SPEC...
                       [--checkpoint models/default.json] [--bins-per-decade 25]
                       [--epochs 60] [--seed 1] [--threads 2]

    SPEC = NAME=FOLDER[,split=S][,subset=SPLITS_JSON][,gallery=all][,groups=MANIFEST]

A measurement, not a product path. The released model's embedding finds a
standard part's group almost always but its size seldom (docs/RESULTS.md,
"Standard parts by designation"). This probe asks how far a size block
appended to both embeddings of a trained checkpoint would take the
embedding alone, everywhere:

- CAD side, fixed: the part's three bounding-box sides (the prepared
  graph's `bbox_mm`, sorted, log10 mm), each spread over bins of 1/B
  decade by linear interpolation between the two nearest bin centres, each
  side's vector scaled to unit length;
- text side, learned: a small MLP over the checkpoint's text embedding and
  the numbers of the caption (the first 8, in order, as log10 and two
  coarse periods; the "3" of "a 3D shape" is none) predicts, per side, a
  Gaussian over log10 mm (mean and spread, trained by its negative log
  likelihood on the train split of every --train folder), read out as a
  probability over the same bins;
  a regression interpolates between the sizes it saw, where a classifier
  over the bins gives a bin it was never trained towards no mass (tried:
  held-out table rows fell below the embedding alone);
- score = cosine of the two embeddings + w * the sum over the three sides
  of probability . bin weights: one inner product of the concatenated
  vectors, so a FAISS index keeps working; w is chosen on the --choose-on
  sets (the mean of their R@1 over all captions). With --only-with-numbers
  a caption that states no number gets no size block (its size row is 0).

Each SPEC's queries are the captions of its parts in split S (default
test), limited to the `test` list of SUBSET when given; the gallery is the
same parts, or every part of FOLDER with gallery=all (the designation test:
held-out table rows searched among all parts). A part of equal geometry
counts as the part, and ties count against it, as `cadclip eval` counts
(so w = 0 gives `cadclip eval`'s R@1). Printed per gallery and caption
level: R@1 of the embedding alone and with the size block, and how often
the first answer has the part's size (its three box sides each within 2%);
with groups=MANIFEST (a synth set's manifest.json) also per `family` of
the query's part, all levels together, at the chosen w.
"""
import argparse
import collections
import hashlib
import json
import math
import os
import re

import torch

import cadclip

NUMBER = re.compile(r"\d+(?:\.\d+)?")
DIMENSIONALITY = re.compile(r"\b\d-?[dD]\b")  # "3D shape" states no size
LOG_LO, LOG_HI = math.log10(0.3), math.log10(10000.0)


class TextEmbeddings:
    """The checkpoint's text embeddings, kept in a file per list of texts when
    CADCLIP_PROBE_CACHE names a folder (most of a run's time is this)."""

    def __init__(self, model):
        self.model = model
        self.folder = os.environ.get("CADCLIP_PROBE_CACHE", "")
        # The weights themselves: runs' `last.json` pointers can read alike.
        weights = hashlib.sha256()
        for root, _, files in sorted(os.walk(model.checkpoint)):
            for name in sorted(files):
                if name.endswith(".safetensors"):
                    weights.update(open(os.path.join(root, name), "rb").read())
        self.key = weights.hexdigest()

    def __call__(self, texts):
        if not self.folder:
            return unit_part(self.model, self.model.embed_text(texts))
        digest = hashlib.sha256("\n".join([self.key] + texts).encode()).hexdigest()[:24]
        path = f"{self.folder}/{digest}.pt"
        if os.path.exists(path):
            return torch.load(path)
        out = unit_part(self.model, self.model.embed_text(texts))
        os.makedirs(self.folder, exist_ok=True)
        torch.save(out, path)
        return out


def unit_part(model, rows):
    """The unit embeddings of rows: a model's own size block (cadclip fit-sizes) left out."""
    return rows[:, :model.embed_dim - model.size_block]


def log_sides(graph):
    box = graph.tensors()["bbox_mm"].tolist()
    return [math.log10(max(s, 1e-3)) for s in sorted(box[i + 3] - box[i] for i in range(3))]


def bin_weights(sides, bins):
    """[n, 3, bins]: each side split between its two nearest bin centres, unit length per side."""
    x = (torch.tensor(sides) - LOG_LO) / (LOG_HI - LOG_LO) * (bins - 1)
    x = x.clamp(0, bins - 1)
    lo = x.floor().long().clamp(max=bins - 2)
    frac = x - lo
    w = torch.zeros(*x.shape, bins)
    w.scatter_(-1, lo.unsqueeze(-1), (1 - frac).unsqueeze(-1))
    w.scatter_add_(-1, (lo + 1).unsqueeze(-1), frac.unsqueeze(-1))
    return w / w.norm(dim=-1, keepdim=True)


def number_features(texts, count=8):
    rows = []
    for t in texts:
        values = [float(v) for v in NUMBER.findall(DIMENSIONALITY.sub(" ", t))][:count]
        row = []
        for i in range(count):
            if i < len(values):
                v = math.log10(max(values[i], 1e-3))
                row += [1.0, v / 3, math.sin(math.pi * v), math.cos(math.pi * v),
                        math.sin(2 * math.pi * v), math.cos(2 * math.pi * v)]
            else:
                row += [0.0] * 6
        rows.append(row)
    return torch.tensor(rows)


class SizeHead(torch.nn.Module):
    """Per bounding-box side a Gaussian over log10 mm."""

    def __init__(self, width, bins, hidden=512):
        super().__init__()
        self.centres = torch.linspace(LOG_LO, LOG_HI, bins)
        self.net = torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.GELU(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.GELU(),
                                       torch.nn.Linear(hidden, 6))

    def forward(self, x):
        out = self.net(x).view(-1, 3, 2)
        return out[..., 0] + 1.0, out[..., 1].clamp(-6, 2)  # mean, log sigma

    def nll(self, x, sides):
        mean, log_sigma = self(x)
        return (log_sigma + 0.5 * ((sides - mean) / log_sigma.exp()) ** 2).sum(-1).mean()

    def probabilities(self, x):
        mean, log_sigma = self(x)
        half_bin = 0.5 * (LOG_HI - LOG_LO) / (len(self.centres) - 1)
        sigma = log_sigma.exp().clamp(min=half_bin)
        z = (self.centres.view(1, 1, -1) - mean.unsqueeze(-1)) / sigma.unsqueeze(-1)
        return (-0.5 * z * z).softmax(-1)


class Gallery:
    """Queries (captions of one split's parts) and the parts they are searched among."""

    def __init__(self, spec, model, embed_text, bins):
        self.name, rest = spec.split("=", 1)
        folder, *options = rest.split(",")
        opts = dict(o.split("=", 1) for o in options)
        data = cadclip.PreparedDataset(folder)
        split = opts.get("split", "test")
        splits = json.load(open(f"{folder}/splits.json"))
        query_ids = list(splits[split])
        if "subset" in opts:
            keep = set(json.load(open(opts["subset"]))["test"])
            query_ids = [i for i in query_ids if i in keep or i.split("/")[-1] in keep]
        gallery_ids = list(data.ids) if opts.get("gallery") == "all" else query_ids
        graphs = [data[data.find(i)] for i in gallery_ids]
        self.cad = unit_part(model, model.embed_parts(graphs))
        self.sides = torch.tensor([log_sides(g) for g in graphs])
        self.cad_bins = bin_weights(self.sides.tolist(), bins)
        hashes = [g.geometry_hash for g in graphs]
        twins = collections.defaultdict(list)  # geometry hash -> gallery rows
        for j, h in enumerate(hashes):
            twins[h].append(j)
        captions = data.captions()
        self.texts, self.levels, correct, own, self.groups = [], [], [], [], []
        group_of = {}
        if "groups" in opts:
            group_of = {p["id"]: p["family"] for p in json.load(open(opts["groups"]))["parts"]}
        row_of = {pid: j for j, pid in enumerate(gallery_ids)}
        for pid in query_ids:
            for c in captions.get(pid, []):
                self.texts.append(c["text"])
                self.levels.append(c["level"])
                own.append(row_of[pid])
                self.groups.append(group_of.get(pid.split("/")[-1], "?"))
                correct.append(twins[hashes[row_of[pid]]])
        self.correct = torch.zeros(len(self.texts), len(gallery_ids), dtype=torch.bool)
        for q, js in enumerate(correct):
            self.correct[q, js] = True
        self.embedded = embed_text(self.texts)
        self.semantic = self.embedded @ self.cad.T
        self.own_sides = self.sides[torch.tensor(own)]
        self.parts = len(gallery_ids)

    def size_scores(self, head, only_with_numbers):
        with torch.no_grad():
            numbers = number_features(self.texts)
            prob = head.probabilities(torch.cat([self.embedded, numbers], 1))
        self.size = torch.einsum("qsb,gsb->qg", prob, self.cad_bins)
        if only_with_numbers:
            self.size = self.size * numbers[:, :1]  # the first number's presence flag

    def hits(self, w):
        s = self.semantic + w * self.size
        best_correct = s.masked_fill(~self.correct, -math.inf).max(1).values
        beaten = (s >= best_correct.unsqueeze(1)) & ~self.correct
        return beaten.sum(1) == 0

    def first_has_size(self, w):
        """Whether the first answer's three box sides are each within 2% of the part's."""
        first = (self.semantic + w * self.size).argmax(1)
        return (self.sides[first] - self.own_sides).abs().max(1).values < math.log10(1.02)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", required=True, help="prepared folders; their train splits")
    ap.add_argument("--choose-on", nargs="+", required=True, help="SPECs that choose w")
    ap.add_argument("--gallery", nargs="+", required=True, help="SPECs measured")
    ap.add_argument("--checkpoint", default="models/default.json")
    ap.add_argument("--bins-per-decade", type=int, default=25)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--report-w", type=float, nargs="*", default=[],
                    help="also measure the galleries at these weights")
    ap.add_argument("--only-with-numbers", action="store_true",
                    help="no size block for a caption that states no number")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    bins = int(round((LOG_HI - LOG_LO) * args.bins_per_decade)) + 1
    model = cadclip.Model.load(args.checkpoint, threads=args.threads)
    embed_text = TextEmbeddings(model)

    texts, sides = [], []
    for folder in args.train:
        data = cadclip.PreparedDataset(folder, split="train")
        captions = data.captions()
        for i in range(len(data)):
            s = log_sides(data[i])
            for c in captions.get(data.id(i), []):
                texts.append(c["text"])
                sides.append(s)
    features = torch.cat([embed_text(texts), number_features(texts)], 1)
    target = torch.tensor(sides)
    head = SizeHead(features.shape[1], bins)
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=0.01)
    print(f"size head: {len(texts)} training captions")
    for epoch in range(args.epochs):
        order = torch.randperm(len(texts))
        total = 0.0
        for start in range(0, len(order), 128):
            b = order[start:start + 128]
            loss = head.nll(features[b], target[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        if epoch % 20 == 19 or epoch == args.epochs - 1:
            print(f"size head epoch {epoch + 1}: negative log likelihood {total / len(texts):.3f}")

    choose = [Gallery(s, model, embed_text, bins) for s in args.choose_on]
    for g in choose:
        g.size_scores(head, args.only_with_numbers)
    best_w, best = 0.0, -1.0
    for w in [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]:
        shares = [float(g.hits(w).float().mean()) for g in choose]
        mean = sum(shares) / len(shares)
        print(f"choose w={w}: " + ", ".join(f"{g.name} {100 * s:.1f}%" for g, s in zip(choose, shares)))
        if mean > best:
            best_w, best = w, mean
    print(f"chosen w={best_w}")

    weights = [best_w] + [w for w in args.report_w if w != best_w]
    print("gallery        parts  level                 queries  R@1 alone  " +
          "  ".join(f"w={w:<6g}" for w in weights) +
          f"  size first: alone  w={best_w:<6g}")
    for spec in args.gallery:
        g = Gallery(spec, model, embed_text, bins)
        g.size_scores(head, args.only_with_numbers)
        alone, withs = g.hits(0.0), [g.hits(w) for w in weights]
        sized = [g.first_has_size(0.0), g.first_has_size(best_w)]
        by_level = collections.defaultdict(list)
        for i, lv in enumerate(g.levels):
            by_level[lv].append(i)
        for lv in sorted(by_level):
            idx = torch.tensor(by_level[lv])
            pct = lambda t: f"{100 * float(t[idx].float().mean()):8.1f}%"
            print(f"{g.name:14s} {g.parts:5d}  {lv:21s} {len(idx):7d} {pct(alone)}  "
                  + "  ".join(pct(h) for h in withs) + "      " + "  ".join(pct(h) for h in sized),
                  flush=True)
        if any(group != "?" for group in g.groups):
            by_group = collections.defaultdict(list)
            for i, group in enumerate(g.groups):
                by_group[group].append(i)
            for group, rows in sorted(by_group.items(), key=lambda kv: -len(kv[1])):
                idx = torch.tensor(rows)
                pct = lambda t: f"{100 * float(t[idx].float().mean()):8.1f}%"
                print(f"{g.name:14s} {g.parts:5d}  {group:21s} {len(idx):7d} {pct(alone)}  "
                      f"{pct(withs[0])}      {pct(sized[0])}  {pct(sized[1])}", flush=True)


if __name__ == "__main__":
    main()
