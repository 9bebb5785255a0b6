"""`cadclip search --json` from the bench scripts: texts in batches, one
answer dict per text."""
import json
import subprocess
import sys


def search(cadclip, index, texts, k, filter_text="", facts=True, batch=64):
    """The answers to texts, in order; exits naming the failure when a search fails."""
    out = []
    for start in range(0, len(texts), batch):
        cmd = [cadclip, "search", index, *texts[start:start + batch], "-k", str(k), "--json"]
        if filter_text:
            cmd += ["--filter", filter_text]
        if not facts:
            cmd.append("--no-facts")
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"cadclip search failed: {run.stderr[-2000:]}")
        parsed = json.loads(run.stdout)  # one object for one text, an array for several
        out.extend(parsed if isinstance(parsed, list) else [parsed])
    return out
