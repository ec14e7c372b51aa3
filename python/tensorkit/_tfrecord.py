"""tf.io's TFRecord and tf.Example functions over the library's io/tfrecord.h and io/tf_example.h
(tensorkit.io re-exports them). TensorFlow need not be installed; its feature configs work too
(they are read by class name and fields).

Results, as tf.io.parse_example gives them with NumPy in place of tf.Tensor:
  FixedLenFeature, FixedLenSequenceFeature  a NumPy array [B, *shape] / [B, rows, *shape]
  VarLenFeature, SparseFeature              a tensorkit.SparseTensor: TensorFlow's indices,
                                            values and dense_shape (the `shape`)
  RaggedFeature                             one level of row splits (no partitions, or only
                                            UniformRowLength ones): a tensorkit.JaggedTensor
                                            whose offsets are the row splits; more levels: the
                                            tuple (flat_values, nested_row_splits), the
                                            arguments of tf.RaggedTensor.from_nested_row_splits
Strings are NumPy object arrays of bytes; inside a SparseTensor or JaggedTensor they are a
string tensor (its .numpy() gives str where the bytes are UTF-8)."""

import collections
import os

import numpy as np

from ._tensorkit import JaggedTensor, SparseTensor, Tensor, _io
from ._tensorkit import asarray as _asarray

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "TFRecordWriter",
    "VarLenFeature",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "serialize_examples",
    "tfrecord_iterator",
]

# ------------------------------------------------------------------------------------------------
# Feature configs (tf.io's fields and defaults)
# ------------------------------------------------------------------------------------------------


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense feature of `shape` per example; `default_value` fills a missing one."""
    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """Rows of `shape`, padded to the batch's longest with `default_value` (0 or b"")."""
    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=True, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """Any number of values per example: a SparseTensor [B, max_len]."""
    __slots__ = ()


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor [B, *size] whose indices and values are features of their own."""
    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """The values of `value_key` (default: the feature's key), split by `partitions` (outermost
    first). row_splits_dtype: "int32" (TensorFlow's default) or "int64". Partitions are always
    validated (tensorkit checks every record; `validate` is accepted and ignored)."""
    __slots__ = ()

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype="int32",
                validate=False):
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype,
                               validate)


_KINDS = ("FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature",
          "RaggedFeature")
_PARTITIONS = ("RowSplits", "RowLengths", "RowStarts", "RowLimits", "ValueRowIds",
               "UniformRowLength")


def _kind(config, key):
    kind = type(config).__name__
    if kind not in _KINDS:
        raise TypeError(f"parse_example: feature '{key}' is a {kind}; expected one of "
                        + ", ".join(_KINDS))
    return kind


def _dtype(dtype, key, allowed=("int64", "float32", "string")):
    """'int64', 'float32' or 'string' from a name, a NumPy dtype or type, or a TF DType."""
    if isinstance(dtype, str):
        name = {"bytes": "string", "str": "string", "object": "string"}.get(dtype, dtype)
        if name not in ("string",):
            name = np.dtype(name).name
    elif hasattr(dtype, "as_numpy_dtype") and hasattr(dtype, "name"):  # tf.DType
        name = dtype.name
    else:
        d = np.dtype(dtype)
        name = "string" if d.kind in "OSU" else d.name
    if name not in allowed:
        raise ValueError(f"parse_example: feature '{key}': dtype {dtype!r} is not one of "
                         + ", ".join(allowed))
    return name


def _shape(shape):
    if shape is None:
        return []
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


def _default(value, dtype):
    if value is None:
        return None
    if dtype == "string":
        return np.array(value, dtype=object)
    return np.asarray(value, dtype=np.int64 if dtype == "int64" else np.float32)


def _spec(features, context):
    """The tuples _io.parse_example takes, and the keys of each group in spec order."""
    if not isinstance(features, dict):
        raise TypeError(f"{context}: features must be a dict of feature configs, got "
                        f"{type(features).__name__}")
    groups = {k: [] for k in _KINDS}
    keys = {k: [] for k in _KINDS}
    keys["order"] = list(features)
    for key, f in features.items():
        if not isinstance(key, str):
            raise TypeError(f"{context}: feature keys must be str, got {key!r}")
        kind = _kind(f, key)
        keys[kind].append(key)
        if kind == "FixedLenFeature":
            d = _dtype(f.dtype, key)
            groups[kind].append((key, d, _shape(f.shape), _default(f.default_value, d)))
        elif kind == "FixedLenSequenceFeature":
            d = _dtype(f.dtype, key)
            groups[kind].append((key, d, _shape(f.shape), _default(f.default_value, d),
                                 bool(f.allow_missing)))
        elif kind == "VarLenFeature":
            groups[kind].append((key, _dtype(f.dtype, key)))
        elif kind == "SparseFeature":
            index = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
            groups[kind].append((key, index, f.value_key, _dtype(f.dtype, key), _shape(f.size),
                                 bool(f.already_sorted)))
        else:
            parts = []
            for p in f.partitions:
                name = type(p).__name__
                if name not in _PARTITIONS:
                    raise TypeError(f"{context}: feature '{key}': partition {p!r} is not one of "
                                    + ", ".join(_PARTITIONS))
                if name == "UniformRowLength":
                    parts.append((name, "", int(p.length)))
                else:
                    parts.append((name, p.key, 0))
            groups[kind].append((key, _dtype(f.dtype, key), f.value_key or key, parts,
                                 _dtype(f.row_splits_dtype, key, ("int32", "int64"))))
    return groups, keys


def _record(r, i):
    if isinstance(r, bytes):
        return r
    if isinstance(r, str):
        return r.encode("utf-8")
    if isinstance(r, (bytearray, memoryview)):
        return bytes(r)
    raise TypeError(f"parse_example: serialized[{i}] is {type(r).__name__}, not bytes")


def _records(serialized, single):
    if single:
        if isinstance(serialized, np.ndarray):
            if serialized.ndim != 0 and serialized.size != 1:
                raise ValueError("parse_single_example: serialized must be one record, got an "
                                 f"array of shape {serialized.shape}")
            serialized = serialized.reshape(()).item()
        return [_record(serialized, 0)]
    if isinstance(serialized, (bytes, str)):
        raise ValueError("parse_example: serialized must be a vector of records (a list or a "
                         "1-D array); use parse_single_example for one record")
    if isinstance(serialized, np.ndarray):
        if serialized.ndim != 1:
            raise ValueError(f"parse_example: serialized must be 1-D, got shape "
                             f"{serialized.shape}")
        serialized = serialized.tolist()
    elif hasattr(serialized, "numpy") and not isinstance(serialized, Tensor):  # a tf.Tensor
        serialized = serialized.numpy().tolist()
    return [_record(r, i) for i, r in enumerate(serialized)]


def _array(x):
    """A NumPy view of a numeric tk.Tensor; object arrays (and the string tensors that become a
    SparseTensor's or JaggedTensor's values) as they are."""
    return np.asarray(x) if isinstance(x, Tensor) and x.dtype != "string" else x


def _sparse(parts, sorted_):
    indices, values, shape = parts
    shape = [int(s) for s in np.asarray(shape).reshape(-1)]
    order = list(range(len(shape))) if sorted_ else None
    return SparseTensor(indices, values, shape, order)


def _ragged(parts, batch):
    values, splits = _array(parts[0]), [_array(s) for s in parts[1:]]
    if not batch:
        splits = splits[1:]  # the batch level, written empty without a batch dim
    if not splits:
        return values
    if len(splits) == 1:
        return JaggedTensor(values, offsets=splits[0])
    return values, tuple(splits)


def _assemble(out, groups, keys, batch):
    fixed, var_len, sparse, sequence, ragged = out
    result = {}
    for key, x in zip(keys["FixedLenFeature"], fixed):
        result[key] = _array(x)
    for key, parts in zip(keys["VarLenFeature"], var_len):
        result[key] = _sparse(parts, True)
    for key, parts, g in zip(keys["SparseFeature"], sparse, groups["SparseFeature"]):
        result[key] = _sparse(parts, not g[5])
    for key, x in zip(keys["FixedLenSequenceFeature"], sequence):
        result[key] = _array(x)
    for key, parts in zip(keys["RaggedFeature"], ragged):
        result[key] = _ragged(parts, batch)
    return {key: result[key] for key in keys["order"]}


def _parse(serialized, features, single, context):
    records = _records(serialized, single)
    groups, keys = _spec(features, context)
    out = _io.parse_example(records, groups["FixedLenFeature"], groups["VarLenFeature"],
                            groups["SparseFeature"], groups["RaggedFeature"],
                            groups["FixedLenSequenceFeature"], not single)
    return _assemble(out, groups, keys, not single)


# ------------------------------------------------------------------------------------------------
# tf.io's functions
# ------------------------------------------------------------------------------------------------


def parse_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_example: a dict {key: result} for a vector of serialized tf.Examples (a list
    of bytes, a NumPy object or S array; NumPy's S arrays drop trailing NULs, as NumPy does).
    `example_names` and `name` are accepted for tf.io's signature; errors name record numbers."""
    del example_names, name
    return _parse(serialized, features, False, "parse_example")


def parse_single_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_single_example: one serialized tf.Example (bytes), results without the batch
    dim."""
    del example_names, name
    return _parse(serialized, features, True, "parse_single_example")


def _sequence(serialized, context_features, sequence_features, single):
    context = "parse_single_sequence_example" if single else "parse_sequence_example"
    records = _records(serialized, single)
    cgroups, ckeys = _spec(context_features or {}, context)
    sgroups, skeys = _spec(sequence_features or {}, context)
    for kind in ("FixedLenFeature", "SparseFeature"):
        if skeys[kind]:
            raise ValueError(f"{context}: sequence feature '{skeys[kind][0]}' is a {kind}; "
                             "feature lists take FixedLenSequenceFeature, VarLenFeature and "
                             "RaggedFeature")
    ctx, dense, sparse, ragged = _io.parse_sequence_example(
        records, cgroups["FixedLenFeature"], cgroups["VarLenFeature"], cgroups["SparseFeature"],
        cgroups["RaggedFeature"], cgroups["FixedLenSequenceFeature"],
        sgroups["FixedLenSequenceFeature"], sgroups["VarLenFeature"], sgroups["RaggedFeature"],
        not single)
    context_out = _assemble(ctx, cgroups, ckeys, not single)
    lists, lengths = {}, {}
    for key, (values, length) in zip(skeys["FixedLenSequenceFeature"], dense):
        lists[key] = _array(values)
        lengths[key] = _array(length)
    for key, parts in zip(skeys["VarLenFeature"], sparse):
        lists[key] = _sparse(parts, True)
    for key, parts in zip(skeys["RaggedFeature"], ragged):
        lists[key] = _ragged(parts, not single)
    lists = {k: lists[k] for k in skeys["order"]}
    return context_out, lists, lengths


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """tf.io.parse_sequence_example: (context, feature_lists, feature_list_lengths) dicts for a
    vector of serialized tf.SequenceExamples. Ragged feature lists have two levels or more:
    (flat_values, nested_row_splits)."""
    del example_names, name
    return _sequence(serialized, context_features, sequence_features, False)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """tf.io.parse_single_sequence_example: (context, feature_lists) for one record."""
    del example_name, name
    context, lists, _ = _sequence(serialized, context_features, sequence_features, True)
    return context, lists


def _compression(compression_type, context):
    """(name, level) from None, "", "NONE", "GZIP", "ZLIB" or a tf.io.TFRecordOptions."""
    if compression_type is None:
        return "", -1
    if isinstance(compression_type, str):
        return compression_type, -1
    if hasattr(compression_type, "compression_type"):  # tf.io.TFRecordOptions
        level = getattr(compression_type, "compression_level", None)
        name = compression_type.compression_type
        return ("" if name is None else str(name)), (-1 if level is None else int(level))
    raise TypeError(f"{context}: compression_type must be None, '', 'GZIP', 'ZLIB' or a "
                    f"TFRecordOptions, got {type(compression_type).__name__}")


def _path(path, context):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{context}: expected a path, got {type(path).__name__}")
    return os.fspath(path)


def tfrecord_iterator(path, compression_type=None, options=None):
    """The records of a TFRecord file, as bytes, one at a time (memory does not grow with the
    file). compression_type: None, "", "GZIP", "ZLIB" or a tf.io.TFRecordOptions (also as
    `options`, tf.compat.v1's name). A corrupt record (bad CRC, cut short) raises
    tensorkit.Corrupt, a ValueError, naming the record and its offset."""
    name, _ = _compression(options if options is not None else compression_type,
                           "tfrecord_iterator")
    return _io.TFRecordIterator(_path(path, "tfrecord_iterator"), name)


class TFRecordWriter:
    """tf.io.TFRecordWriter over the library's writer: the file appears (or is replaced) when
    the writer is closed, complete; leaving a `with` block by an exception, or dropping an
    unclosed writer, leaves no file behind. compression_type: None, "", "GZIP", "ZLIB" or a
    tf.io.TFRecordOptions (its compression_level is used)."""

    def __init__(self, path, compression_type=None, options=None):
        name, level = _compression(options if options is not None else compression_type,
                                   "TFRecordWriter")
        self._w = _io.TFRecordWriter(_path(path, "TFRecordWriter"), name, level)

    def write(self, record):
        """Appends one record (bytes; str is written as UTF-8)."""
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif not isinstance(record, bytes):
            record = bytes(record)
        self._w.write(record)

    def flush(self):
        """Nothing to do: the file is written atomically, and appears complete on close()."""
        if self._w.closed:
            raise ValueError("TFRecordWriter.flush: the writer is closed")

    def close(self):
        """Finishes the file and gives it its name. Closing twice does nothing."""
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self._w.abandon()
        return False


def _feature_values(x, key):
    """x as a tk.Tensor of int64, float32 or strings."""
    if isinstance(x, Tensor) and x.dtype in ("int64", "float32", "string"):
        return x
    a = np.asarray(x)
    if a.dtype.kind in "OSU":
        return _asarray(a)
    if a.dtype.kind in "iub":
        return _asarray(np.ascontiguousarray(a, dtype=np.int64))
    if a.dtype.kind == "f":
        return _asarray(np.ascontiguousarray(a, dtype=np.float32))
    raise ValueError(f"serialize_examples: feature '{key}': dtype {a.dtype} has no tf.Example "
                     "list (ints, floats, bytes or str)")


def _is_ragged_list(x):
    return (isinstance(x, (list, tuple)) and len(x) > 0
            and all(isinstance(r, (list, tuple, np.ndarray)) for r in x)
            and len({np.shape(r) for r in x}) > 1)


def serialize_examples(features):
    """One serialized tf.Example (bytes) per row of `features`, {key: value}: an array [B, ...]
    (row i's elements in C order), a tensorkit.JaggedTensor of B rows, or a list of B rows of
    different lengths. Ints are written as int64_list, floats as float_list (float32), bytes and
    str as bytes_list. parse_example with FixedLenFeature / VarLenFeature reads them back."""
    fixed, var_len = [], []
    for key, x in features.items():
        if isinstance(x, JaggedTensor):
            values = _feature_values(x.values, key)
            if values is not x.values:
                x = JaggedTensor(values, offsets=x.offsets)
            var_len.append((key, x))
        elif _is_ragged_list(x):
            lengths = np.array([len(r) for r in x], dtype=np.int64)
            flat = [v for r in x for v in r]
            var_len.append((key, JaggedTensor(_feature_values(flat, key), lengths=lengths)))
        else:
            fixed.append((key, _feature_values(x, key)))
    return _io.serialize_examples(fixed, var_len)
