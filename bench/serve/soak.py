#!/usr/bin/env python3
"""Load and fault soak of `cadclip serve`, on 127.0.0.1 only, bounded in time.

For --seconds (default 600), --connections client threads (default 32) each
keep one HTTP connection and send a mix of requests: text searches (GET and
POST), "more like this", item and thumbnail reads, and part uploads (raw and
multipart). Meanwhile the index is rebuilt every --update-every seconds from
alternating libraries (`cadclip index`, a new version each time; the server
keeps answering from the version it opened), and once, halfway, one upload's
ingest worker process is killed (SIGKILL) while it reads the part.

Reports requests, answers by status, errors (anything but 2xx, 503 = busy by
design, and the 422 of the upload whose worker was killed), latency p50 and
p99, and the server's resident memory (VmRSS) after start, after a warm-up
of --warmup seconds of the same load (the figure growth is measured from), and
at the end.

  bench/serve/soak.py --cadclip build/release/apps/cadclip --seconds 600

Without --index, it makes what it needs in a scratch folder: `cadclip synth`
parts, a prepared library, a briefly trained checkpoint (`cadclip train
--stop-after-steps`; the soak measures the server, not the model) and an index.
"""
import argparse
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

QUERIES = ["hex nut", "a flange with six bolt holes", "washer 12 mm", "plate with holes",
           "a long shaft", "spur gear with 24 teeth", "L bracket", "pipe, 2 inch",
           "a block with a pocket", "an enclosure with a lid", "nut M6", "a thin ring"]


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def make_work(cadclip, work, parts):
    """Synthetic library, prepared folder, tiny checkpoint; returns (run, libraries, parts)."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    if not os.path.exists(f"{work}/run/checkpoints/last.json"):  # else kept from an earlier soak
        run([cadclip, "--log-level", "warn", "synth", "--count", str(parts), "--seed", "3",
             "--out", f"{work}/synth"], env=env)
        run([cadclip, "--log-level", "warn", "prepare", f"{work}/synth/parts", "--captions",
             f"{work}/synth/captions.jsonl", "--splits", f"{work}/synth/splits.json", "--out",
             f"{work}/prepared"], env=env)
        run([cadclip, "--log-level", "warn", "train", "--data", f"{work}/prepared", "--out",
             f"{work}/run", "--epochs", "1", "--stop-after-steps", "2", "--batch-size", "16",
             "--text-lr", "0", "--validation-split", ""], env=env)
    step_files = sorted(os.path.join(f"{work}/synth/parts", f)
                        for f in os.listdir(f"{work}/synth/parts") if f.endswith(".step"))
    # Two libraries of CAD files that differ, so that each update changes the index.
    libraries = []
    for k, picked in enumerate([step_files[: len(step_files) * 2 // 3],
                                step_files[len(step_files) // 3:]]):
        lib = f"{work}/library{k}"
        os.makedirs(lib, exist_ok=True)
        for f in picked:
            if not os.path.lexists(os.path.join(lib, os.path.basename(f))):
                os.symlink(f, os.path.join(lib, os.path.basename(f)))
        libraries.append(lib)
    return f"{work}/run", libraries, step_files


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append((int(entry), cmdline))
    return out


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.status = {}
        self.errors = []
        self.killed_uploads = 0

    def add(self, kind, status, seconds, body):
        with self.lock:
            self.latencies.append(seconds)
            self.status[status] = self.status.get(status, 0) + 1
            by_design = 200 <= status < 300 or status == 503
            # A worker killed while reading the part "crashed"; one killed
            # before it took the part was "killed by signal".
            killed_worker = b"crash" in body or b"killed by signal" in body
            if status == 422 and killed_worker and self.killed_uploads > 0:
                by_design = True  # the upload whose worker the soak killed
            if not by_design:
                self.errors.append((kind, status, body[:300]))


# Each kind's share of the requests, in the order the client draws them.
MIX = [("text", 0.55), ("post", 0.10), ("similar", 0.15), ("item", 0.10), ("upload", 0.10)]


def draw_kind(rng, only):
    """A request kind by MIX's shares, among `only` (a set of kinds; empty: all)."""
    kinds = [(k, w) for k, w in MIX if not only or k in only]
    r = rng.random() * sum(w for _, w in kinds)
    for kind, weight in kinds:
        r -= weight
        if r < 0:
            return kind
    return kinds[-1][0]


def client(port, deadline, stats, ids, parts, rng, only=()):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while time.time() < deadline:
        drawn = draw_kind(rng, only)
        headers = {}
        body = None
        method = "GET"
        if drawn == "text":
            kind, path = "text", "/api/search?k=10&q=" + urllib.parse.quote(rng.choice(QUERIES))
        elif drawn == "post":
            kind, method, path = "post", "POST", "/api/search"
            body = json.dumps({"q": rng.choice(QUERIES), "k": 5}).encode()
            headers["Content-Type"] = "application/json"
        elif drawn == "similar" and ids:
            kind, path = "similar", "/api/similar/" + urllib.parse.quote(rng.choice(ids)) + "?k=8"
        elif drawn == "item" and ids:
            kind, path = "item", "/api/items/" + urllib.parse.quote(rng.choice(ids))
        else:
            part = rng.choice(parts)
            data = open(part, "rb").read()
            method = "POST"
            if rng.random() < 0.5:
                kind = "upload-raw"
                path = "/api/search/part?k=5&filename=" + os.path.basename(part)
                body = data
                headers["Content-Type"] = "application/octet-stream"
            else:
                kind = "upload-form"
                boundary = "soak%016x" % rng.getrandbits(64)
                body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                        f"filename=\"{os.path.basename(part)}\"\r\nContent-Type: "
                        f"application/octet-stream\r\n\r\n").encode() + data + \
                    f"\r\n--{boundary}--\r\n".encode()
                path = "/api/search/part?k=5"
                headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        start = time.time()
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            answer = resp.read()
            status = resp.status
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
        except (OSError, http.client.HTTPException) as e:
            answer, status = str(e).encode(), 0
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        stats.add(kind, status, time.time() - start, answer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cadclip", default="build/release/apps/cadclip")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--update-every", type=float, default=60,
                        help="seconds between index rebuilds")
    parser.add_argument("--warmup", type=float, default=120,
                        help="seconds of the same load before the measured run (0: none)")
    parser.add_argument("--only", default="",
                        help="comma-separated request kinds to send (text, post, similar, item, "
                        "upload; default: all, in MIX's shares), to find which one costs memory")
    parser.add_argument("--parts", type=int, default=120, help="synthetic parts to make")
    parser.add_argument("--work", help="scratch folder (default: a temporary one)")
    parser.add_argument("--server-prefix", default="",
                        help="a command the server runs under, e.g. 'heaptrack -o FILE' (its "
                        "memory figures are then the wrapper's)")
    parser.add_argument("--serve-args", default="", help="extra `cadclip serve` options")
    args = parser.parse_args()
    if args.seconds <= 0 or args.connections < 1:
        parser.error("--seconds and --connections must be positive")

    only = set(filter(None, args.only.split(",")))
    if only - {k for k, _ in MIX}:
        parser.error(f"--only {args.only}: the kinds are " + ", ".join(k for k, _ in MIX))
    tmp = None if args.work else tempfile.TemporaryDirectory(prefix="cadclip-soak-")
    work = args.work or tmp.name
    os.makedirs(work, exist_ok=True)
    cadclip = os.path.abspath(args.cadclip)
    run_dir, libraries, parts = make_work(cadclip, work, args.parts)
    index = f"{work}/index"
    run([cadclip, "--log-level", "warn", "index", run_dir, libraries[0], "--out", index,
         "--no-thumbnails"], stdout=subprocess.DEVNULL)

    log = open(f"{work}/serve.log", "w")
    server = subprocess.Popen([*args.server_prefix.split(), cadclip, "serve", index, "--port", "0",
                               *args.serve_args.split()],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    line = server.stdout.readline()
    while line and "http://" not in line:  # a --server-prefix may print first
        line = server.stdout.readline()
    port = int(line.rsplit(":", 1)[1].strip().strip("/"))
    print(f"server pid {server.pid} on port {port}; load average {os.getloadavg()}", flush=True)
    # Ids in both libraries: every version of the index has them.
    ids = sorted(set.intersection(*[{os.path.splitext(f)[0] for f in os.listdir(lib)}
                                    for lib in libraries]))
    rss_fresh = rss_kb(server.pid)
    updates = 0
    update_failures = []

    def drive(seconds, stats, kill_halfway):
        """Clients for `seconds`, the index rebuilt every --update-every seconds,
        an upload worker killed halfway when asked; returns (killed, RSS samples)."""
        nonlocal updates
        deadline = time.time() + seconds
        threads = [threading.Thread(target=client,
                                    args=(port, deadline, stats, ids, parts, random.Random(i),
                                          only))
                   for i in range(args.connections)]
        for t in threads:
            t.start()
        killed = False
        next_update = time.time() + args.update_every
        halfway = time.time() + seconds / 2
        # Resident memory every 30 s: a leak grows to the end, warm-up levels off.
        started = time.time()
        samples = [(0.0, rss_kb(server.pid))]
        next_sample = started + 30
        while time.time() < deadline:
            time.sleep(0.2)
            if time.time() >= next_sample:
                samples.append((time.time() - started, rss_kb(server.pid)))
                next_sample += 30
            if kill_halfway and not killed and time.time() >= halfway:
                for pid, cmdline in children(server.pid):
                    if b"prepare-worker" in b" ".join(cmdline):
                        with stats.lock:
                            stats.killed_uploads += 1
                        os.kill(pid, signal.SIGKILL)
                        killed = True
                        print(f"killed upload worker {pid} at {time.strftime('%H:%M:%S')}",
                              flush=True)
                        break
            if time.time() >= next_update:
                library = libraries[(updates + 1) % 2]
                done = subprocess.run([cadclip, "--log-level", "warn", "index", run_dir, library,
                                       "--out", index, "--no-thumbnails", "--wait", "--threads",
                                       "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True)
                updates += 1
                if done.returncode not in (0, 1):
                    update_failures.append(done.stderr[-500:])
                next_update = time.time() + args.update_every
        for t in threads:
            t.join()
        return killed, samples

    # Warm-up: the same mix of requests, index updates included, so that every
    # lazy part (LibTorch's kernels, oneDNN's primitives for the parts' shapes,
    # each thread's heap, the index pages) exists before the first figure.
    warm_stats = Stats()
    if args.warmup > 0:
        drive(args.warmup, warm_stats, kill_halfway=False)
    rss_start = rss_kb(server.pid)
    print(f"warm-up {args.warmup:.0f} s: {len(warm_stats.latencies)} requests, "
          f"{len(warm_stats.errors)} errors; VmRSS {rss_fresh / 1024:.1f} MiB after start, "
          f"{rss_start / 1024:.1f} MiB after warm-up", flush=True)
    updates_in_warmup = updates

    stats = Stats()
    killed, rss_series = drive(args.seconds, stats, kill_halfway=True)
    updates -= updates_in_warmup
    rss_end = rss_kb(server.pid)
    alive = server.poll() is None
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)

    lat = sorted(stats.latencies)
    total = len(lat)
    print(f"\nsoak: {args.seconds:.0f} s, {args.connections} connections, "
          f"{updates} index updates ({len(update_failures)} failed), "
          f"upload worker killed: {'yes' if killed else 'no (no upload was being read)'}")
    print(f"requests: {total} ({total / args.seconds:.1f}/s); by status: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(stats.status.items())))
    print(f"errors (not 2xx, not 503, not the killed worker's 422): {len(stats.errors)}")
    for kind, status, body in stats.errors[:10]:
        print(f"  {kind} -> {status}: {body!r}")
    if total:
        print(f"latency p50 {statistics.median(lat) * 1e3:.1f} ms, "
              f"p99 {lat[min(total - 1, int(total * 0.99))] * 1e3:.1f} ms")
    growth = (rss_end - rss_start) / rss_start if rss_start else float("nan")
    print(f"server VmRSS after warm-up {rss_start / 1024:.1f} MiB, at the end "
          f"{rss_end / 1024:.1f} MiB ({growth:+.1%}); server alive at the end: {alive}")
    # Growth over the second half, once every request kind has run many times.
    mid = next(kb for t, kb in rss_series if t >= args.seconds / 2) if len(rss_series) > 2 else rss_start
    print(f"VmRSS growth over the second half: {(rss_end - mid) / mid:+.1%} "
          f"({mid / 1024:.1f} -> {rss_end / 1024:.1f} MiB)")
    print("VmRSS every 30 s (MiB): " + " ".join(f"{kb / 1024:.0f}" for _, kb in rss_series))
    print(f"load average at the end: {os.getloadavg()}")
    for failure in update_failures[:3]:
        print("index update failed:", failure)
    ok = alive and not stats.errors and not warm_stats.errors and not update_failures
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
