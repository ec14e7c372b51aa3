"""tensorkit's TensorFlow ops for feature pipelines against the tf.raw_ops they replace.

SparseReshape, SparseSlice and SparseSplit: every dtype TensorFlow registers, eagerly and inside
tf.function, on random inputs and on the cases of TensorFlow's own kernel tests; then every bad
input TensorFlow's security advisories describe, which must be an InvalidArgumentError.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import LIB, cpu_kernels, ops, tensorkit_tf, tf  # noqa: E402,F401

MODES = ["eager", "function"]
# Value dtypes for the ops that only move values (TensorFlow registers every type for them).
MOVED = [tf.float32, tf.float64, tf.int32, tf.int64, tf.int8, tf.uint8, tf.int16, tf.uint16,
         tf.float16, tf.bfloat16, tf.bool, tf.string, tf.complex64, tf.complex128]


FEATURE_OPS = ["SparseReshape", "SparseSlice", "SparseSplit", "SparseFillEmptyRows",
               "SparseFillEmptyRowsGrad", "SparseSegmentSum", "SparseSegmentMean",
               "SparseSegmentSqrtN", "SparseSegmentSumWithNumSegments",
               "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments"]


@pytest.mark.parametrize("name", FEATURE_OPS)
def test_same_inputs_attributes_and_dtypes_as_tensorflow(name):
    from tensorflow.python.framework import op_def_registry
    ours, theirs = op_def_registry.get("Tensorkit" + name), op_def_registry.get(name)
    assert [(a.name, a.type, a.type_attr, a.number_attr) for a in ours.input_arg] == \
        [(a.name, a.type, a.type_attr, a.number_attr) for a in theirs.input_arg]
    assert [(a.name, a.type, a.type_attr, a.number_attr) for a in ours.output_arg] == \
        [(a.name, a.type, a.type_attr, a.number_attr) for a in theirs.output_arg]
    assert sorted(a.name for a in ours.attr) == sorted(a.name for a in theirs.attr)
    assert cpu_kernels("Tensorkit" + name) == cpu_kernels(name)


def run(fn, mode, **inputs):
    return (tf.function(fn) if mode == "function" else fn)(**inputs)


def random_values(rng, dtype, n):
    if dtype == tf.string:
        return tf.constant([b"v%d" % v for v in rng.integers(0, 1000, n)], tf.string)
    if dtype == tf.bool:
        return tf.constant(rng.integers(0, 2, n).astype(bool))
    if dtype.is_complex:
        return tf.cast(tf.complex(rng.standard_normal(n), rng.standard_normal(n)), dtype)
    if dtype.is_integer:
        return tf.constant(rng.integers(dtype.min, dtype.max, n, endpoint=True,
                                        dtype=dtype.as_numpy_dtype))
    return tf.cast(rng.standard_normal(n) * 100, dtype)


def random_entries(rng, shape, nnz, shuffled=True):
    size = int(np.prod(shape))
    nnz = min(nnz, size)
    flat = rng.choice(size, nnz, replace=False) if size else np.zeros(0, np.int64)
    if not shuffled:
        flat = np.sort(flat)
    if not shape:
        return tf.zeros([nnz, 0], tf.int64)
    idx = np.stack(np.unravel_index(flat, shape), axis=1).reshape(len(flat), len(shape))
    return tf.constant(idx.astype(np.int64))


def same(a, b):
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype == tf.string:
        assert a.numpy().tolist() == b.numpy().tolist()
    else:
        assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


def both(ours, theirs, mode, **inputs):
    """Our op and TensorFlow's on the same inputs; every output equal bit for bit."""
    a = run(lambda **t: ours(**t), mode, **inputs)
    b = run(lambda **t: theirs(**t), mode, **inputs)
    a = a if isinstance(a, (list, tuple)) else [a]
    b = b if isinstance(b, (list, tuple)) else [b]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, (list, tuple)):
            for xi, yi in zip(x, y):
                same(xi, yi)
        else:
            same(x, y)
    return a


def refused(fn, match):
    """fn() must fail with InvalidArgumentError mentioning `match` (eagerly)."""
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        fn()


def i64(x):
    return tf.constant(np.asarray(x, np.int64).reshape(np.shape(x)), tf.int64)


# --- SparseReshape ----------------------------------------------------------------------------

TF_RESHAPE_2D = dict(input_indices=i64([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]]),
                     input_shape=i64([5, 6]))
TF_RESHAPE_3D = dict(input_indices=i64([[0, 0, 1], [0, 1, 0], [0, 1, 2], [1, 0, 3], [1, 1, 1],
                                        [1, 1, 3], [1, 2, 2]]), input_shape=i64([2, 3, 4]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case, new_shape", [
    (TF_RESHAPE_2D, [5, 6]), (TF_RESHAPE_2D, [-1, 6]), (TF_RESHAPE_2D, [3, 10]),
    (TF_RESHAPE_2D, [3, -1]), (TF_RESHAPE_2D, [2, 3, 5]), (TF_RESHAPE_2D, [2, -1, 5]),
    (TF_RESHAPE_3D, [6, 4]), (TF_RESHAPE_3D, [6, -1]), (TF_RESHAPE_3D, [24]),
    (TF_RESHAPE_3D, [-1]), (TF_RESHAPE_3D, [1, 24, 1]), (TF_RESHAPE_3D, [4, 3, 2])])
def test_reshape_tensorflow_cases(mode, case, new_shape):
    both(ops.tensorkit_sparse_reshape, tf.raw_ops.SparseReshape, mode, new_shape=i64(new_shape),
         **case)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(8))
def test_reshape_random(mode, seed):
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 7, rng.integers(1, 5))]
    size = int(np.prod(shape))
    idx = random_entries(rng, shape, int(rng.integers(0, size + 1)), shuffled=bool(seed % 2))
    # A random factorisation of the size, one dim of it inferred.
    new_shape, rest = [], size
    for p in [2, 3, 5, 7]:
        while rest % p == 0 and rng.random() < 0.6:
            new_shape.append(p)
            rest //= p
    new_shape.append(rest)
    rng.shuffle(new_shape)
    if len(new_shape) > 1:
        new_shape[int(rng.integers(0, len(new_shape)))] = -1
    both(ops.tensorkit_sparse_reshape, tf.raw_ops.SparseReshape, mode, input_indices=idx,
         input_shape=i64(shape), new_shape=i64(new_shape))


def test_reshape_empty_and_zero_sized():
    both(ops.tensorkit_sparse_reshape, tf.raw_ops.SparseReshape, "eager",
         input_indices=tf.zeros([0, 2], tf.int64), input_shape=i64([0, 3]),
         new_shape=i64([3, 0]))
    both(ops.tensorkit_sparse_reshape, tf.raw_ops.SparseReshape, "eager",
         input_indices=tf.zeros([0, 2], tf.int64), input_shape=i64([4, 3]),
         new_shape=i64([2, -1]))


def test_reshape_bad_inputs():
    r = ops.tensorkit_sparse_reshape
    idx = TF_RESHAPE_2D["input_indices"]
    shape = TF_RESHAPE_2D["input_shape"]
    refused(lambda: r(input_indices=idx, input_shape=shape, new_shape=i64([-1, -1])),
            "more than one -1")
    refused(lambda: r(input_indices=idx, input_shape=shape, new_shape=i64([4, 7])),
            "30 elements")
    refused(lambda: r(input_indices=idx, input_shape=shape, new_shape=i64([4, -1])),
            "not a multiple of 4")
    refused(lambda: r(input_indices=idx, input_shape=shape, new_shape=i64([-2, 15])), "-2")
    # Shapes whose element count overflows int64 (CVE-2022-41898 and kin).
    refused(lambda: r(input_indices=tf.zeros([1, 2], tf.int64), input_shape=i64([2**62, 8]),
                      new_shape=i64([-1])), "int64")
    refused(lambda: r(input_indices=tf.zeros([1, 1], tf.int64), input_shape=i64([16]),
                      new_shape=i64([2**62, 2**62, -1])), "int64")
    # Ranks that disagree, and indices outside the input shape (TensorFlow computes from them).
    refused(lambda: r(input_indices=idx, input_shape=i64([5, 6, 1]), new_shape=i64([30])),
            "disagree|must agree")
    refused(lambda: r(input_indices=i64([[5, 0]]), input_shape=shape, new_shape=i64([30])),
            "out of bounds")
    refused(lambda: r(input_indices=i64([[0, -1]]), input_shape=shape, new_shape=i64([5, 6])),
            "out of bounds")
    refused(lambda: r(input_indices=i64([0, 1]), input_shape=shape, new_shape=i64([30])), "matrix")


# --- SparseSlice ------------------------------------------------------------------------------

# TensorFlow's kernel test tensor: a [4, 6] matrix with entries at the positions below.
SLICE_IDX = i64([[0, 0], [0, 2], [0, 4], [0, 5], [1, 1], [1, 3], [1, 4], [2, 0], [2, 3],
                 [2, 5], [3, 0], [3, 2], [3, 3], [3, 5]])
SLICE_VALS = tf.constant([0, 2, 4, 5, 11, 13, 14, 20, 23, 25, 30, 32, 33, 35], tf.int64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("start, size", [
    ([0, 0], [2, 6]), ([2, 0], [2, 6]), ([0, 0], [4, 3]), ([0, 3], [4, 3]), ([1, 1], [2, 3]),
    ([0, 0], [4, 6]), ([3, 5], [3, 3]), ([0, 0], [10, 10]), ([4, 6], [1, 1]), ([1, 2], [0, 3]),
    ([5, 7], [2, 2])])
def test_slice_tensorflow_cases(mode, start, size):
    both(ops.tensorkit_sparse_slice, tf.raw_ops.SparseSlice, mode, indices=SLICE_IDX,
         values=SLICE_VALS, shape=i64([4, 6]), start=i64(start), size=i64(size))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", MOVED, ids=lambda d: d.name)
def test_slice_random(mode, dtype):
    rng = np.random.default_rng(len(dtype.name))
    shape = [int(d) for d in rng.integers(1, 8, 3)]
    idx = random_entries(rng, shape, 60)
    start = [int(rng.integers(-3, d + 2)) for d in shape]  # before, inside and past the end
    size = [int(rng.integers(0, d + 4)) for d in shape]
    both(ops.tensorkit_sparse_slice, tf.raw_ops.SparseSlice, mode, indices=idx,
         values=random_values(rng, dtype, idx.shape[0]), shape=i64(shape), start=i64(start),
         size=i64(size))


def test_slice_bad_inputs():
    s = ops.tensorkit_sparse_slice
    args = dict(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, 6]))
    refused(lambda: s(start=i64([0]), size=i64([1, 1]), **args), "start")
    refused(lambda: s(start=i64([0, 0]), size=i64([1, 1, 1]), **args), "size")
    refused(lambda: s(start=i64([0, 0]), size=i64([1, -1]), **args), "size must be >= 0")
    refused(lambda: s(indices=SLICE_IDX, values=SLICE_VALS[:3], shape=i64([4, 6]),
                      start=i64([0, 0]), size=i64([1, 1])), "disagree")
    refused(lambda: s(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, -6]),
                      start=i64([0, 0]), size=i64([1, 1])), "negative")
    # A shape whose element count overflows int64.
    refused(lambda: s(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([2**62, 8]),
                      start=i64([0, 0]), size=i64([1, 1])), "int64")


# TensorFlow takes any start: a start past the end gives an empty axis, a negative one keeps the
# coordinates before 0 in the output (empty there) and shifts the entries by -start.
OUTSIDE_BOXES = [
    ([2**62, -1], [2**62, 2**62]),  # TensorFlow's testLargeSize: an empty [0, 7]
    ([0, -1], [2, 2]), ([-1, 0], [2, 2]), ([-5, 0], [10, 10]), ([-2, -3], [3, 6]),
    ([-1, -1], [0, 0]), ([-10, 0], [5, 6]), ([-(2**63), 0], [1, 6]), ([-3, 0], [2**63 - 1, 6]),
    ([-(2**63), -(2**63)], [1, 1]), ([2**63 - 1, 0], [1, 1]), ([2**62, 2**62], [2**62, 2**62]),
    ([0, 0], [2**63 - 1, 2**63 - 1]), ([-1, 2], [2**63 - 1, 2])]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("start, size", OUTSIDE_BOXES)
def test_slice_starting_outside_the_tensor_equals_tensorflow(mode, start, size):
    both(ops.tensorkit_sparse_slice, tf.raw_ops.SparseSlice, mode, indices=SLICE_IDX,
         values=SLICE_VALS, shape=i64([4, 6]), start=i64(start), size=i64(size))


@pytest.mark.parametrize("start, size", [([-(2**63), 0], [2**63 - 1, 6]),
                                         ([-(2**62), 0], [2**62, 6])])
def test_slice_whose_output_shape_overflows_is_refused_as_tensorflow(start, size):
    """A negative start makes the output dim min(size, dim - start): here [2^62 or more, 6], more
    elements than int64 counts, which TensorFlow refuses too."""
    args = dict(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, 6]), start=i64(start),
                size=i64(size))
    with pytest.raises(tf.errors.InvalidArgumentError, match="overflow"):
        tf.raw_ops.SparseSlice(**args)
    refused(lambda: ops.tensorkit_sparse_slice(**args), "output shape .* int64")


def test_slice_large_size_of_tensorflows_test():
    """testLargeSize of TensorFlow's sparse_slice_op_test: an empty [0, 2] result."""
    args = dict(indices=i64([[0, 0]]), values=tf.constant([0], tf.int32), shape=i64([1, 1]),
                start=i64([2**62, -1]), size=i64([2**62, 2**62]))
    got = both(ops.tensorkit_sparse_slice, tf.raw_ops.SparseSlice, "eager", **args)
    assert got[0].shape == (0, 2) and got[1].shape == (0,)
    assert got[2].numpy().tolist() == [0, 2]


@pytest.mark.parametrize("start", [[1, 1], [3, 5], [2, 0], [-1, 1]])
def test_slice_whose_end_overflows_keeps_the_entries_to_the_end(start):
    """start + size past 2^63 - 1: TensorFlow's sum wraps and it returns no entries although
    the box holds some; tensorkit saturates the sum, which gives TensorFlow's own answer for a
    size that just reaches the end."""
    shape = [4, 6]
    huge = i64([2**63 - 1, 2**63 - 1])
    fits = i64([d - s for d, s in zip(shape, start)])
    args = dict(indices=SLICE_IDX, values=SLICE_VALS, shape=i64(shape), start=i64(start))
    got = ops.tensorkit_sparse_slice(size=huge, **args)
    want = tf.raw_ops.SparseSlice(size=fits, **args)
    assert want[1].shape[0] > 0
    for g, w in zip(got, want):
        same(g, w)


# --- SparseSplit ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis, num_split", [(0, 2), (1, 2), (1, 3), (0, 4), (-1, 6), (-2, 1),
                                             (1, 4)])
def test_split_tensorflow_cases(mode, axis, num_split):
    both(lambda **t: ops.tensorkit_sparse_split(num_split=num_split, **t),
         lambda **t: tf.raw_ops.SparseSplit(num_split=num_split, **t), mode,
         split_dim=tf.constant(axis, tf.int64), indices=SLICE_IDX, values=SLICE_VALS,
         shape=i64([4, 6]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", MOVED, ids=lambda d: d.name)
def test_split_random(mode, dtype):
    rng = np.random.default_rng(3 * len(dtype.name))
    shape = [int(d) for d in rng.integers(2, 9, 3)]
    idx = random_entries(rng, shape, 80)
    axis = int(rng.integers(-3, 3))
    num = int(rng.integers(1, shape[axis] + 1))
    both(lambda **t: ops.tensorkit_sparse_split(num_split=num, **t),
         lambda **t: tf.raw_ops.SparseSplit(num_split=num, **t), mode,
         split_dim=tf.constant(axis, tf.int64), indices=idx,
         values=random_values(rng, dtype, idx.shape[0]), shape=i64(shape))


def test_split_bad_inputs():
    sp = ops.tensorkit_sparse_split
    args = dict(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, 6]))
    refused(lambda: sp(split_dim=tf.constant(2, tf.int64), num_split=2, **args), "split_dim 2")
    refused(lambda: sp(split_dim=tf.constant(-3, tf.int64), num_split=2, **args), "split_dim -3")
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=5, **args), "num_split 5")
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=2, indices=SLICE_IDX,
                       values=SLICE_VALS, shape=i64([2**62, 8])), "int64")
    # An index past the split axis would pick a piece that does not exist (a heap overflow in
    # TensorFlow before its fix).
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=2, indices=i64([[9, 0]]),
                       values=SLICE_VALS[:1], shape=i64([4, 6])), "out of bounds")
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=2, indices=i64([[-1, 0]]),
                       values=SLICE_VALS[:1], shape=i64([4, 6])), "out of bounds")


@pytest.mark.parametrize("axis, num_split", [(0, 2), (0, 4), (1, 3), (-1, 6)])
@pytest.mark.parametrize("bad", [[0, 9], [0, -1], [9, 0], [-1, 5], [4, 6]])
def test_split_refuses_an_index_out_of_bounds_on_any_axis_as_tensorflow(axis, num_split, bad):
    """TensorFlow refuses every index outside the shape, not only on the split axis; tensorkit
    returned [0, 9] of a [4, 6] tensor split along axis 0 in its first piece."""
    args = dict(split_dim=tf.constant(axis, tf.int64), num_split=num_split,
                indices=tf.concat([SLICE_IDX[:3], i64([bad]), SLICE_IDX[3:]], 0),
                values=tf.concat([SLICE_VALS[:3], [99], SLICE_VALS[3:]], 0), shape=i64([4, 6]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        tf.raw_ops.SparseSplit(**args)
    refused(lambda: ops.tensorkit_sparse_split(**args), r"entry 3 at \[%d %d\] is out of bounds"
            % tuple(bad))


# --- SparseFillEmptyRows and its gradient -----------------------------------------------------

FILL_DTYPES = MOVED


def fill_case(idx, vals, shape, default):
    return dict(indices=i64(idx), values=vals, dense_shape=i64(shape), default_value=default)


TF_FILL_CASES = [
    # TensorFlow's kernel tests: the 5x6 tensor (rows 2 and 4 empty), no empty rows, unordered
    # rows, no entries at all, no rows at all.
    ([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]], [0, 10, 13, 14, 32, 33], [5, 6]),
    ([[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14], [2, 6]),
    ([[1, 2], [0, 3], [0, 1], [0, 0]], [1, 3, 5, 7], [2, 6]),
    ([[2, 3], [2, 2], [0, 1], [0, 3]], [1, 3, 5, 7], [4, 5]),
    (np.zeros((0, 2)), [], [2, 5]),
    (np.zeros((0, 2)), [], [0, 5]),
    ([[3], [1], [1]], [4, 5, 6], [5]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(TF_FILL_CASES)))
def test_fill_empty_rows_tensorflow_cases(mode, case):
    idx, vals, shape = TF_FILL_CASES[case]
    for dtype in [tf.int64, tf.float32, tf.string]:
        v = (tf.constant([str(x).encode() for x in vals], tf.string) if dtype == tf.string
             else tf.constant(np.asarray(vals, dtype.as_numpy_dtype), dtype))
        d = tf.constant(b"-" if dtype == tf.string else -1, dtype)
        both(ops.tensorkit_sparse_fill_empty_rows, tf.raw_ops.SparseFillEmptyRows, mode,
             **fill_case(np.asarray(idx, np.int64).reshape(len(vals), len(shape)), v, shape, d))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FILL_DTYPES, ids=lambda d: d.name)
def test_fill_empty_rows_random(mode, dtype):
    rng = np.random.default_rng(5 * len(dtype.name))
    for rank in [1, 2, 3]:
        shape = [int(rng.integers(1, 40))] + [int(d) for d in rng.integers(1, 6, rank - 1)]
        idx = random_entries(rng, shape, int(rng.integers(0, 60)), shuffled=rank != 2)
        n = idx.shape[0]
        both(ops.tensorkit_sparse_fill_empty_rows, tf.raw_ops.SparseFillEmptyRows, mode,
             indices=idx, values=random_values(rng, dtype, n), dense_shape=i64(shape),
             default_value=tf.reshape(random_values(rng, dtype, 1), []))


def test_fill_empty_rows_bad_inputs():
    f = ops.tensorkit_sparse_fill_empty_rows
    v = tf.constant([1.0, 2.0])
    d = tf.constant(0.0)
    # A row outside dense_shape (CVE-2020-15195 and kin), negative rows, rows with no room.
    refused(lambda: f(**fill_case([[0, 0], [5, 2]], v, [2, 6], d)), "out of bounds")
    refused(lambda: f(**fill_case([[0, 0], [-1, 2]], v, [2, 6], d)), "out of bounds")
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], v, [0, 6], d)), "no rows")
    # Sizes that disagree, a missing rank, a default that is not a scalar.
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], tf.constant([1.0]), [2, 6], d)), "disagree")
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], v, [2, 6, 1], d)), "disagree")
    refused(lambda: f(indices=i64([[0, 0]]), values=tf.constant([1.0]), dense_shape=i64([]),
                      default_value=d), "at least one dim|disagree")
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], v, [2, 6], tf.constant([0.0]))), "scalar")
    # A dense_shape whose element count overflows int64, and a negative dim.
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], v, [2**62, 2**62], d)), "int64")
    refused(lambda: f(**fill_case([[0, 0], [1, 2]], v, [2, -6], d)), "negative")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32,
                                   tf.int64, tf.int8, tf.uint16, tf.complex64, tf.complex128],
                         ids=lambda d: d.name)
def test_fill_empty_rows_grad(mode, dtype):
    rng = np.random.default_rng(len(dtype.name))
    shape = [30, 4]
    idx = random_entries(rng, shape, 40)
    fwd = tf.raw_ops.SparseFillEmptyRows(indices=idx, values=tf.zeros([idx.shape[0]]),
                                         dense_shape=i64(shape), default_value=0.0)
    grad = random_values(rng, dtype, fwd.output_values.shape[0])
    if dtype.is_integer:
        grad = tf.cast(tf.constant(rng.integers(-5, 5, grad.shape[0])), dtype)
    a = run(lambda **t: ops.tensorkit_sparse_fill_empty_rows_grad(**t), mode,
            reverse_index_map=fwd.reverse_index_map, grad_values=grad)
    b = run(lambda **t: tf.raw_ops.SparseFillEmptyRowsGrad(**t), mode,
            reverse_index_map=fwd.reverse_index_map, grad_values=grad)
    same(a[0], b[0])
    if dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.complex64, tf.complex128):
        np.testing.assert_allclose(tf.cast(a[1], tf.complex128).numpy(),
                                   tf.cast(b[1], tf.complex128).numpy(), rtol=2e-2, atol=1e-2)
    else:
        same(a[1], b[1])


def test_fill_empty_rows_grad_bad_inputs():
    g = ops.tensorkit_sparse_fill_empty_rows_grad
    # A map entry outside grad_values would read past it (CVE-2021-41224's kin).
    refused(lambda: g(reverse_index_map=i64([0, 5]), grad_values=tf.constant([1.0, 2.0])),
            "5")
    refused(lambda: g(reverse_index_map=i64([0, -1]), grad_values=tf.constant([1.0, 2.0])),
            "-1")
    refused(lambda: g(reverse_index_map=i64([[0]]), grad_values=tf.constant([1.0])), "vector")


# --- SparseSegmentSum / Mean / SqrtN ------------------------------------------------------------

SEGMENT_OPS = {"Sum": tf.raw_ops.SparseSegmentSum, "Mean": tf.raw_ops.SparseSegmentMean,
               "SqrtN": tf.raw_ops.SparseSegmentSqrtN}
SUM_DTYPES = [tf.float32, tf.float64, tf.int32, tf.uint8, tf.int16, tf.int8, tf.int64,
              tf.bfloat16, tf.uint16, tf.float16, tf.uint32, tf.uint64]
FLOAT_DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16]


def segment_pair(kind, with_num):
    ours = getattr(ops, "tensorkit_sparse_segment_" + {"SqrtN": "sqrt_n"}.get(kind, kind.lower()) +
                   ("_with_num_segments" if with_num else ""))
    theirs = getattr(tf.raw_ops, "SparseSegment" + kind + ("WithNumSegments" if with_num else ""))
    return ours, theirs


def close(a, b, dtype):
    assert a.dtype == b.dtype and a.shape == b.shape
    if dtype.is_integer:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    else:
        tol = {tf.float16: 1e-2, tf.bfloat16: 5e-2}.get(dtype, 1e-5)
        np.testing.assert_allclose(tf.cast(a, tf.float64).numpy(), tf.cast(b, tf.float64).numpy(),
                                   rtol=tol, atol=tol)


TF_SEGMENT_CASES = [
    # (indices, segment_ids, num_segments): TensorFlow's kernel tests on data [10, 4]: plain,
    # holes in the ids, ids not starting at 0, repeated indices, more segments than ids.
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4], None),
    ([8, 3, 0, 9], [0, 0, 3, 3], None),
    ([8, 3, 0, 9], [1, 1, 2, 2], None),
    ([0, 0, 0, 0], [0, 0, 0, 1], None),
    ([0, 1, 2, 3], [0, 0, 1, 1], 5),
    ([], [], 3),
    ([], [], None),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["Sum", "Mean", "SqrtN"])
@pytest.mark.parametrize("case", range(len(TF_SEGMENT_CASES)))
def test_segment_tensorflow_cases(mode, kind, case):
    indices, ids, num = TF_SEGMENT_CASES[case]
    data = tf.constant(np.arange(40, dtype=np.float32).reshape(10, 4))
    ours, theirs = segment_pair(kind, num is not None)
    args = dict(data=data, indices=tf.constant(indices, tf.int32),
                segment_ids=tf.constant(ids, tf.int32))
    if num is not None:
        args["num_segments"] = tf.constant(num, tf.int32)
    a = run(lambda **t: ours(**t), mode, **args)
    b = run(lambda **t: theirs(**t), mode, **args)
    close(a, b, tf.float32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, dtype", [("Sum", d) for d in SUM_DTYPES] +
                         [(k, d) for k in ["Mean", "SqrtN"] for d in FLOAT_DTYPES],
                         ids=lambda x: x if isinstance(x, str) else x.name)
@pytest.mark.parametrize("with_num", [False, True])
def test_segment_random(mode, kind, dtype, with_num):
    rng = np.random.default_rng(len(dtype.name) + 7 * len(kind))
    n, k, width = 50, 120, 5
    data = (tf.cast(tf.constant(rng.integers(-9, 9, (n, width))), dtype) if dtype.is_integer
            else tf.cast(tf.constant(rng.standard_normal((n, width))), dtype))
    for tidx in [tf.int32, tf.int64]:
        ids = np.sort(rng.integers(0, 30, k))
        args = dict(data=data, indices=tf.constant(rng.integers(0, n, k), tidx),
                    segment_ids=tf.constant(ids, tf.int64 if tidx == tf.int32 else tf.int32))
        if with_num:
            args["num_segments"] = tf.constant(int(ids[-1]) + 4, tidx)
        ours, theirs = segment_pair(kind, with_num)
        close(run(lambda **t: ours(**t), mode, **args),
              run(lambda **t: theirs(**t), mode, **args), dtype)


# Indices past 2^32: [0, 2^32 + 1, 1] reads row 1 if they are cut to 32 bits, 2^40 row 0, and
# 2^32 + 100000 would be refused as 100000.
WIDE_INDICES = [[0, 2**32 + 1, 1], [0, 2**40, 1], [0, 2**32 + 100000, 1], [2**63 - 1, 0, 1]]


def wide_index_forms(idx):
    """The ways a user passes int64 indices and ids: NumPy arrays (with NumPy, list or tensor
    ids), Python lists, int64 tensors."""
    ids = [0, 1, 2]
    return [("numpy", np.array(idx, np.int64), np.array(ids)),
            ("numpy, list ids", np.array(idx, np.int64), ids),
            ("numpy, int32 tensor ids", np.array(idx, np.int64), tf.constant(ids, tf.int32)),
            ("list", idx, ids), ("int64 tensor", tf.constant(idx, tf.int64), ids),
            ("int64 tensors", tf.constant(idx, tf.int64), tf.constant(ids, tf.int64))]


def call_segment_op(kind, with_num, data, indices, ids):
    ours, _ = segment_pair(kind, with_num)
    extra = dict(num_segments=3) if with_num else {}
    return ours(data=data, indices=indices, segment_ids=ids, **extra)


@pytest.mark.parametrize("kind", ["Sum", "Mean", "SqrtN"])
@pytest.mark.parametrize("with_num", [False, True])
def test_segment_int64_indices_are_refused_on_every_call(kind, with_num):
    """TensorFlow's eager fast path cast NumPy indices to the attrs' default int32 from the
    second call of a process on (Note [index attrs default to int64] in sparse_segment_ops.cc):
    every call, after calls of other dtype combinations, must refuse the full value."""
    data = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    for rep in range(3):
        for dtype, tidx, tseg in [(tf.float32, tf.int32, tf.int32),
                                  (tf.float64, tf.int64, tf.int32),
                                  (tf.float32, tf.int32, tf.int64)]:
            ok = call_segment_op(kind, with_num, tf.cast(data, dtype), tf.constant([3, 0], tidx),
                                 tf.constant([0, 2], tseg))
            assert ok.shape[0] == 3 and ok.dtype == dtype
        for idx in WIDE_INDICES:
            for form, indices, ids in wide_index_forms(idx):
                with pytest.raises(tf.errors.InvalidArgumentError) as e:
                    call_segment_op(kind, with_num, data, indices, ids)
                assert "= %d is outside [0, 4)" % max(idx) in str(e.value), (rep, form, idx)
        # The same NumPy indices within the rows work, and give TensorFlow's result.
        idx = np.array([3, 0, 2], np.int64)
        got = call_segment_op(kind, with_num, data, idx, np.array([0, 0, 2]))
        _, theirs = segment_pair(kind, with_num)
        extra = dict(num_segments=3) if with_num else {}
        want = theirs(data=data, indices=tf.constant(idx), segment_ids=tf.constant([0, 0, 2]),
                      **extra)
        close(got, want, tf.float32)


def test_segment_int64_tensor_indices_refused_as_tensorflow():
    """With int64 tensors TensorFlow's own op refuses too, on every call."""
    data = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    for idx in WIDE_INDICES:
        args = dict(data=data, indices=tf.constant(idx, tf.int64),
                    segment_ids=tf.constant([0, 1, 2], tf.int64))
        for _ in range(2):
            with pytest.raises(tf.errors.InvalidArgumentError):
                tf.raw_ops.SparseSegmentSum(**args)
            refused(lambda: ops.tensorkit_sparse_segment_sum(**args), str(max(idx)))


def test_segment_num_segments_past_int32_is_not_cut():
    """A Python int num_segments of 2^32 + 3 was cast to int32 (3 segments) by the same fast
    path. Rows of 0 elements keep the output empty however many there are."""
    data = tf.zeros([2, 0])
    for _ in range(3):
        got = ops.tensorkit_sparse_segment_sum_with_num_segments(
            data=data, indices=tf.constant([0, 1]), segment_ids=tf.constant([0, 1]),
            num_segments=2**32 + 3)
        assert got.shape == (2**32 + 3, 0)


def test_segment_index_attrs_default_to_int64():
    from tensorflow.python.framework import op_def_registry
    for kind in ["Sum", "Mean", "SqrtN"]:
        for suffix in ["", "WithNumSegments"]:
            op_def = op_def_registry.get("TensorkitSparseSegment" + kind + suffix)
            defaults = {a.name: a.default_value.type for a in op_def.attr
                        if a.name.startswith("T") and a.name != "T"}
            assert defaults and set(defaults.values()) == {tf.int64.as_datatype_enum}, defaults


SEGMENT_FIRST_CALL_SCRIPT = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
ops = tf.load_op_library(sys.argv[1])
data = np.arange(4, dtype=np.float32).reshape(4, 1)
if sys.argv[2] == "interleaved":
    ops.tensorkit_sparse_segment_sum(data=data, indices=np.array([0, 1], np.int32),
                                     segment_ids=np.array([0, 0], np.int32))
    ops.tensorkit_sparse_segment_mean(data=data.astype(np.float64), indices=[0, 3],
                                      segment_ids=tf.constant([0, 1], tf.int64))
for big in [2**32 + 1, 2**40, 2**32 + 100000]:
    for call in range(3):
        try:
            out = ops.tensorkit_sparse_segment_sum(data=data, indices=np.array([0, big, 1]),
                                                   segment_ids=np.array([0, 1, 2]))
            print("accepted", big, call, out.numpy().tolist())
        except tf.errors.InvalidArgumentError as e:
            print("refused", big, call, "ok" if "= %d is outside" % big in str(e) else str(e))
"""


@pytest.mark.parametrize("order", ["first", "interleaved"])
def test_segment_numpy_indices_first_and_later_calls_of_a_process(order, tmp_path):
    """The order the client saw, in a fresh process: the first call refused, the later ones
    accepted (cut to 32 bits). Every call must now refuse, naming the full value."""
    import subprocess
    script = tmp_path / "segment_calls.py"
    script.write_text(SEGMENT_FIRST_CALL_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([sys.executable, str(script), LIB, order], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(("refused", "accepted"))]
    assert len(lines) == 9, out.stdout
    assert all(ln.startswith("refused") and ln.endswith(" ok") for ln in lines), out.stdout


def test_segment_bad_inputs():
    data = tf.constant(np.arange(40, dtype=np.float32).reshape(10, 4))
    s = ops.tensorkit_sparse_segment_sum
    sn = ops.tensorkit_sparse_segment_sum_with_num_segments

    def call(indices, ids):
        return s(data=data, indices=tf.constant(indices, tf.int32),
                 segment_ids=tf.constant(ids, tf.int32))
    refused(lambda: call([0, -1], [0, 0]), "-1")
    refused(lambda: call([0, 10], [0, 0]), "10")
    refused(lambda: call([0, 1, 2, 3], [0, 2, 2, 1]), "sort|increas|order")
    refused(lambda: call([0, 1, 2, 3], [-1, 0, 1, 1]), "-1")
    refused(lambda: call([0, 1, 2, 3], [0, 0, 0, -2]), "-2|sort|increas|order")
    refused(lambda: call([0, 1, 2], [0, 0]), "same size")
    refused(lambda: sn(data=data, indices=tf.constant([0, 1], tf.int32),
                       segment_ids=tf.constant([0, 3], tf.int32),
                       num_segments=tf.constant(2, tf.int32)), "3")
    refused(lambda: sn(data=data, indices=tf.constant([0, 1], tf.int32),
                       segment_ids=tf.constant([0, 0], tf.int32),
                       num_segments=tf.constant(-1, tf.int32)), "num_segments")
    refused(lambda: s(data=tf.constant(1.0), indices=tf.constant([0], tf.int32),
                      segment_ids=tf.constant([0], tf.int32)), "axis")
