"""GEMM peers: a 2048^3 float32 product and a batch of 64 float32 products of 256^3, tensorkit
(bin/bench_gemm, and the same binary forced onto BLIS's AVX2 "haswell" kernels to show what the
kernel choice of dense/gemm.cc buys on AVX-512 CPUs) against NumPy (Debian's OpenBLAS as it picks
its kernels, and on AVX-512 CPUs with OPENBLAS_CORETYPE=SkylakeX, each in its own process since
OpenBLAS reads the variable when it loads) and PyTorch (torch.mm, torch.bmm), all on 2 threads. A second table compares the BLAS
candidates for tensorkit's backend called directly from C++ (see dense/gemm.cc).

Usage: /usr/bin/python3 bench/peers/gemm_peers.py --build build"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peerlib  # noqa: E402

THREADS = 2
N = 2048
BATCH, BN = 64, 256
SGEMM_OP = f"sgemm {N}^3 float32"
BATCHED_OP = f"batched {BATCH} x {BN}^3 float32"

# Runs in a child process so that its OpenBLAS sees the environment we give it.
NUMPY_CHILD = f"""
import json, sys
sys.path.insert(0, {HERE!r})
import peerlib
import numpy as np
rng = np.random.default_rng(0)
a = rng.random(({N}, {N}), dtype=np.float32); b = rng.random(({N}, {N}), dtype=np.float32)
x = rng.random(({BATCH}, {BN}, {BN}), dtype=np.float32)
y = rng.random(({BATCH}, {BN}, {BN}), dtype=np.float32)
print(json.dumps({{"sgemm": peerlib.median_time(lambda: a @ b),
                  "batched": peerlib.median_time(lambda: np.matmul(x, y))}}))
"""


def numpy_times(coretype):
    """NumPy medians {'sgemm': s, 'batched': s} with OPENBLAS_CORETYPE=coretype (None: unset)."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(THREADS)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    out = subprocess.run([sys.executable, "-c", NUMPY_CHILD], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def torch_times():
    """torch.mm / torch.bmm medians, or {} when torch is missing."""
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(THREADS)
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(N, N, generator=g), torch.rand(N, N, generator=g)
    x, y = torch.rand(BATCH, BN, BN, generator=g), torch.rand(BATCH, BN, BN, generator=g)
    return {"sgemm": peerlib.median_time(lambda: torch.mm(a, b)),
            "batched": peerlib.median_time(lambda: torch.bmm(x, y))}


def pick(results, prefix):
    """The median of the one benchmark whose run name starts with prefix, or None."""
    for name, t in results.items():
        if name.startswith(prefix):
            return t
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    binary = os.path.join(args.build, "bin", "bench_gemm")
    peerlib.set_threads(THREADS)

    # AVX-512 kernels forced on a CPU without AVX-512 would die of an illegal instruction.
    flags = set(peerlib._cpuinfo().get("flags", "").split())
    avx512 = {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags
    tk = peerlib.run_tensorkit(binary, f"^(Gemm/float32/{N}|GemmBatched/|Backend/)",
                               threads=THREADS)
    # What tensorkit's kernel choice buys: the same binary made to take BLIS 0.9's AVX2
    # "haswell" kernels, which BLIS itself picks on Intel AVX-512 parts with a generic brand.
    tk_haswell = peerlib.run_tensorkit(binary, f"^(Gemm/float32/{N}/|GemmBatched/)",
                                       threads=THREADS, extra_env={"BLIS_ARCH_TYPE": "3"})
    tk_skx = (peerlib.run_tensorkit(binary, "^Backend/openblas/", threads=THREADS,
                                    extra_env={"OPENBLAS_CORETYPE": "SkylakeX"})
              if avx512 else {})
    np_default = numpy_times(None)
    np_skx = numpy_times("SkylakeX") if avx512 else None
    th = torch_times()

    rows = []
    for op, key, tk_name in ((SGEMM_OP, "sgemm", f"Gemm/float32/{N}/"),
                             (BATCHED_OP, "batched", "GemmBatched/float32/")):
        times = {"tensorkit": pick(tk, tk_name),
                 "tk(haswell forced)": pick(tk_haswell, tk_name),
                 "numpy": np_default[key]}
        if np_skx:
            times["numpy(SkylakeX)"] = np_skx[key]
        if th:
            times["torch"] = th[key]
        rows.append((op, times))
    peerlib.print_table(f"GEMM, {THREADS} threads (ratio > 1: tensorkit faster)", rows)

    # The backend candidates, same binary and thread count; 'tensorkit' is BLIS (dense/gemm.cc).
    cand = {"tensorkit": pick(tk, f"Gemm/float32/{N}/")}
    for label, t in (("openblas(auto)", pick(tk, "Backend/openblas/")),
                     ("openblas(SkylakeX)", pick(tk_skx, "Backend/openblas/")),
                     ("dnnl_sgemm", pick(tk, "Backend/dnnl/"))):
        if t is not None:
            cand[label] = t
    peerlib.print_table(f"Backend candidates from C++, {THREADS} threads", [(SGEMM_OP, cand)])


if __name__ == "__main__":
    main()
