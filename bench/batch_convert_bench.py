#!/usr/bin/python3
"""A batch of many small and a few large Matrix Market files converted to .npz by one tensorkit
process and by the Dask driver (examples/distributed/dask_convert.py) on a LocalCluster, side by
side: wall time, files/s, MB/s (input bytes, 10^6) and each run's `manifest summary`.

Usage: batch_convert_bench.py [--build build] [--small 2000] [--large 20] [--workers 2]
The Dask run needs .venvs/dask (`make dask-venv`); the data is generated with NumPy.
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def write_mtx(path, rows, cols, nnz, rng):
    r = rng.integers(1, rows + 1, nnz)
    c = rng.integers(1, cols + 1, nnz)
    v = rng.standard_normal(nnz)
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real general\n{rows} {cols} {nnz}\n")
        np.savetxt(f, np.column_stack([r, c, v]), fmt=["%d", "%d", "%.17g"])


def make_batch(folder, small, large):
    rng = np.random.default_rng(17)
    paths = []
    os.makedirs(os.path.join(folder, "small"))
    os.makedirs(os.path.join(folder, "large"))
    for i in range(small):
        p = os.path.join(folder, "small", f"s{i:05d}.mtx")
        write_mtx(p, 300, 200, 400, rng)
        paths.append(p)
    first = os.path.join(folder, "large", "l000.mtx")
    write_mtx(first, 200_000, 100_000, 1_500_000, rng)
    paths.append(first)
    for i in range(1, large):  # copies: the tool's work does not depend on the values
        p = os.path.join(folder, "large", f"l{i:03d}.mtx")
        shutil.copyfile(first, p)
        paths.append(p)
    listfile = os.path.join(folder, "list.txt")
    with open(listfile, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    return paths, listfile


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return time.perf_counter() - t0, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--large", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=8)
    a = ap.parse_args()
    tool = os.path.abspath(os.path.join(a.build, "bin", "tensorkit"))
    python = os.path.join(ROOT, ".venvs", "dask", "bin", "python")
    with tempfile.TemporaryDirectory(prefix="tk_batch_bench_") as tmp:
        paths, listfile = make_batch(tmp, a.small, a.large)
        mb = sum(os.path.getsize(p) for p in paths) / 1e6
        n = len(paths)
        print(f"{a.small} small + {a.large} large .mtx -> .npz: {n} files, {mb:.1f} MB; "
              f"{os.cpu_count()} cores")
        one = os.path.join(tmp, "one")
        t1, r1 = timed([tool, "convert", "--to", "npz", "-o", one, "--inputs-from", listfile,
                        "--manifest", os.path.join(tmp, "one.jsonl")])
        assert r1.returncode == 0, r1.stdout
        dask = os.path.join(tmp, "dask")
        t2, r2 = timed([python, os.path.join(ROOT, "examples", "distributed", "dask_convert.py"),
                        "--tool", tool, "--to", "npz", "-o", dask, "--inputs-from", listfile,
                        "--workers", str(a.workers), "--shards", str(a.shards)])
        assert r2.returncode == 0, r2.stdout
        names = sorted(x for x in os.listdir(one) if x.endswith(".npz"))
        same = filecmp.cmpfiles(one, dask, names, shallow=False)[0] == names
        print(f"\n| run | wall s | files/s | MB/s | wall / one process |\n| --- | --- | --- | --- | --- |")
        for name, t in [("one process (all cores)", t1),
                        (f"Dask driver, LocalCluster {a.workers} workers, {a.shards} shards", t2)]:
            print(f"| {name} | {t:.2f} | {n / t:.0f} | {mb / t:.1f} | {t / t1:.2f} |")
        print(f"\noutputs byte-identical: {same}")
        for name, m in [("one process", [os.path.join(tmp, "one.jsonl")]),
                        ("Dask", [os.path.join(dask, "manifests", "merged.jsonl")])]:
            s = subprocess.run([tool, "manifest", "summary", *m], capture_output=True, text=True)
            print(f"\nmanifest summary, {name}:\n{s.stdout}", end="")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
