"""tensorkit.io: tensor files through the library's readers and writers.

read / write take every format of the library (.npy, .npz, .mtx, .tns, .svm/.libsvm/.svmlight,
optionally compressed as .gz or .bz2 for reading). The drop-ins have the signatures, accepted
inputs and return types of the functions they replace:
  scikit-learn's load_svmlight_file, load_svmlight_files, dump_svmlight_file;
  scipy.io's mmread, mmwrite, mminfo;
  tf.io's tfrecord_iterator, TFRecordWriter, parse_example, parse_single_example,
  parse_sequence_example, parse_single_sequence_example and the feature configs, plus
  serialize_examples (see tensorkit._tfrecord), with no TensorFlow installed.
"""

import bz2
import gzip
import io as _pyio
import os
import sys
import tempfile

import numpy as np

from ._tensorkit import SparseTensor, Tensor, _io
from ._tfrecord import (  # noqa: F401  (tf.io's TFRecord and tf.Example functions)
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    TFRecordWriter,
    VarLenFeature,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
    serialize_examples,
    tfrecord_iterator,
)
from ._tfrecord import __all__ as _tfrecord_all

__all__ = [
    "dump_svmlight_file",
    "load_svmlight_file",
    "load_svmlight_files",
    "mminfo",
    "mmread",
    "mmwrite",
    "read",
    "write",
] + _tfrecord_all

_LIBSVM_EXTENSIONS = ("svm", "libsvm", "svmlight")


# ------------------------------------------------------------------------------------------------
# Sources
# ------------------------------------------------------------------------------------------------


def _fspath(source):
    """The path of a str or os.PathLike source, else None."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return None


def _compression(path):
    lower = path.lower()
    if lower.endswith(".gz"):
        return "gz"
    if lower.endswith(".bz2"):
        return "bz2"
    return None


def _read_compressed(path, kind):
    opener = gzip.open if kind == "gz" else bz2.open
    with opener(path, "rb") as f:
        return f.read()


def _read_all(fileobj):
    """Every remaining byte of a file object (text streams are encoded as UTF-8)."""
    data = fileobj.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    return bytes(data)


def _extension(path):
    """The format's extension of a path, ignoring a .gz/.bz2 suffix: "npy", "mtx", ..."""
    if _compression(path):
        path = path[: path.rfind(".")]
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    return ext


def _name(source):
    return getattr(source, "name", None) or f"<{type(source).__name__}>"


# ------------------------------------------------------------------------------------------------
# read / write
# ------------------------------------------------------------------------------------------------


def read(path, *, format=None, member=None, expand_symmetry=True):
    """Reads a tensor file: a tensorkit.Tensor for dense contents, a tensorkit.SparseTensor for
    sparse ones. `path`: a str or os.PathLike (a .gz or .bz2 suffix is decompressed first), or a
    binary file object (then `format` names the format, e.g. "mtx"). `member`: the .npz member
    to read (default: the first, or the scipy.sparse matrix)."""
    p = _fspath(path)
    member = member or ""
    if p is not None:
        kind = _compression(p)
        fmt = format or _extension(p)
        if kind is None and format is None:
            return _io.read(p, member, expand_symmetry)
        data = _read_compressed(p, kind) if kind else open(p, "rb").read()
        return _io.read_bytes(data, fmt, p, member, expand_symmetry)
    if not hasattr(path, "read"):
        raise TypeError(f"read: expected a path or a binary file object, got {type(path).__name__}")
    if format is None:
        raise ValueError("read: a file object needs format= (e.g. 'npy', 'mtx')")
    return _io.read_bytes(_read_all(path), format, _name(path), member, expand_symmetry)


def _as_writable(x):
    if isinstance(x, (SparseTensor, Tensor)):
        return x, False
    if hasattr(x, "tocoo") and hasattr(x, "format"):  # scipy.sparse
        return SparseTensor.from_scipy(x), x.format == "csr"
    return x, False


def write(path, x, *, compress=False):
    """Writes `x` (an array, a tensorkit.SparseTensor or a scipy.sparse matrix or array) to
    `path` in the format of its extension, atomically. `compress`: deflate .npz members
    (np.savez_compressed). A scipy CSR matrix goes to .npz as scipy's CSR (save_npz)."""
    p = _fspath(path)
    if p is None:
        raise TypeError(f"write: expected a path, got {type(path).__name__}")
    value, csr = _as_writable(x)
    _io.write(p, value, compress, csr)


# ------------------------------------------------------------------------------------------------
# scikit-learn's svmlight / libsvm functions
# ------------------------------------------------------------------------------------------------


def _sparse_interface():
    """scikit-learn's configured sparse interface when it is loaded, else its default."""
    sklearn = sys.modules.get("sklearn")
    if sklearn is not None:
        try:
            return sklearn.get_config().get("sparse_interface", "spmatrix")
        except Exception:  # an older scikit-learn without the setting
            return "spmatrix"
    return "spmatrix"


def _libsvm_source(f, offset, length):
    """(source for the library: a path or bytes, name) of what load_svmlight_file accepts."""
    if isinstance(f, int):
        with open(f, "rb", closefd=False) as fo:
            return _file_range(fo, offset, length), f"<fd {f}>"
    if hasattr(f, "read"):
        return _file_range(f, offset, length), _name(f)
    p = _fspath(f)
    if p is None:
        raise TypeError(f"expected {{str, int, path-like, file-like}}, got {type(f)}")
    kind = _compression(p) if os.path.splitext(p)[1] in (".gz", ".bz2") else None
    if kind is None and offset == 0 and length <= 0:
        return p, p  # the library maps the file itself
    if kind:
        with (gzip.open if kind == "gz" else bz2.open)(p, "rb") as fo:
            return _file_range(fo, offset, length), p
    with open(p, "rb") as fo:
        return _file_range(fo, offset, length), p


def _file_range(fo, offset, length):
    """The bytes scikit-learn parses for offset/length: after seeking to `offset` (when above 0)
    and dropping the rest of the line there, every line up to and including the first one
    that ends past offset + length (counted from the file's start; length <= 0: to the end)."""
    if offset > 0:
        fo.seek(offset)
        fo.readline()
    start = fo.tell() if length > 0 else 0
    data = fo.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    if length <= 0:
        return bytes(data)
    limit = offset + length - start  # where the limit falls in `data`
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        pos = len(data) if nl < 0 else nl + 1
        if pos > limit:
            break
    return bytes(data[:pos])


def _load_one(f, dtype, multilabel, zero_based, offset, length):
    """(data, indices, indptr, y, q, n_columns) of one file: the library writes the CSR
    arrays itself (int64 indices, as scikit-learn's), so the matrix is built over them without a
    conversion or a copy."""
    source, name = _libsvm_source(f, offset, length)
    read_dtype = np.dtype(dtype)
    lib_dtype = read_dtype.name if read_dtype in (np.float32, np.float64) else "float64"
    (indptr, indices, data, shape), labels, label_offsets, qids, _ = \
        _io.read_libsvm(source, name, zero_based, multilabel, -1, lib_dtype, True)
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    data = np.asarray(data, dtype=read_dtype)
    if multilabel:
        lab = np.asarray(labels)
        offs = np.asarray(label_offsets)
        y = [tuple(float(v) for v in lab[offs[i]:offs[i + 1]]) for i in range(len(offs) - 1)]
    else:
        y = np.asarray(labels)
    q = np.asarray(qids) if qids is not None else np.zeros(0, dtype=np.int64)
    return data, indices, indptr, y, q, shape[1]


def load_svmlight_files(files, *, n_features=None, dtype=np.float64, multilabel=False,
                        zero_based="auto", query_id=False, offset=0, length=-1):
    """scikit-learn's load_svmlight_files: [X1, y1, X2, y2, ...] (with query_id, [X1, y1, q1,
    ...]); each X a scipy CSR matrix of `dtype` with n_features columns (the same for every file:
    the widest unless given)."""
    import scipy.sparse as sp

    if (offset != 0 or length > 0) and zero_based == "auto":
        zero_based = True  # no guessing on a part of a file, as scikit-learn does
    if (offset != 0 or length > 0) and n_features is None:
        raise ValueError("n_features is required when offset or length is specified.")
    if not isinstance(zero_based, str):
        zero_based = bool(zero_based)
    elif zero_based != "auto":
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    files = list(files)
    auto = isinstance(zero_based, str)
    if auto and len(files) == 1:
        base = "auto"  # the library applies scikit-learn's rule to the one file
    else:
        # With several files the base is decided over all of them: each is read 0-based first.
        base = zero_based if not auto else True
    parts = [_load_one(f, dtype, multilabel, base, offset, length) for f in files]
    if auto and len(files) > 1 and all(len(p[1]) and p[1].min() > 0 for p in parts):
        parts = [(d, i - 1, ptr, y, q, n - 1) for d, i, ptr, y, q, n in parts]
    # The library's column count is the largest index + 1 (at least 1, as scikit-learn's).
    n_f = max(max(p[5], 1) for p in parts) if parts else 1
    if n_features is None:
        n_features = n_f
    elif n_features < n_f:
        raise ValueError("n_features was set to {}, but input file contains {} features".format(
            n_features, n_f))
    spmatrix = _sparse_interface() == "spmatrix"
    result = []
    for data, indices, indptr, y, q, _ in parts:
        # csr_array keeps the int64 indices (csr_matrix's constructor would narrow them, a copy);
        # csr_matrix of it shares its arrays. scikit-learn's result has the same dtypes.
        X = sp.csr_array((data, indices, indptr), shape=(indptr.shape[0] - 1, n_features))
        if spmatrix:
            X = sp.csr_matrix(X)
        # The library refuses a line whose indices do not ascend, so they are sorted already:
        # set the flag scikit-learn's sort_indices() would find, without its pass.
        X.has_sorted_indices = True
        result += [X, y]
        if query_id:
            result.append(q)
    return result


def load_svmlight_file(f, *, n_features=None, dtype=np.float64, multilabel=False,
                       zero_based="auto", query_id=False, offset=0, length=-1):
    """scikit-learn's load_svmlight_file: (X, y), or (X, y, query_id) with query_id=True. X is a
    scipy CSR matrix of `dtype`, y a float64 array (a list of tuples with multilabel). `f`: a
    path (str or os.PathLike; .gz and .bz2 are decompressed), a file descriptor or a binary file
    object."""
    return tuple(load_svmlight_files([f], n_features=n_features, dtype=dtype,
                                     multilabel=multilabel, zero_based=zero_based,
                                     query_id=query_id, offset=offset, length=length))


def _check_finite(a, what):
    """scikit-learn's check_array refusal of NaN and infinity (float inputs only)."""
    if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
        kind = "NaN" if np.isnan(a).any() else "infinity or a value too large for %r" % a.dtype
        raise ValueError(f"Input {what} contains {kind}.")


def _svm_values(a):
    """`a` in a dtype the library writes as scikit-learn does: integers and bools as they are
    (written as integers), floats as they are (widened, written as %.16g); others as float64."""
    kind, size = a.dtype.kind, a.dtype.itemsize
    if kind in "ib" or (kind == "u" and size == 1) or (kind == "f" and size <= 8):
        return a
    if kind == "u" and size < 8:
        return a.astype(np.int64)
    return a.astype(np.float64)


def _sklearn_version():
    try:
        import sklearn

        return sklearn.__version__
    except ImportError:  # the header names the version scikit-learn would; without it, none
        return "(not installed)"


def dump_svmlight_file(X, y, f, *, zero_based=True, comment=None, query_id=None,
                       multilabel=False):
    """scikit-learn's dump_svmlight_file: writes X (dense or sparse) and y to `f` (a path or a
    binary file object) in svmlight / libsvm format, byte for byte as scikit-learn writes it:
    integer dtypes as integers, floats as %.16g, a space after the labels of every row."""
    import scipy.sparse as sp

    if comment is not None:
        if isinstance(comment, bytes):
            comment.decode("ascii")  # only ASCII bytes, as scikit-learn requires
        else:
            comment = comment.encode("utf-8")
        if b"\0" in comment:
            raise ValueError("comment string contains NUL byte")
    if sp.issparse(y):
        ym = sp.csr_array(y)
        if ym.shape[1] != 1 and not multilabel:
            raise ValueError("expected y of shape (n_samples, 1), got %r" % (ym.shape,))
        n_y = ym.shape[0]
    else:
        yd = np.asarray(y)
        if yd.dtype.kind == "O":
            yd = yd.astype(np.float64)
        if yd.ndim != 1 and not multilabel:
            raise ValueError("expected y of shape (n_samples,), got %r" % (yd.shape,))
        _check_finite(yd, "y")
        n_y = yd.shape[0]
    Xs = X if sp.issparse(X) else np.asarray(X)
    if not sp.issparse(Xs) and Xs.dtype.kind == "O":
        Xs = Xs.astype(np.float64)
    if Xs.ndim != 2:
        raise ValueError(f"Expected 2D array, got {Xs.ndim}D array instead")
    _check_finite(Xs.data if sp.issparse(Xs) else Xs, "X")
    if Xs.shape[0] != n_y:
        raise ValueError("X.shape[0] and y.shape[0] should be the same, got %r and %r instead."
                         % (Xs.shape[0], n_y))
    if sp.issparse(Xs):
        csr = sp.csr_array(Xs)
        features = SparseTensor.from_scipy(csr.astype(_svm_values(csr.data).dtype, copy=False))
        features = SparseTensor(features.indices, features.values, features.shape)
    else:
        features = SparseTensor.from_dense(_svm_values(Xs))
    # Labels: integers and bools as integers, other numbers as floats (%.16g); with multilabel,
    # each row's nonzero columns.
    labels, label_offsets = None, None
    if multilabel:
        if sp.issparse(y):
            ym.sort_indices()
            nz = ym.data != 0
            rows = np.repeat(np.arange(ym.shape[0]), np.diff(ym.indptr))[nz]
            labels = ym.indices[nz].astype(np.int64)
        else:
            rows, labels = np.nonzero(yd.reshape(n_y, -1))
            labels = labels.astype(np.int64)
        counts = np.bincount(rows, minlength=n_y) if len(rows) else np.zeros(n_y, np.int64)
        label_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    else:
        yv = ym.toarray().ravel() if sp.issparse(y) else yd
        labels = yv.astype(np.int64) if yv.dtype.kind in "ib" else yv.astype(np.float64)
    qids = None
    if query_id is not None:
        qids = np.asarray(query_id)
        if qids.shape[0] != n_y:
            raise ValueError("expected query_id of shape (n_samples,), got %r" % (qids.shape,))
        if qids.size == 0:
            qids = None
    header = b""
    if comment:
        header = (f"# Generated by dump_svmlight_file from scikit-learn {_sklearn_version()}\n"
                  f"# Column indices are {'zero' if zero_based else 'one'}-based\n#\n").encode()
        header += b"".join(b"# %s\n" % line for line in comment.splitlines())

    def write(path):
        _io.write_libsvm(path, features, labels, label_offsets, qids, not zero_based, True,
                         header)

    path = _fspath(f)
    if path is not None:
        write(path)
    elif hasattr(f, "write"):
        _write_through_file(f, ".svm", write)
    else:
        raise TypeError(f"f: expected a path or a binary file object, got {type(f).__name__}")


def _write_through_file(target, suffix, write):
    """Calls write(path) on a temporary file and copies its bytes to the file object."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out" + suffix)
        write(out)
        with open(out, "rb") as fo:
            while True:
                block = fo.read(1 << 22)
                if not block:
                    break
                target.write(block)


# ------------------------------------------------------------------------------------------------
# scipy.io's Matrix Market functions
# ------------------------------------------------------------------------------------------------


def _mtx_source(source):
    """(path or bytes, name) of what scipy.io.mmread accepts."""
    p = _fspath(source)
    if p is not None:
        kind = _compression(p)
        if kind:
            return _read_compressed(p, kind), p
        if not os.path.exists(p):
            raise FileNotFoundError(f"The source file does not exist: {p}")
        return p, p
    if hasattr(source, "read"):
        return _read_all(source), _name(source)
    raise TypeError("Unknown source type")


def mmread(source, *, spmatrix=True):
    """scipy.io.mmread: a dense .mtx (array format) as a NumPy array, a coordinate one as a
    scipy COO matrix (spmatrix=True) or COO array. `source`: a path (str or os.PathLike; .gz
    and .bz2 are decompressed) or a file object. Files of values tensorkit has no dtype for
    (complex, unsigned-integer) go to SciPy, which reads them."""
    import scipy.sparse as sp

    src, name = _mtx_source(source)
    try:
        if isinstance(src, bytes):
            x = _io.read_bytes(src, "mtx", name, "", True)
        else:
            x = _io.read(src, "", True)
    except NotImplementedError:
        # Complex and unsigned-integer values (no tensorkit dtype holds them): SciPy's answer.
        import scipy.io

        return scipy.io.mmread(_pyio.BytesIO(src) if isinstance(src, bytes) else src,
                               spmatrix=spmatrix)
    except ValueError as e:
        if "out of range for int64" in str(e):
            raise OverflowError(str(e)) from e  # SciPy's exception for such integers
        raise
    if isinstance(x, Tensor):
        return np.asarray(x)
    rows, cols = _io.coo_coordinates(x)  # split in parallel, in the library's reused memory
    triplet = (np.asarray(x.values), (np.asarray(rows), np.asarray(cols)))
    return (sp.coo_matrix if spmatrix else sp.coo_array)(triplet, shape=x.shape)


_MM_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


def _mm_by_scipy(a, field):
    """Whether mmwrite leaves `a` to SciPy: values no tensorkit dtype holds (complex, unsigned
    32/64-bit, SciPy writes as 'unsigned-integer'; long double) and float16, which SciPy 1.17
    writes as integers; the 'complex' and 'unsigned-integer' fields."""
    if field not in (None, "real", "integer", "pattern"):
        return True
    dt = getattr(a, "dtype", None)
    if dt is None:
        return False
    return (dt.kind not in "biuf" or (dt.kind == "u" and dt.itemsize >= 4)
            or (dt.kind == "f" and dt.itemsize not in (4, 8)))


def mmwrite(target, a, comment=None, field=None, precision=None, symmetry="AUTO"):
    """scipy.io.mmwrite: writes a dense array (array format) or a scipy.sparse matrix
    (coordinate format) to `target` (a path, ".mtx" appended when missing, or a binary file
    object), byte for byte as SciPy 1.17 writes it: the comment, field ('real', 'integer',
    'pattern'), precision and symmetry options, with "AUTO" testing matrices under 100 rows and
    columns for symmetry as SciPy does. Complex and unsigned 32/64-bit values (and float16) go
    to SciPy."""
    import scipy.sparse as sp

    if isinstance(a, (list, tuple)) or hasattr(a, "__array__") and not sp.issparse(a):
        a = np.asarray(a)
    if _mm_by_scipy(a, field):
        import scipy.io

        return scipy.io.mmwrite(target, a, comment=comment, field=field, precision=precision,
                                symmetry=symmetry)
    if symmetry == "AUTO":
        fmm = sys.modules.get("scipy.io._fast_matrix_market")
        always = getattr(fmm, "ALWAYS_FIND_SYMMETRY", False)
        small = hasattr(a, "shape") and max(a.shape) < 100
        symmetry = "detect" if always or small else "general"
    elif symmetry is None:
        symmetry = "detect"
    else:
        symmetry = str(symmetry).lower()
        if symmetry not in _MM_SYMMETRIES:
            raise ValueError("Invalid symmetry. Must be one of: " + ", ".join(_MM_SYMMETRIES))
    if getattr(a, "dtype", None) == np.uint16:
        a = a.astype(np.int32)  # no tensorkit dtype; SciPy writes it as 'integer' too
    coords = None
    if sp.issparse(a):
        if a.ndim != 2:
            raise ValueError(f"mmwrite: expected a 2-D matrix, got {a.ndim}-D")
        coo = a.tocoo()
        # SciPy's own row, col and data arrays go to the writer as they are: no [nnz, 2]
        # index array to build (fresh memory the size of both index arrays, then copied).
        coords = (coo.row, coo.col, coo.data, coo.shape)
    elif isinstance(a, np.ndarray):
        if a.ndim != 2:
            raise ValueError(f"mmwrite: expected a 2-D array, got {a.ndim}-D")
        value = a
        if field == "pattern":
            field = None  # SciPy writes a dense array's values whatever the field says
    else:
        raise ValueError(f"unknown matrix type: {type(a)}")
    precision = -1 if precision is None or int(precision) < 0 else int(precision)

    def write(path):
        if coords is not None:
            _io.write_mtx_coo(path, *coords, comment or "", field or "", precision, symmetry, True)
        else:
            _io.write_mtx(path, value, comment or "", field or "", precision, symmetry, True)

    p = _fspath(target)
    if p is not None:
        if p[-4:] != ".mtx":
            p += ".mtx"
        write(p)
        return None
    if not hasattr(target, "write"):
        raise TypeError("Unknown source object")
    if isinstance(target, _pyio.TextIOBase):
        raise TypeError("target stream must be open in binary mode.")
    _write_through_file(target, ".mtx", write)
    return None


def mminfo(source):
    """scipy.io.mminfo: (rows, cols, entries, format, field, symmetry) from a Matrix Market
    header, lower case as SciPy gives them."""
    p = _fspath(source)
    if p is not None:
        kind = _compression(p)
        opener = gzip.open if kind == "gz" else bz2.open if kind == "bz2" else open
        with opener(p, "rb") as f:
            return _mminfo_lines(f)
    if hasattr(source, "read"):
        if isinstance(source, _pyio.TextIOBase):
            return _mminfo_lines(_pyio.BytesIO(source.read().encode("utf-8")))
        return _mminfo_lines(source)
    raise TypeError("Unknown source type")


def _mminfo_lines(f):
    banner = f.readline().decode("latin-1").strip()
    parts = banner.split()
    if len(parts) != 5 or parts[0].lower() != "%%matrixmarket" or parts[1].lower() != "matrix":
        raise ValueError(f"mminfo: not a Matrix Market file (banner {banner!r})")
    fmt, field, symmetry = (s.lower() for s in parts[2:5])
    line = f.readline()
    while line and (line.startswith(b"%") or not line.strip()):
        line = f.readline()
    sizes = [int(v) for v in line.split()]
    if fmt == "coordinate":
        if len(sizes) != 3:
            raise ValueError(f"mminfo: a coordinate header needs 3 sizes, got {line!r}")
        rows, cols, entries = sizes
    else:
        if len(sizes) != 2:
            raise ValueError(f"mminfo: an array header needs 2 sizes, got {line!r}")
        rows, cols = sizes
        entries = rows * cols
    return rows, cols, entries, fmt, field, symmetry
