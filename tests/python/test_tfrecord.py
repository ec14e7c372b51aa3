"""tensorkit.io's tf.io functions: TFRecord files (tfrecord_iterator, TFRecordWriter) and
tf.Example parsing (parse_example, parse_single_example, the sequence forms, serialize_examples)
against values worked out by hand from records encoded here, and, where the venv .venvs/tf
exists, against TensorFlow's own tf.io on the same records."""

import gzip
import os
import pathlib
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import tensorkit as tk

ROOT = pathlib.Path(__file__).resolve().parents[2]
TF_PYTHON = ROOT / ".venvs/tf/bin/python"
io = tk.io

# ------------------------------------------------------------------------------------------------
# A small protobuf encoder for tf.Example / tf.SequenceExample (independent of the library)
# ------------------------------------------------------------------------------------------------


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def feature(values):
    """A Feature of a list: ints -> int64_list, floats -> float_list, bytes -> bytes_list."""
    if values is None:
        return b""  # a Feature with no list set
    if all(isinstance(v, bytes) for v in values) and values:
        return ld(1, b"".join(ld(1, v) for v in values))
    if any(isinstance(v, float) for v in values):
        return ld(2, ld(1, struct.pack(f"<{len(values)}f", *values)))
    return ld(3, ld(1, b"".join(varint(v) for v in values)))


def features(d):
    return b"".join(ld(1, ld(1, k.encode()) + ld(2, feature(v))) for k, v in d.items())


def example(d):
    return ld(1, features(d))


def sequence_example(context, lists):
    fl = b"".join(ld(1, ld(1, k.encode()) + ld(2, b"".join(ld(1, feature(s)) for s in steps)))
                  for k, steps in lists.items())
    return ld(1, features(context)) + ld(2, fl)


def frame(record):
    """One TFRecord frame, with the masked CRC-32C (computed here bit by bit)."""
    def crc32c(data):
        crc = 0xFFFFFFFF
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        crc ^= 0xFFFFFFFF
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    header = struct.pack("<Q", len(record))
    return header + struct.pack("<I", crc32c(header)) + record + struct.pack("<I", crc32c(record))


# ------------------------------------------------------------------------------------------------
# TFRecord files
# ------------------------------------------------------------------------------------------------

RECORDS = [b"", b"a", b"\x00" * 7, bytes(range(256)) * 40, b"last record"]


@pytest.mark.parametrize("compression", [None, "", "GZIP", "ZLIB"])
def test_round_trip(tmp_path, compression):
    path = tmp_path / "r.tfrecord"  # a pathlib path
    with io.TFRecordWriter(path, compression) as w:
        for r in RECORDS[:-1]:
            w.write(r)
        w.write(RECORDS[-1].decode())  # str is written as UTF-8
        w.flush()
    got = list(io.tfrecord_iterator(path, compression))
    assert got == RECORDS
    assert all(type(r) is bytes for r in got)
    raw = path.read_bytes()
    if compression == "GZIP":
        raw = gzip.decompress(raw)
    elif compression == "ZLIB":
        raw = zlib.decompress(raw)
    assert raw == b"".join(frame(r) for r in RECORDS)  # the framing, byte for byte


def test_reads_hand_framed_and_empty_files(tmp_path):
    p = tmp_path / "hand.tfrecord"
    p.write_bytes(b"".join(frame(r) for r in RECORDS))
    assert list(io.tfrecord_iterator(str(p))) == RECORDS
    p.write_bytes(b"")
    assert list(io.tfrecord_iterator(p)) == []
    gz = tmp_path / "hand.gz"
    gz.write_bytes(gzip.compress(frame(b"x")) + gzip.compress(frame(b"y")))  # two members
    assert list(io.tfrecord_iterator(gz, "GZIP")) == [b"x", b"y"]


def test_writer_is_atomic(tmp_path):
    p = tmp_path / "w.tfrecord"
    w = io.TFRecordWriter(p)
    w.write(b"one")
    assert not p.exists()  # the file appears on close
    w.close()
    w.close()  # twice is fine
    assert list(io.tfrecord_iterator(p)) == [b"one"]
    with pytest.raises(ValueError, match="closed"):
        w.write(b"two")
    with pytest.raises(ValueError, match="closed"):
        w.flush()
    with pytest.raises(RuntimeError):
        with io.TFRecordWriter(p) as w2:
            w2.write(b"replacement")
            raise RuntimeError("stop")
    assert list(io.tfrecord_iterator(p)) == [b"one"]  # not replaced
    io.TFRecordWriter(tmp_path / "dropped.tfrecord").write(b"x")  # dropped unclosed
    assert sorted(os.listdir(tmp_path)) == ["w.tfrecord"]  # no temporary left either


def test_bad_arguments(tmp_path):
    with pytest.raises(tk.InvalidArgument, match="GZIP"):
        io.TFRecordWriter(tmp_path / "x", "BZIP2")
    with pytest.raises(TypeError):
        io.tfrecord_iterator(3)
    with pytest.raises(OSError):
        io.tfrecord_iterator(tmp_path / "missing.tfrecord")


def corrupt_cases():
    good = b"".join(frame(r) for r in (b"first", b"second", b"third"))
    second = len(frame(b"first"))  # where record 1's header starts
    data_crc = bytearray(good)
    data_crc[second + 12 + 2] ^= 0x10  # a data byte of record 1
    header_crc = bytearray(good)
    header_crc[second + 9] ^= 0x01  # the length's CRC of record 1
    wrong_crc = bytearray(good)
    wrong_crc[second + 12 + 6] ^= 0xFF  # record 1's stored data CRC
    return {
        "data": (bytes(data_crc), 1, second),
        "header": (bytes(header_crc), 1, second),
        "crc": (bytes(wrong_crc), 1, second),
        "truncated": (good[:-2], 2, len(good) - len(frame(b"third"))),
        "cut_header": (good[:second + 5], 1, second),
    }


@pytest.mark.parametrize("case", ["data", "header", "crc", "truncated", "cut_header"])
@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_corrupt_files(tmp_path, case, compression):
    data, record, offset = corrupt_cases()[case]
    if compression == "GZIP":
        data = gzip.compress(data)
    elif compression == "ZLIB":
        data = zlib.compress(data)
    p = tmp_path / "bad.tfrecord"
    p.write_bytes(data)
    it = io.tfrecord_iterator(p, compression)
    got = []
    with pytest.raises(tk.Corrupt) as e:
        for r in it:
            got.append(r)
    assert isinstance(e.value, ValueError)
    assert f"record {record} at byte {offset}" in str(e.value)
    assert got == [b"first", b"second", b"third"][:record]


def test_iterator_memory_stays_flat(tmp_path):
    # 96 MiB of 1 MiB records; the iteration runs in a fresh process, whose peak resident memory
    # must not follow the file (its pages are given back as it goes).
    p = tmp_path / "big.tfrecord"
    block = os.urandom(1 << 20)
    with io.TFRecordWriter(p) as w:
        for i in range(96):
            w.write(block[i:] + block[:i])
    script = (
        "import resource, sys, tensorkit as tk\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "n = sum(len(r) for r in tk.io.tfrecord_iterator(sys.argv[1]))\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(n, (after - before) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", script, str(p)], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    n, grown_mib = map(int, out.stdout.split())
    assert n == 96 << 20
    assert grown_mib < 48, f"resident memory grew by {grown_mib} MiB over a 96 MiB file"


# ------------------------------------------------------------------------------------------------
# parse_example against hand-computed values
# ------------------------------------------------------------------------------------------------

HAND = [
    example({"label": [1], "dense": [1.0, 2.0, 3.0], "name": [b"alpha"], "ids": [5, 6, 7],
             "tags": [b"x"], "sp_i": [3, 0], "sp_j": [1, 4], "sp_v": [0.5, 1.5],
             "rv": [10, 20, 30], "rlen": [2, 0, 1], "seq": [1.0, 2.0, 3.0, 4.0]}),
    example({"label": [-2], "ids": [], "tags": [b"y", b"zz"], "rv": [], "rlen": [],
             "name": None}),
    example({"label": [2**63 - 1], "dense": [4.0, 5.0, 6.0], "ids": [8], "sp_i": [2],
             "sp_j": [2], "sp_v": [9.0], "rv": [40], "rlen": [1], "seq": [5.0, 6.0]}),
]

HAND_SPEC = {
    "label": io.FixedLenFeature([], "int64"),
    "dense": io.FixedLenFeature([3], np.float32, default_value=[-1.0, -2.0, -3.0]),
    "name": io.FixedLenFeature((), "string", default_value=b"?"),
    "ids": io.VarLenFeature(np.int64),
    "tags": io.VarLenFeature("string"),
    "sp": io.SparseFeature(["sp_i", "sp_j"], "sp_v", "float32", [4, 5]),
    "flat": io.RaggedFeature("int64", value_key="rv"),
    "nested": io.RaggedFeature("int64", value_key="rv",
                               partitions=[io.RaggedFeature.RowLengths("rlen")]),
    "seq": io.FixedLenSequenceFeature([2], "float32", default_value=0.25),
}


def check_sparse(st, indices, values, shape):
    assert isinstance(st, tk.SparseTensor)
    np.testing.assert_array_equal(st.indices.numpy(), np.asarray(indices, np.int64).reshape(
        len(values), len(shape)))
    got = st.values.numpy()
    if got.dtype == object:
        got = [v if isinstance(v, bytes) else v.encode() for v in got]
        assert got == list(values)
    else:
        np.testing.assert_array_equal(got, values)
    assert st.shape == tuple(shape)


def test_parse_example_by_hand():
    r = io.parse_example(HAND, HAND_SPEC)
    assert list(r) == list(HAND_SPEC)
    np.testing.assert_array_equal(r["label"], np.array([1, -2, 2**63 - 1], np.int64))
    assert r["label"].dtype == np.int64
    np.testing.assert_array_equal(r["dense"], np.array([[1, 2, 3], [-1, -2, -3], [4, 5, 6]],
                                                       np.float32))
    assert r["dense"].dtype == np.float32
    assert r["name"].dtype == object and r["name"].tolist() == [b"alpha", b"?", b"?"]
    check_sparse(r["ids"], [[0, 0], [0, 1], [0, 2], [2, 0]], [5, 6, 7, 8], [3, 3])
    check_sparse(r["tags"], [[0, 0], [1, 0], [1, 1]], [b"x", b"y", b"zz"], [3, 2])
    # SparseFeature: sorted by index within each record.
    check_sparse(r["sp"], [[0, 0, 4], [0, 3, 1], [2, 2, 2]], [1.5, 0.5, 9.0], [3, 4, 5])
    flat = r["flat"]
    assert isinstance(flat, tk.JaggedTensor)
    np.testing.assert_array_equal(flat.values.numpy(), [10, 20, 30, 40])
    np.testing.assert_array_equal(flat.offsets.numpy(), [0, 3, 3, 4])
    values, splits = r["nested"]  # two levels: (flat_values, nested_row_splits)
    np.testing.assert_array_equal(values, [10, 20, 30, 40])
    np.testing.assert_array_equal(splits[0], [0, 3, 3, 4])  # rows per record
    np.testing.assert_array_equal(splits[1], [0, 2, 2, 3, 4])  # values per row
    assert splits[0].dtype == np.int32  # TensorFlow's default row_splits_dtype
    seq = r["seq"]
    assert seq.shape == (3, 2, 2)
    np.testing.assert_array_equal(seq, np.array(
        [[[1, 2], [3, 4]], [[.25, .25], [.25, .25]], [[5, 6], [.25, .25]]], np.float32))


def test_parse_example_inputs():
    spec = {"label": HAND_SPEC["label"]}
    want = [1, -2, 2**63 - 1]
    for serialized in (HAND, tuple(HAND), np.array(HAND, dtype=object),
                       np.array([bytearray(h) for h in HAND], dtype=object)):
        np.testing.assert_array_equal(io.parse_example(serialized, spec)["label"], want)
    # An S array: NumPy drops trailing NULs, which a record may end with (an int64 0).
    s = np.array([example({"label": [3]})], dtype="S")
    np.testing.assert_array_equal(io.parse_example(s, spec)["label"], [3])
    assert io.parse_example([], spec)["label"].shape == (0,)
    with pytest.raises(ValueError, match="parse_single_example"):
        io.parse_example(HAND[0], spec)
    with pytest.raises(TypeError, match=r"serialized\[1\]"):
        io.parse_example([HAND[0], 5], spec)


def test_parse_single_example_by_hand():
    spec = dict(HAND_SPEC)
    del spec["sp"]
    r = io.parse_single_example(HAND[0], spec)
    assert r["label"].shape == () and r["label"] == 1
    np.testing.assert_array_equal(r["dense"], [1, 2, 3])
    assert r["name"].shape == () and r["name"].item() == b"alpha"
    check_sparse(r["ids"], [[0], [1], [2]], [5, 6, 7], [3])
    check_sparse(r["tags"], [[0]], [b"x"], [1])
    np.testing.assert_array_equal(r["flat"], [10, 20, 30])  # no partitions: a dense array
    nested = r["nested"]
    assert isinstance(nested, tk.JaggedTensor)
    np.testing.assert_array_equal(nested.values.numpy(), [10, 20, 30])
    np.testing.assert_array_equal(nested.offsets.numpy(), [0, 2, 2, 3])
    np.testing.assert_array_equal(r["seq"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(
        io.parse_single_example(np.array(HAND[2], dtype=object), spec)["label"], 2**63 - 1)


def test_uniform_row_length_and_strings():
    recs = [example({"v": [b"a", b"b", b"c", b"d"]}), example({"v": [b"e", b"f"]})]
    spec = {"u": io.RaggedFeature("string", value_key="v",
                                  partitions=[io.RaggedFeature.UniformRowLength(2)])}
    u = io.parse_example(recs, spec)["u"]
    assert isinstance(u, tk.JaggedTensor)
    np.testing.assert_array_equal(u.offsets.numpy(), [0, 2, 3])
    assert [[x.encode() if isinstance(x, str) else x for x in row]
            for row in u.values.numpy().tolist()] == [[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]]
    fixed = io.parse_example(recs, {"v": io.FixedLenSequenceFeature([], "string")})["v"]
    assert fixed.tolist() == [[b"a", b"b", b"c", b"d"], [b"e", b"f", b"", b""]]
    # Bytes that are not UTF-8 stay bytes, NULs included.
    odd = [b"\xff\x00\xfe", b"", b"\x00"]
    r = io.parse_example([example({"s": [o]}) for o in odd],
                         {"s": io.FixedLenFeature([], "string")})
    assert r["s"].tolist() == odd


def test_parse_errors():
    spec = {"label": io.FixedLenFeature([], "int64")}
    with pytest.raises(tk.Corrupt, match="record 1"):
        io.parse_example([HAND[0], b"\x0a\x05zz"], spec)
    with pytest.raises(tk.InvalidArgument, match="'label'"):
        io.parse_example([example({"other": [1]})], spec)
    with pytest.raises(tk.Error, match="float"):  # a float_list read as int64
        io.parse_example([example({"label": [1.0]})], spec)
    with pytest.raises(ValueError, match="dtype"):
        io.parse_example(HAND, {"label": io.FixedLenFeature([], np.int16)})
    with pytest.raises(TypeError, match="feature 'x'"):
        io.parse_example(HAND, {"x": object()})
    with pytest.raises(tk.InvalidArgument, match="intersect"):
        io.parse_example(HAND, {"ids": io.VarLenFeature("int64"),
                                "r": io.RaggedFeature("int64", value_key="ids")})


def test_tensorflow_configs_are_duck_typed():
    """tf.io's config classes, as TensorFlow defines them (namedtuples; dtypes with a name and
    as_numpy_dtype), work without TensorFlow."""
    import collections

    class DType:  # what tf.int64 looks like to the reader
        def __init__(self, name):
            self.name = name
            self.as_numpy_dtype = np.dtype(name if name != "string" else object).type

    Fixed = collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
    VarLen = collections.namedtuple("VarLenFeature", ["dtype"])
    Ragged = collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions",
                                                      "row_splits_dtype", "validate"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    r = io.parse_example(HAND, {
        "label": Fixed([], DType("int64"), None),
        "tags": VarLen(DType("string")),
        "n": Ragged(DType("int64"), "rv", (RowLengths("rlen"),), DType("int64"), False)})
    np.testing.assert_array_equal(r["label"], [1, -2, 2**63 - 1])
    check_sparse(r["tags"], [[0, 0], [1, 0], [1, 1]], [b"x", b"y", b"zz"], [3, 2])
    assert r["n"][1][0].dtype == np.int64


def test_sequence_examples_by_hand():
    recs = [
        sequence_example({"id": [7]}, {"tok": [[1, 2], [3]], "vec": [[1.0, 2.0], [3.0, 4.0]]}),
        sequence_example({"id": [8]}, {"tok": [], "vec": [[5.0, 6.0]]}),
    ]
    context = {"id": io.FixedLenFeature([], "int64")}
    lists = {"tok": io.VarLenFeature("int64"), "vec": io.FixedLenSequenceFeature([2], "float32"),
             "rt": io.RaggedFeature("int64", value_key="tok")}
    with pytest.raises(tk.InvalidArgument):  # "rt" and "tok" read one key as sparse and ragged
        io.parse_sequence_example(recs, context, lists)
    del lists["rt"]
    c, fl, lengths = io.parse_sequence_example(recs, context, lists)
    np.testing.assert_array_equal(c["id"], [7, 8])
    check_sparse(fl["tok"], [[0, 0, 0], [0, 0, 1], [0, 1, 0]], [1, 2, 3], [2, 2, 2])
    np.testing.assert_array_equal(fl["vec"], [[[1, 2], [3, 4]], [[5, 6], [0, 0]]])
    np.testing.assert_array_equal(lengths["vec"], [2, 1])
    c, fl = io.parse_single_sequence_example(
        recs[0], context, {"rt": io.RaggedFeature("int64", value_key="tok")})
    assert c["id"] == 7
    rt = fl["rt"]
    np.testing.assert_array_equal(rt.values.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(rt.offsets.numpy(), [0, 2, 3])


# ------------------------------------------------------------------------------------------------
# serialize_examples
# ------------------------------------------------------------------------------------------------


def test_serialize_examples_round_trip():
    feats = {
        "i": np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32),  # ints as int64_list
        "f": np.array([0.5, 1.5, -2.0]),  # floats as float_list (float32)
        "s": np.array(["a", "bé", ""]),  # str as UTF-8 bytes
        "j": tk.JaggedTensor(np.array([1.0, 2.0, 3.0], np.float32), lengths=[2, 0, 1]),
        "l": [[b"x"], [], [b"y", b"z"]],
    }
    recs = io.serialize_examples(feats)
    assert len(recs) == 3 and all(type(r) is bytes for r in recs)
    # The bytes are a plain tf.Example: the hand encoder's reading of row 1 agrees.
    r = io.parse_single_example(recs[1], {"i": io.FixedLenFeature([2], "int64"),
                                          "s": io.FixedLenFeature([], "string"),
                                          "j": io.VarLenFeature("float32")})
    np.testing.assert_array_equal(r["i"], [3, 4])
    assert r["s"].item() == b"b\xc3\xa9"
    assert r["j"].nnz == 0
    r = io.parse_example(recs, {"i": io.FixedLenFeature([2], "int64"),
                                "f": io.FixedLenFeature([], "float32"),
                                "s": io.FixedLenFeature([], "string"),
                                "j": io.RaggedFeature("float32"),
                                "l": io.VarLenFeature("string")})
    np.testing.assert_array_equal(r["i"], feats["i"])
    np.testing.assert_array_equal(r["f"], feats["f"].astype(np.float32))
    assert r["s"].tolist() == [b"a", "bé".encode(), b""]
    np.testing.assert_array_equal(r["j"].values.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(r["j"].offsets.numpy(), [0, 2, 2, 3])
    check_sparse(r["l"], [[0, 0], [2, 0], [2, 1]], [b"x", b"y", b"z"], [3, 2])
    with pytest.raises(ValueError, match="complex"):
        io.serialize_examples({"c": np.array([1j])})


# ------------------------------------------------------------------------------------------------
# Against TensorFlow (.venvs/tf)
# ------------------------------------------------------------------------------------------------

# One spec for both sides: `io` is tf.io or tensorkit.io, I64 / F32 / STR its dtypes.
TF_SPEC = """{
    "label": io.FixedLenFeature([], I64),
    "dense": io.FixedLenFeature([3], F32, default_value=[0.5, 1.5, 2.5]),
    "name": io.FixedLenFeature([], STR, default_value=b"none"),
    "ids": io.VarLenFeature(I64),
    "tags": io.VarLenFeature(STR),
    "sp": io.SparseFeature(["sp_i", "sp_j"], "sp_v", F32, [4, 5]),
    "sp1": io.SparseFeature("sp1_i", "sp1_v", STR, 6, already_sorted=True),
    "rg": io.RaggedFeature(F32, value_key="rg_v"),
    "rg2": io.RaggedFeature(I64, value_key="rg2_v",
                            partitions=[io.RaggedFeature.RowLengths("rg2_len")]),
    "rg3": io.RaggedFeature(STR, value_key="rg3_v",
                            partitions=[io.RaggedFeature.UniformRowLength(2)],
                            row_splits_dtype=I64),
    "rg4": io.RaggedFeature(I64, value_key="rg4_v",
                            partitions=[io.RaggedFeature.RowSplits("rg4_s"),
                                        io.RaggedFeature.ValueRowIds("rg4_ids")]),
    "seq": io.FixedLenSequenceFeature([2], F32, allow_missing=True, default_value=-1.0),
}"""
TF_SEQ_SPEC = """({"ctx": io.FixedLenFeature([], I64, default_value=0),
                   "cv": io.VarLenFeature(STR)},
                  {"fd": io.FixedLenSequenceFeature([2], F32, allow_missing=True),
                   "fs": io.VarLenFeature(I64),
                   "fr": io.RaggedFeature(STR, value_key="frv")})"""

TF_SCRIPT = r"""
import sys
import numpy as np
import tensorflow as tf
io, I64, F32, STR = tf.io, tf.int64, tf.float32, tf.string
spec, seq_spec = eval(sys.argv[3]), eval(sys.argv[4])
recs = [r.numpy() for r in tf.data.TFRecordDataset(sys.argv[1], compression_type="GZIP")]
seqs = [r.numpy() for r in tf.data.TFRecordDataset(sys.argv[2])]
out = {}
def put(prefix, x):
    if isinstance(x, tf.SparseTensor):
        out[prefix + ".indices"] = x.indices.numpy()
        out[prefix + ".values"] = x.values.numpy()
        out[prefix + ".shape"] = x.dense_shape.numpy()
    elif isinstance(x, tf.RaggedTensor):
        out[prefix + ".values"] = x.flat_values.numpy()
        for i, s in enumerate(x.nested_row_splits):
            out[prefix + f".splits{i}"] = s.numpy()
    else:
        v = x.numpy()
        out[prefix] = np.array(v, dtype=object) if isinstance(v, bytes) else v
for k, v in tf.io.parse_example(recs, spec).items():
    put("batch/" + k, v)
for i in (0, 3):
    for k, v in tf.io.parse_single_example(recs[i], spec).items():
        put(f"single{i}/" + k, v)
c, f, n = tf.io.parse_sequence_example(seqs, *seq_spec)
for name, d in (("ctx", c), ("fl", f), ("len", n)):
    for k, v in d.items():
        put(f"seq_{name}/" + k, v)
with tf.io.TFRecordWriter(sys.argv[5], "ZLIB") as w:
    for r in recs:
        w.write(r)
np.savez(sys.argv[6], **out)
"""


def random_records(rng, n):
    recs = []
    for r in range(n):
        d = {"label": [int(rng.integers(-2**62, 2**62))]}
        if rng.random() < 0.7:
            d["dense"] = [float(x) for x in rng.standard_normal(3).astype(np.float32)]
        if rng.random() < 0.7:
            d["name"] = [bytes(rng.integers(0, 256, rng.integers(0, 12)).astype(np.uint8))]
        if rng.random() < 0.8:
            d["ids"] = [int(x) for x in rng.integers(-10**15, 10**15, rng.integers(0, 5))]
        if rng.random() < 0.8:
            d["tags"] = [b"t%d" % x for x in rng.integers(0, 99, rng.integers(0, 4))]
        k = int(rng.integers(0, 4))
        cells = rng.choice(20, size=k, replace=False)
        if k or rng.random() < 0.5:
            d["sp_i"] = [int(c // 5) for c in cells]
            d["sp_j"] = [int(c % 5) for c in cells]
            d["sp_v"] = [float(x) for x in rng.standard_normal(k).astype(np.float32)]
        k = int(rng.integers(0, 4))
        d["sp1_i"] = sorted(int(c) for c in rng.choice(6, size=k, replace=False))
        d["sp1_v"] = [b"v%d" % i for i in range(k)]
        if rng.random() < 0.8:
            d["rg_v"] = [float(x) for x in rng.standard_normal(rng.integers(0, 5))
                         .astype(np.float32)]
        lengths = [int(x) for x in rng.integers(0, 3, rng.integers(0, 4))]
        d["rg2_len"] = lengths
        d["rg2_v"] = [int(x) for x in rng.integers(0, 100, sum(lengths))]
        d["rg3_v"] = [b"u%d" % i for i in range(2 * int(rng.integers(0, 3)))]
        rows = int(rng.integers(1, 4))
        inner = [int(x) for x in rng.integers(0, 3, rows)]  # values per inner row
        inner[-1] = max(inner[-1], 1)  # value_rowids give the rows up to the last id
        ids = [i for i, m in enumerate(inner) for _ in range(m)]
        outer = sorted(int(x) for x in rng.integers(0, rows + 1, 1))
        d["rg4_s"] = [0] + outer + [rows]
        d["rg4_ids"] = ids
        d["rg4_v"] = [int(x) for x in rng.integers(0, 9, len(ids))]
        if rng.random() < 0.8:
            d["seq"] = [float(x) for x in rng.standard_normal(2 * int(rng.integers(0, 3)))
                        .astype(np.float32)]
        # Empty lists keep the list type their dtype needs: encode them explicitly.
        recs.append(example({key: v for key, v in d.items() if v != []})
                    + _empty_lists({key for key, v in d.items() if v == []}))
    return recs


_FLOAT_KEYS = {"dense", "sp_v", "rg_v", "seq"}
_BYTES_KEYS = {"name", "tags", "sp1_v", "rg3_v"}


def _empty_lists(keys):
    """Features holding an empty list of their spec's type (appended entries of the map)."""
    out = b""
    for k in sorted(keys):
        field = 2 if k in _FLOAT_KEYS else 1 if k in _BYTES_KEYS else 3
        out += ld(1, ld(1, ld(1, k.encode()) + ld(2, ld(field, b""))))
    return out


def random_sequences(rng, n):
    recs = []
    for r in range(n):
        context = {"ctx": [int(rng.integers(0, 100))]} if rng.random() < 0.7 else {}
        context["cv"] = [b"c%d" % i for i in range(int(rng.integers(1, 3)))]
        steps = int(rng.integers(0, 4))
        lists = {
            "fd": [[float(x) for x in rng.standard_normal(2).astype(np.float32)]
                   for _ in range(steps)],
            "fs": [[int(x) for x in rng.integers(0, 50, rng.integers(1, 3))]
                   for _ in range(int(rng.integers(0, 3)))],
            "frv": [[b"s%d" % x for x in rng.integers(0, 9, rng.integers(1, 3))]
                    for _ in range(int(rng.integers(0, 3)))],
        }
        recs.append(sequence_example(context, {k: v for k, v in lists.items() if v}))
    return recs


def flatten(prefix, x, out):
    if isinstance(x, tk.SparseTensor):
        out[prefix + ".indices"] = x.indices.numpy()
        values = x.values.numpy()
        if values.dtype == object:
            values = np.array([v.encode() if isinstance(v, str) else v for v in values],
                              dtype=object)
        out[prefix + ".values"] = values
        out[prefix + ".shape"] = np.array(x.shape, np.int64)
    elif isinstance(x, tk.JaggedTensor):
        values = x.values.numpy()
        if values.dtype == object:
            values = np.array([v.encode() if isinstance(v, str) else v
                               for v in values.ravel()], dtype=object).reshape(values.shape)
        out[prefix + ".values"] = values
        out[prefix + ".splits0"] = x.offsets.numpy()
    elif isinstance(x, tuple):
        out[prefix + ".values"] = x[0]
        for i, s in enumerate(x[1]):
            out[prefix + f".splits{i}"] = s
    else:
        out[prefix] = x


@pytest.mark.skipif(not TF_PYTHON.exists(), reason="no .venvs/tf (TensorFlow); the hand-computed "
                    "tests above still run")
def test_against_tensorflow(tmp_path):
    rng = np.random.default_rng(47)
    recs = random_records(rng, 300)
    seqs = random_sequences(rng, 60)
    with io.TFRecordWriter(tmp_path / "ex.tfrecord.gz", "GZIP") as w:
        for r in recs:
            w.write(r)
    with io.TFRecordWriter(tmp_path / "seq.tfrecord") as w:
        for r in seqs:
            w.write(r)
    subprocess.run([str(TF_PYTHON), "-c", TF_SCRIPT, str(tmp_path / "ex.tfrecord.gz"),
                    str(tmp_path / "seq.tfrecord"), TF_SPEC, TF_SEQ_SPEC,
                    str(tmp_path / "tf.zlib"), str(tmp_path / "tf.npz")],
                   check=True, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""})
    # TensorFlow's writer, read here.
    assert list(io.tfrecord_iterator(tmp_path / "tf.zlib", "ZLIB")) == recs
    want = dict(np.load(tmp_path / "tf.npz", allow_pickle=True))

    env = {"io": io, "I64": "int64", "F32": np.float32, "STR": "string"}
    spec, seq_spec = eval(TF_SPEC, env), eval(TF_SEQ_SPEC, env)
    got = {}
    for k, v in io.parse_example(np.array(recs, dtype=object), spec).items():
        flatten("batch/" + k, v, got)
    for i in (0, 3):
        for k, v in io.parse_single_example(recs[i], spec).items():
            flatten(f"single{i}/" + k, v, got)
    c, f, n = io.parse_sequence_example(seqs, *seq_spec)
    for name, d in (("ctx", c), ("fl", f), ("len", n)):
        for k, v in d.items():
            flatten(f"seq_{name}/" + k, v, got)

    assert sorted(got) == sorted(want)
    for key in want:
        w, g = want[key], np.asarray(got[key])
        assert g.shape == w.shape, key
        if w.dtype == object:
            assert g.dtype == object and g.tolist() == w.tolist(), key
        elif ".splits" in key or key.endswith(".indices") or key.endswith(".shape"):
            np.testing.assert_array_equal(g, w, err_msg=key)  # int32 vs int64 row splits
        else:
            assert g.dtype == w.dtype, key
            np.testing.assert_array_equal(g, w, err_msg=key)
