#!/usr/bin/python3
"""Soak of the batch tool: many small and some large files converted by 4 shards in parallel on
one machine while shards are killed (SIGKILL) at random moments and restarted with --resume.

Checks: the merged manifests record every input converted exactly once and nothing failed;
every output is byte-identical to a single-process run; no temporary is left behind; the peak
resident memory of each shard process stays bounded (printed).

Usage: soak_batch.py --tool build/bin/tensorkit [--small 100000] [--large 50]
                     [--large-entries 400000] [--kills 20] [--kill-every 0.4] [--shards 4]
                     [--seed 1] [--workdir DIR] [--keep]
`make soak` runs it with the defaults (several minutes on 2 cores).
"""
import argparse
import collections
import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def small_mtx(k):
    """A small Matrix Market file whose content depends on k."""
    rows, cols = 3 + k % 11, 2 + k % 13
    cells = sorted({(1 + (k * 7 + j) % rows, 1 + (k + j * 3) % cols) for j in range(6)})
    body = "".join(f"{r} {c} {k % 1000 + 0.25 * i}\n" for i, (r, c) in enumerate(cells))
    return f"%%MatrixMarket matrix coordinate real general\n{rows} {cols} {len(cells)}\n" + body


def write_large_mtx(path, k, entries):
    rng = random.Random(k)
    n = 20000 + k
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real general\n{n} {n} {entries}\n")
        lines = []
        for _ in range(entries):
            lines.append(f"{rng.randrange(1, n + 1)} {rng.randrange(1, n + 1)} "
                         f"{rng.random():.17g}\n")
            if len(lines) == 65536:
                f.write("".join(lines))
                lines.clear()
        f.write("".join(lines))


def make_inputs(root, small, large, large_entries):
    paths = []
    for k in range(small):
        sub = os.path.join(root, "small", f"{k // 1000:03d}")
        if k % 1000 == 0:
            os.makedirs(sub, exist_ok=True)
        p = os.path.join(sub, f"s{k:06d}.mtx")
        with open(p, "w") as f:
            f.write(small_mtx(k))
        paths.append(p)
    os.makedirs(os.path.join(root, "large"), exist_ok=True)
    for k in range(large):
        p = os.path.join(root, "large", f"l{k:03d}.mtx")
        write_large_mtx(p, k, large_entries)
        paths.append(p)
    return paths


def peak_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def shard_cmd(tool, listing, out, k, n):
    return [tool, "convert", "--to", "npz", "-o", out, "--inputs-from", listing, "--shard",
            f"{k}/{n}", "--resume", "--manifest", os.path.join(out, "manifests", f"{k}.jsonl")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--small", type=int, default=100000)
    ap.add_argument("--large", type=int, default=50)
    ap.add_argument("--large-entries", type=int, default=400000)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--kill-every", type=float, default=0.4,
                    help="mean seconds between kills (uniform in [0.1, 2] times it)")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tool = os.path.abspath(a.tool)
    rng = random.Random(a.seed)
    work = a.workdir or tempfile.mkdtemp(prefix="tk_soak_")
    os.makedirs(work, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TENSORKIT_", "SLURM_"))}
    env["TENSORKIT_NUM_THREADS"] = "1"  # 4 shards share the cores
    t0 = time.time()
    paths = make_inputs(os.path.join(work, "in"), a.small, a.large, a.large_entries)
    listing = os.path.join(work, "inputs.txt")
    with open(listing, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    in_bytes = sum(os.path.getsize(p) for p in paths)
    print(f"inputs: {a.small} small and {a.large} large .mtx files, {in_bytes / 1e6:.1f} MB "
          f"({time.time() - t0:.1f} s to write)", flush=True)

    # The reference: one process, no interruption.
    ref = os.path.join(work, "ref")
    t0 = time.time()
    r = subprocess.run([tool, "convert", "--to", "npz", "-o", ref, "--inputs-from", listing],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-2000:])
        sys.exit("soak: the single-process reference run failed")
    print(f"reference: one process, {time.time() - t0:.1f} s", flush=True)

    # The soak: shards killed and restarted at random until each has finished once unharmed.
    out = os.path.join(work, "out")
    os.makedirs(os.path.join(out, "manifests"), exist_ok=True)
    procs, starts, done = {}, collections.Counter(), set()
    peaks = collections.defaultdict(int)
    kills_left = a.kills
    t0 = time.time()

    def gap():
        return rng.uniform(0.1, 2.0) * a.kill_every

    next_kill = time.time() + gap()

    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)

    def start(k):
        starts[k] += 1
        # The progress lines go to a file: an unread pipe would fill and stall the shard.
        with open(os.path.join(logs, f"shard{k}.{starts[k]}.log"), "w") as log:
            procs[k] = subprocess.Popen(shard_cmd(tool, listing, out, k, a.shards), env=env,
                                        stdout=log, stderr=subprocess.STDOUT)

    for k in range(a.shards):
        start(k)
    while len(done) < a.shards:
        time.sleep(0.02)
        for k, p in list(procs.items()):
            peaks[k] = max(peaks[k], peak_rss_kb(p.pid))
            rc = p.poll()
            if rc is None:
                continue
            del procs[k]
            if rc == 0:
                done.add(k)
            elif rc == -signal.SIGKILL:
                start(k)  # the restart resumes from the shard's manifest
            else:
                with open(os.path.join(logs, f"shard{k}.{starts[k]}.log")) as log:
                    sys.exit(f"soak: shard {k} exited with {rc}: {log.read()[-2000:]}")
        if kills_left > 0 and procs and time.time() >= next_kill:
            k = rng.choice(sorted(procs))
            procs[k].send_signal(signal.SIGKILL)
            kills_left -= 1
            next_kill = time.time() + gap()
    soak_seconds = time.time() - t0

    # 1. Every input converted exactly once, none failed.
    records = collections.defaultdict(list)
    for k in range(a.shards):
        with open(os.path.join(out, "manifests", f"{k}.jsonl"), errors="surrogateescape") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill
                records[rec["input"]].append(rec["status"])
    problems = []
    if kills_left > 0:
        problems.append(f"only {a.kills - kills_left} of {a.kills} kills happened before the "
                        "shards finished: use more inputs or a smaller --kill-every")
    for p in paths:
        got = records.get(p, [])
        if got.count("converted") != 1 or "failed" in got:
            problems.append(f"{p}: records {got}")
    extra = set(records) - set(paths)
    problems += [f"{p}: recorded but not an input" for p in sorted(extra)]
    summary = subprocess.run([tool, "manifest", "summary", "--json"] +
                             [os.path.join(out, "manifests", f"{k}.jsonl")
                              for k in range(a.shards)], capture_output=True, text=True)
    # 2. Outputs identical to the reference; 3. nothing else in the output folder.
    ref_names = sorted(n for n in os.listdir(ref))
    out_names = sorted(n for n in os.listdir(out) if n != "manifests")
    if ref_names != out_names:
        left = sorted(set(out_names) - set(ref_names))
        missing = sorted(set(ref_names) - set(out_names))
        problems.append(f"output folder differs: extra {left[:10]}, missing {missing[:10]}")
    _, mismatch, errors = filecmp.cmpfiles(ref, out, ref_names, shallow=False)
    problems += [f"{n}: differs from the single-process output" for n in mismatch + errors]
    print(f"soak: {a.shards} shards, {a.kills - kills_left} kills, {sum(starts.values())} "
          f"starts, {soak_seconds:.1f} s; {len(paths)} inputs, {len(ref_names)} outputs "
          f"compared; peak RSS per shard process "
          + ", ".join(f"{peaks[k] / 1024:.0f} MB" for k in range(a.shards)))
    print("manifest summary:", summary.stdout.strip()[:400])
    if summary.returncode != 0:
        problems.append(f"manifest summary exited {summary.returncode}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    if problems:
        print("\n".join(problems[:50]), file=sys.stderr)
        sys.exit(f"soak: {len(problems)} problems")
    print("soak: OK")


if __name__ == "__main__":
    main()
