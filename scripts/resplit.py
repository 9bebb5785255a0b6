"""Re-split a synthetic set for a large test gallery: a stable share of the
parts, chosen by a hash of each id (independent of order and of the other
ids), goes to each split; the output has the shape of `cadclip synth`'s
splits.json.

    python3 scripts/resplit.py SPLITS_IN SPLITS_OUT TRAIN_SHARE VALIDATION_SHARE
    (test = the rest)
"""
import hashlib
import json
import sys

source, target = sys.argv[1], sys.argv[2]
train_share, validation_share = float(sys.argv[3]), float(sys.argv[4])
if not (0 < train_share and 0 <= validation_share and train_share + validation_share < 1):
    sys.exit(f"shares {train_share}, {validation_share}: need train > 0, validation >= 0, sum < 1")
ids = sorted(i for split in json.load(open(source)).values() for i in split)
splits = {"train": [], "validation": [], "test": []}
for part in ids:
    u = int.from_bytes(hashlib.sha256(part.encode()).digest()[:8], "big") / 2**64
    name = "train" if u < train_share else "validation" if u < train_share + validation_share else "test"
    splits[name].append(part)
json.dump(splits, open(target, "w"), indent=1)
print({k: len(v) for k, v in splits.items()})
