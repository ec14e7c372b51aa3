#!/usr/bin/env python3
"""Dask maps tensorkit over the partitions of a set of libsvm files, in-process: one partition per
file, each read by tk.io.load_svmlight_file and converted to a SciPy .npz by tk.io.write in
Dask's threads (tensorkit releases the GIL, so the threads read files at the same time). No tool
is started and no cluster is needed; the same bag runs on a dask.distributed cluster when a
Client is made first (the paths must then be readable by every worker).

  python3 dask_inprocess.py FILE.svm ... [-o OUT]   # statistics of each file, .npz into OUT
  python3 dask_inprocess.py --demo                  # makes 8 files in a temporary folder first

Prints, per file, its rows, entries and label counts, then the column sums over all files.
"""
import argparse
import os
import sys
import tempfile

import dask
import dask.bag as db
import numpy as np

import tensorkit as tk


def summarize(path, out_dir=None):
    """One partition: the statistics of one file (and its .npz in out_dir)."""
    X, y = tk.io.load_svmlight_file(path)
    if out_dir is not None:
        stem = os.path.splitext(os.path.basename(path))[0]
        tk.io.write(os.path.join(out_dir, stem + ".npz"), X)  # SciPy's save_npz layout
    labels, counts = np.unique(y, return_counts=True)
    return {"path": path, "rows": X.shape[0], "nnz": int(X.nnz),
            "labels": dict(zip(labels.tolist(), counts.tolist())),
            "column_sums": np.asarray(X.sum(axis=0)).ravel()}


def add_columns(a, b):
    """Column sums of two partitions (files may have different widths)."""
    n = max(len(a), len(b))
    return np.pad(a, (0, n - len(a))) + np.pad(b, (0, n - len(b)))


def run(paths, out_dir=None, scheduler="threads"):
    """(per-file statistics in the order of paths, column sums over every file)."""
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    bag = db.from_sequence(list(paths), npartitions=max(1, len(paths)))
    stats = bag.map(summarize, out_dir=out_dir)
    totals = stats.pluck("column_sums").fold(add_columns, initial=np.zeros(0))
    with dask.config.set(scheduler=scheduler):
        per_file, sums = dask.compute(stats, totals)
    return per_file, sums


def make_demo_files(folder, count=8, rows=5000, seed=0):
    """count libsvm files of random sparse rows (about 20 entries a row, 1000 columns)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    paths = []
    for k in range(count):
        X = sp.random(rows, 1000, density=0.02, format="csr", random_state=seed + k)
        X.data = np.round(X.data * 10, 2)
        y = rng.integers(0, 3, rows).astype(np.float64)
        path = os.path.join(folder, f"part-{k:03d}.svm")
        tk.io.dump_svmlight_file(X, y, path)
        paths.append(path)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="libsvm / svmlight files")
    ap.add_argument("-o", "--out", help="folder for the .npz conversions")
    ap.add_argument("--demo", action="store_true", help="make 8 files in a temporary folder")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_demo_files(tmp) if args.demo else args.files
        if not paths:
            ap.error("give files, or --demo")
        per_file, sums = run(paths, args.out)
    for s in per_file:
        print(f"{os.path.basename(s['path'])}: {s['rows']} rows, {s['nnz']} entries, "
              f"labels {s['labels']}")
    print(f"column sums over {len(per_file)} files: {len(sums)} columns, total {sums.sum():.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
