#!/usr/bin/python3
"""Round trips between tensorkit and the real NumPy/SciPy writers and readers.

Files written by np.save (every dtype, Fortran order, big-endian, header versions 1-3),
np.savez, np.savez_compressed, scipy.sparse.save_npz (coo/csr/csc, stored and compressed) and
scipy.io.mmwrite are converted by the `tensorkit` tool (batches, so a handful of processes), and
what tensorkit writes is loaded back with NumPy/SciPy and compared with the originals.

Usage: numpy_scipy_roundtrip.py --tool build/bin/tensorkit   (exit 77 = skipped: no numpy/scipy)
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError:
    print("skipped: needs numpy and scipy")
    sys.exit(77)

TOOL = None
results = {"passed": 0, "failed": []}


def check(ok, what):
    if ok:
        results["passed"] += 1
    else:
        results["failed"].append(what)
        print("FAIL:", what)


def tk(*args):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tensorkit {' '.join(args)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


def same(a, b):
    """Equal shape, values (NaN == NaN) and dtype up to byte order."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype.newbyteorder("=") != b.dtype.newbyteorder("="):
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def dense_arrays(rng):
    """name -> array, covering every dtype tensorkit reads, both orders and both byte orders."""
    out = {}
    shapes = [(), (7,), (0, 3), (3, 4, 5)]
    for dt in ["?", "i1", "u1", "<i2", "<i4", "<i8", "<f2", "<f4", "<f8",
               ">i2", ">i4", ">i8", ">f2", ">f4", ">f8"]:
        for k, shape in enumerate(shapes):
            if dt == "?":
                a = rng.integers(0, 2, size=shape).astype(bool)
            elif dt[-2] in "iu":
                a = rng.integers(-100 if "i" in dt else 0, 100, size=shape).astype(dt)
            else:
                a = rng.standard_normal(shape).astype(dt)
                if a.size:
                    a.flat[0] = np.nan
            tag = dt.replace("<", "le_").replace(">", "be_").replace("?", "bool")
            out[f"{tag}_s{k}"] = a
            if a.ndim >= 2:
                out[f"{tag}_s{k}_fortran"] = np.asfortranarray(a)
    return out


def test_npy(tmp, rng):
    src = os.path.join(tmp, "npy_in")
    os.makedirs(src)
    arrays = dense_arrays(rng)
    for name, a in arrays.items():
        np.save(os.path.join(src, name + ".npy"), a)
    for version in [(1, 0), (2, 0), (3, 0)]:
        name = f"version{version[0]}"
        arrays[name] = np.arange(12, dtype="<i4").reshape(3, 4)
        with open(os.path.join(src, name + ".npy"), "wb") as f:
            np.lib.format.write_array(f, arrays[name], version=version)
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    tk("convert", "--to", "npy", "-o", os.path.join(tmp, "npy_out"), *files)
    tk("convert", "--to", "npz", "-o", os.path.join(tmp, "npz_out"), *files)
    tk("convert", "--compress", "--to", "npz", "-o", os.path.join(tmp, "npzc_out"), *files)
    for name, a in arrays.items():
        b = np.load(os.path.join(tmp, "npy_out", name + ".npy"))
        check(same(a, b), f"np.save {name} {a.dtype} -> tensorkit -> .npy")
        if a.flags.f_contiguous and not a.flags.c_contiguous:
            check(b.flags.f_contiguous, f"{name}: Fortran order kept")
        for d in ["npz_out", "npzc_out"]:
            with np.load(os.path.join(tmp, d, name + ".npz")) as z:
                check(list(z.keys()) == ["arr_0"] and same(a, z["arr_0"]), f"{name} -> {d}")


def test_savez(tmp, rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = np.arange(5)
    np.savez(os.path.join(tmp, "plain.npz"), x=x, y=y)
    np.savez_compressed(os.path.join(tmp, "packed.npz"), x=x, y=y)
    np.savez(os.path.join(tmp, "positional.npz"), y, x)
    tk("convert", os.path.join(tmp, "plain.npz"), os.path.join(tmp, "plain.npy"))
    tk("convert", os.path.join(tmp, "packed.npz"), os.path.join(tmp, "packed.npy"))
    tk("convert", os.path.join(tmp, "positional.npz"), os.path.join(tmp, "positional.npy"))
    check(same(np.load(os.path.join(tmp, "plain.npy")), x), "np.savez first member")
    check(same(np.load(os.path.join(tmp, "packed.npy")), x), "np.savez_compressed first member")
    check(same(np.load(os.path.join(tmp, "positional.npy")), y), "np.savez arr_0")


def sparse_matrices(rng):
    out = {}
    for dt in [np.float64, np.float32, np.int32, np.int64]:
        m = sp.random(40, 30, density=0.1, format="coo", random_state=int(rng.integers(1 << 30)))
        m = sp.coo_matrix(((m.data * 100).astype(dt), (m.row, m.col)), shape=m.shape)
        tag = np.dtype(dt).name
        out[f"coo_{tag}"] = m
        out[f"csr_{tag}"] = m.tocsr()
        out[f"csc_{tag}"] = m.tocsc()
    out["csr_empty"] = sp.csr_matrix((5, 6), dtype=np.float64)
    out["coo_wide"] = sp.random(3, 200, density=0.05, format="coo", random_state=1)
    return out


def test_scipy_npz(tmp, rng):
    src = os.path.join(tmp, "sp_in")
    os.makedirs(src)
    mats = sparse_matrices(rng)
    for name, m in mats.items():
        sp.save_npz(os.path.join(src, name + ".npz"), m, compressed=True)
        sp.save_npz(os.path.join(src, name + "_stored.npz"), m, compressed=False)
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    for ext in ["npy", "npz", "mtx"]:
        tk("convert", "--to", ext, "-o", os.path.join(tmp, "sp_" + ext), *files)
    for name, m in mats.items():
        for variant in [name, name + "_stored"]:
            dense = m.toarray()
            got = np.load(os.path.join(tmp, "sp_npy", variant + ".npy"))
            check(same(dense, got), f"save_npz {variant} -> .npy")
            back = sp.load_npz(os.path.join(tmp, "sp_npz", variant + ".npz"))
            check(back.format == "coo" and back.dtype == m.dtype and same(dense, back.toarray()),
                  f"save_npz {variant} -> tensorkit .npz -> load_npz")
            mm = scipy.io.mmread(os.path.join(tmp, "sp_mtx", variant + ".mtx"))
            # float32 is written in its shortest decimal form: exact once cast back to float32.
            check(mm.shape == m.shape and np.array_equal(mm.toarray().astype(m.dtype), dense),
                  f"save_npz {variant} -> tensorkit .mtx -> mmread")


def test_mmwrite(tmp, rng):
    src = os.path.join(tmp, "mm_in")
    os.makedirs(src)
    a = sp.random(30, 20, density=0.15, random_state=3)
    s = sp.random(25, 25, density=0.1, random_state=4)
    sym = sp.coo_matrix(s + s.T)
    skew = sp.coo_matrix(sp.tril(s, -1) - sp.tril(s, -1).T)
    ints = sp.coo_matrix((rng.integers(-9, 9, 40), (rng.integers(0, 10, 40),
                                                   rng.integers(0, 12, 40))), shape=(10, 12))
    ints.sum_duplicates()
    cases = {
        "general": (a, {}),
        "symmetric": (sym, {"symmetry": "symmetric"}),
        "skew": (skew, {"symmetry": "skew-symmetric"}),
        "integer": (ints, {"field": "integer"}),
        "pattern": ((a != 0).astype(np.int8), {"field": "pattern"}),
        "array": (rng.standard_normal((6, 4)), {}),
        "array_sym": (sym.toarray()[:5, :5], {"symmetry": "symmetric"}),
    }
    for name, (m, kw) in cases.items():
        scipy.io.mmwrite(os.path.join(src, name + ".mtx"), m, **kw)
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    tk("convert", "--to", "npy", "-o", os.path.join(tmp, "mm_npy"), *files)
    tk("convert", "--coalesce", "--to", "mtx", "-o", os.path.join(tmp, "mm_mtx"), *files)
    for name in cases:
        ref = scipy.io.mmread(os.path.join(src, name + ".mtx"))
        ref = ref.toarray() if sp.issparse(ref) else ref
        got = np.load(os.path.join(tmp, "mm_npy", name + ".npy"))
        check(got.shape == ref.shape and np.array_equal(got, ref), f"mmwrite {name} -> .npy")
        back = scipy.io.mmread(os.path.join(tmp, "mm_mtx", name + ".mtx"))
        back = back.toarray() if sp.issparse(back) else back
        check(np.array_equal(back, ref), f"mmwrite {name} -> tensorkit .mtx -> mmread")


def test_tns_and_info(tmp, rng):
    dense = np.zeros((4, 5, 6))
    idx = rng.integers(0, [4, 5, 6], size=(30, 3))
    dense[tuple(idx.T)] = rng.standard_normal(30)
    dense[3, 4, 5] = 1.25  # the largest index on every axis, so the inferred shape is exact
    np.save(os.path.join(tmp, "cube.npy"), dense)
    tk("convert", os.path.join(tmp, "cube.npy"), os.path.join(tmp, "cube.tns"))
    rows = np.loadtxt(os.path.join(tmp, "cube.tns"), ndmin=2)
    rebuilt = np.zeros_like(dense)
    rebuilt[tuple(rows[:, :3].astype(int).T - 1)] = rows[:, 3]
    check(np.array_equal(rebuilt, dense), ".npy -> tensorkit .tns -> np.loadtxt")
    tk("convert", os.path.join(tmp, "cube.tns"), os.path.join(tmp, "cube_back.npy"))
    check(same(np.load(os.path.join(tmp, "cube_back.npy")), dense), ".tns -> .npy")
    info = json.loads(tk("info", "--json", os.path.join(tmp, "cube.tns")))
    check(info["shape"] == [4, 5, 6] and info["nnz"] == int(np.count_nonzero(dense)) and
          info["sparse"] is True and info["dtype"] == "float64", f"info --json {info}")
    info = json.loads(tk("info", "--json", os.path.join(tmp, "cube.npy")))
    check(info["sparse"] is False and info["order"] == "C" and
          abs(info["density"] - np.count_nonzero(dense) / dense.size) < 1e-6, f"info {info}")


def save_nd_coo(path, coords, data, shape):
    """An n-D scipy coo_array file as SciPy 1.15+ save_npz writes it (coords, _is_array)."""
    np.savez(path, coords=np.asarray(coords), format=np.array(b"coo"), shape=np.asarray(shape),
             data=np.asarray(data), _is_array=True)


def test_scipy_arrays_and_order(tmp, rng):
    src = os.path.join(tmp, "arr_in")
    os.makedirs(src)
    m = sp.random(30, 40, density=0.1, format="csr", random_state=7)
    cube = np.zeros((3, 4, 5))
    cube_idx = np.array([[0, 1, 2, 2], [1, 0, 3, 3], [4, 2, 0, 1]])  # [rank, nnz], row-major sorted
    cube[tuple(cube_idx)] = [1.5, -2.0, 3.0, 4.0]
    line = np.zeros(9)
    line[[7, 2, 5]] = [1.0, 2.0, 3.0]
    sp.save_npz(os.path.join(src, "csr_array.npz"), sp.csr_array(m))
    sp.save_npz(os.path.join(src, "csc_array.npz"), sp.csc_array(m))
    sp.save_npz(os.path.join(src, "coo_array.npz"), sp.coo_array(m))
    save_nd_coo(os.path.join(src, "cube.npz"), cube_idx, cube[tuple(cube_idx)], cube.shape)
    save_nd_coo(os.path.join(src, "line.npz"), [[7, 2, 5]], [1.0, 2.0, 3.0], [9])
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    tk("convert", "--to", "npy", "-o", os.path.join(tmp, "arr_npy"), *files)
    want = {"csr_array": m.toarray(), "csc_array": m.toarray(), "coo_array": m.toarray(),
            "cube": cube, "line": line}
    for name, dense in want.items():
        check(same(np.load(os.path.join(tmp, "arr_npy", name + ".npy")), dense),
              f"save_npz {name} -> .npy")
    orders = {"csr_array": [0, 1], "csc_array": [1, 0], "cube": [0, 1, 2], "line": None}
    for name, order in orders.items():
        info = json.loads(tk("info", "--json", os.path.join(src, name + ".npz")))
        check(info["order"] == order, f"{name}: order {info['order']}, want {order}")
    # A rank-3 sparse tensor written by tensorkit: scipy's n-D coo_array members.
    tk("convert", os.path.join(src, "cube.npz"), os.path.join(tmp, "cube_tk.npz"))
    with np.load(os.path.join(tmp, "cube_tk.npz")) as z:
        check(z["format"].item() == b"coo" and list(z["shape"]) == [3, 4, 5] and
              np.array_equal(z["coords"], cube_idx) and bool(z["_is_array"]) and
              np.array_equal(z["data"], cube[tuple(cube_idx)]), "rank-3 sparse -> scipy coo members")
    # Formats tensorkit does not read are refused by name.
    sp.save_npz(os.path.join(src, "m.bsr.npz"), m.tobsr())
    r = subprocess.run([TOOL, "info", os.path.join(src, "m.bsr.npz")], capture_output=True,
                       text=True)
    check(r.returncode != 0 and "'bsr' is not supported" in r.stderr, f"bsr refused: {r.stderr}")


def test_scipy_semantics(tmp, rng):
    """Duplicates, symmetric files storing both triangles, out-of-range numbers, more entries
    than cells and unicode 'format' members: tensorkit's dense result is SciPy's toarray()."""
    src = os.path.join(tmp, "sem_in")
    os.makedirs(src)
    head = "%%MatrixMarket matrix coordinate real "
    texts = {
        "dups": head + "general\n3 3 5\n1 1 1\n1 1 2\n3 2 4\n3 2 -1.5\n2 3 7\n",
        "both_triangles": head + "symmetric\n3 3 4\n1 1 1\n2 1 5\n1 2 7\n3 3 2\n",
        "extremes": head + "general\n2 2 3\n1 1 1e-400\n2 2 1e400\n1 2 -1e400\n",
        "more_than_cells": head + "general\n1 2 4\n1 1 1\n1 1 2\n1 2 3\n1 1 4\n",
    }
    for name, text in texts.items():
        with open(os.path.join(src, name + ".mtx"), "w") as f:
            f.write(text)
    row, col = rng.integers(0, 6, 60), rng.integers(0, 7, 60)
    coo = sp.coo_matrix((rng.standard_normal(60), (row, col)), shape=(6, 7))  # with repeats
    sp.save_npz(os.path.join(src, "coo_dups.npz"), coo, compressed=False)
    csr = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 0, 2]),
                         np.array([0, 2, 4])), shape=(2, 3))  # column 1 twice in row 0
    sp.save_npz(os.path.join(src, "csr_dups.npz"), csr)
    csc = sp.csc_matrix(sp.random(5, 4, density=0.4, random_state=9))
    np.savez(os.path.join(src, "csc_py3.npz"), format=np.array("csc"), shape=np.array(csc.shape),
             indices=csc.indices, indptr=csc.indptr, data=csc.data)
    want = {name: scipy.io.mmread(os.path.join(src, name + ".mtx")).toarray() for name in texts}
    want.update({"coo_dups": coo.toarray(), "csr_dups": csr.toarray(), "csc_py3": csc.toarray()})
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    tk("convert", "--to", "npy", "-o", os.path.join(tmp, "sem_npy"), *files)
    for name, ref in want.items():
        got = np.load(os.path.join(tmp, "sem_npy", name + ".npy"))
        check(got.shape == ref.shape and np.array_equal(got, ref), f"{name} -> .npy == toarray()")
    info = json.loads(tk("info", "--json", os.path.join(src, "more_than_cells.mtx")))
    check(info["nnz"] == 4 and info["density"] <= 1, f"more entries than cells: info {info}")


def test_strings(tmp, rng):
    src = os.path.join(tmp, "str_in")
    os.makedirs(src)
    arrays = {
        "bytes": np.array([b"ab", b"", b"xyz"], dtype="S3"),
        "unicode": np.array([["h\u00e9", "y"], ["\u20ac", "\U0001f600ok"]]),
        "unicode_be": np.array(["big", "endian"], dtype=">U6"),
        "unicode_fortran": np.asfortranarray(np.array([["a", "bb"], ["ccc", "d"]])),
    }
    for name, a in arrays.items():
        np.save(os.path.join(src, name + ".npy"), a)
    files = sorted(os.path.join(src, n) for n in os.listdir(src))
    tk("convert", "--to", "npy", "-o", os.path.join(tmp, "str_npy"), *files)
    for name, a in arrays.items():
        info = json.loads(tk("info", "--json", os.path.join(src, name + ".npy")))
        check(info["dtype"] == "string" and info["shape"] == list(a.shape), f"{name}: info {info}")
        got = np.load(os.path.join(tmp, "str_npy", name + ".npy"))
        ref = np.char.decode(a, "ascii") if a.dtype.kind == "S" else a
        check(got.dtype.kind == "U" and got.shape == a.shape and np.array_equal(got, ref),
              f"{name} -> tensorkit .npy -> np.load: {got!r}")


def index_members(path):
    """{member: dtype} of the index members of a scipy.sparse .npz."""
    with np.load(path) as z:
        return {k: z[k].dtype for k in ("row", "col", "coords", "indices", "indptr") if k in z}


def test_scipy_index_dtypes(tmp, rng):
    """.mtx -> tensorkit .npz: load_npz gives what mmread gives, and the index members have the
    dtype of SciPy's own save_npz(mmread(...)) of the same file (int32 unless a dim needs int64)."""
    src = os.path.join(tmp, "idx_in")
    os.makedirs(src)
    m = sp.random(300, 200, density=0.05, format="coo", random_state=9)
    scipy.io.mmwrite(os.path.join(src, "small.mtx"), m)
    head = "%%MatrixMarket matrix coordinate real general\n"
    texts = {  # dims that need int64 indices; the last a hypersparse 2^40 x 2^40 matrix
        "wide": head + "3 2147483653 3\n1 1 1.5\n3 2147483653 -2\n2 7 4\n",
        "hyper": head + "1099511627776 1099511627776 3\n1 1 1\n1099511627776 5 2\n"
                        "9 1099511627776 3\n",
    }
    for name, text in texts.items():
        with open(os.path.join(src, name + ".mtx"), "w") as f:
            f.write(text)
    names = ["small"] + list(texts)
    files = [os.path.join(src, n + ".mtx") for n in names]
    tk("convert", "--to", "npz", "-o", os.path.join(tmp, "idx_npz"), *files)
    for name in names:
        try:
            ref = scipy.io.mmread(os.path.join(src, name + ".mtx"))
        except (OverflowError, ValueError, MemoryError) as e:  # older SciPy: int32-only reader
            print(f"note: {name}: this SciPy's mmread refuses it ({type(e).__name__})")
            continue
        ref_path = os.path.join(tmp, f"idx_{name}_scipy.npz")
        sp.save_npz(ref_path, sp.coo_matrix(ref), compressed=False)
        got_path = os.path.join(tmp, "idx_npz", name + ".npz")
        want, got = index_members(ref_path), index_members(got_path)
        check(want == got, f"{name}: index members {got}, SciPy writes {want}")
        back = sp.load_npz(got_path).tocoo()
        ref = sp.coo_matrix(ref)
        check(back.shape == ref.shape and np.array_equal(back.row, ref.row) and
              np.array_equal(back.col, ref.col) and np.array_equal(back.data, ref.data),
              f"{name}: .mtx -> tensorkit .npz -> load_npz equals mmread")


def main():
    global TOOL
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    TOOL = os.path.abspath(ap.parse_args().tool)
    rng = np.random.default_rng(20240601)
    with tempfile.TemporaryDirectory(prefix="tk_roundtrip_") as tmp:
        for test in [test_npy, test_savez, test_scipy_npz, test_scipy_arrays_and_order,
                     test_mmwrite, test_tns_and_info, test_scipy_semantics, test_strings,
                     test_scipy_index_dtypes]:
            try:
                test(tmp, rng)
            except Exception as e:  # a crash of one part still reports the others
                check(False, f"{test.__name__} raised {type(e).__name__}: {e}")
    print(f"{results['passed']} passed, {len(results['failed'])} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
