"""tk.io: read/write for every format, and the drop-ins against the functions they replace
(scipy.io's mmread/mmwrite/mminfo, scikit-learn's svmlight functions) on the same files."""

import bz2
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


def test_mmwrite_options_go_to_scipy(tmp_path):
    a = np.array([[1.0, 2.0], [2.0, 3.0]])
    tk.io.mmwrite(tmp_path / "c.mtx", a, comment="hello", precision=3)
    assert b"hello" in (tmp_path / "c.mtx").read_bytes()


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
