"""TFRecord files and tf.Example parsing against TensorFlow, both ways.

TensorFlow writes (tf.io.TFRecordWriter, uncompressed / GZIP / ZLIB, tf.train.Example of random
features) and tensorkit reads (TensorkitTFRecordRead, TensorkitParseExampleV2, compared with
tf.raw_ops.ParseExampleV2 output for output); tensorkit writes (TensorkitSerializeExamples,
TensorkitTFRecordWrite) and TensorFlow reads (tf.data.TFRecordDataset + tf.io.parse_example).
Then the malformed records TensorFlow refuses, which tensorkit must refuse too.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import ops, tf  # noqa: E402

COMPRESSIONS = ["", "GZIP", "ZLIB"]


def test_same_inputs_outputs_and_attributes_as_tensorflow():
    from tensorflow.python.framework import op_def_registry
    ours, theirs = op_def_registry.get("TensorkitParseExampleV2"), op_def_registry.get(
        "ParseExampleV2")
    key = lambda a: (a.name, a.type, a.type_attr, a.number_attr, a.type_list_attr)  # noqa: E731
    assert [key(a) for a in ours.input_arg] == [key(a) for a in theirs.input_arg]
    assert [key(a) for a in ours.output_arg] == [key(a) for a in theirs.output_arg]
    assert sorted((a.name, a.type) for a in ours.attr) == \
        sorted((a.name, a.type) for a in theirs.attr)


def random_examples(rng, n):
    """n tf.train.Examples: fixed int64 [2], float [3], bytes []; var-length int64, float, bytes
    (some rows empty or absent); NUL bytes in values."""
    out = []
    for i in range(n):
        f = {
            "fi": tf.train.Feature(int64_list=tf.train.Int64List(
                value=rng.integers(-2**63, 2**63 - 1, 2, dtype=np.int64, endpoint=True))),
            "ff": tf.train.Feature(float_list=tf.train.FloatList(
                value=rng.standard_normal(3).astype(np.float32))),
            "fs": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[bytes(rng.integers(0, 256, int(rng.integers(0, 6))).tolist())])),
        }
        k = int(rng.integers(0, 5))
        if k < 4:  # k == 4: the var-length features are absent
            f["vi"] = tf.train.Feature(int64_list=tf.train.Int64List(
                value=rng.integers(-1000, 1000, k)))
            f["vf"] = tf.train.Feature(float_list=tf.train.FloatList(
                value=rng.standard_normal(k).astype(np.float32)))
            f["vs"] = tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[b"x\x00" * int(j) for j in rng.integers(0, 3, k)]))
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


SPEC = {
    "fi": tf.io.FixedLenFeature([2], tf.int64),
    "ff": tf.io.FixedLenFeature([3], tf.float32),
    "fs": tf.io.FixedLenFeature([], tf.string),
    "vi": tf.io.VarLenFeature(tf.int64),
    "vf": tf.io.VarLenFeature(tf.float32),
    "vs": tf.io.VarLenFeature(tf.string),
    "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[1.5, -2.0]),
}


def raw_args(serialized, spec):
    """tf.raw_ops.ParseExampleV2's arguments for a dict of Fixed/VarLenFeatures."""
    sparse = sorted(k for k, v in spec.items() if isinstance(v, tf.io.VarLenFeature))
    dense = sorted(k for k, v in spec.items() if isinstance(v, tf.io.FixedLenFeature))
    defaults = []
    for k in dense:
        d = spec[k]
        defaults.append(tf.constant([], dtype=d.dtype) if d.default_value is None else
                        tf.reshape(tf.constant(d.default_value, dtype=d.dtype), d.shape))
    return dict(serialized=serialized, names=[], sparse_keys=sparse, dense_keys=dense,
                ragged_keys=[], dense_defaults=defaults, num_sparse=len(sparse),
                sparse_types=[spec[k].dtype for k in sparse], ragged_value_types=[],
                ragged_split_types=[], dense_shapes=[spec[k].shape for k in dense])


def assert_same_outputs(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tensorflow_writes_tensorkit_reads_and_parses(tmp_path, compression):
    rng = np.random.default_rng(len(compression))
    records = random_examples(rng, 700) + [b""]
    path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    got = ops.tensorkit_tf_record_read(path, compression_type=compression).numpy().tolist()
    assert got == records
    args = raw_args(tf.constant(records[:-1]), SPEC)
    assert_same_outputs(ops.tensorkit_parse_example_v2(**args), tf.raw_ops.ParseExampleV2(**args))
    # Under tf.function too (the shape function).
    fn = tf.function(lambda s: ops.tensorkit_parse_example_v2(**raw_args(s, SPEC)))
    assert_same_outputs(fn(tf.constant(records[:-1])), tf.raw_ops.ParseExampleV2(**args))


def test_string_defaults_long_lists_and_changing_key_orders_equal_tensorflow():
    """Missing string features take their defaults (one per value, or one repeated); var-length
    lists long and short; each run of records lists its keys in another order, unknown keys
    among them; batches of 0, 1 and 1100 records and a single (scalar) record."""
    rng = np.random.default_rng(3)
    keys = ["s", "s2", "i", "vs", "vi", "vf"]
    records = []
    for r in range(1100):
        if r % 150 == 0:
            order = list(rng.permutation(keys)) + ["unknown"]
        f = {}
        if r % 4:
            f["s"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"s%d" % r]))
        if r % 6:
            f["s2"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"a\x00", b"%d" % r]))
        if r % 3:
            f["i"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[r, -r]))
        n = 900 if r == 5 else int(rng.integers(0, 6))
        f["vs"] = tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[b"v" * int(k % 4) for k in range(n)]))
        f["vi"] = tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(-n, n, 2))))
        f["vf"] = tf.train.Feature(float_list=tf.train.FloatList(value=[k / 3 for k in range(n)]))
        f["unknown"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))
        body = b"".join(entry(k.encode(), f[k].SerializeToString()) for k in order if k in f)
        records.append(ld(1, body))
    spec = {"s": tf.io.FixedLenFeature([], tf.string, default_value="dflt"),
            "s2": tf.io.FixedLenFeature([2], tf.string, default_value=["x", ""]),
            "i": tf.io.FixedLenFeature([2], tf.int64, default_value=[4, 5]),
            "vs": tf.io.VarLenFeature(tf.string), "vi": tf.io.VarLenFeature(tf.int64),
            "vf": tf.io.VarLenFeature(tf.float32)}
    for batch in (records, records[:1], []):
        args = raw_args(tf.constant(batch, dtype=tf.string), spec)
        assert_same_outputs(ops.tensorkit_parse_example_v2(**args),
                            tf.raw_ops.ParseExampleV2(**args))
    args = raw_args(tf.constant(records[5]), spec)
    assert_same_outputs(ops.tensorkit_parse_example_v2(**args), tf.raw_ops.ParseExampleV2(**args))
    # The same lists read as ragged keys (values and row splits, int32 and int64) beside a sparse
    # and the dense keys: batches, one record and the scalar record.
    for serialized in (records, records[:1], [], records[5]):
        args = raw_args(tf.constant(serialized, dtype=tf.string), spec)
        args = with_ragged(args, ["vs", "vf"], [tf.string, tf.float32], [tf.int32, tf.int64])
        assert_same_outputs(ops.tensorkit_parse_example_v2(**args),
                            tf.raw_ops.ParseExampleV2(**args))
    # A ragged key holding another list type than it reads: both refuse the batch.
    bad = records[:7] + [ld(1, entry(b"vs", tf.train.Feature(
        int64_list=tf.train.Int64List(value=[1])).SerializeToString()))]
    args = with_ragged(raw_args(tf.constant(bad), spec), ["vs"], [tf.string], [tf.int64])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.ParseExampleV2(**args)
    with pytest.raises(tf.errors.InvalidArgumentError, match="vs"):
        ops.tensorkit_parse_example_v2(**args)


def with_ragged(args, keys, value_types, split_types):
    """ParseExampleV2 arguments with the sparse `keys` read as ragged keys instead."""
    args = dict(args)
    kept = [(k, t) for k, t in zip(args["sparse_keys"], args["sparse_types"]) if k not in keys]
    args.update(sparse_keys=[k for k, _ in kept], sparse_types=[t for _, t in kept],
                num_sparse=len(kept), ragged_keys=keys, ragged_value_types=value_types,
                ragged_split_types=split_types)
    return args


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tensorkit_writes_tensorflow_reads_and_parses(tmp_path, compression):
    rng = np.random.default_rng(7)
    B = 500
    fi = rng.integers(-2**62, 2**62, (B, 2))
    ff = rng.standard_normal((B, 3)).astype(np.float32)
    fs = np.array([bytes([i % 256, 0]) * (i % 3) for i in range(B)], dtype=object)
    lengths = rng.integers(0, 4, B)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    vi = rng.integers(-2**63, 2**63 - 1, splits[-1], dtype=np.int64, endpoint=True)
    vs = np.array([b"s%d\x00" % i for i in range(splits[-1])], dtype=object)
    serialized = ops.tensorkit_serialize_examples(
        dense_keys=["fi", "ff", "fs"], dense_values=[fi, ff, fs], sparse_keys=["vi", "vs"],
        sparse_values=[vi, vs], sparse_row_splits=[splits, splits])
    path = str(tmp_path / "tk.tfrecord")
    ops.tensorkit_tf_record_write(path, serialized, compression_type=compression)
    ds = tf.data.TFRecordDataset(path, compression_type=compression).batch(10000)
    batch = next(iter(ds))
    np.testing.assert_array_equal(batch.numpy(), serialized.numpy())
    spec = {"fi": tf.io.FixedLenFeature([2], tf.int64), "ff": tf.io.FixedLenFeature([3], tf.float32),
            "fs": tf.io.FixedLenFeature([], tf.string), "vi": tf.io.VarLenFeature(tf.int64),
            "vs": tf.io.VarLenFeature(tf.string)}
    p = tf.io.parse_example(batch, spec)
    np.testing.assert_array_equal(p["fi"].numpy(), fi)
    np.testing.assert_array_equal(p["ff"].numpy(), ff)
    assert p["fs"].numpy().tolist() == fs.tolist()
    np.testing.assert_array_equal(p["vi"].values.numpy(), vi)
    assert p["vs"].values.numpy().tolist() == vs.tolist()
    rows = tf.RaggedTensor.from_sparse(p["vi"]).row_splits.numpy()
    np.testing.assert_array_equal(rows, splits)
    # Each record also equals what protobuf makes of it, re-serialized.
    for r in serialized.numpy()[:20]:
        ex = tf.train.Example.FromString(r)
        assert ex.features.feature["fi"].int64_list.value[:] == \
            tf.train.Example.FromString(ex.SerializeToString()).features.feature["fi"].int64_list.value[:]


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def entry(key, feature):
    return ld(1, ld(1, key) + ld(2, feature))


def i64(vals):
    return ld(3, ld(1, b"".join(varint(v & (2**64 - 1)) for v in vals)))


def f32(vals):
    return ld(2, ld(1, np.array(vals, "<f4").tobytes()))


# Hand-made records where TensorFlow and tensorkit agree: value or refusal.
AGREED = [
    ("duplicate key, last wins", ld(1, entry(b"a", i64([1, 2])) + entry(b"a", i64([7])))),
    ("duplicate key of two types", ld(1, entry(b"a", f32([1])) + entry(b"a", i64([7])))),
    ("two Features messages", ld(1, entry(b"a", i64([1, 2]))) + ld(1, entry(b"a", i64([7])))),
    ("unpacked int64", ld(1, entry(b"a", ld(3, varint(8) + varint(5) + varint(8) + varint(6))))),
    ("unknown top-level fields", varint(5 << 3) + varint(3) + ld(1, entry(b"a", i64([1])))),
    ("empty record", b""),
    ("10-byte varint", ld(1, entry(b"a", ld(3, ld(1, b"\xff" * 9 + b"\x7f"))))),
    ("wrong type", ld(1, entry(b"a", f32([1.0])))),
    ("wrong type, empty list", ld(1, entry(b"a", ld(2, b"")))),
    ("11-byte varint", ld(1, entry(b"a", ld(3, ld(1, b"\xff" * 10 + b"\x01"))))),
    ("lying length", ld(1, entry(b"a", i64([1])))[:-1]),
    ("group", ld(1, entry(b"a", i64([1]))) + bytes([0x0B])),
    ("two values in an entry", ld(1, ld(1, ld(1, b"a") + ld(2, i64([4])) + ld(2, i64([5]))))),
]


@pytest.mark.parametrize("name,record", AGREED, ids=[n for n, _ in AGREED])
@pytest.mark.parametrize("spec", ["var", "fixed1", "fixed_default"])
def test_hand_made_records_agree_with_tensorflow(name, record, spec):
    specs = {"var": tf.io.VarLenFeature(tf.int64),
             "fixed1": tf.io.FixedLenFeature([1], tf.int64),
             "fixed_default": tf.io.FixedLenFeature([1], tf.int64, default_value=[9])}
    args = raw_args(tf.constant([record]), {"a": specs[spec]})
    try:
        want = tf.raw_ops.ParseExampleV2(**args)
    except tf.errors.InvalidArgumentError:
        with pytest.raises(tf.errors.InvalidArgumentError):
            ops.tensorkit_parse_example_v2(**args)
        return
    assert_same_outputs(ops.tensorkit_parse_example_v2(**args), want)


def test_corrupt_tfrecord_files_are_refused(tmp_path):
    path = str(tmp_path / "c.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for r in [b"abc", b"defgh"]:
            w.write(r)
    data = open(path, "rb").read()
    for cut, flip in [(len(data) - 1, None), (len(data), 14), (len(data), 3)]:
        bad = bytearray(data[:cut])
        if flip is not None:
            bad[flip] ^= 1
        open(path, "wb").write(bytes(bad))
        with pytest.raises(tf.errors.InvalidArgumentError, match="record"):
            ops.tensorkit_tf_record_read(path)
        with pytest.raises(tf.errors.DataLossError):
            list(tf.data.TFRecordDataset(path))
