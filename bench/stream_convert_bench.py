#!/usr/bin/python3
"""Streaming conversion of one large file, with the converting process's peak resident memory:
a libsvm file (Criteo-like lines of 39 index:value pairs) to .npz and to .mtx, and a TFRecord
file of tf.Examples to .npz. The inputs are one generated block repeated until the asked size
(a TFRecord file is records back to back, so copies of one join into a valid file).

Usage: stream_convert_bench.py --dir DIR [--gb 10] [--build build] [--formats svm,tfrecord]
The TFRecord block is written by TensorFlow (.venvs/tf, `make tf-ops` makes it); peak memory
is the kernel's ru_maxrss of the tool (wait4), which counts the pages of the mapped input the
process holds; the tool gives parsed pages back as it goes.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def libsvm_block(rng, lines):
    idx = np.cumsum(rng.integers(1, 26_000, (lines, 39)), axis=1)  # increasing, below 2^20
    val = np.round(rng.random((lines, 39)), 6)
    lab = rng.integers(0, 2, lines)
    out = []
    for i in range(lines):
        pairs = " ".join(f"{a}:{b:g}" for a, b in zip(idx[i], val[i]))
        out.append(f"{lab[i]} {pairs}\n")
    return "".join(out).encode()


def tfrecord_block(path, records):
    script = f"""
import numpy as np, tensorflow as tf
rng = np.random.default_rng(3)
with tf.io.TFRecordWriter({path!r}) as w:
    for i in range({records}):
        f = {{"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}}
        for k in range(13):
            f[f"I{{k}}"] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(i % (k + 7))]))
        for k in range(26):
            n = int(rng.integers(0, 4))
            f[f"C{{k}}"] = tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[b"%08x" % int(v) for v in rng.integers(0, 1 << 32, n)]))
        w.write(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
"""
    py = os.path.join(ROOT, ".venvs", "tf", "bin", "python")
    subprocess.run([py, "-c", script], check=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})


def repeat_to(block_path, path, size):
    block = open(block_path, "rb").read()
    with open(path, "wb") as f:
        written = 0
        while written < size:
            f.write(block)
            written += len(block)


def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed: status {status}")
    return wall, usage.ru_maxrss / 1024  # MiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gb", type=float, default=10)
    ap.add_argument("--build", default="build")
    ap.add_argument("--formats", default="svm,tfrecord")
    a = ap.parse_args()
    tool = os.path.join(ROOT, a.build, "bin", "tensorkit")
    size = int(a.gb * 1e9)
    os.makedirs(a.dir, exist_ok=True)
    rows = []
    if "svm" in a.formats:
        src = os.path.join(a.dir, f"big_{a.gb:g}gb.svm")
        if not os.path.exists(src) or os.path.getsize(src) < size:
            block = os.path.join(a.dir, "block.svm")
            with open(block, "wb") as f:
                f.write(libsvm_block(np.random.default_rng(1), 200_000))
            repeat_to(block, src, size)
        for ext in ("npz", "mtx"):
            out = os.path.join(a.dir, f"out_svm.{ext}")
            wall, rss = run([tool, "convert", src, out])
            rows.append((f"svm -> .{ext}", os.path.getsize(src), os.path.getsize(out), wall, rss))
            os.remove(out)
    if "tfrecord" in a.formats:
        src = os.path.join(a.dir, f"big_{a.gb:g}gb.tfrecord")
        if not os.path.exists(src) or os.path.getsize(src) < size:
            block = os.path.join(a.dir, "block.tfrecord")
            tfrecord_block(block, 100_000)
            repeat_to(block, src, size)
        out = os.path.join(a.dir, "out_tfrecord.npz")
        wall, rss = run([tool, "convert", src, out])
        rows.append(("tfrecord -> .npz", os.path.getsize(src), os.path.getsize(out), wall, rss))
        os.remove(out)
    print(f"{'conversion':<18} {'input GB':>9} {'output GB':>10} {'wall s':>8} {'MB/s':>7} "
          f"{'peak RSS MiB':>13}")
    for name, i, o, wall, rss in rows:
        print(f"{name:<18} {i / 1e9:>9.2f} {o / 1e9:>10.2f} {wall:>8.1f} {i / 1e6 / wall:>7.0f} "
              f"{rss:>13.0f}")


if __name__ == "__main__":
    main()
