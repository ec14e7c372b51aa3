"""tf.SequenceExample parsing against TensorFlow: TensorkitParseSequenceExampleV2 output for output
with tf.raw_ops.ParseSequenceExampleV2 (a batch and one record), and tensorkit_tf's
parse_sequence_example / parse_single_sequence_example result for result with tf.io's, over
random records: context FixedLen/VarLen/Ragged features; feature lists FixedLenSequence
(allow_missing or required), VarLen and Ragged (partitioned per step)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import ops, tensorkit_tf, tf  # noqa: E402
from test_tf_parse_composites import assert_same  # noqa: E402

R = tf.io.RaggedFeature


def i64(v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=v))


def f32(v):
    return tf.train.Feature(float_list=tf.train.FloatList(value=np.asarray(v, np.float32)))


def random_sequence_example(rng, required=True):
    ctx = {"label": i64([int(rng.integers(0, 2))]),
           "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
               value=[b"t%d" % j for j in range(int(rng.integers(0, 3)))]))}
    ctx["tags2"] = ctx["tags"]
    if rng.integers(0, 3):
        ctx["score"] = f32(rng.standard_normal(2))
    steps = int(rng.integers(0, 5))
    lists = {}
    if required or rng.integers(0, 2):
        lists["emb"] = tf.train.FeatureList(feature=[f32(rng.standard_normal(3))
                                                     for _ in range(steps)])
    ids, lengths = [], []
    for _ in range(steps):
        n = int(rng.integers(0, 5))
        ids.append(i64(rng.integers(-50, 50, n)))
        cut = sorted(rng.integers(0, n + 1, 2).tolist())
        lengths.append(i64([cut[0], cut[1] - cut[0], n - cut[1]]))
    lists["ids"] = tf.train.FeatureList(feature=ids)
    lists["len"] = tf.train.FeatureList(feature=lengths)
    if rng.integers(0, 4) == 0:
        del lists["ids"], lists["len"]
    return tf.train.SequenceExample(
        context=tf.train.Features(feature=ctx),
        feature_lists=tf.train.FeatureLists(feature_list=lists)).SerializeToString()


CONTEXT = {"label": tf.io.FixedLenFeature([], tf.int64),
           "score": tf.io.FixedLenFeature([2], tf.float32, default_value=[0.5, -1.0]),
           "tags": tf.io.VarLenFeature(tf.string),
           "tags_r": R(tf.string, value_key="tags2", row_splits_dtype=tf.int64)}


def lists_spec(required):
    return {"emb": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=not required),
            "ids": tf.io.VarLenFeature(tf.int64),
            "ids_r": R(tf.int64, value_key="ids2", partitions=[R.RowLengths("len")])}


def with_ids2(record):
    """The record with its "ids" feature list copied to "ids2" (a ragged key may not also be
    sparse)."""
    s = tf.train.SequenceExample.FromString(record)
    if "ids" in s.feature_lists.feature_list:
        s.feature_lists.feature_list["ids2"].CopyFrom(s.feature_lists.feature_list["ids"])
    else:
        s.feature_lists.feature_list["len"].Clear()
    return s.SerializeToString()


@pytest.mark.parametrize("required", [True, False])
def test_sequence_examples_equal_tensorflows(required):
    rng = np.random.default_rng(11 + required)
    records = [with_ids2(random_sequence_example(rng, required)) for _ in range(300)]
    spec = lists_spec(required)
    got = tensorkit_tf.parse_sequence_example(records, CONTEXT, spec)
    want = tf.io.parse_sequence_example(records, CONTEXT, spec)
    for g, w in zip(got, want):
        assert_same(g, w)
    fn = tf.function(lambda s: tensorkit_tf.parse_sequence_example(s, CONTEXT, spec))
    for g, w in zip(fn(tf.constant(records)), want):
        assert_same(g, w)


def test_single_sequence_examples_equal_tensorflows():
    rng = np.random.default_rng(13)
    spec = lists_spec(False)
    del spec["ids_r"]  # TensorFlow's single-record parser does not take RaggedFeatures
    for _ in range(30):
        r = with_ids2(random_sequence_example(rng, False))
        got = tensorkit_tf.parse_single_sequence_example(r, CONTEXT, spec)
        context = {k: v for k, v in CONTEXT.items() if k != "tags_r"}
        want = tf.io.parse_single_sequence_example(r, context, spec)
        got[0].pop("tags_r")
        for g, w in zip(got, want):
            assert_same(g, w)


def raw_args(serialized):
    return dict(
        serialized=serialized, debug_name=[], context_sparse_keys=["tags"],
        context_dense_keys=["label", "score"], context_ragged_keys=["tags2"],
        feature_list_sparse_keys=["ids"], feature_list_dense_keys=["emb"],
        feature_list_ragged_keys=["ids2", "len"], feature_list_dense_missing_assumed_empty=[True],
        context_dense_defaults=[tf.constant([], tf.int64), tf.constant([0.5, -1.0])],
        Ncontext_sparse=1, context_sparse_types=[tf.string],
        context_ragged_value_types=[tf.string],
        context_ragged_split_types=[tf.int32], context_dense_shapes=[[], [2]],
        Nfeature_list_sparse=1, Nfeature_list_dense=1, feature_list_dense_types=[tf.float32],
        feature_list_sparse_types=[tf.int64], feature_list_ragged_value_types=[tf.int64, tf.int64],
        feature_list_ragged_split_types=[tf.int64, tf.int32], feature_list_dense_shapes=[[3]])


def test_raw_op_output_for_output():
    from tensorflow.python.framework import op_def_registry
    ours = op_def_registry.get("TensorkitParseSequenceExampleV2")
    theirs = op_def_registry.get("ParseSequenceExampleV2")
    key = lambda a: (a.name, a.type, a.type_attr, a.number_attr, a.type_list_attr)  # noqa: E731
    assert [key(a) for a in ours.input_arg] == [key(a) for a in theirs.input_arg]
    assert [key(a) for a in ours.output_arg] == [key(a) for a in theirs.output_arg]
    assert sorted((a.name, a.type) for a in ours.attr) == \
        sorted((a.name, a.type) for a in theirs.attr)
    rng = np.random.default_rng(17)
    records = []
    for _ in range(120):
        s = tf.train.SequenceExample.FromString(with_ids2(random_sequence_example(rng, False)))
        records.append(s.SerializeToString())
    for serialized in [tf.constant(records), tf.constant(records[5])]:
        got = ops.tensorkit_parse_sequence_example_v2(**raw_args(serialized))
        want = tf.raw_ops.ParseSequenceExampleV2(**raw_args(serialized))
        assert len(got) == len(want)
        for name, g, w in zip(want._fields, got, want):
            assert len(g) == len(w), name
            for a, b in zip(g, w):
                assert a.dtype == b.dtype and a.shape == b.shape, name
                if name in ("context_ragged_row_splits", "feature_list_ragged_outer_splits") and \
                        serialized.shape.ndims == 0:
                    continue  # TensorFlow leaves these scalars uninitialized; tensorkit writes 0
                np.testing.assert_array_equal(a.numpy(), b.numpy(), name)


def test_refusals_agree_with_tensorflow():
    rng = np.random.default_rng(19)
    ok = with_ids2(random_sequence_example(rng, True))
    missing = tf.train.SequenceExample().SerializeToString()
    wrong_count = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={
        "emb": tf.train.FeatureList(feature=[f32([1, 2])])})).SerializeToString()
    wrong_type = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={
        "emb": tf.train.FeatureList(feature=[i64([1, 2, 3])])})).SerializeToString()
    spec = {"emb": tf.io.FixedLenSequenceFeature([3], tf.float32)}
    for bad, words in [(missing, "required but missing"), (wrong_count, "step 0: holds 2 values"),
                       (wrong_type, "int64_list")]:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.io.parse_sequence_example([ok, bad], {}, spec)
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"record 1.*{words}"):
            tensorkit_tf.parse_sequence_example([ok, bad], {}, spec)
