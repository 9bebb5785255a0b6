#!/usr/bin/env python3
"""Text encoder benchmark: cadclip against transformers, same run, same threads.

Text in, L2-normalised sentence embedding out, tokenisation included on both
sides, with the real all-MiniLM-L6-v2:
  - batch 1: one caption of <= 32 tokens per run (latency);
  - batch 128: 128 captions of mixed length per run (throughput).
transformers runs with its default attention (AutoModel, no attn_implementation
given), its fast BertTokenizer, mean pooling and normalisation as
sentence-transformers does. cadclip runs in bench/text/text_bench (release
build), driven through a pipe; each run is timed inside its own process, and
runs alternate (cadclip, transformers, cadclip, ...).

    /opt/cadclip/venv/bin/python bench/text/run.py [--build build/release] [--threads 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/release", help="cadclip build folder")
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads, both sides")
    parser.add_argument("--model", default=os.environ.get(
        "CADCLIP_TEXT_MODEL", "/opt/cadclip/models/all-MiniLM-L6-v2"))
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    from benchlib import Bench
    bench1 = Bench("text encoder, batch 1 (<= 32 tokens), text -> normalised embedding",
                   threads=args.threads)
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    with open(os.path.join(ROOT, "tests", "fixtures", "text", "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)["corpus"]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model).eval()
    print(f"transformers: {type(model).__name__}, attention {model.config._attn_implementation}, "
          f"tokenizer {type(tokenizer).__name__}")
    # Generated CAD captions (the corpus' template part): realistic lengths.
    captions = corpus[66:]
    single = [t for t in captions if len(tokenizer(t)["input_ids"]) <= 32][:32]
    batch = captions[:128]
    lengths = [len(tokenizer(t)["input_ids"]) for t in batch]
    print(f"batch 1: {len(single)} captions of <= 32 tokens, cycled; batch 128: tokens per "
          f"caption {min(lengths)}..{max(lengths)}, mean {sum(lengths) / len(lengths):.1f}")

    def python_embed(texts):
        with torch.inference_mode():
            enc = tokenizer(texts, padding=True, truncation=True, max_length=256,
                            return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    tmp = tempfile.TemporaryDirectory()
    texts_path = os.path.join(tmp.name, "texts.json")
    with open(texts_path, "w", encoding="utf-8") as f:
        json.dump({"single": single, "batch": batch}, f)
    exe = os.path.join(args.build, "bench", "text", "text_bench")
    proc = subprocess.Popen([exe, args.model, texts_path, str(args.threads)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))

    def ask(command):
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    # Same vectors on both sides before timing anything.
    dump = os.path.join(tmp.name, "cadclip.safetensors")
    assert ask(f"dump {dump}") == "ok"
    cosine = (load_file(dump)["embeddings"] * python_embed(batch)).sum(1)
    print(f"cadclip vs transformers on the batch: min cosine {cosine.min().item():.7f}")

    counter = {"c": 0, "p": 0}

    def cadclip_one():
        counter["c"] += 1
        return float(ask(f"one {counter['c']}"))

    def python_one():
        counter["p"] += 1
        text = single[counter["p"] % len(single)]
        start = time.perf_counter()
        python_embed([text])
        return time.perf_counter() - start

    bench1.add("cadclip", cadclip_one)
    bench1.add("transformers", python_one)
    bench1.run(warmup=5, repeats=args.repeats * 4)
    bench1.report(reference="transformers", unit_per_run=1, unit="texts")

    def python_batch():
        start = time.perf_counter()
        python_embed(batch)
        return time.perf_counter() - start

    print()
    bench128 = Bench("text encoder, batch 128 (mixed lengths), text -> normalised embedding",
                     threads=args.threads)
    bench128.add("cadclip (sorted, sub-batches of 32)", lambda: float(ask("batch 32")))
    bench128.add("cadclip (one padded batch of 128)", lambda: float(ask("batch 128")))
    bench128.add("transformers", python_batch)
    bench128.run(warmup=2, repeats=args.repeats // 2)
    bench128.report(reference="transformers", unit_per_run=128, unit="texts")
    ask("quit")
    proc.wait()


if __name__ == "__main__":
    main()
