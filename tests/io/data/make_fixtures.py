#!/usr/bin/python3
"""Writes the fixtures of tests/io/fixtures_test.cc with NumPy and SciPy themselves, and
records what NumPy/SciPy read from every valid file of tests/fuzz/corpus (corpus_expected.txt,
checked by tests/io/corpus_test.cc). The outputs are checked in: the C++ tests need no Python.

Dense fixtures hold value(i) of the C-order position i (the same formula is in
fixtures_test.cc), so every element is checked, not only a count:
  dense_<dtype>_c.npy   [3 4] in C order, every dtype tensorkit reads
  dense_<dtype>_f.npy   the same values stored in Fortran order
  dense_3d_f.npy        int16 [2 3 4], Fortran order
  dense_int32_be.npy, dense_float64_be.npy   big-endian [3 4]
  dense_scalar.npy, dense_empty.npy          float64 [] and int64 [0 3]
  savez.npz, savez_compressed.npz            a = int32 [3 4], b = float64 [2 3 4] (Fortran)
  scipy_coo.npz, scipy_csr.npz, scipy_csc.npz  scipy.sparse.save_npz of the [5 7] matrix with
      entries where (3r + 5c) % 4 == 0 and value 10r + c + 0.5 (float64 coo, compressed; float32
      csr, stored; int64 csc of 10r + c, compressed)

Usage: /usr/bin/python3 tests/io/data/make_fixtures.py   (rerun after changing the corpus)
"""
import glob
import os

import numpy as np
import scipy.io
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "fuzz", "corpus")
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]


def value(dtype, i):
    if dtype == "bool":
        return i % 3 == 1
    if dtype == "int8":
        return (i * 37) % 256 - 128
    if dtype == "uint8":
        return (i * 37) % 256
    if dtype == "int16":
        return (i * 4099) % 65536 - 32768
    if dtype == "int32":
        return i * 1000003 - 5000000
    if dtype == "int64":
        return i * 1099511627791 - (1 << 40)
    if dtype == "float16":
        return i * 0.25 - 3
    if dtype == "float32":
        return i * 0.5 - 7.25
    return i / 3.0 - 2  # float64


def dense(dtype, dims):
    n = int(np.prod(dims))
    return np.array([value(dtype, i) for i in range(n)], dtype=dtype).reshape(dims)


def out(name):
    return os.path.join(HERE, name)


def write_fixtures():
    for dt in DTYPES:
        np.save(out(f"dense_{dt}_c.npy"), dense(dt, (3, 4)))
        np.save(out(f"dense_{dt}_f.npy"), np.asfortranarray(dense(dt, (3, 4))))
    np.save(out("dense_3d_f.npy"), np.asfortranarray(dense("int16", (2, 3, 4))))
    np.save(out("dense_int32_be.npy"), dense("int32", (3, 4)).astype(">i4"))
    np.save(out("dense_float64_be.npy"), dense("float64", (3, 4)).astype(">f8"))
    np.save(out("dense_scalar.npy"), np.float64(value("float64", 0)))
    np.save(out("dense_empty.npy"), np.zeros((0, 3), np.int64))
    a, b = dense("int32", (3, 4)), np.asfortranarray(dense("float64", (2, 3, 4)))
    np.savez(out("savez.npz"), a=a, b=b)
    np.savez_compressed(out("savez_compressed.npz"), a=a, b=b)
    r, c = np.nonzero(np.fromfunction(lambda r, c: (3 * r + 5 * c) % 4 == 0, (5, 7)))
    sp.save_npz(out("scipy_coo.npz"), sp.coo_matrix((10.0 * r + c + 0.5, (r, c)), (5, 7)))
    csr = sp.csr_matrix(((10.0 * r + c + 0.5).astype(np.float32), (r, c)), (5, 7))
    sp.save_npz(out("scipy_csr.npz"), csr, compressed=False)
    sp.save_npz(out("scipy_csc.npz"), sp.csc_matrix(((10 * r + c).astype(np.int64), (r, c)), (5, 7)))


def read_tns(path):
    """FROSTT: one entry a line, 1-based indices then the value; '#' starts a comment."""
    entries = []
    for line in open(path):
        line = line.split("#")[0].split()
        if not line:
            continue
        if len(line) < 2 or (entries and len(line) != len(entries[0][0]) + 1):
            raise ValueError("malformed")
        entries.append(([int(x) - 1 for x in line[:-1]], float(line[-1])))
    if not entries or min(min(i) for i, _ in entries) < 0:
        raise ValueError("malformed")
    shape = [max(i[k] for i, _ in entries) + 1 for k in range(len(entries[0][0]))]
    a = np.zeros(shape)
    for i, v in entries:
        a[tuple(i)] += v
    return a


def read_corpus_file(path):
    """('dense' | 'sparse', array) as NumPy/SciPy read it, or None when they refuse it."""
    try:
        if path.endswith(".npy"):
            return "dense", np.load(path)
        if path.endswith(".npz"):
            z = np.load(path)
            if "format" in z.files:
                return "sparse", sp.load_npz(path).toarray()
            return "dense", z[z.files[0]]
        if path.endswith(".mtx"):
            m = scipy.io.mmread(path)
            return ("sparse", m.toarray()) if sp.issparse(m) else ("dense", np.asarray(m))
        return "sparse", read_tns(path)
    except Exception:  # noqa: BLE001 -- any refusal means the file is invalid
        return None


def number(x):
    return repr(int(x)) if isinstance(x, (bool, np.bool_, np.integer)) else repr(float(x))


def write_corpus_expectations():
    lines = ["# tests/fuzz/corpus/<file> dense|sparse <dtype> <rank> <dims...> : <values in C order>",
             "# or <file> error. Written by make_fixtures.py from what NumPy/SciPy read."]
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*"))):
        name = os.path.relpath(path, CORPUS)
        got = read_corpus_file(path)
        if got is None:
            lines.append(f"{name} error")
            continue
        kind, a = got
        dtype = a.dtype.newbyteorder("=").name
        values = " ".join(number(x) for x in a.ravel(order="C"))
        lines.append(f"{name} {kind} {dtype} {a.ndim} {' '.join(map(str, a.shape))} : {values}")
    with open(out("corpus_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


write_fixtures()
write_corpus_expectations()
