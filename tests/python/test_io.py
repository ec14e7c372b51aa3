"""tk.io: read/write for every format, and the drop-ins against the functions they replace
(scipy.io's mmread/mmwrite/mminfo, scikit-learn's svmlight functions) on the same files."""

import bz2
import gc
import gzip
import io

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import tensorkit as tk

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def sparse_matrix(rng, shape=(30, 20), density=0.2):
    d = rng.random(shape)
    d[d > density] = 0
    return sp.coo_array(d)


# --------------------------------------------------------------------------- read / write


def test_read_write_every_format(tmp_path):
    rng = np.random.default_rng(0)
    dense = rng.random((4, 5))
    m = sparse_matrix(rng)
    formats = {ext: (d, s) for ext, d, s in tk._tensorkit._io.formats()}
    assert set(formats) == {"npy", "npz", "mtx", "tns", "svm"}
    for ext, (holds_dense, holds_sparse) in formats.items():
        if holds_dense:
            p = tmp_path / f"d.{ext}"
            tk.io.write(p, dense)
            got = tk.io.read(p)
            assert isinstance(got, tk.Tensor)
            np.testing.assert_array_equal(got.numpy(), dense)
        if holds_sparse:
            p = tmp_path / f"s.{ext}"
            tk.io.write(str(p), m)
            got = tk.io.read(p)
            assert isinstance(got, tk.SparseTensor)
            np.testing.assert_array_equal(got.to_scipy().toarray(), m.toarray())
    # NumPy and SciPy read what tensorkit writes, and the other way round.
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), dense)
    tk.io.write(tmp_path / "csr.npz", sp.csr_array(m))
    np.testing.assert_array_equal(sp.load_npz(tmp_path / "csr.npz").toarray(), m.toarray())
    sp.save_npz(tmp_path / "scipy.npz", sp.csc_array(m))
    np.testing.assert_array_equal(tk.io.read(tmp_path / "scipy.npz").to_scipy().toarray(),
                                  m.toarray())


def test_read_compressed_and_file_objects(tmp_path):
    dense = np.arange(12.0).reshape(3, 4)
    np.save(tmp_path / "a.npy", dense)
    raw = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy.gz").write_bytes(gzip.compress(raw))
    (tmp_path / "a.npy.bz2").write_bytes(bz2.compress(raw))
    for p in ("a.npy.gz", "a.npy.bz2"):
        np.testing.assert_array_equal(tk.io.read(tmp_path / p).numpy(), dense)
    np.testing.assert_array_equal(tk.io.read(io.BytesIO(raw), format="npy").numpy(), dense)
    with pytest.raises(ValueError):
        tk.io.read(io.BytesIO(raw))


# --------------------------------------------------------------------------- Matrix Market

MTX_FILES = {
    "real_general.mtx": "%%MatrixMarket matrix coordinate real general\n% c\n3 4 4\n"
                        "1 1 1.5\n3 2 -2\n2 4 1e-3\n3 4 7\n",
    "integer_symmetric.mtx": "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n"
                             "1 1 4\n3 1 -2\n3 2 9\n",
    "pattern.mtx": "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n",
    "skew.mtx": "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 2 -1.25\n",
    "array.mtx": "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n",
    "array_int.mtx": "%%MatrixMarket matrix array integer general\n2 2\n1\n-2\n3\n4\n",
    "empty.mtx": "%%MatrixMarket matrix coordinate real general\n5 6 0\n",
    "complex.mtx": "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1.5 -2\n",
    "skew_diagonal.mtx": "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n"
                         "1 1 5\n2 1 2\n3 3 -1\n",
    "hermitian_real.mtx": "%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 5\n"
                          "2 1 2\n",
    "hermitian_array.mtx": "%%MatrixMarket matrix array integer hermitian\n2 2\n1\n2\n3\n",
    "unsigned.mtx": "%%MatrixMarket matrix coordinate unsigned-integer general\n2 2 1\n"
                    "1 1 18446744073709551615\n",
}


def assert_same_result(got, want):
    assert type(got) is type(want)
    if sp.issparse(want):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.toarray(), want.toarray())
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(MTX_FILES))
def test_mmread_mminfo_match_scipy(tmp_path, name):
    p = tmp_path / name
    p.write_text(MTX_FILES[name])
    (tmp_path / (name + ".gz")).write_bytes(gzip.compress(p.read_bytes()))
    for source in (str(p), p, tmp_path / (name + ".gz")):
        assert_same_result(tk.io.mmread(source), scipy.io.mmread(source))
        assert_same_result(tk.io.mmread(source, spmatrix=False),
                           scipy.io.mmread(source, spmatrix=False))
        assert tk.io.mminfo(source) == scipy.io.mminfo(source)
    for wrap in (io.BytesIO, lambda b: io.StringIO(b.decode())):
        assert_same_result(tk.io.mmread(wrap(p.read_bytes())),
                           scipy.io.mmread(wrap(p.read_bytes())))
        assert tk.io.mminfo(wrap(p.read_bytes())) == scipy.io.mminfo(wrap(p.read_bytes()))


def test_mmread_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        tk.io.mmread(tmp_path / "nope.mtx")


@pytest.mark.parametrize("kind", ["dense", "dense_int", "coo", "csr", "coo_matrix"])
def test_mmwrite_matches_scipy(tmp_path, kind):
    rng = np.random.default_rng(4)
    m = sparse_matrix(rng, (40, 25))
    a = {"dense": rng.random((3, 5)), "dense_int": np.arange(6).reshape(2, 3), "coo": m,
         "csr": sp.csr_array(m), "coo_matrix": sp.coo_matrix(m)}[kind]
    tk.io.mmwrite(tmp_path / "tk", a)  # ".mtx" is appended, as SciPy does
    scipy.io.mmwrite(tmp_path / "sp", a)
    assert_same_result(scipy.io.mmread(tmp_path / "tk.mtx"), scipy.io.mmread(tmp_path / "sp.mtx"))
    buf = io.BytesIO()
    tk.io.mmwrite(buf, a)
    buf.seek(0)
    assert_same_result(scipy.io.mmread(buf), scipy.io.mmread(tmp_path / "sp.mtx"))
    info_tk, info_sp = scipy.io.mminfo(tmp_path / "tk.mtx"), scipy.io.mminfo(tmp_path / "sp.mtx")
    assert info_tk[:5] == info_sp[:5]


@pytest.fixture
def no_scipy_writer(monkeypatch):
    """scipy.io's writers replaced by ones that fail: what passes was written by tensorkit."""
    def refuse(*args, **kwargs):
        raise AssertionError("handed to scipy.io.mmwrite")

    monkeypatch.setattr(scipy.io, "mmwrite", refuse)


def scipy_bytes(a, **kw):
    buf = io.BytesIO()
    scipy.io._fast_matrix_market.mmwrite(buf, a, **kw)
    return buf.getvalue()


def tk_bytes(a, **kw):
    buf = io.BytesIO()
    tk.io.mmwrite(buf, a, **kw)
    return buf.getvalue()


def mm_inputs(rng):
    """Matrices SciPy writes in each of its forms: general, symmetric, skew-symmetric (dense
    and sparse, under and over SciPy's 100-row limit of the symmetry test), every dtype with a
    tensorkit counterpart, values from 1e-300 to 1e300, integers, zeros, subnormals."""
    out = []
    for n in (1, 4, 30, 120):
        d = rng.standard_normal((n, n)) * 10.0 ** rng.integers(-300, 300, (n, n))
        d[rng.random((n, n)) < 0.5] = 0
        d.flat[:3] = [1e-310, 2.0 ** 60, -0.5]
        sym = np.tril(d) + np.tril(d, -1).T
        skew = np.tril(d, -1) - np.tril(d, -1).T
        for m in (d, sym, skew, np.round(sym * 1e-290)):
            out.append(m)
            out.append(m[:, : max(1, n // 2)])
    ints = rng.integers(-2**62, 2**62, (5, 5))
    out += [ints, np.tril(ints) + np.tril(ints, -1).T, ints.astype(np.int32),
            (ints % 100).astype(np.int8), (ints % 200).astype(np.uint8),
            (ints % 50).astype(np.uint16), ints % 2 == 0, rng.random((6, 3)).astype(np.float32),
            (lambda s: (s + s.T).astype(np.float32))(rng.random((5, 5)))]
    return out


@pytest.mark.parametrize("kind", ["dense", "coo", "csr"])
def test_mmwrite_bytes_equal_scipy(kind, no_scipy_writer):
    rng = np.random.default_rng(7)
    sp_mmwrite = scipy.io._fast_matrix_market.mmwrite
    options = [{}, {"comment": "made here\nsecond line\n"}, {"precision": 3},
               {"precision": 17}, {"symmetry": "general"}, {"symmetry": None},
               {"field": "integer"}, {"field": "real"}, {"field": "pattern"}]
    for a in mm_inputs(rng):
        x = a if kind == "dense" else (sp.coo_array(a) if kind == "coo" else sp.csr_array(a))
        for kw in options:
            if kw.get("field") == "integer" and a.dtype.kind == "f" and \
                    not (np.abs(a) < 2.0 ** 63).all():
                continue  # beyond int64: NumPy's cast is undefined there, tensorkit refuses it
            if "precision" in kw and a.dtype == np.float32:
                continue  # SciPy 1.17 writes NUL bytes into float32 values with a precision
            want = io.BytesIO()
            try:
                sp_mmwrite(want, x.copy(), **kw)
            except TypeError:  # SciPy's symmetry test negates bools, which NumPy refuses
                assert a.dtype == bool
                continue
            assert tk_bytes(x, **kw) == want.getvalue(), (a.dtype, a.shape, kw)
    # The symmetry named: only the lower triangle (without the diagonal for skew) is written.
    sym = mm_inputs(rng)[2]
    for name in ("symmetric", "skew-symmetric", "hermitian"):
        for x in (sym, sp.coo_array(sym)):
            want = io.BytesIO()
            sp_mmwrite(want, x, symmetry=name)
            assert tk_bytes(x, symmetry=name) == want.getvalue(), name


def test_mmwrite_bytes_equal_scipy_every_value_and_index_width():
    """Reals rounded to 0..12 decimals at every magnitude, full-precision ones, integers beyond
    2^53, and indices of 1 to 19 digits, in int32 and int64 coordinate arrays, COO and CSR."""
    rng = np.random.default_rng(11)
    n = 60_000
    v = rng.random(n) * 10.0 ** rng.integers(-12, 18, n)
    k = rng.integers(0, 13, n)
    v = np.where(np.arange(n) % 4 == 0, v, np.round(v * 10.0 ** k) / 10.0 ** k)
    v[:8] = [2.0**50 - 1, 2.0**50, 2.0**53 + 2, 1e-9, 1.5e-9, 0.1 + 0.2, 5e-324, -0.0]
    v[1::3] *= -1
    big = 2**62
    rows = (10 ** rng.integers(0, 19, n) * rng.random(n)).astype(np.int64) % big
    m = sp.coo_array((v, (rows, rng.integers(0, big, n))), shape=(big, big))
    assert tk_bytes(m) == scipy_bytes(m)
    assert tk_bytes(m, field="pattern") == scipy_bytes(m, field="pattern")
    for dtype in (np.int32, np.int64):
        ij = (rng.integers(0, 70_000, n).astype(dtype), rng.integers(0, 3, n).astype(dtype))
        small = sp.coo_array((v, ij), shape=(70_000, 3))
        assert small.coords[0].dtype == dtype
        for x in (small, sp.csr_array(small), sp.coo_matrix(small)):
            assert tk_bytes(x) == scipy_bytes(x)


def test_mmread_index_dtypes_as_scipy(tmp_path):
    """Indices come back int32 when the shape fits (as SciPy gives them), int64 beyond."""
    for n in (5, 2**31 - 1, 2**31, 2**40):
        p = tmp_path / f"m{n}.mtx"
        p.write_text(f"%%MatrixMarket matrix coordinate real general\n{n} 3 3\n"
                     f"{n} 1 1.5\n1 3 -2\n{n} 2 7\n")
        got, want = tk.io.mmread(p), scipy.io.mmread(p)
        assert type(got) is type(want) and got.shape == want.shape, n
        for a, b in ((got.row, want.row), (got.col, want.col), (got.data, want.data)):
            assert a.dtype == b.dtype, n
            np.testing.assert_array_equal(a, b)
        rows = got.row.copy()
        del got
        gc.collect()
        assert list(rows) == [n - 1, 0, n - 1]


def test_mmwrite_paths_and_targets(tmp_path, no_scipy_writer):
    a = np.array([[1.0, 2.0], [2.0, 3.0]])
    tk.io.mmwrite(tmp_path / "c", a, comment="hello", precision=3)  # ".mtx" appended
    assert (tmp_path / "c.mtx").read_bytes() == scipy_bytes(a, comment="hello", precision=3)
    with pytest.raises(TypeError):
        tk.io.mmwrite(io.StringIO(), a)
    with pytest.raises(ValueError, match="Invalid symmetry"):
        tk.io.mmwrite(tmp_path / "d.mtx", a, symmetry="upper")


def test_mmwrite_leaves_complex_and_wide_unsigned_to_scipy(tmp_path):
    for a in (np.array([[1 + 2j, 0], [0, 1]]), np.array([[2**64 - 1, 0], [1, 2]], np.uint64),
              np.array([[1, 2], [3, 4]], np.uint32)):
        assert tk_bytes(a) == scipy_bytes(a)
        assert tk_bytes(sp.coo_array(a)) == scipy_bytes(sp.coo_array(a))


def test_mmread_reads_skew_diagonal_and_hermitian_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(scipy.io, "mmread", None)  # a hand-over would fail
    p = tmp_path / "k.mtx"
    p.write_text(MTX_FILES["skew_diagonal.mtx"])
    got = tk.io.mmread(p)
    np.testing.assert_array_equal(got.row, [0, 1, 2, 0])
    np.testing.assert_array_equal(got.data, [5, 2, -1, -2])
    p.write_text("%%MatrixMarket matrix coordinate integer general\n2 2 1\n"
                 "1 1 9223372036854775808\n")
    with pytest.raises(OverflowError, match="out of range for int64"):
        tk.io.mmread(p)


# --------------------------------------------------------------------------- svmlight / libsvm

SVM_TEXT = (b"# a comment\n1 1:0.5 3:2.5\n-1 qid:1 2:1e2\n"
            b"2.5 1:-3 4:0 # explicit zero kept\n\n0 5:1\n")
SVM_QID = b"1 qid:3 1:1 2:2\n0 qid:3 2:4\n2 qid:7 1:-1 3:0.25\n"
SVM_MULTI = b"1,3 1:1 2:2\n 2:4\n0,2,1 3:0.25\n"


def assert_same_svm(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if sp.issparse(w):
            assert type(g) is type(w) and g.shape == w.shape and g.dtype == w.dtype
            assert g.has_sorted_indices
            np.testing.assert_array_equal(g.toarray(), w.toarray())
            np.testing.assert_array_equal(g.indptr, w.indptr)
            np.testing.assert_array_equal(g.indices, w.indices)
            assert (g.indptr.dtype, g.indices.dtype) == (w.indptr.dtype, w.indices.dtype)
        elif isinstance(w, list):
            assert g == w
        else:
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("kwargs", [{}, {"zero_based": True}, {"zero_based": False},
                                    {"dtype": np.float32}, {"dtype": np.int64},
                                    {"n_features": 10}])
def test_load_svmlight_file_matches_sklearn(tmp_path, kwargs):
    data = SVM_TEXT.replace(b"qid:1 ", b"")
    p = tmp_path / "x.svm"
    p.write_bytes(data)
    (tmp_path / "x.svm.gz").write_bytes(gzip.compress(data))
    (tmp_path / "x.svm.bz2").write_bytes(bz2.compress(data))
    for source in (str(p), p, tmp_path / "x.svm.gz", tmp_path / "x.svm.bz2"):
        assert_same_svm(tk.io.load_svmlight_file(source, **kwargs),
                        sklearn_datasets.load_svmlight_file(source, **kwargs))
    assert_same_svm(tk.io.load_svmlight_file(io.BytesIO(data), **kwargs),
                    sklearn_datasets.load_svmlight_file(io.BytesIO(data), **kwargs))


def test_load_svmlight_qid_multilabel_offsets(tmp_path):
    p = tmp_path / "q.svm"
    p.write_bytes(SVM_QID)
    assert_same_svm(tk.io.load_svmlight_file(p, query_id=True),
                    sklearn_datasets.load_svmlight_file(p, query_id=True))
    m = tmp_path / "m.svm"
    m.write_bytes(SVM_MULTI)
    assert_same_svm(tk.io.load_svmlight_file(m, multilabel=True),
                    sklearn_datasets.load_svmlight_file(m, multilabel=True))
    big = b"".join(b"%d 1:%d 3:%d.5\n" % (i % 3, i, i) for i in range(200))
    b = tmp_path / "b.svm"
    b.write_bytes(big)
    for offset, length in [(0, 100), (37, 500), (1000, -1), (500, 1), (len(big) - 3, 50)]:
        kw = dict(offset=offset, length=length, n_features=5)
        assert_same_svm(tk.io.load_svmlight_file(b, **kw),
                        sklearn_datasets.load_svmlight_file(b, **kw))
    with pytest.raises(ValueError):
        tk.io.load_svmlight_file(b, offset=10)


def test_load_svmlight_sparray(tmp_path):
    """Either sparse interface gives scikit-learn's types, int64 indices and sorted rows."""
    p = tmp_path / "u.svm"
    p.write_bytes(b"1 2:1 5:2 7:3\n0 1:4 3:5\n2\n")
    assert_same_svm(tk.io.load_svmlight_file(p), sklearn_datasets.load_svmlight_file(p))
    import sklearn

    with sklearn.config_context(sparse_interface="sparray"):
        got, want = tk.io.load_svmlight_file(p), sklearn_datasets.load_svmlight_file(p)
    assert type(got[0]) is type(want[0]) is sp.csr_array
    assert_same_svm(got, want)


def test_load_svmlight_files_matches_sklearn(tmp_path):
    a, b = tmp_path / "a.svm", tmp_path / "b.svm"
    a.write_bytes(b"1 2:1 3:2\n0 3:1\n")
    b.write_bytes(b"1 1:4 7:2\n")
    for kw in ({}, {"zero_based": False}, {"n_features": 9}):
        assert_same_svm(tk.io.load_svmlight_files([a, str(b)], **kw),
                        sklearn_datasets.load_svmlight_files([a, str(b)], **kw))
    c = tmp_path / "c.svm"
    c.write_bytes(b"1 0:4 7:2\n")
    assert_same_svm(tk.io.load_svmlight_files([a, c]),
                    sklearn_datasets.load_svmlight_files([a, c]))
    with pytest.raises(ValueError):
        tk.io.load_svmlight_files([a, b], n_features=3)


def test_load_svmlight_errors_are_value_errors(tmp_path):
    for text in (b"1 2:x\n", b"1 3:1 2:1\n", b"1 -1:2\n"):
        p = tmp_path / "bad.svm"
        p.write_bytes(text)
        with pytest.raises(ValueError):
            sklearn_datasets.load_svmlight_file(p)
        with pytest.raises(ValueError):
            tk.io.load_svmlight_file(p)


@pytest.mark.parametrize("sparse_x", [False, True])
def test_dump_svmlight_file_round_trips_like_sklearn(tmp_path, sparse_x):
    rng = np.random.default_rng(5)
    X = rng.random((6, 4))
    X[X < 0.5] = 0
    y = np.array([0, 1, 2.5, -1, 3, 0])
    q = np.array([1, 1, 2, 2, 3, 3])
    Xin = sp.csr_matrix(X) if sparse_x else X
    for kw in ({}, {"zero_based": False}, {"query_id": q}, {"comment": "made by a test"}):
        tk.io.dump_svmlight_file(Xin, y, tmp_path / "tk.svm", **kw)
        sklearn_datasets.dump_svmlight_file(Xin, y, str(tmp_path / "sk.svm"), **kw)
        load_kw = {"zero_based": kw.get("zero_based", True), "query_id": "query_id" in kw}
        assert_same_svm(sklearn_datasets.load_svmlight_file(tmp_path / "tk.svm", **load_kw),
                        sklearn_datasets.load_svmlight_file(tmp_path / "sk.svm", **load_kw))
        if "comment" in kw:
            assert (tmp_path / "tk.svm").read_bytes().startswith(
                (tmp_path / "sk.svm").read_bytes().split(b"\n#\n")[0])
    buf = io.BytesIO()
    tk.io.dump_svmlight_file(Xin, y, buf)
    buf.seek(0)
    assert_same_svm(sklearn_datasets.load_svmlight_file(buf, zero_based=True),
                    sklearn_datasets.load_svmlight_file(tmp_path / "sk.svm", zero_based=True))


def test_dump_svmlight_multilabel(tmp_path):
    X = np.array([[1.0, 0], [0, 2.0], [3.0, 4.0]])
    Y = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    tk.io.dump_svmlight_file(X, Y, tmp_path / "tk.svm", multilabel=True)
    sklearn_datasets.dump_svmlight_file(X, Y, str(tmp_path / "sk.svm"), multilabel=True)
    assert_same_svm(
        sklearn_datasets.load_svmlight_file(tmp_path / "tk.svm", multilabel=True),
        sklearn_datasets.load_svmlight_file(tmp_path / "sk.svm", multilabel=True))


def svm_bytes(fn, X, y, **kw):
    buf = io.BytesIO()
    fn(X, y, buf, **kw)
    return buf.getvalue()


def test_dump_svmlight_file_bytes_equal_sklearn(tmp_path):
    """scikit-learn's own bytes over random inputs: every dtype it writes, values of every
    magnitude (%.16g's fixed and exponent forms, subnormals, integers near 1e16), rows without
    features, labels of every kind, qids, multilabel, both bases, the comment header."""
    rng = np.random.default_rng(11)
    for trial in range(12):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 12))
        X = rng.standard_normal((n, m)) * 10.0 ** rng.integers(-320, 300, (n, m))
        X[rng.random((n, m)) < 0.6] = 0
        X[rng.integers(0, n)] = 0  # a row without features
        X.flat[0] = float(rng.integers(-2**53, 2**53))
        y_float = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)
        y_int = rng.integers(-2**62, 2**62, n)
        q = rng.integers(-2**40, 2**40, n)
        Xi = rng.integers(-2**62, 2**62, (n, m)) * (rng.random((n, m)) < 0.3)
        X32 = (rng.standard_normal((n, m)) * 10.0 ** rng.integers(-45, 38, (n, m))
               * (X != 0)).astype(np.float32)
        inputs = [X, X32, Xi, Xi.astype(np.int32), sp.csr_matrix(X), sp.csr_array(X32),
                  sp.csr_matrix(Xi)]
        for Xin in inputs:
            for y in (y_float, y_int, y_float.astype(np.float32), y_int % 3 == 0):
                kw = [{}, {"zero_based": False}, {"query_id": q},
                      {"comment": f"trial {trial}\nline two"}][trial % 4]
                try:
                    want = svm_bytes(sklearn_datasets.dump_svmlight_file, Xin, y, **kw)
                except TypeError:  # a dtype scikit-learn's Cython has no signature for
                    continue
                assert svm_bytes(tk.io.dump_svmlight_file, Xin, y, **kw) == want, (trial, kw)
        Y = (rng.random((n, 4)) < 0.4).astype(np.int64)
        for Yin in (Y, Y.astype(float), sp.csr_matrix(Y)):
            want = svm_bytes(sklearn_datasets.dump_svmlight_file, X, Yin, multilabel=True)
            assert svm_bytes(tk.io.dump_svmlight_file, X, Yin, multilabel=True) == want
    # Paths as well as file objects.
    tk.io.dump_svmlight_file(X, y_float, tmp_path / "tk.svm", comment="c")
    sklearn_datasets.dump_svmlight_file(X, y_float, str(tmp_path / "sk.svm"), comment="c")
    assert (tmp_path / "tk.svm").read_bytes() == (tmp_path / "sk.svm").read_bytes()


def test_dump_svmlight_file_refuses_what_sklearn_refuses():
    X = np.array([[1.0, np.nan]])
    for fn in (sklearn_datasets.dump_svmlight_file, tk.io.dump_svmlight_file):
        with pytest.raises(ValueError, match="NaN"):
            fn(X, [1.0], io.BytesIO())
        with pytest.raises(ValueError, match="infinity"):
            fn(np.array([[1.0, 0.0]]), [np.inf], io.BytesIO())
        with pytest.raises(ValueError, match="NUL"):
            fn(np.ones((1, 1)), [1.0], io.BytesIO(), comment="a\0b")
