"""Time and peak memory of the B-Rep encoder on one large graph, one process
per case (brep_encoder_sizes_bench), for the ingest limits of docs/INGEST.md.

    python3 bench/model/sizes.py [build/dev] [threads=1] [faces=1000,2000,5000] [modes=forward,mixed]

Prints a Markdown table: seconds per pass (median of 2) and the process's
peak resident memory, less what it held before the pass (model and graphs).
"""
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build/dev"
threads = sys.argv[2] if len(sys.argv) > 2 else "1"
sizes = sys.argv[3] if len(sys.argv) > 3 else "1000,2000,5000"
modes = sys.argv[4] if len(sys.argv) > 4 else "forward,mixed"
binary = f"{build}/bench/model/brep_encoder_sizes_bench"

print(f"threads={threads}")
print("| faces | directed edges | graphs in batch | mode | seconds | peak MiB | peak - before MiB |")
print("|---|---|---|---|---|---|---|")
for mode in modes.split(","):
    for faces in sizes.split(","):
        out = subprocess.run([binary, faces, mode, threads], check=True, capture_output=True,
                             text=True).stdout
        fields = dict(kv.split("=") for kv in out.split())
        peak, before = float(fields["peak_rss_mib"]), float(fields["rss_before_mib"])
        print(f"| {fields['faces']} | {fields['directed_edges']} | {fields['graphs']} | {mode} "
              f"| {fields['seconds']} | {peak:.0f} | {peak - before:.0f} |", flush=True)
