"""tf.io.parse_example's composite features against TensorFlow: SparseFeature, RaggedFeature
(every partition kind, int32 and int64 row splits), FixedLenSequenceFeature, and one record at a
time (a scalar `serialized`), through TensorkitParseExampleV2 both raw (output for output with
tf.raw_ops.ParseExampleV2) and as tensorkit_tf.parse_example (result for result with
tf.io.parse_example)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import ops, tensorkit_tf, tf  # noqa: E402

R = tf.io.RaggedFeature


def i64(v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=v))


def nested_record(rng, features):
    """One Example holding a random 3-level structure: values 'v', and its partitions encoded
    every way TensorFlow reads them: p{level}_{kind}."""
    units = int(rng.integers(0, 10))
    values = rng.integers(-99, 99, units).tolist()
    f = {"v": i64(values), "w": tf.train.Feature(float_list=tf.train.FloatList(
        value=rng.standard_normal(units).astype(np.float32)))}
    for level in (1, 0):  # innermost first
        lengths = []
        left = units
        while left > 0 or (rng.integers(0, 4) == 0 and len(lengths) < 4):
            n = int(rng.integers(0, left + 1)) if left else 0
            lengths.append(n)
            left -= n
        ids_lengths = list(lengths)
        while ids_lengths and ids_lengths[-1] == 0:
            ids_lengths.pop()
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
        f[f"p{level}_splits"] = i64(splits)
        f[f"p{level}_lengths"] = i64(lengths)
        f[f"p{level}_starts"] = i64(splits[:-1])
        f[f"p{level}_limits"] = i64(splits[1:])
        f[f"p{level}_ids"] = i64([j for j, n in enumerate(ids_lengths) for _ in range(n)])
        # ValueRowIds drop trailing empty rows; the level above must count those it sees.
        features.setdefault(level, []).append((len(lengths), len(ids_lengths)))
        units = len(lengths)
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def composite_spec():
    spec = {"flat": R(tf.int64, value_key="v"),
            "w64": R(tf.float32, value_key="w", row_splits_dtype=tf.int64)}
    for kind, cls in [("splits", R.RowSplits), ("lengths", R.RowLengths),
                      ("starts", R.RowStarts), ("limits", R.RowLimits)]:
        spec[f"one_{kind}"] = R(tf.int64, value_key="v", partitions=[cls(f"p1_{kind}")])
        spec[f"two_{kind}"] = R(tf.int64, value_key="v",
                                partitions=[cls(f"p0_{kind}"), cls(f"p1_{kind}")])
    spec["ids"] = R(tf.int64, value_key="v", partitions=[R.ValueRowIds("p1_ids")])
    spec["uniform"] = R(tf.int64, value_key="v", partitions=[
        R.UniformRowLength(1), R.RowLengths("p1_lengths")])
    spec["dense_inner"] = R(tf.int64, value_key="v", partitions=[R.UniformRowLength(1)])
    return spec


def assert_same(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        g, w = got[k], want[k]
        assert type(g) is type(w), k
        if isinstance(w, tf.RaggedTensor):
            assert g.flat_values.dtype == w.flat_values.dtype, k
            np.testing.assert_array_equal(g.flat_values.numpy(), w.flat_values.numpy(), k)
            assert len(g.nested_row_splits) == len(w.nested_row_splits), k
            for a, b in zip(g.nested_row_splits, w.nested_row_splits):
                assert a.dtype == b.dtype, k
                np.testing.assert_array_equal(a.numpy(), b.numpy(), k)
        elif isinstance(w, tf.sparse.SparseTensor):
            for a, b in [(g.indices, w.indices), (g.values, w.values),
                         (g.dense_shape, w.dense_shape)]:
                assert a.dtype == b.dtype, k
                np.testing.assert_array_equal(a.numpy(), b.numpy(), k)
        else:
            assert g.dtype == w.dtype, k
            np.testing.assert_array_equal(g.numpy(), w.numpy(), k)


def test_ragged_features_of_every_partition_kind_equal_tensorflows():
    rng = np.random.default_rng(3)
    records = [nested_record(rng, {}) for _ in range(400)]
    spec = composite_spec()
    assert_same(tensorkit_tf.parse_example(records, spec), tf.io.parse_example(records, spec))
    # Under tf.function too (the shape function).
    fn = tf.function(lambda s: tensorkit_tf.parse_example(s, spec))
    assert_same(fn(tf.constant(records)), tf.io.parse_example(records, spec))


def test_raw_ragged_keys_output_for_output():
    rng = np.random.default_rng(4)
    records = tf.constant([nested_record(rng, {}) for _ in range(50)])
    for serialized in [records, records[7]]:  # a batch, and one record
        args = dict(serialized=serialized, names=[], sparse_keys=["p0_splits"],
                    dense_keys=[], ragged_keys=["v", "w", "p1_ids"], dense_defaults=[],
                    num_sparse=1, sparse_types=[tf.int64],
                    ragged_value_types=[tf.int64, tf.float32, tf.int64],
                    ragged_split_types=[tf.int32, tf.int64, tf.int32], dense_shapes=[])
        got, want = ops.tensorkit_parse_example_v2(**args), tf.raw_ops.ParseExampleV2(**args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert len(g) == len(w)
            for a, b in zip(g, w):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(a.numpy(), b.numpy())


def sparse_records(rng, n, size):
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 6))
        f = {"ix0": i64(rng.integers(0, size[0], k)), "ix1": i64(rng.integers(0, size[1], k)),
             "val": tf.train.Feature(float_list=tf.train.FloatList(
                 value=rng.standard_normal(k).astype(np.float32))),
             "sv": tf.train.Feature(bytes_list=tf.train.BytesList(
                 value=[b"s%d" % j for j in range(k)]))}
        if k == 5:
            f = {}  # absent: an empty row
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


@pytest.mark.parametrize("already_sorted", [False, True])
def test_sparse_features_equal_tensorflows(already_sorted):
    rng = np.random.default_rng(5)
    records = sparse_records(rng, 300, (7, 4))
    spec = {"two": tf.io.SparseFeature(["ix0", "ix1"], "val", tf.float32, [7, 4],
                                       already_sorted=already_sorted),
            # a narrow size, so repeated indices sort stably
            "one": tf.io.SparseFeature("ix1", "sv", tf.string, 4, already_sorted=already_sorted),
            "val": tf.io.VarLenFeature(tf.float32)}
    got = tensorkit_tf.parse_example(records, spec)
    assert_same(got, tf.io.parse_example(records, spec))


def test_fixed_len_sequence_features_equal_tensorflows():
    rng = np.random.default_rng(6)
    records = []
    for i in range(200):
        k = int(rng.integers(0, 4))
        f = {"s": i64(rng.integers(-5, 5, 2 * k)),
             "t": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"t"] * k))}
        if i % 7 == 0:
            f = {}
        records.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    spec = {"s": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True,
                                               default_value=-1),
            "t": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True),
            "flat": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)}
    # "flat" is in no record: [B, 0].
    assert_same(tensorkit_tf.parse_example(records, spec), tf.io.parse_example(records, spec))
    # A record whose count is not a multiple of the row: both refuse.
    bad = records + [tf.train.Example(features=tf.train.Features(
        feature={"s": i64([1, 2, 3])})).SerializeToString()]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.parse_example(bad, {"s": spec["s"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple"):
        tensorkit_tf.parse_example(bad, {"s": spec["s"]})


def test_every_flat_kind_in_one_spec_equals_tensorflows():
    """Fixed, VarLen, FixedLenSequence (string padding, float rows) and Ragged keys (int32 and
    int64 splits) of one spec, in a batch and one record at a time: each output in its place."""
    rng = np.random.default_rng(16)
    records = []
    for i in range(300):
        k = int(rng.integers(0, 5))
        f = {"fx": i64([i]),
             "vl": i64(rng.integers(0, 9, k)),
             "sq": tf.train.Feature(bytes_list=tf.train.BytesList(
                 value=[b"q%d" % j for j in range(k)])),
             "fq": tf.train.Feature(float_list=tf.train.FloatList(
                 value=rng.standard_normal(3 * k).astype(np.float32))),
             "r32": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"r"] * k)),
             "r64": i64(rng.integers(-9, 9, 2 * k))}
        if i % 11 == 0:
            f = {"fx": i64([i])}
        records.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    spec = {"fx": tf.io.FixedLenFeature([], tf.int64),
            "vl": tf.io.VarLenFeature(tf.int64),
            "sq": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True,
                                                default_value="pad"),
            "fq": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=True,
                                                default_value=0.5),
            "r32": R(tf.string),
            "r64": R(tf.int64, row_splits_dtype=tf.int64)}
    assert_same(tensorkit_tf.parse_example(records, spec), tf.io.parse_example(records, spec))
    none = tf.constant([], dtype=tf.string)
    assert_same(tensorkit_tf.parse_example(none, spec), tf.io.parse_example(none, spec))
    for r in records[:12]:
        assert_same(tensorkit_tf.parse_single_example(r, spec),
                    tf.io.parse_single_example(r, spec))


def test_single_records_equal_parse_single_example():
    rng = np.random.default_rng(8)
    # Under tf.function too: the shape function of a scalar record.
    single_fn = tf.function(lambda r, spec: tensorkit_tf.parse_single_example(r, spec),
                            reduce_retracing=True)
    spec = dict(composite_spec())
    spec.update({"two": tf.io.SparseFeature(["ix0", "ix1"], "val", tf.float32, [7, 4]),
                 "var": tf.io.VarLenFeature(tf.float32),
                 "fixed": tf.io.FixedLenFeature([2], tf.int64, default_value=[4, 5])})
    del spec["w64"]
    for _ in range(20):
        ex = tf.train.Example.FromString(nested_record(rng, {}))
        extra = tf.train.Example.FromString(sparse_records(rng, 1, (7, 4))[0])
        for key in ("ix0", "ix1", "val"):
            if key in extra.features.feature:
                ex.features.feature[key].CopyFrom(extra.features.feature[key])
        ex.features.feature["var"].CopyFrom(ex.features.feature["w"])
        record = ex.SerializeToString()
        want = tf.io.parse_single_example(record, spec)
        assert_same(tensorkit_tf.parse_single_example(record, spec), want)
        assert_same(single_fn(tf.constant(record), spec), want)


def test_inconsistent_composites_are_errors_naming_record_and_feature():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "v": i64([1, 2, 3]), "l": i64([1, 1]), "ix": i64([0, 9]), "val": i64([1, 2])}))
    r = ex.SerializeToString()
    # TensorFlow assembles these into wrong tensors without a word; tensorkit_tf refuses them.
    ragged = {"f": R(tf.int64, value_key="v", partitions=[R.RowLengths("l")])}
    tf.io.parse_example([b"", r], ragged)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tensorkit_tf.parse_example([b"", r], ragged)
    for bad in [{"ix": i64([0, 9]), "val": i64([1, 2])}, {"ix": i64([0, -1]), "val": i64([1, 2])},
                {"ix": i64([0]), "val": i64([1, 2])}]:
        sparse = {"s": tf.io.SparseFeature("ix", "val", tf.int64, 5)}
        rb = tf.train.Example(features=tf.train.Features(feature=bad)).SerializeToString()
        ok = tf.train.Example(features=tf.train.Features(feature={
            "ix": i64([1]), "val": i64([3])})).SerializeToString()
        with pytest.raises(tf.errors.InvalidArgumentError, match="SparseFeature 's'"):
            tensorkit_tf.parse_example([rb, ok], sparse)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"SparseFeature \\?'s"):
            tf.function(lambda s: tensorkit_tf.parse_example(s, sparse))(tf.constant([rb, ok]))
    # Equal totals but not per record: TensorFlow pairs them across records.
    swapped = [tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()
               for f in [{"ix": i64([0, 1]), "val": i64([1])}, {"ix": i64([]), "val": i64([2])}]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="in some record"):
        tensorkit_tf.parse_example(swapped, sparse)
    # A key read both as sparse and as ragged: TensorFlow's raw op returns wrong (empty) values
    # for it; tensorkit refuses.
    args = dict(serialized=[r], names=[], sparse_keys=["v"], dense_keys=[], ragged_keys=["v"],
                dense_defaults=[], num_sparse=1, sparse_types=[tf.int64],
                ragged_value_types=[tf.int64], ragged_split_types=[tf.int32], dense_shapes=[])
    with pytest.raises(tf.errors.InvalidArgumentError, match="names two features"):
        ops.tensorkit_parse_example_v2(**args)
