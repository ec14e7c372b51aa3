#!/usr/bin/python3
"""Embedding bags against peers: torch.nn.functional.embedding_bag (sum, mean, max) on a float32
table [1M, 64] with 64k bags of 30..50 random ids, 2 threads, beside bench_embedding's
EmbeddingBag on the very same inputs (both build them from splitmix64 of the position; see
bench/embedding_bench.cc).

FBGEMM's table-batched embedding (fbgemm_gpu's SplitTableBatchedEmbeddingBagsCodegen on the CPU)
is timed too when a Python with fbgemm_gpu is given (--fbgemm-python, default $FBGEMM_PYTHON or
.venvs/fbgemm/bin/python, which `make bench-peers` makes): that interpreter reruns this script with --child, and its own PyTorch
(PyPI's, built with FBGEMM) is timed beside it. Medians.

Usage: /usr/bin/python3 bench/peers/embedding_peers.py --build build
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peerlib  # noqa: E402

peerlib.set_threads(2)
import numpy as np  # noqa: E402

ROWS, DIM, BAGS = 1 << 20, 64, 1 << 16
MODES = ("sum", "mean", "max")


def splitmix64(x):
    """bench/embedding_bench.cc's SplitMix64 on a uint64 array."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def make_input():
    """table [ROWS, DIM] float32, ids [N] int64, offsets [BAGS + 1] int64."""
    lengths = 30 + splitmix64(np.arange(BAGS, dtype=np.uint64) + np.uint64(1 << 40)) % np.uint64(21)
    n = int(lengths.sum())
    ids = (splitmix64(np.arange(n, dtype=np.uint64)) % np.uint64(ROWS)).astype(np.int64)
    offsets = np.zeros(BAGS + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(lengths.astype(np.int64))
    table = (np.arange(ROWS * DIM, dtype=np.int64) % 1000).astype(np.float32)
    table = (table / np.float32(1000) - np.float32(0.5)).reshape(ROWS, DIM)
    return table, ids, offsets


def torch_times(table, ids, offsets, repeat):
    """{mode: seconds} of F.embedding_bag (offsets without the last one, PyTorch's default)."""
    import torch
    import torch.nn.functional as F
    t, i, o = torch.from_numpy(table), torch.from_numpy(ids), torch.from_numpy(offsets[:-1])
    out = {}
    with torch.no_grad():
        for mode in MODES:
            out[mode] = peerlib.median_time(lambda: F.embedding_bag(i, t, o, mode=mode),
                                            repeat=repeat)
    return out


def fbgemm_times(table, ids, offsets, repeat):
    """{mode: seconds} of FBGEMM's table-batched forward, one table, on the CPU (sum, mean)."""
    import torch
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import (EmbeddingLocation,
                                                                      PoolingMode)
    from fbgemm_gpu import split_table_batched_embeddings_ops_training as tbe
    compute = getattr(tbe, "ComputeDevice", None)
    if compute is None:
        from fbgemm_gpu.split_table_batched_embeddings_ops_common import ComputeDevice as compute
    i, o = torch.from_numpy(ids), torch.from_numpy(offsets)
    out = {}
    for mode, pooling in (("sum", PoolingMode.SUM), ("mean", PoolingMode.MEAN)):
        emb = tbe.SplitTableBatchedEmbeddingBagsCodegen(
            embedding_specs=[(ROWS, DIM, EmbeddingLocation.HOST, compute.CPU)],
            pooling_mode=pooling, device="cpu")
        with torch.no_grad():
            emb.split_embedding_weights()[0].copy_(torch.from_numpy(table))
            out[mode] = peerlib.median_time(lambda: emb(indices=i, offsets=o), repeat=repeat)
    return out


def child(repeat):
    """Run under the fbgemm_gpu interpreter: prints {"torch": ..., "fbgemm": ...} as JSON."""
    import torch
    table, ids, offsets = make_input()
    result = {"versions": f"torch {torch.__version__}"}
    result["torch"] = torch_times(table, ids, offsets, repeat)
    try:
        import fbgemm_gpu
        result["versions"] += f", fbgemm_gpu {getattr(fbgemm_gpu, '__version__', '?')}"
        result["fbgemm"] = fbgemm_times(table, ids, offsets, repeat)
    except Exception as e:  # report why, the parent prints it
        result["fbgemm_error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(result))


def run_child(python, repeat):
    """The child's result, or {"error": why}."""
    if not python or not os.path.exists(python):
        return {"error": f"no Python with fbgemm_gpu at {python!r} (see --fbgemm-python)"}
    env = dict(os.environ, OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")
    proc = subprocess.run([python, os.path.abspath(__file__), "--child", "--repeat", str(repeat)],
                          capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": f"{python} exited {proc.returncode}: {tail}"}
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=peerlib.REPEAT)
    default_fbgemm = os.path.join(HERE, "..", "..", ".venvs", "fbgemm", "bin", "python")
    ap.add_argument("--fbgemm-python", default=os.environ.get("FBGEMM_PYTHON", default_fbgemm))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.repeat)
        return
    binary = os.path.join(args.build, "bin", "bench_embedding")
    tk = peerlib.run_tensorkit(binary, "BM_(EmbeddingBag/|MemcpyBaseline)", threads=2,
                               repeat=args.repeat)

    def tk_time(name):  # Google Benchmark adds "/real_time" to the run name
        return next(v for k, v in tk.items() if k.startswith(name + "/") or k == name)

    table, ids, offsets = make_input()
    torch_debian = torch_times(table, ids, offsets, args.repeat)
    del table
    fbg = run_child(args.fbgemm_python, args.repeat)
    rows = []
    for mode in MODES:
        times = {"tensorkit": tk_time(f"BM_EmbeddingBag/{mode}"), "torch": torch_debian[mode]}
        if "torch" in fbg:
            times["torch+fbgemm"] = fbg["torch"][mode]
        if mode in fbg.get("fbgemm", {}):
            times["fbgemm TBE"] = fbg["fbgemm"][mode]
        rows.append((f"EmbeddingBag {mode} f32 [1M, 64], 64k bags ~40", times))
    peerlib.print_table("Embedding bags, 2 threads (ms, medians; x > 1 means tensorkit is faster)",
                        rows)
    gbytes = len(ids) * DIM * 4 / 1e9
    print(f"\nrows read per call: {gbytes:.2f} GB; tensorkit sum {gbytes / tk_time('BM_EmbeddingBag/sum'):.1f}"
          f" GB/s, parallel memcpy of as many bytes {gbytes / tk_time('BM_MemcpyBaseline'):.1f} GB/s")
    if "error" in fbg:
        print(f"fbgemm_gpu: not timed: {fbg['error']}")
    else:
        print(f"second interpreter: {fbg.get('versions', '?')}")
        if "fbgemm_error" in fbg:
            print(f"fbgemm_gpu: not timed: {fbg['fbgemm_error']}")


if __name__ == "__main__":
    main()
