#!/usr/bin/python3
"""Writes the small sample files in examples/data/ (checked in; `make run` converts them).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-scipy). Deterministic: the same
files every time, so re-running it leaves git clean."""
import io
import os
import time
from unittest import mock

import numpy as np
import scipy.io
import scipy.sparse as sp

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def path(name):
    return os.path.join(HERE, name)


def mmwrite(name, matrix, **kw):
    # scipy writes its version into a comment line; drop it so the bytes do not depend on it.
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, matrix, **kw)
    lines = [l for l in buf.getvalue().decode().splitlines(True)
             if not l.startswith("%") or l.startswith("%%")]
    with open(path(name), "w") as f:
        f.write("".join(lines))


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(7)
    # Dense arrays: several dtypes, Fortran order, big-endian.
    np.save(path("embeddings_f32.npy"), rng.standard_normal((6, 4)).astype(np.float32))
    np.save(path("ids_i64.npy"), rng.integers(0, 1000, size=(3, 5), dtype=np.int64))
    np.save(path("grid_fortran.npy"), np.asfortranarray(np.arange(24.0).reshape(2, 3, 4)))
    np.save(path("signal_bigendian.npy"), np.linspace(0, 1, 8).astype(">f8").reshape(2, 4))
    np.savez(path("dense_pair.npz"), weights=np.eye(3, dtype=np.float32),
             bias=np.arange(3, dtype=np.float32))
    np.savez_compressed(path("dense_compressed.npz"),
                        counts=rng.integers(0, 9, size=(4, 4)).astype(np.int32))
    # Sparse matrices: scipy.sparse csr and coo, Matrix Market general/symmetric/pattern.
    m = sp.random(8, 6, density=0.25, format="csr", random_state=3, dtype=np.float64)
    sp.save_npz(path("features_csr.npz"), m)
    sp.save_npz(path("features_coo.npz"), sp.random(5, 9, density=0.2, format="coo",
                                                     random_state=4))
    mmwrite("graph_general.mtx", sp.random(7, 7, density=0.3, random_state=5))
    s = sp.random(6, 6, density=0.3, random_state=6)
    mmwrite("laplacian_symmetric.mtx", sp.coo_matrix(s + s.T), symmetry="symmetric")
    pattern = (sp.random(5, 8, density=0.3, random_state=8) != 0).astype(np.int32)
    mmwrite("adjacency_pattern.mtx", pattern, field="pattern")
    # An R-MAT graph (Graph500's a, b, c = 0.57, 0.19, 0.19: each edge picks a quadrant 9 times),
    # 512 vertices and 16 edges each, repeats kept: the `tensorkit spy` picture of tools/README.md.
    g = np.random.default_rng(500)
    src, dst = np.zeros(16 * 512, np.int64), np.zeros(16 * 512, np.int64)
    for bit in range(9):
        r = g.random(16 * 512)
        src |= (r >= 0.76).astype(np.int64) << bit
        dst |= (((r >= 0.57) & (r < 0.76)) | (r >= 0.95)).astype(np.int64) << bit
    with open(path("rmat_graph.mtx"), "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate pattern general\n"
                "%% R-MAT edges, repeats kept: an edge listed k times is one entry of value k\n"
                "512 512 %d\n" % len(src))
        f.writelines("%d %d\n" % (i + 1, j + 1) for i, j in zip(src, dst))
    # A FROSTT tensor: 3 axes, 1-based, with a comment line.
    coords = sorted({tuple(int(v) for v in rng.integers(1, [4, 5, 3])) for _ in range(12)})
    with open(path("ratings.tns"), "w") as f:
        f.write("# user item context rating\n")
        for c in coords:
            f.write(f"{c[0]} {c[1]} {c[2]} {rng.integers(1, 6)}.0\n")


if __name__ == "__main__":
    # Zip members carry the time they were written: pin it so the .npz bytes never change.
    os.environ["TZ"] = "UTC"
    time.tzset()
    with mock.patch("time.time", return_value=1577836800.0):
        main()
