#!/usr/bin/python3
"""File I/O against peers: reading a 10M-entry .mtx (scipy.io.mmread) and the same entries as a
scipy.sparse COO .npz (scipy.sparse.load_npz), reading and writing a 256 MiB .npy (numpy.load /
numpy.save, and a plain file copy of the same file as the floor).

The files are generated into $TENSORKIT_BENCH_DIR (default /tmp/tensorkit_io_bench) by
bench_io on its first run; the peers time the very same files. Medians, 2 threads.

Usage: /usr/bin/python3 bench/peers/io_peers.py --build build
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

peerlib.set_threads(2)
import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=peerlib.REPEAT)
    args = ap.parse_args()
    bench_dir = os.environ.get("TENSORKIT_BENCH_DIR", "/tmp/tensorkit_io_bench")
    os.environ["TENSORKIT_BENCH_DIR"] = bench_dir
    binary = os.path.join(args.build, "bin", "bench_io")
    tk = peerlib.run_tensorkit(binary, "BM_(Read|Write)(Mtx|Npy|Npz|Libsvm)", threads=2, repeat=args.repeat)
    def tk_time(name):  # Google Benchmark adds "/real_time" to the run name
        return next(v for k, v in tk.items() if k.split("/")[0] == name)

    mtx = os.path.join(bench_dir, "mtx_10M.mtx")
    svm = os.path.join(bench_dir, "libsvm_500k.svm")
    npz = os.path.join(bench_dir, "coo_10M.npz")
    npy = os.path.join(bench_dir, "npy_256MiB.npy")
    copy = os.path.join(bench_dir, "copy.tmp")
    scratch = os.path.join(bench_dir, "numpy_out.npy")
    arr = np.load(npy)

    def cp():
        subprocess.run(["cp", npy, copy], check=True)

    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        load_svmlight_file = None
    svm_mb = os.path.getsize(svm) / 1e6
    rows = [
        ("read .mtx 10M entries (vs scipy.io.mmread)",
         {"tensorkit": tk_time("BM_ReadMtx10M"),
          "scipy": peerlib.median_time(lambda: scipy.io.mmread(mtx), repeat=min(3, args.repeat))}),
        ("read scipy .npz (coo) 10M entries (vs scipy.sparse.load_npz)",
         {"tensorkit": tk_time("BM_ReadNpz10M"),
          "scipy": peerlib.median_time(lambda: scipy.sparse.load_npz(npz), repeat=args.repeat)}),
        ("read .npy 256 MiB (vs numpy.load, copy)",
         {"tensorkit": tk_time("BM_ReadNpy256MiB"),
          "numpy": peerlib.median_time(lambda: np.load(npy), repeat=args.repeat),
          "shutil.copyfile": peerlib.median_time(lambda: shutil.copyfile(npy, copy),
                                                 repeat=args.repeat),
          "cp": peerlib.median_time(cp, repeat=args.repeat)}),
        ("write .npy 256 MiB (vs numpy.save, copy)",
         {"tensorkit": tk_time("BM_WriteNpy256MiB"),
          "numpy": peerlib.median_time(lambda: np.save(scratch, arr), repeat=args.repeat),
          "shutil.copyfile": peerlib.median_time(lambda: shutil.copyfile(npy, copy),
                                                 repeat=args.repeat),
          "cp": peerlib.median_time(cp, repeat=args.repeat)}),
    ]
    if load_svmlight_file is not None:
        rows.append((f"read .svm {svm_mb:.0f} MB, 500k samples (vs sklearn load_svmlight_file)",
                     {"tensorkit": tk_time("BM_ReadLibsvm500k"),
                      "sklearn": peerlib.median_time(lambda: load_svmlight_file(svm),
                                                     repeat=min(3, args.repeat))}))
    for f in (copy, scratch):
        if os.path.exists(f):
            os.remove(f)
    peerlib.print_table("File I/O (ms, medians; x > 1 means tensorkit is faster)", rows)
    print(f"\nother tensorkit medians: write .mtx 10M {tk_time('BM_WriteMtx10M') * 1e3:.1f} ms; "
          f"read .svm {svm_mb / tk_time('BM_ReadLibsvm500k') / 2:.0f} MB/s per core (2 threads); "
          f"write .svm {tk_time('BM_WriteLibsvm500k') * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
