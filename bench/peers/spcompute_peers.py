"""Sparse compute vs SciPy and PyTorch at the sizes of bench/spcompute_bench.cc: SpMV and SpMM
(N = 64) of a [1000000, 64000] CSR matrix with 10M entries, COO -> CSR of the same entries, and
SpGEMM of two random [100000, 100000] matrices with 1M entries each. Medians, 2 threads.
tensorkit's CSR results have sorted columns within rows; SciPy's tocsr() and a @ b leave them
unsorted, so rows "+ sort" add sort_indices() for a like-for-like comparison.

    /usr/bin/python3 bench/peers/spcompute_peers.py --build build
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

THREADS = 2
peerlib.set_threads(THREADS)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROWS, COLS, NNZ, N = 1000000, 64000, 10000000, 64
GEMM_DIM, GEMM_NNZ = 100000, 1000000


def random_coo(rows, cols, nnz, dtype, seed):
    rng = np.random.default_rng(seed)
    r = rng.integers(0, rows, nnz, dtype=np.int64)
    c = rng.integers(0, cols, nnz, dtype=np.int64)
    v = rng.uniform(-1, 1, nnz).astype(dtype)
    return sp.coo_matrix((v, (r, c)), shape=(rows, cols))


def sorted_csr(a, b=None):
    """CSR of coo a (or of the product a @ b) with sorted columns, as tensorkit returns it."""
    m = a.tocsr() if b is None else a @ b
    m.sort_indices()
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    binary = os.path.join(args.build, "bin", "bench_spcompute")
    tk = peerlib.run_tensorkit(binary, "SpMV|SpMVCoo|SpMM64|CooToCsr|SpGEMM", threads=THREADS)

    coo = random_coo(ROWS, COLS, NNZ, np.float32, 1)
    csr = coo.tocsr()
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, COLS).astype(np.float32)
    xm = rng.uniform(-1, 1, (COLS, N)).astype(np.float32)
    rows = []
    spmv = {"tensorkit": tk.get("SpMV/float32/real_time"),
            "scipy": peerlib.median_time(lambda: csr @ x)}
    spmm = {"tensorkit": tk.get("SpMM64/float32/real_time"),
            "scipy": peerlib.median_time(lambda: csr @ xm, repeat=3)}
    if not args.no_torch:
        import torch
        torch.set_num_threads(THREADS)
        tcsr = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                       torch.from_numpy(csr.indices.astype(np.int64)),
                                       torch.from_numpy(csr.data), size=csr.shape)
        tcoo = torch.sparse_coo_tensor(
            torch.from_numpy(np.vstack([coo.row, coo.col])), torch.from_numpy(coo.data),
            size=coo.shape).coalesce()
        tx = torch.from_numpy(x).reshape(-1, 1)
        txm = torch.from_numpy(xm)
        spmv["torch csr"] = peerlib.median_time(lambda: tcsr @ tx)
        spmm["torch csr"] = peerlib.median_time(lambda: tcsr @ txm, repeat=3)
        spmm["torch coo"] = peerlib.median_time(lambda: torch.sparse.mm(tcoo, txm), repeat=3)
        del tcsr, tcoo
    rows.append(("SpMV [1M x 64k] 10M nnz float32", spmv))
    rows.append(("SpMV from a COO SparseTensor (any order)",
                 {"tensorkit": tk.get("SpMVCoo/float32/real_time"),
                  "scipy": peerlib.median_time(lambda: coo @ x, repeat=3)}))
    rows.append(("SpMM N=64 [1M x 64k] 10M nnz float32", spmm))
    rows.append(("COO->CSR 10M entries, random order",
                 {"tensorkit": tk.get("CooToCsr/float32/real_time"),
                  "scipy": peerlib.median_time(lambda: coo.tocsr(), repeat=3),
                  "scipy + sort": peerlib.median_time(lambda: sorted_csr(coo), repeat=3)}))
    rows.append(("COO->CSR 10M entries, already sorted",
                 {"tensorkit": tk.get("CooToCsrSorted/float32/real_time"),
                  "scipy": peerlib.median_time(lambda: csr.tocoo().tocsr(), repeat=3)}))
    del coo, csr, xm
    a = random_coo(GEMM_DIM, GEMM_DIM, GEMM_NNZ, np.float64, 2).tocsr()
    b = random_coo(GEMM_DIM, GEMM_DIM, GEMM_NNZ, np.float64, 3).tocsr()
    rows.append(("SpGEMM [100k x 100k] 1M nnz each, float64",
                 {"tensorkit": tk.get("SpGEMM/float64/real_time"),
                  "scipy": peerlib.median_time(lambda: a @ b, repeat=3),
                  "scipy + sort": peerlib.median_time(lambda: sorted_csr(a, b), repeat=3)}))
    peerlib.print_table(f"sparse compute ({THREADS} threads)", rows)


if __name__ == "__main__":
    main()
