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


FEATURE_OPS = ["SparseReshape", "SparseSlice", "SparseSplit"]


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
    start = [int(rng.integers(0, d + 1)) for d in shape]
    size = [int(rng.integers(0, d + 2)) for d in shape]
    both(ops.tensorkit_sparse_slice, tf.raw_ops.SparseSlice, mode, indices=idx,
         values=random_values(rng, dtype, idx.shape[0]), shape=i64(shape), start=i64(start),
         size=i64(size))


def test_slice_bad_inputs():
    s = ops.tensorkit_sparse_slice
    args = dict(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, 6]))
    refused(lambda: s(start=i64([0]), size=i64([1, 1]), **args), "start")
    refused(lambda: s(start=i64([0, 0]), size=i64([1, 1, 1]), **args), "size")
    refused(lambda: s(start=i64([-1, 0]), size=i64([1, 1]), **args), "non-negative")
    refused(lambda: s(start=i64([0, 0]), size=i64([1, -1]), **args), "non-negative")
    refused(lambda: s(indices=SLICE_IDX, values=SLICE_VALS[:3], shape=i64([4, 6]),
                      start=i64([0, 0]), size=i64([1, 1])), "disagree")
    refused(lambda: s(indices=SLICE_IDX, values=SLICE_VALS, shape=i64([4, -6]),
                      start=i64([0, 0]), size=i64([1, 1])), "negative")


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
    # An index past the split axis would pick a piece that does not exist (a heap overflow in
    # TensorFlow before its fix).
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=2, indices=i64([[9, 0]]),
                       values=SLICE_VALS[:1], shape=i64([4, 6])), "out of bounds")
    refused(lambda: sp(split_dim=tf.constant(0, tf.int64), num_split=2, indices=i64([[-1, 0]]),
                       values=SLICE_VALS[:1], shape=i64([4, 6])), "out of bounds")
