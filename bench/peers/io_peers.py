#!/usr/bin/python3
"""File I/O against peers: reading and writing a 10M-entry .mtx (scipy.io.mmread / mmwrite:
SciPy 1.17 from PyPI, whose Matrix Market code is fast_matrix_market, in .venvs/scipy, and
Debian's SciPy), in a warm process and in a fresh one; `tensorkit info` of that file against a
plain read; the same entries as a scipy.sparse COO .npz (scipy.sparse.load_npz), reading and
writing a 256 MiB .npy (numpy.load / numpy.save, and a plain file copy of the same file as the
floor); and `tensorkit convert` between the .mtx and a .npz as a user times it (the whole
process) against SciPy 1.17's mmread + save_npz(compressed=False) and load_npz + mmwrite (the
calls in a warm interpreter, and the whole `python -c` process).

The files are generated into $TENSORKIT_BENCH_DIR (default /tmp/tensorkit_io_bench) by
bench_io on its first run; the peers time the very same files. Medians, 2 threads. "Fresh" is
one operation in a new process (one process a sample, the file in the page cache), "warm" the
median of repeats in one process after a first run.

Usage: /usr/bin/python3 bench/peers/io_peers.py --build build [--scipy-python .venvs/scipy/bin/python]
       [--convert-only]   (just the `tensorkit convert` table)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

peerlib.set_threads(2)
import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse  # noqa: E402


# Timed in the SciPy 1.17 venv: argv = mode, path, scratch, repeat; prints seconds as JSON.
SCIPY_WORKER = r"""
import json, sys, time
import scipy, scipy.io, scipy.sparse
mode, path, scratch, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def timed(fn):
    t0 = time.perf_counter(); fn(); return time.perf_counter() - t0
if mode == "convert-npz":  # one conversion, as a script converting one file does it
    out = [timed(lambda: scipy.sparse.save_npz(scratch, scipy.io.mmread(path), compressed=False))]
elif mode == "convert-mtx":
    out = [timed(lambda: scipy.io.mmwrite(scratch, scipy.sparse.load_npz(path)))]
elif mode == "fresh-read":
    out = [timed(lambda: scipy.io.mmread(path))]
elif mode == "fresh-write":
    m = scipy.io.mmread(path)
    out = [timed(lambda: scipy.io.mmwrite(scratch, m))]
else:
    m = scipy.io.mmread(path)
    fn = (lambda: scipy.io.mmread(path)) if mode == "read" else (lambda: scipy.io.mmwrite(scratch, m))
    fn()
    out = [timed(fn) for _ in range(repeat)]
print(json.dumps({"version": scipy.__version__, "times": out}))
"""


def scipy_times(python, mode, path, scratch, repeat):
    """Median seconds of `mode` in the SciPy venv, and its version ("fresh-*": one process a
    sample)."""
    env = dict(os.environ, OMP_NUM_THREADS="2")
    runs = repeat if mode.startswith("fresh") else 1
    times, version = [], None
    for _ in range(runs):
        out = subprocess.run([python, "-c", SCIPY_WORKER, mode, path, scratch, str(repeat)],
                             env=env, check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        times += r["times"]
        version = r["version"]
    return statistics.median(times), version


def fresh_tensorkit(binary, name, repeat):
    """Median real time of benchmark `name` (one iteration), one new process a sample."""
    env = dict(os.environ, TENSORKIT_NUM_THREADS="2")
    times = []
    for _ in range(repeat):
        out = subprocess.run([binary, f"--benchmark_filter=^{name}(/|$)", "--benchmark_format=json"],
                             env=env, check=True, capture_output=True, text=True).stdout
        b = json.loads(out)["benchmarks"][0]
        times.append(b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]])
    return statistics.median(times)


def process_time(cmd, repeat):
    """Median wall time of a whole command."""
    env = dict(os.environ, TENSORKIT_NUM_THREADS="2")
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def conversion_rows(tool, python, mtx, bench_dir, repeat):
    """`tensorkit convert` .mtx -> .npz and .npz -> .mtx (whole process) against SciPy's calls
    and its whole process, interleaved (tensorkit, SciPy, ...); medians. The .npz input is
    SciPy's own save_npz of the .mtx, the file a user converting back would have."""
    env = dict(os.environ, TENSORKIT_NUM_THREADS="2", OMP_NUM_THREADS="2")
    npz_in = os.path.join(bench_dir, "scipy_10M.npz")
    if not os.path.exists(npz_in):
        subprocess.run([python, "-c", SCIPY_WORKER, "convert-npz", mtx, npz_in, "1"], env=env,
                       check=True, capture_output=True)
    jobs = {
        "npz": (mtx, os.path.join(bench_dir, "convert_out.npz"), "convert-npz"),
        "mtx": (npz_in, os.path.join(bench_dir, "convert_out.mtx"), "convert-mtx"),
    }
    times = {k: {"tk": [], "calls": [], "process": []} for k in jobs}
    version = None
    for _ in range(max(repeat, 5)):
        for key, (src, out, mode) in jobs.items():
            t0 = time.perf_counter()
            subprocess.run([tool, "convert", src, out], env=env, check=True, capture_output=True)
            times[key]["tk"].append(time.perf_counter() - t0)
            os.remove(out)
            t0 = time.perf_counter()
            r = subprocess.run([python, "-c", SCIPY_WORKER, mode, src, out, "1"], env=env,
                               check=True, capture_output=True, text=True).stdout
            times[key]["process"].append(time.perf_counter() - t0)
            r = json.loads(r)
            times[key]["calls"] += r["times"]
            version = r["version"]
            os.remove(out)
    med = {k: {c: statistics.median(v) for c, v in t.items()} for k, t in times.items()}
    titles = {"npz": ".mtx -> .npz (mmread + save_npz stored)",
              "mtx": ".npz -> .mtx (load_npz + mmwrite)"}
    return [(f"convert {titles[k]}", {"tensorkit": med[k]["tk"],
                                      f"scipy {version} calls": med[k]["calls"],
                                      f"scipy {version} process": med[k]["process"]})
            for k in jobs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=peerlib.REPEAT)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--scipy-python", default=os.path.join(root, ".venvs/scipy/bin/python"),
                    help="a Python with SciPy 1.17 (make scipy-venv)")
    ap.add_argument("--convert-only", action="store_true",
                    help="time only `tensorkit convert` against SciPy")
    args = ap.parse_args()
    bench_dir = os.environ.get("TENSORKIT_BENCH_DIR", "/tmp/tensorkit_io_bench")
    os.environ["TENSORKIT_BENCH_DIR"] = bench_dir
    binary = os.path.join(args.build, "bin", "bench_io")
    if args.convert_only:
        mtx = os.path.join(bench_dir, "mtx_10M.mtx")
        if not os.path.exists(mtx):  # bench_io writes it on its first use
            fresh_tensorkit(binary, "BM_FreshReadMtx10M", 1)
        peerlib.print_table("`tensorkit convert` process against SciPy, 10M entries, 2 threads (ms, "
                            "medians of interleaved runs; x > 1 means tensorkit is faster)",
                            conversion_rows(os.path.join(args.build, "bin", "tensorkit"),
                                            args.scipy_python, mtx, bench_dir, args.repeat))
        return
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
    mtx_mb = os.path.getsize(mtx) / 1e6
    few = min(3, args.repeat)
    mtx_out = os.path.join(bench_dir, "scipy_out.mtx")
    have_scipy = os.path.exists(args.scipy_python)
    if not have_scipy:
        print(f"no {args.scipy_python}: `make scipy-venv` installs SciPy 1.17 for the .mtx rows",
              file=sys.stderr)
    # Fresh processes in turn (tensorkit, SciPy, tensorkit, ...), so that a burst of load on a
    # shared machine falls on both sides; medians of 5.
    fresh = {k: [] for k in ("tk-read", "tk-write", "fresh-read", "fresh-write")}
    version = None
    for _ in range(max(few, 5)):
        fresh["tk-read"].append(fresh_tensorkit(binary, "BM_FreshReadMtx10M", 1))
        fresh["tk-write"].append(fresh_tensorkit(binary, "BM_FreshWriteMtx10M", 1))
        if have_scipy:
            for mode in ("fresh-read", "fresh-write"):
                seconds, version = scipy_times(args.scipy_python, mode, mtx, mtx_out, 1)
                fresh[mode].append(seconds)
    fresh_read = statistics.median(fresh["tk-read"])
    fresh_write = statistics.median(fresh["tk-write"])
    tool = os.path.join(args.build, "bin", "tensorkit")
    info = process_time([tool, "info", mtx], few)
    new_scipy = {}
    if have_scipy:
        for mode in ("read", "write"):
            new_scipy[mode] = scipy_times(args.scipy_python, mode, mtx, mtx_out, few)
        for mode in ("fresh-read", "fresh-write"):
            new_scipy[mode] = (statistics.median(fresh[mode]), version)

    def mtx_row(title, mode, tk_seconds, debian_fn=None):
        cols = {"tensorkit": tk_seconds}
        if mode in new_scipy:
            cols[f"scipy {new_scipy[mode][1]}"] = new_scipy[mode][0]
        if debian_fn is not None:  # about 50x slower: one timed call
            cols[f"scipy {scipy.__version__}"] = peerlib.median_time(debian_fn, repeat=1,
                                                                     warmup=0)
        return (f"{title} ({mtx_mb / tk_seconds / 2:.0f} MB/s per core)", cols)

    mtx_rows = [
        mtx_row("read .mtx, warm", "read", tk_time("BM_ReadMtx10M"),
                lambda: scipy.io.mmread(mtx)),
        mtx_row("read .mtx, fresh process", "fresh-read", fresh_read),
        mtx_row("write .mtx, warm", "write", tk_time("BM_WriteMtx10M")),
        mtx_row("write .mtx, fresh process", "fresh-write", fresh_write),
    ]
    rows = [
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
    for f in (copy, scratch, mtx_out):
        if os.path.exists(f):
            os.remove(f)
    peerlib.print_table(f"Matrix Market, {mtx_mb:.0f} MB, 10M entries, 2 threads (ms, medians; "
                        "x > 1 means tensorkit is faster)", mtx_rows)
    if have_scipy:
        peerlib.print_table("`tensorkit convert` process against SciPy, 10M entries, 2 threads (ms, "
                            "medians of interleaved runs; x > 1 means tensorkit is faster)",
                            conversion_rows(tool, args.scipy_python, mtx, bench_dir,
                                            args.repeat))
    peerlib.print_table("`tensorkit info` of the .mtx, whole process, against a fresh read",
                        [("info (x: read / info)", {"tensorkit": info, "read": fresh_read})])
    peerlib.print_table("File I/O (ms, medians; x > 1 means tensorkit is faster)", rows)
    print(f"\n`tensorkit info` of the .mtx takes {info / fresh_read:.2f}x a fresh in-process read "
          f"(process start and exit included)")
    print(f"other tensorkit medians: read .svm {svm_mb / tk_time('BM_ReadLibsvm500k') / 2:.0f} MB/s per core (2 threads); "
          f"write .svm {tk_time('BM_WriteLibsvm500k') * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
