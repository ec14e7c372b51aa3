"""Shared helpers for bench/peers: time peers, run tensorkit's Google Benchmark programs, and
print one table of medians with ratios (peer time / tensorkit time: > 1 means tensorkit is
faster). Run with Debian's /usr/bin/python3 (python3-numpy, python3-scipy, python3-torch)."""
import json
import os
import statistics
import subprocess
import time

REPEAT = int(os.environ.get("PEERS_REPEAT", "5"))


def median_time(fn, repeat=REPEAT, warmup=1, setup=None):
    """Median wall time of fn() in seconds over `repeat` runs after `warmup` runs. `setup`, when
    given, runs before each call and is not timed (e.g. to hand fn a fresh unsorted copy)."""
    times = []
    for i in range(warmup + repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        fn(arg) if setup else fn()
        t1 = time.perf_counter()
        if i >= warmup:
            times.append(t1 - t0)
    return statistics.median(times)


def run_tensorkit(binary, bench_filter, threads=2, repeat=REPEAT, extra_env=None):
    """Runs a Google Benchmark program and returns {benchmark name: median real time in s}."""
    env = dict(os.environ)
    env["TENSORKIT_NUM_THREADS"] = str(threads)
    if extra_env:
        env.update(extra_env)
    cmd = [binary, f"--benchmark_filter={bench_filter}", f"--benchmark_repetitions={repeat}",
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    result = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            result[b["run_name"]] = b["real_time"] * scale[b["time_unit"]]
    return result


def set_threads(n):
    """Thread count for the Python peers (call before importing numpy/torch for BLAS)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        import torch
        torch.set_num_threads(n)
    except ImportError:
        pass


def print_table(title, rows):
    """rows: list of (operation, {implementation: seconds}); 'tensorkit' must be a key. Prints
    medians in ms and, per peer, peer/tensorkit (speedup of tensorkit)."""
    peers = []
    for _, times in rows:
        for k in times:
            if k != "tensorkit" and k not in peers:
                peers.append(k)
    print(f"\n## {title}")
    head = f"| {'operation':44s} | {'tensorkit ms':>12s} |"
    for p in peers:
        head += f" {p + ' ms':>14s} | {'x vs ' + p:>12s} |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for op, times in rows:
        tk = times.get("tensorkit")
        line = f"| {op:44s} | {tk * 1e3 if tk else float('nan'):12.2f} |"
        for p in peers:
            t = times.get(p)
            if t is None:
                line += f" {'-':>14s} | {'-':>12s} |"
            else:
                ratio = t / tk if tk else float("nan")
                line += f" {t * 1e3:14.2f} | {ratio:11.2f}x |"
        print(line, flush=True)
