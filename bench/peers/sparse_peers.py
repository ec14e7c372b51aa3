"""Sparse core (COO) against PyTorch, SciPy, NumPy (and pydata sparse when installed), at the sizes
of bench/sparse_bench.cc. Usage: /usr/bin/python3 bench/peers/sparse_peers.py --build DIR
Env: PEERS_REPEAT (default 5), PEERS_THREADS (default 2)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

THREADS = int(os.environ.get("PEERS_THREADS", "2"))
peerlib.set_threads(THREADS)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)

SHAPE3 = (1000000, 1000, 64)
NNZ3 = 10_000_000
SHAPE2 = (4096, 4096)
NNZ2 = 1_000_000
CONCAT_SHAPE = (200000, 64000)
CONCAT_NNZ = 2_000_000


def pydata_sparse():
    """pydata's `sparse` module, or None (this repository has a sparse/ folder: look past it)."""
    here = os.getcwd()
    saved = list(sys.path)
    try:
        sys.path = [p for p in sys.path if p not in ("", ".", here)]
        import importlib
        mod = importlib.import_module("sparse")
        return mod if hasattr(mod, "concatenate") else None
    except ImportError:
        return None
    finally:
        sys.path = saved


def random_coo(shape, nnz, seed):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, d, nnz, dtype=np.int64) for d in shape], axis=1)
    vals = (rng.integers(0, 1000, nnz) / 100.0).astype(np.float32)
    return idx, vals


def linear_key(idx, shape):
    key = idx[:, 0].copy()
    for a in range(1, len(shape)):
        key *= shape[a]
        key += idx[:, a]
    return key


def reorder_rows():
    idx, vals = random_coo(SHAPE3, NNZ3, 1)
    it, vt = torch.from_numpy(idx.T.copy()), torch.from_numpy(vals)
    rows = []

    def np_reorder():
        perm = np.argsort(linear_key(idx, SHAPE3), kind="stable")
        return idx[perm], vals[perm]

    def np_coalesce():
        key = linear_key(idx, SHAPE3)
        perm = np.argsort(key, kind="stable")
        k = key[perm]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        return idx[perm[starts]], np.add.reduceat(vals[perm], starts)

    torch_coalesce = peerlib.median_time(
        lambda: torch.sparse_coo_tensor(it, vt, SHAPE3).coalesce())
    rows.append(("Reorder 3-D 10M (full sort)", {
        "torch": torch_coalesce,
        "numpy": peerlib.median_time(np_reorder)}))
    rows.append(("Coalesce 3-D 10M", {
        "torch": torch_coalesce,
        "numpy": peerlib.median_time(np_coalesce)}))

    # Grouped sums over dim 0 of the sorted tensor (boundaries included, as group() finds them).
    perm = np.argsort(linear_key(idx, SHAPE3), kind="stable")
    sidx, svals = idx[perm], vals[perm]
    first = sidx[:, 0].copy()
    first_t, svals_t = torch.from_numpy(first), torch.from_numpy(svals)

    def np_groups():
        starts = np.flatnonzero(np.r_[True, first[1:] != first[:-1]])
        return np.add.reduceat(svals, starts)

    def torch_groups():
        _, counts = torch.unique_consecutive(first_t, return_counts=True)
        return torch.segment_reduce(svals_t, "sum", lengths=counts)

    group_times = {"numpy reduceat": peerlib.median_time(np_groups),
                   "torch segment_reduce": peerlib.median_time(torch_groups)}
    rows.append(("group({0}) sums, Tensor views", dict(group_times)))
    rows.append(("group({0}) sums, value_span", dict(group_times)))
    return rows


def matrix_rows():
    idx, vals = random_coo(SHAPE2, NNZ2, 2)
    r, c = idx[:, 0], idx[:, 1]
    it, vt = torch.from_numpy(idx.T.copy()), torch.from_numpy(vals)
    coo = sp.coo_matrix((vals, (r, c)), shape=SHAPE2)
    rows = []
    rows.append(("Reorder 2-D 1M (rows)", {
        "torch": peerlib.median_time(lambda: torch.sparse_coo_tensor(it, vt, SHAPE2).coalesce()),
        "scipy tocsr": peerlib.median_time(lambda: coo.tocsr()),
        "numpy": peerlib.median_time(
            lambda: np.argsort(linear_key(idx, SHAPE2), kind="stable"))}))
    rows.append(("Coalesce 2-D 1M", {
        "torch": peerlib.median_time(lambda: torch.sparse_coo_tensor(it, vt, SHAPE2).coalesce()),
        "scipy tocsr": peerlib.median_time(lambda: coo.tocsr())}))
    st = torch.sparse_coo_tensor(it, vt, SHAPE2).coalesce()
    ci = st.indices().numpy()
    cv = st.values().numpy()
    ccoo = sp.coo_matrix((cv, (ci[0], ci[1])), shape=SHAPE2)

    def np_dense():
        d = np.zeros(SHAPE2, dtype=np.float32)
        d[ci[0], ci[1]] = cv
        return d

    rows.append(("ToDense [4096 4096] 1M (coalesced)", {
        "torch": peerlib.median_time(lambda: st.to_dense()),
        "scipy toarray": peerlib.median_time(lambda: ccoo.toarray()),
        "numpy": peerlib.median_time(np_dense)}))
    dense = np_dense()
    dense_t = torch.from_numpy(dense)

    def np_from_dense():
        nz = np.nonzero(dense)
        return np.stack(nz, axis=1), dense[nz]

    rows.append(("FromDense [4096 4096] 1M", {
        "torch": peerlib.median_time(lambda: dense_t.to_sparse()),
        "scipy coo_matrix": peerlib.median_time(lambda: sp.coo_matrix(dense)),
        "numpy": peerlib.median_time(np_from_dense)}))
    return rows


def concat_rows():
    inputs = []
    for k in range(5):
        idx, vals = random_coo(CONCAT_SHAPE, CONCAT_NNZ, 10 + k)
        perm = np.argsort(linear_key(idx, CONCAT_SHAPE), kind="stable")
        inputs.append((idx[perm], vals[perm]))
    tinputs = [torch.sparse_coo_tensor(torch.from_numpy(i.T.copy()), torch.from_numpy(v),
                                       CONCAT_SHAPE).coalesce() for i, v in inputs]
    sinputs = [sp.coo_matrix((v, (i[:, 0], i[:, 1])), shape=CONCAT_SHAPE) for i, v in inputs]

    def np_concat():
        shifted = []
        for k, (i, _) in enumerate(inputs):
            s = i.copy()
            s[:, 0] += k * CONCAT_SHAPE[0]
            shifted.append(s)
        return np.concatenate(shifted), np.concatenate([v for _, v in inputs])

    times = {
        "torch cat": peerlib.median_time(lambda: torch.cat(tinputs, dim=0)),
        "scipy vstack": peerlib.median_time(lambda: sp.vstack(sinputs, format="coo")),
        "numpy": peerlib.median_time(np_concat),
    }
    pyd = pydata_sparse()
    if pyd is not None:
        pinputs = [pyd.COO(i.T, v, shape=CONCAT_SHAPE) for i, v in inputs]
        times["pydata sparse"] = peerlib.median_time(lambda: pyd.concatenate(pinputs, axis=0))
    else:
        print("note: pydata sparse is not installed; its Concat column is skipped")
    rows = [("Concat axis 0, 5 x 2M", times)]
    rows.append(("copy into reused buffers (baseline)", {
        "numpy concatenate": peerlib.median_time(
            lambda: (np.concatenate([i for i, _ in inputs]),
                     np.concatenate([v for _, v in inputs])))}))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="tensorkit build directory")
    args = ap.parse_args()
    tk = peerlib.run_tensorkit(os.path.join(args.build, "bin", "bench_sparse"), ".*",
                               threads=THREADS)
    names = {
        "Reorder 3-D 10M (full sort)": "BM_Reorder3D/real_time",
        "Coalesce 3-D 10M": "BM_Coalesce3D/real_time",
        "group({0}) sums, Tensor views": "BM_GroupSum3D/real_time",
        "group({0}) sums, value_span": "BM_GroupSum3DSpan/real_time",
        "Reorder 2-D 1M (rows)": "BM_Reorder2D/real_time",
        "Coalesce 2-D 1M": "BM_Coalesce2D/real_time",
        "ToDense [4096 4096] 1M (coalesced)": "BM_ToDense2D/real_time",
        "FromDense [4096 4096] 1M": "BM_FromDense2D/real_time",
        "Concat axis 0, 5 x 2M": "BM_ConcatAxis0/real_time",
        "copy into reused buffers (baseline)": "BM_ConcatCopyBaseline/real_time",
    }
    rows = reorder_rows() + matrix_rows() + concat_rows()
    for op, times in rows:
        times["tensorkit"] = tk.get(names[op])
    peerlib.print_table(f"Sparse core, {THREADS} threads, medians", rows)


if __name__ == "__main__":
    main()
