"""tensorkit's Bucketize and SparseCountSparseOutput ops against the tf.raw_ops they replace.

Both ops eagerly and inside tf.function, on the cases of TensorFlow's own tests
(bucketize_op_test.py, bincount_ops_test.py) and on random inputs, bit for bit; then every
malformed input TensorFlow's advisories describe (CVE-2020-15197, CVE-2022-21740,
CVE-2022-21738), which must be an InvalidArgumentError, also where TensorFlow accepts it.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import cpu_kernels, ops, tf  # noqa: E402

MODES = ["eager", "function"]
R = tf.raw_ops


@pytest.mark.parametrize("name", ["Bucketize", "SparseCountSparseOutput"])
def test_same_inputs_attributes_and_dtypes_as_tensorflow(name):
    from tensorflow.python.framework import op_def_registry
    ours, theirs = op_def_registry.get("Tensorkit" + name), op_def_registry.get(name)
    key = lambda a: (a.name, a.type, a.type_attr, a.number_attr)  # noqa: E731
    assert [key(a) for a in ours.input_arg] == [key(a) for a in theirs.input_arg]
    assert [key(a) for a in ours.output_arg] == [key(a) for a in theirs.output_arg]
    assert sorted((a.name, a.type, a.default_value.SerializeToString(), a.minimum)
                  for a in ours.attr) == \
        sorted((a.name, a.type, a.default_value.SerializeToString(), a.minimum)
               for a in theirs.attr)
    # TensorFlow also registers kernels for dtypes its op def does not allow (output_type int8,
    # uint16, ... for SparseCountSparseOutput), which no graph can reach: only the reachable ones
    # must match.
    allowed = {a.name: {tf.as_dtype(t).name for t in a.allowed_values.list.type}
               for a in theirs.attr if a.type == "type"}
    reachable = {k for k in cpu_kernels(name) if all(d in allowed[a] for a, d in k)}
    assert cpu_kernels("Tensorkit" + name) == reachable


def run(fn, mode, **inputs):
    return (tf.function(fn) if mode == "function" else fn)(**inputs)


def same(a, b):
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


def both(ours, theirs, mode, **inputs):
    a = run(lambda **t: ours(**t), mode, **inputs)
    b = run(lambda **t: theirs(**t), mode, **inputs)
    a = a if isinstance(a, (list, tuple)) else [a]
    b = b if isinstance(b, (list, tuple)) else [b]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        same(x, y)
    return a


def refused(fn, match=""):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        fn()


# --- Bucketize --------------------------------------------------------------------------------

def bucketize(mode, values, boundaries):
    return both(lambda input: ops.tensorkit_bucketize(input=input, boundaries=boundaries),
                lambda input: R.Bucketize(input=input, boundaries=boundaries), mode,
                input=values)[0]


@pytest.mark.parametrize("mode", MODES)
def test_bucketize_tensorflow_cases(mode):
    # bucketize_op_test.py: ints, floats, a 2-D input and an empty one over [0, 3, 8, 11].
    b = [0, 3, 8, 11]
    got = bucketize(mode, tf.constant([-5, 0, 2, 3, 5, 8, 10, 11, 12]), b)
    assert got.numpy().tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4]
    bucketize(mode, tf.constant([-5., 0., 2., 3., 5., 8., 10., 11., 12.]), b)
    got = bucketize(mode, tf.constant([[-5, 0, 2, 3, 5], [8, 10, 11, 12, 0]]), b)
    assert got.shape == (2, 5)
    bucketize(mode, tf.constant([], tf.float32), b)
    refused(lambda: ops.tensorkit_bucketize(input=tf.constant([1.0]), boundaries=[0, 8, 3, 11]),
            "boundaries.2. = 3 is below boundaries.1. = 8")
    with pytest.raises(TypeError):
        ops.tensorkit_bucketize(input=tf.constant([1.0]), boundaries=0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.float32, tf.float64])
def test_bucketize_edges(mode, dtype):
    if dtype.is_floating:
        v = [float("nan"), -0.0, 0.0, float("inf"), -float("inf"), 5.0, 1e30, -1e30, 16777219.0]
    else:
        v = [0, -1, 5, 16777219, 16777220, 2**31 - 1, -2**31]
        if dtype == tf.int64:
            v += [2**63 - 1, -2**63, 2**53 + 1]
    for b in ([], [0.0], [-1.0, 0.0, 0.0, 5.0, 16777220.0], [-float("inf"), float("inf")],
              [-3e38, 2147483648.0, 9.2e18]):
        bucketize(mode, tf.constant(v, dtype), b)
    bucketize(mode, tf.constant(3, dtype), [1.0, 2.0])  # a scalar
    bucketize(mode, tf.zeros([2, 1, 3, 1, 2, 1, 1, 2, 1, 3], dtype), [0.0])  # many axes


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(6))
def test_bucketize_random(mode, seed):
    rng = np.random.default_rng(seed)
    b = np.sort(rng.normal(0, 100, int(rng.integers(0, 1200)))).astype(np.float32).tolist()
    n = int(rng.integers(0, 50000))
    x = rng.normal(0, 120, n)
    x[::7] = np.round(x[::7])  # some values on the boundaries' grid
    if b:
        x[::11] = rng.choice(b, len(x[::11]))  # and exactly on boundaries
    for dtype in [tf.float32, tf.float64, tf.int32, tf.int64]:
        bucketize(mode, tf.cast(tf.constant(x), dtype), b)


def test_bucketize_refuses_nan_boundaries():
    refused(lambda: ops.tensorkit_bucketize(input=tf.constant([1.0]), boundaries=[0.0, np.nan]),
            "boundaries.1. is NaN")


# --- SparseCountSparseOutput ------------------------------------------------------------------

def count(mode, indices, values, dense_shape, weights=None, wdtype=tf.int64, **attrs):
    attrs.setdefault("binary_output", False)
    weights = tf.constant([], wdtype) if weights is None else tf.constant(weights, wdtype)
    inputs = dict(indices=tf.constant(np.asarray(indices, np.int64).reshape(-1, len(dense_shape))),
                  values=values, dense_shape=tf.constant(dense_shape, tf.int64), weights=weights)
    return both(lambda **t: ops.tensorkit_sparse_count_sparse_output(**t, **attrs),
                lambda **t: R.SparseCountSparseOutput(**t, **attrs), mode, **inputs)


def from_dense(x):
    x = np.asarray(x)
    idx = np.argwhere(x != 0)
    return idx, x[x != 0]


# bincount_ops_test.py's sparse inputs: (dense ids, attrs, dense weights or None).
X = [[3, 0, 1, 0], [0, 0, 0, 0], [5, 0, 4, 4]]
X7 = [[3, 0, 1, 0], [7, 0, 0, 0], [5, 0, 4, 4]]
TF_COUNT_CASES = [
    (X, {}, None), (X7, {"maxlength": 7}, None), (X7, {"maxlength": 0}, None),
    (X7, {"minlength": 9}, None), (X7, {"minlength": 3}, None),
    (X, {"binary_output": True}, None),
    ([[3, 0, 1, 0], [0, 0, 7, 0], [5, 0, 4, 4]], {"maxlength": 7, "binary_output": True}, None),
    (X7, {"minlength": 9, "binary_output": True}, None),
    (X7, {"minlength": 3, "binary_output": True}, None),
    (X, {}, [[6, 0, 2, 0], [0, 0, 0, 0], [10, 0, 3.5, 3.5]]),
    ([[3, 0, 1, 0], [0, 0, 7, 0], [5, 0, 4, 4]], {"maxlength": 7},
     [[6, 0, 2, 0], [0, 0, 14, 0], [10, 0, 3.5, 3.5]]),
    (X7, {"minlength": 9}, [[6, 0, 2, 0], [14, 0, 0, 0], [10, 0, 3, 3.5]]),
    (X7, {"minlength": 3}, [[6, 0, 2, 0], [14, 0, 0, 0], [10, 0, 3, 3.5]]),
    ([3, 0, 1, 1], {}, None),
    ([1941591354222760687, 0, 1241591354229760689, 0, 1241591354229760689,
      1241591354229760687], {}, None),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(TF_COUNT_CASES)))
def test_count_tensorflow_cases(mode, case):
    x, attrs, w = TF_COUNT_CASES[case]
    idx, vals = from_dense(x)
    shape = list(np.shape(x))
    wv = None if w is None else np.asarray(w, np.float64)[np.asarray(x) != 0].tolist()
    for vdtype in [tf.int32, tf.int64]:
        if vdtype == tf.int32 and max(vals) >= 2**31:
            continue
        count(mode, idx, tf.constant(vals, vdtype), shape, wv,
              tf.float64 if w is not None else tf.int64, **attrs)


@pytest.mark.parametrize("mode", MODES)
def test_count_rules(mode):
    # No ids: one column, or minlength; maxlength wins over minlength; empty float weights count
    # in float; binary ignores the weights; -0.0 sums to +0.0; shuffled rows; rank 1.
    empty = np.zeros([0, 2], np.int64)
    count(mode, empty, tf.constant([], tf.int64), [2, 3])
    count(mode, empty, tf.constant([], tf.int64), [2, 3], minlength=4)
    count(mode, [[0, 0], [1, 1]], tf.constant([1, 9], tf.int64), [2, 3], minlength=5,
          maxlength=3)
    count(mode, [[0, 0], [1, 1]], tf.constant([1, 1], tf.int64), [2, 3], wdtype=tf.float32)
    count(mode, [[0, 0], [1, 1], [1, 2]], tf.constant([1, 2, 2], tf.int32), [2, 3],
          [5, 7, 9], tf.int32, binary_output=True)
    count(mode, [[0, 0], [1, 1]], tf.constant([1, 2], tf.int64), [2, 3], [-0.0, 1.0],
          tf.float32)
    count(mode, [[1, 0], [0, 1], [1, 2], [0, 0], [1, 1]], tf.constant([3, 3, 1, 5, 3], tf.int64),
          [2, 3], [0.1, 0.2, 0.3, 0.4, 0.5], tf.float32)
    count(mode, [[2], [0], [1]], tf.constant([3, 3, 1], tf.int64), [3], maxlength=2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(8))
def test_count_random(mode, seed):
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 300))
    lengths = rng.integers(0, 20, batch)
    rows = np.repeat(np.arange(batch), lengths)
    cols = np.concatenate([np.arange(n) for n in lengths]) if batch else np.zeros(0, np.int64)
    idx = np.stack([rows, cols], 1)
    if seed % 2:
        p = rng.permutation(len(idx))
        idx = idx[p]
    nnz = len(idx)
    vals = rng.integers(0, int(rng.choice([5, 100, 10**6])), nnz)
    attrs = dict(binary_output=bool(seed % 3 == 0))
    if seed % 4 == 1:
        attrs["maxlength"] = int(rng.integers(0, 60))
    if seed % 4 == 2:
        attrs["minlength"] = int(rng.integers(0, 200))
    shape = [batch, 20]
    for wdtype in [tf.int32, tf.int64, tf.float32, tf.float64]:
        w = rng.normal(0, 10, nnz)
        w = np.round(w).astype(np.int64) if wdtype.is_integer else w
        count(mode, idx, tf.constant(vals, tf.int64), shape, w.tolist(), wdtype, **attrs)
        count(mode, idx, tf.constant(vals, tf.int32), shape, None, wdtype, **attrs)
    # Rank 1: one row.
    one = np.arange(nnz).reshape(-1, 1)
    count(mode, one, tf.constant(vals, tf.int64), [max(nnz, 1)], **attrs)


# Ids of rank 3 and 4: TensorFlow's kernel counts every entry under one index[0] in one row and
# answers [dense_shape[0], width] of rank 2 (tensorkit refused them before).
RANK3_IDX = [[0, 0, 0], [0, 1, 2], [0, 4, 3], [2, 0, 1], [5, 4, 3], [2, 3, 3], [0, 2, 2],
             [5, 0, 0], [2, 3, 0], [4, 1, 1]]
RANK3_VALS = [3, 1, 3, 7, 2, 0, 3, 9, 7, 1]
RANK3_W = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, -1.5, 0.25, 8.0, 1e-3]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("attrs", [{}, {"binary_output": True}, {"minlength": 12},
                                   {"maxlength": 4}],
                         ids=["plain", "binary", "minlength", "maxlength"])
@pytest.mark.parametrize("weighted", [False, True], ids=["counts", "weights"])
def test_count_rank3_as_tensorflow(mode, attrs, weighted):
    for vdtype in [tf.int64, tf.int32]:
        for wdtype in ([tf.float32, tf.float64, tf.int32] if weighted else [tf.int64]):
            w = None
            if weighted:
                w = RANK3_W if wdtype.is_floating else [int(10 * x) for x in RANK3_W]
            got = count(mode, RANK3_IDX, tf.constant(RANK3_VALS, vdtype), [6, 5, 4], w, wdtype,
                        **attrs)
            assert got[0].shape[1] == 2 and got[2].numpy()[0] == 6


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(3))
def test_count_rank4_random_as_tensorflow(mode, seed):
    rng = np.random.default_rng(100 + seed)
    shape = [int(d) for d in rng.integers(1, 6, 4)]
    size = int(np.prod(shape))
    flat = rng.choice(size, min(size, 40), replace=False)  # shuffled entries
    idx = np.stack(np.unravel_index(flat, shape), 1)
    vals = rng.integers(0, 30, len(flat))
    count(mode, idx, tf.constant(vals, tf.int64), shape, rng.normal(0, 3, len(flat)).tolist(),
          tf.float64, minlength=int(seed * 7))


def test_count_rank3_static_shape_is_the_output_rank():
    """TensorFlow's shape function claims `rank` index columns, which its own rank-2 output of
    rank-3 ids contradicts; tensorkit's says 2."""
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.int64)])
    def f(idx):
        out = ops.tensorkit_sparse_count_sparse_output(
            indices=idx, values=tf.constant(RANK3_VALS, tf.int64),
            dense_shape=tf.constant([6, 5, 4], tf.int64), weights=tf.constant([], tf.int64),
            binary_output=False)
        assert out[0].shape.as_list() == [None, 2] and out[2].shape.as_list() == [2]
        return out
    got = f(tf.constant(RANK3_IDX, tf.int64))
    assert got[0].shape[1] == 2


def sc(indices, values, dense_shape, weights=None, **attrs):
    attrs.setdefault("binary_output", False)
    return ops.tensorkit_sparse_count_sparse_output(
        indices=tf.constant(indices, tf.int64), values=tf.constant(values, tf.int64),
        dense_shape=tf.constant(dense_shape, tf.int64),
        weights=tf.constant([] if weights is None else weights, tf.float32), **attrs)


def test_count_refuses_malformed_inputs():
    ok = dict(indices=[[0, 0], [1, 1]], values=[1, 2], dense_shape=[2, 3])
    sc(**ok)  # the well-formed baseline runs
    bad = [
        (dict(ok, values=[1, 2, 3]), "disagree"),                       # values longer
        (dict(ok, values=[1]), "disagree"),                             # values shorter
        (dict(ok, dense_shape=[2]), "disagree"),                        # shape of fewer dims
        (dict(ok, dense_shape=[2, 3, 4]), "disagree"),                  # shape of more dims
        (dict(ok, dense_shape=[]), "no dims"),                          # of none
        (dict(ok, values=[1, -2]), "is negative"),                      # negative id
        (dict(ok, indices=[[0, 0], [2, 1]]), "out of bounds"),          # batch outside
        (dict(ok, indices=[[0, 0], [1, 3]]), "out of bounds"),          # column outside
        (dict(ok, indices=[[0, 0], [-1, 1]]), "out of bounds"),         # negative index
        (dict(ok, dense_shape=[2, -3]), "dense_shape"),                 # negative dim
        (dict(ok, dense_shape=[0, 3], indices=np.zeros([0, 2]), values=[]), "batch"),
        (dict(ok, weights=[1.0]), "weights must be empty or"),          # weights shorter
        (dict(ok, weights=[1.0, 2.0, 3.0]), "weights must be empty or"),
        (dict(ok, values=[1, 2**63 - 1]), "leaves no room"),            # width overflow
    ]
    for kwargs, match in bad:
        refused(lambda: sc(**kwargs), match)
    refused(lambda: ops.tensorkit_sparse_count_sparse_output(
        indices=tf.constant([[0, 0]], tf.int64), values=tf.constant([[1]], tf.int64),
        dense_shape=tf.constant([2, 3], tf.int64), weights=tf.constant([], tf.float32),
        binary_output=False), "values must be a vector")
    refused(lambda: ops.tensorkit_sparse_count_sparse_output(
        indices=tf.constant([[0, 0]], tf.int64), values=tf.constant([1], tf.int64),
        dense_shape=tf.constant([2, 3], tf.int64), weights=tf.constant([[1.0]], tf.float32),
        binary_output=False), "weights must be empty or")
    for attr in ["minlength", "maxlength"]:
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
            sc(**ok, **{attr: -2})
