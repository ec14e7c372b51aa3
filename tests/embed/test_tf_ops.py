"""tensorkit's TensorFlow ops against the tf.raw_ops they replace, on the same random inputs.

Every op runs eagerly and inside tf.function, over every dtype it registers, ranks 1 to 5 and
nnz = 0; element moves must be bit-equal, floating sums equal within tolerance. Then each class
of bad input, and the properties of the library itself (zlib kept private, thread budget, the
sparse DLPack exchange with NumPy and TensorFlow).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from tf_env import LIB, cpu_kernels, ops, tensorkit_tf, tf  # noqa: E402,F401


def tf_dtypes(op):
    """The value dtypes T of TensorFlow's own CPU kernels of `op` (read from its kernel registry,
    so the tests below cover exactly what TensorFlow 2.21 registers)."""
    return sorted({tf.as_dtype(dict(k)["T"]) for k in cpu_kernels(op)}, key=lambda d: d.name)


# Every dtype TensorFlow registers: resource and variant handles for SparseReorder and
# SparseConcat, the 8- and 16-bit quantized ones for SparseToDense.
REORDER, TO_DENSE, CONCAT, MATMUL, SUMMABLE = (
    tf_dtypes(op) for op in ["SparseReorder", "SparseToDense", "SparseConcat",
                             "SparseTensorDenseMatMul", "SparseReduceSum"])
HANDLES = (tf.resource, tf.variant)
QUANTIZED = {tf.qint8: np.int8, tf.quint8: np.uint8, tf.qint16: np.int16, tf.quint16: np.uint16}
MODES = ["eager", "function"]


def run(fn, mode, *args, **kwargs):
    """fn(*args, **kwargs) eagerly or traced by tf.function (tensors become graph inputs)."""
    return (tf.function(fn) if mode == "function" else fn)(*args, **kwargs)


VARIABLES = []  # the variables whose handles resource values hold, alive for the whole run


def values(rng, dtype, n, small=False):
    """n random values of dtype (small: integers and floats that sum exactly). Resource values
    are handles of float32 variables and variant values TensorLists of float32, each holding a
    random number, so that decode() can tell them apart."""
    if dtype in HANDLES:
        numbers = rng.integers(0, 1000, max(n, 1)).astype(np.float32)
        if dtype == tf.resource:
            VARIABLES.extend(tf.Variable(x) for x in numbers)
            items = [v.handle for v in VARIABLES[len(VARIABLES) - len(numbers):]]
        else:
            items = [tf.raw_ops.TensorListFromTensor(tensor=tf.fill([int(x) % 3 + 1], x),
                                                     element_shape=tf.constant([], tf.int32))
                     for x in numbers]
        return tf.stack(items)[:n]
    if dtype == tf.string:
        return tf.constant([("s%d" % v).encode() * (v % 3) for v in rng.integers(0, 50, n)],
                           tf.string)
    if dtype == tf.bool:
        return tf.constant(rng.integers(0, 2, n).astype(bool))
    if dtype in QUANTIZED:
        base = np.iinfo(QUANTIZED[dtype])
        return tf.constant(rng.integers(base.min, base.max, n, endpoint=True).astype(
            dtype.as_numpy_dtype), dtype)
    if dtype.is_complex:
        re, im = rng.standard_normal(n), rng.standard_normal(n)
        return tf.cast(tf.complex(re, im), dtype)
    if dtype.is_integer:
        lo, hi = (max(-4, dtype.min), 4) if small else (dtype.min, dtype.max)
        return tf.constant(rng.integers(lo, hi, n, endpoint=True, dtype=dtype.as_numpy_dtype))
    return tf.cast(rng.standard_normal(n) * (1 if small else 100), dtype)


def scalar(rng, dtype):
    """One random value of dtype as a scalar tensor."""
    return tf.reshape(values(rng, dtype, 1), [])


def decode(t):
    """What a vector of handles holds: each variable's value, each TensorList's elements."""
    if t.dtype == tf.resource:
        return [float(tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32)) for h in
                tf.unstack(t, num=t.shape[0])]
    return [tf.raw_ops.TensorListStack(input_handle=h, element_dtype=tf.float32,
                                       element_shape=tf.constant([], tf.int32)).numpy().tolist()
            for h in tf.unstack(t, num=t.shape[0])]


def entries(rng, shape, nnz, unique=True, shuffled=True):
    """int64 [nnz, rank] indices inside shape: distinct when unique, in random order when
    shuffled, else sorted."""
    size = int(np.prod(shape))
    if unique:
        nnz = min(nnz, size)
        flat = rng.choice(size, nnz, replace=False) if size else np.zeros(0, np.int64)
    else:
        flat = rng.integers(0, max(size, 1), nnz) if size else np.zeros(0, np.int64)
    if not shuffled:
        flat = np.sort(flat)
    idx = np.stack(np.unravel_index(flat, shape), axis=1) if len(shape) else np.zeros((nnz, 0))
    return tf.constant(idx.reshape(len(flat), len(shape)).astype(np.int64))


def random_shape(rng, rank, hi=6):
    return [int(d) for d in rng.integers(1, hi, rank)]


def bits(t):
    """Tensor contents for exact comparison: bytes per element, strings as a list."""
    if t.dtype in HANDLES:
        return t.shape, decode(t)
    a = t.numpy()
    if t.dtype == tf.string:
        return a.shape, a.tolist()
    return a.shape, np.ascontiguousarray(a).view(np.uint8).tobytes()


def assert_same(ours, theirs):
    assert ours.dtype == theirs.dtype
    assert bits(ours) == bits(theirs)


def assert_close(ours, theirs, dtype):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if dtype.is_integer:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        return
    tol = {tf.float16: 2e-2, tf.bfloat16: 1e-1}.get(dtype, 1e-5)
    a = tf.cast(ours, tf.complex128 if dtype.is_complex else tf.float64).numpy()
    b = tf.cast(theirs, tf.complex128 if dtype.is_complex else tf.float64).numpy()
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


# --- SparseReorder ----------------------------------------------------------------------------


OURS = {"SparseReorder": "tensorkit_sparse_reorder", "SparseToDense": "tensorkit_sparse_to_dense",
        "SparseConcat": "tensorkit_sparse_concat",
        "SparseTensorDenseMatMul": "tensorkit_sparse_tensor_dense_mat_mul",
        "SparseReduceSum": "tensorkit_sparse_reduce_sum"}


# --- dtypes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OURS))
def test_dtypes_are_tensorflows(name):
    # Each op registers exactly the (T, Tindices) combinations of TensorFlow's own CPU kernels;
    # the every-dtype tests below then run each of those dtypes against TensorFlow.
    theirs = cpu_kernels(name)
    assert theirs
    assert cpu_kernels("Tensorkit" + name) == theirs


VALUES = {"SparseReorder": "input_values", "SparseConcat": "values"}


def both(name, mode, attrs, **inputs):
    """(ours, TensorFlow's): the Tensorkit op and tf.raw_ops.<name> on the same inputs (graph
    inputs under tf.function) and attributes."""
    def call(op, **given):
        return run(lambda **t: op(**t, **attrs), mode, **given)

    key = VALUES.get(name)
    vals = inputs.get(key)
    parts = vals if isinstance(vals, list) else [vals]
    if key is not None and parts[0].dtype == tf.resource and min(p.shape[0] for p in parts) == 0:
        # TensorFlow places an op by its resource inputs' handles and rejects an empty vector of
        # them before any kernel runs, its own included.
        for op in [getattr(ops, OURS[name]), getattr(tf.raw_ops, name)]:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Empty resource handle"):
                call(op, **inputs)
        return None, None
    ours = call(getattr(ops, OURS[name]), **inputs)
    if key is None or parts[0].dtype != tf.resource:
        return ours, call(getattr(tf.raw_ops, name), **inputs)
    # TensorFlow's own kernels abort the process on unsorted resource values (their deep copy
    # checks for variant): its permutation of entry positions, applied with tf.gather, stands
    # in for its result.
    sizes = [int(p.shape[0]) for p in parts]
    starts = np.cumsum([0] + sizes)
    positions = [tf.range(b, b + n, dtype=tf.int64) for b, n in zip(starts, sizes)]
    theirs = call(getattr(tf.raw_ops, name),
                  **{**inputs, key: positions if isinstance(vals, list) else positions[0]})
    held = tf.stack([h for p in parts for h in tf.unstack(p, num=p.shape[0])])  # no resource concat
    return ours, theirs._replace(output_values=tf.gather(held, theirs.output_values))


def check_reorder(rng, shape, nnz, dtype, mode, shuffled=True):
    idx = entries(rng, shape, nnz, shuffled=shuffled)
    ours, theirs = both("SparseReorder", mode, {}, input_indices=idx,
                        input_values=values(rng, dtype, idx.shape[0]),
                        input_shape=tf.constant(shape, tf.int64))
    if ours is not None:
        assert_same(ours.output_indices, theirs.output_indices)
        assert_same(ours.output_values, theirs.output_values)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", REORDER, ids=lambda d: d.name)
def test_reorder_every_dtype(dtype, mode):
    rng = np.random.default_rng(1)
    for rank, nnz in [(3, 200), (2, 0), (1, 7)]:
        check_reorder(rng, random_shape(rng, rank, 12), nnz, dtype, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_reorder_ranks_sorted_and_big(rank, mode):
    rng = np.random.default_rng(rank)
    shape = random_shape(rng, rank, 30 if rank < 4 else 9)
    for dtype, shuffled in [(tf.float32, True), (tf.string, True), (tf.int64, False)]:
        check_reorder(rng, shape, 3000, dtype, mode, shuffled)


# --- SparseToDense ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", TO_DENSE, ids=lambda d: d.name)
def test_to_dense_every_dtype(dtype, mode):
    rng = np.random.default_rng(2)
    for rank, nnz, tindices in [(3, 60, tf.int64), (2, 0, tf.int32), (1, 5, tf.int32)]:
        shape = random_shape(rng, rank, 8)
        idx = entries(rng, shape, nnz, shuffled=False)  # validate_indices needs sorted entries
        vals = values(rng, dtype, idx.shape[0])
        default = scalar(rng, dtype)
        for validate in [True, False]:
            ours, theirs = both("SparseToDense", mode, {"validate_indices": validate},
                                sparse_indices=tf.cast(idx, tindices),
                                output_shape=tf.constant(shape, tindices), sparse_values=vals,
                                default_value=default)
            assert_same(ours, theirs)
        # A scalar value for every entry.
        ours, theirs = both("SparseToDense", mode, {}, sparse_indices=tf.cast(idx, tindices),
                            output_shape=tf.constant(shape, tindices),
                            sparse_values=scalar(rng, dtype), default_value=default)
        assert_same(ours, theirs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_to_dense_ranks_unsorted_repeats(rank, mode):
    rng = np.random.default_rng(10 + rank)
    shape = random_shape(rng, rank, 7)
    # Unsorted with repeats: without validation both take the last of repeated entries.
    idx = entries(rng, shape, 300, unique=False)
    vals = values(rng, tf.float64, idx.shape[0])
    ours, theirs = both("SparseToDense", mode, {"validate_indices": False}, sparse_indices=idx,
                        output_shape=tf.constant(shape, tf.int64), sparse_values=vals,
                        default_value=tf.constant(-1.0, tf.float64))
    assert_same(ours, theirs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [9, 12])
def test_to_dense_ranks_past_eight(rank, mode):
    # Past tensorkit's 8 dense axes the leading axes merge; TensorFlow has no such limit.
    rng = np.random.default_rng(40 + rank)
    shape = random_shape(rng, rank, 4)
    idx = entries(rng, shape, 200, shuffled=False)
    for dtype in [tf.float32, tf.string]:
        vals = values(rng, dtype, idx.shape[0])
        for validate in [True, False]:
            ours, theirs = both("SparseToDense", mode, {"validate_indices": validate},
                                sparse_indices=idx, output_shape=tf.constant(shape, I64),
                                sparse_values=vals, default_value=scalar(rng, dtype))
            assert_same(ours, theirs)
    # A coordinate past its own dim that the merged axis would still hold is an error.
    bad = np.zeros((1, rank), np.int64)
    bad[0, 1] = shape[1]
    shape[0] = 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        run(lambda i: ops.tensorkit_sparse_to_dense(sparse_indices=i, output_shape=shape,
                                                    sparse_values=[1.0], default_value=0.0,
                                                    validate_indices=False), mode,
            tf.constant(bad))


@pytest.mark.parametrize("mode", MODES)
def test_validate_indices_names_tensorflows_entry(mode):
    # With validate_indices both judge entries in sequence (bounds, then order against the
    # previous one) and fail with InvalidArgument on the same first bad entry.
    for idx in [[[2, 0], [1, 0]], [[1, 1], [1, 1]], [[0, 0], [5, 0]], [[0, 0], [-1, 0]],
                [[2, 0], [1, 0], [9, 9]], [[0, 0], [9, 9], [0, 0]], [[0, 1], [0, 2], [0, 2]]]:
        i = tf.constant(idx, I64)
        kwargs = dict(sparse_indices=i, output_shape=tf.constant([3, 3], I64),
                      sparse_values=tf.ones([len(idx)]), default_value=0.0)
        found = []
        for op in [ops.tensorkit_sparse_to_dense, tf.raw_ops.SparseToDense]:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                run(lambda **t: op(**t, validate_indices=True), mode, **kwargs)
            found.append(e.value.message)
        ours, theirs = found
        entry = int(theirs.split("indices[")[1].split("]")[0])
        assert f"entry {entry} at" in ours, (idx, ours, theirs)


@pytest.mark.parametrize("mode", MODES)
def test_to_dense_vector_and_scalar_indices(mode):
    for idx, shape in [(tf.constant([4, 1, 0], tf.int64), [6]),
                       (tf.constant(3, tf.int32), [5]),
                       (tf.constant([1, 4], tf.int32), [7])]:
        n = int(tf.size(idx))
        vals = tf.range(1, n + 1, dtype=tf.float32) if idx.shape.rank == 1 else tf.constant(7.0)
        validate = not (idx.shape.rank == 1 and n == 3)  # [4 1 0] is unsorted
        ours, theirs = both("SparseToDense", mode, {"validate_indices": validate},
                            sparse_indices=idx, output_shape=tf.constant(shape, idx.dtype),
                            sparse_values=vals, default_value=tf.constant(0.5))
        assert_same(ours, theirs)


# --- SparseConcat -----------------------------------------------------------------------------


def concat_inputs(rng, dtype, rank, n_inputs, dim, nnz):
    base = random_shape(rng, rank, 6)
    inds, vals, shapes = [], [], []
    for k in range(n_inputs):
        shape = list(base)
        shape[dim] = int(rng.integers(1, 6))
        idx = entries(rng, shape, 0 if k == 1 else nnz)  # one input with nnz = 0
        inds.append(idx)
        vals.append(values(rng, dtype, idx.shape[0]))
        shapes.append(tf.constant(shape, tf.int64))
    return inds, vals, shapes


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", CONCAT, ids=lambda d: d.name)
def test_concat_every_dtype(dtype, mode):
    rng = np.random.default_rng(3)
    for rank, n_inputs, dim in [(3, 3, 1), (2, 2, -1), (1, 2, 0)]:
        inds, vals, shapes = concat_inputs(rng, dtype, rank, n_inputs, dim % rank, 40)
        ours, theirs = both("SparseConcat", mode, {"concat_dim": dim}, indices=inds,
                            values=vals, shapes=shapes)
        for o, t in zip(ours or [], theirs or []):
            assert_same(o, t)
        if dtype == tf.resource:  # the same without the empty input, which TensorFlow rejects
            ours, theirs = both("SparseConcat", mode, {"concat_dim": dim},
                                indices=inds[:1] + inds[2:] + inds[:1],
                                values=vals[:1] + vals[2:] + vals[:1],
                                shapes=shapes[:1] + shapes[2:] + shapes[:1])
            for o, t in zip(ours, theirs):
                assert_same(o, t)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_concat_ranks_and_axes(rank, mode):
    rng = np.random.default_rng(20 + rank)
    for dim in {0, rank - 1, -1, -rank}:
        inds, vals, shapes = concat_inputs(rng, tf.float32, rank, 3, dim % rank, 200)
        ours, theirs = both("SparseConcat", mode, {"concat_dim": dim}, indices=inds,
                            values=vals, shapes=shapes)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
    # Every input empty.
    inds, vals, shapes = concat_inputs(rng, tf.string, rank, 2, 0, 0)
    ours, theirs = both("SparseConcat", mode, {"concat_dim": 0}, indices=inds, values=vals,
                        shapes=shapes)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


# --- SparseTensorDenseMatMul ------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", MATMUL, ids=lambda d: d.name)
def test_matmul_every_dtype_and_adjoint(dtype, mode):
    rng = np.random.default_rng(4)
    m, k, n = 17, 23, 40  # n >= 32 takes TensorFlow's vectorised path, n < 32 the other
    for nnz, tindices, adj_a, adj_b, cols in [(90, tf.int64, False, False, n),
                                              (90, tf.int32, True, False, 5),
                                              (90, tf.int64, False, True, n),
                                              (90, tf.int32, True, True, 3),
                                              (0, tf.int64, False, False, n)]:
        shape = [k, m] if adj_a else [m, k]
        idx = entries(rng, shape, nnz)
        vals = values(rng, dtype, idx.shape[0], small=True)
        b = tf.reshape(values(rng, dtype, k * cols, small=True), [cols, k] if adj_b else [k, cols])
        ours, theirs = both("SparseTensorDenseMatMul", mode,
                            {"adjoint_a": adj_a, "adjoint_b": adj_b},
                            a_indices=tf.cast(idx, tindices), a_values=vals,
                            a_shape=tf.constant(shape, tf.int64), b=b)
        assert_close(ours, theirs, dtype)


# --- SparseReduceSum --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", SUMMABLE, ids=lambda d: d.name)
def test_reduce_sum_every_dtype(dtype, mode):
    rng = np.random.default_rng(5)
    shape = [5, 7, 4]
    for axes, keep, nnz in [([1], False, 80), ([0, -1], True, 80), ([], False, 80),
                            (2, False, 80), ([0, 1, 2], False, 80), ([1, 1], True, 0)]:
        idx = entries(rng, shape, nnz, unique=False)  # repeats are summed by both
        vals = values(rng, dtype, idx.shape[0], small=not dtype.is_integer or dtype.size < 4)
        ours, theirs = both("SparseReduceSum", mode, {"keep_dims": keep}, input_indices=idx,
                            input_values=vals, input_shape=tf.constant(shape, tf.int64),
                            reduction_axes=tf.constant(axes, tf.int32))
        assert_close(ours, theirs, dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 9, 12])
def test_reduce_sum_ranks(rank, mode):
    # Past tensorkit's 8 dense axes the kept axes merge into one; TensorFlow has no such limit,
    # so ranks 9 and 12 also reduce fixed axis sets that keep more than 8 axes.
    rng = np.random.default_rng(30 + rank)
    shape = random_shape(rng, rank, 7 if rank < 6 else 4)
    idx = entries(rng, shape, 400, unique=False)
    vals = values(rng, tf.float64, idx.shape[0])
    cases = [([int(a) for a in rng.choice(np.arange(-rank, rank), int(rng.integers(0, rank + 1)))],
              bool(rng.integers(0, 2))) for _ in range(3)]
    if rank > 8:
        cases += [(axes, keep) for axes in [[1], [0, -1], [], list(range(rank - 1)),
                                            [rank - 2, 3, 3]] for keep in [False, True]]
    for axes, keep in cases:
        ours, theirs = both("SparseReduceSum", mode, {"keep_dims": keep},
                            input_indices=idx, input_values=vals,
                            input_shape=tf.constant(shape, tf.int64),
                            reduction_axes=tf.constant(axes, tf.int32))
        assert_close(ours, theirs, tf.float64)
    if rank < 9:
        return
    cvals = values(rng, tf.complex64, idx.shape[0])
    ours, theirs = both("SparseReduceSum", mode, {"keep_dims": True}, input_indices=idx,
                        input_values=cvals, input_shape=tf.constant(shape, I64),
                        reduction_axes=tf.constant([2], tf.int32))
    assert_close(ours, theirs, tf.complex64)
    bad = np.zeros((1, rank), np.int64)
    bad[0, 1] = shape[1]  # inside the merged kept axis, outside its own dim
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        run(lambda i: ops.tensorkit_sparse_reduce_sum(
            input_indices=i, input_values=[1.0], input_shape=[3] + shape[1:],
            reduction_axes=[rank - 1]), mode, tf.constant(bad))


# --- bad input --------------------------------------------------------------------------------

I64 = tf.int64


def raises(mode, fn, *args, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        run(fn, mode, *args)


@pytest.mark.parametrize("mode", MODES)
def test_out_of_range_index(mode):
    bad = tf.constant([[0, 1], [5, 0]], I64)  # row 5 of a [2 2] tensor
    v2 = tf.constant([1.0, 2.0])
    shape = tf.constant([2, 2], I64)
    # TensorFlow's own SparseReorder, SparseConcat and SparseReduceSum accept this silently.
    tf.raw_ops.SparseReorder(input_indices=bad, input_values=v2, input_shape=shape)
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reorder(
        input_indices=i, input_values=v, input_shape=s), bad, v2, shape,
        match=r"TensorkitSparseReorder: entry 1 at \[5 0\] is out of bounds")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_to_dense(
        sparse_indices=i, output_shape=s, sparse_values=v, default_value=0.0,
        validate_indices=False), bad, v2, shape, match=r"\[5 0\].*out of bounds")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[s, s], concat_dim=1), bad, v2, shape,
        match=r"TensorkitSparseConcat input 0.*\[5 0\]")
    # Past its own input's dim on the concatenation axis but inside the joined shape.
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[s, s], concat_dim=0), bad, v2, shape,
        match=r"out of bounds")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_tensor_dense_mat_mul(
        a_indices=i, a_values=v, a_shape=s, b=tf.ones([2, 3])), bad, v2, shape,
        match=r"entry 1 at \[5 0\] is out of bounds for shape \[2 2\]")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reduce_sum(
        input_indices=i, input_values=v, input_shape=s, reduction_axes=[0]), bad, v2, shape,
        match=r"\[5 0\]")
    negative = tf.constant([[0, -1]], I64)
    raises(mode, lambda i: ops.tensorkit_sparse_reorder(
        input_indices=i, input_values=[1.0], input_shape=[2, 2]), negative, match="out of bounds")


@pytest.mark.parametrize("mode", MODES)
def test_volumes_past_int64_are_refused(mode):
    # TensorFlow's kernel tests: testSparseConcatInputVolumeOverflow and SparseReduceSum's
    # testIntegerOverflow. TensorFlow refuses the first and the third; on the second (inputs
    # that fit, a joined shape that does not) its own SparseConcat aborts the process.
    d = (2**63 - 1) // 11
    one = tf.constant([[0, 0, 0]], I64)
    v = tf.constant([1.0])
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.InternalError)):
        tf.raw_ops.SparseConcat(indices=[one, one], values=[v, v],
                                shapes=[tf.constant([1, 1, d], I64), tf.constant([1, d, d], I64)],
                                concat_dim=1)
    raises(mode, lambda i: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[[1, 1, d], [1, d, d]], concat_dim=1), one,
        match=r"shapes\[i\] \[1 %d %d\] has more elements than int64" % (d, d))
    raises(mode, lambda i: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[[1, 10, d], [1, 2, d]], concat_dim=1), one,
        match=r"concatenated shape \[1 12 %d\] has more elements than int64" % d)
    # The largest volume that fits is still taken: [1, 1, d] and [1, 10, d] join to [1, 11, d].
    joined = run(lambda i: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[[1, 1, d], [1, 10, d]], concat_dim=1), mode, one)
    assert joined[2].numpy().tolist() == [1, 11, d]
    two = tf.constant([[0, 0]], I64)
    big = tf.constant([2**32, 2**31], I64)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.SparseReduceSum(input_indices=two, input_values=v, input_shape=big,
                                   reduction_axes=[0])
    raises(mode, lambda i, s: ops.tensorkit_sparse_reduce_sum(
        input_indices=i, input_values=v, input_shape=s, reduction_axes=[0]), two, big,
        match=r"input_shape \[4294967296 2147483648\] has more elements than int64")
    # Sorting needs no volume: SparseReorder takes that shape, as TensorFlow's does.
    ours = run(lambda i, s: ops.tensorkit_sparse_reorder(
        input_indices=i, input_values=v, input_shape=s), mode, two, big)
    assert ours[0].numpy().tolist() == [[0, 0]]


def test_shape_functions_take_overflowing_constant_shapes_and_the_kernels_refuse():
    # Traced with constant shapes, so that each op's shape function sees the values: 2^63 (one
    # past int64), 2^64 + 2 (wraps to 2 in unchecked arithmetic) and a dim of 2^62 rows. Graph
    # construction must succeed or fail cleanly, and running must be an error, never a crash or
    # an attempt to allocate a wrapped size.
    idx = tf.constant([[0, 0]], I64)
    v = tf.constant([1.0])
    wraps = [3, 6148914691236517206]
    for shape in ([2**32, 2**31], wraps):
        with pytest.raises(tf.errors.InvalidArgumentError, match="more elements than int64"):
            tf.function(lambda: ops.tensorkit_sparse_to_dense(
                sparse_indices=idx, output_shape=tf.constant(shape, I64), sparse_values=v,
                default_value=0.0))()
        with pytest.raises(tf.errors.InvalidArgumentError, match="more elements than int64"):
            tf.function(lambda: ops.tensorkit_sparse_reshape(
                input_indices=idx, input_shape=tf.constant(shape, I64),
                new_shape=tf.constant([-1], I64)))()
    data = tf.ones([2, 4])
    seg = tf.constant([0, 1], tf.int32)
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.ResourceExhaustedError)):
        tf.function(lambda: ops.tensorkit_sparse_segment_sum_with_num_segments(
            data=data, indices=seg, segment_ids=seg, num_segments=tf.constant(2**62, I64)))()
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.ResourceExhaustedError)):
        tf.function(lambda: ops.tensorkit_sparse_fill_empty_rows(
            indices=idx, values=v, dense_shape=tf.constant([2**62, 4], I64),
            default_value=0.0))()


@pytest.mark.parametrize("mode", MODES)
def test_rank_mismatch(mode):
    idx = tf.constant([[0, 1], [1, 0]], I64)
    v2 = tf.constant([1.0, 2.0])
    shape3 = tf.constant([2, 2, 2], I64)
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reorder(
        input_indices=i, input_values=v, input_shape=s), idx, v2, shape3, match="disagree")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_to_dense(
        sparse_indices=i, output_shape=s, sparse_values=v, default_value=0.0), idx, v2, shape3,
        match="output_shape")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[s, [2, 2]], concat_dim=0), idx, v2, shape3,
        match="input 0")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_concat(
        indices=[i, tf.constant([[0, 0, 0]], I64)], values=[v, [1.0]], shapes=[[2, 2], s],
        concat_dim=0), idx, v2, shape3, match="rank")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_tensor_dense_mat_mul(
        a_indices=i, a_values=v, a_shape=s, b=tf.ones([2, 3])), idx, v2, shape3,
        match="2 elements")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reduce_sum(
        input_indices=i, input_values=v, input_shape=s, reduction_axes=[0]), idx, v2, shape3,
        match="input_indices")
    raises(mode, lambda i, v: ops.tensorkit_sparse_reduce_sum(
        input_indices=i, input_values=v, input_shape=[2, 2], reduction_axes=[2]), idx, v2,
        match="reduction axis 2")
    raises(mode, lambda i, v: ops.tensorkit_sparse_tensor_dense_mat_mul(
        a_indices=i, a_values=v, a_shape=[2, 2], b=tf.ones([3, 3])), idx, v2,
        match="inner dims 2 and 3")


@pytest.mark.parametrize("mode", MODES)
def test_wrong_lengths(mode):
    idx = tf.constant([[0, 1], [1, 0]], I64)
    v3 = tf.constant([1.0, 2.0, 3.0])
    shape = tf.constant([2, 2], I64)
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reorder(
        input_indices=i, input_values=v, input_shape=s), idx, v3, shape, match="disagree")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_to_dense(
        sparse_indices=i, output_shape=s, sparse_values=v, default_value=0.0), idx, v3, shape,
        match=r"sparse_values must be a scalar or a vector \[2\]")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[s, s], concat_dim=0), idx, v3, shape,
        match="input 0")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_tensor_dense_mat_mul(
        a_indices=i, a_values=v, a_shape=s, b=tf.ones([2, 3])), idx, v3, shape,
        match="a_indices must be")
    raises(mode, lambda i, v, s: ops.tensorkit_sparse_reduce_sum(
        input_indices=i, input_values=v, input_shape=s, reduction_axes=[0]), idx, v3, shape,
        match="input_values must be")
    if mode == "eager":  # a graph rejects the negative dim while tracing, before the kernel
        raises(mode, lambda i: ops.tensorkit_sparse_to_dense(
            sparse_indices=i, output_shape=[2, -2], sparse_values=1.0, default_value=0.0), idx,
            match="negative dim")


@pytest.mark.parametrize("mode", MODES)
def test_repeated_and_unsorted_index_with_validate_indices(mode):
    shape = tf.constant([3, 3], I64)
    v = tf.constant([1.0, 2.0])
    for idx, match in [([[1, 1], [1, 1]], r"entry 1 at \[1 1\]"),
                       ([[2, 0], [1, 0]], r"entry 1 at \[1 0\]")]:
        i = tf.constant(idx, I64)
        raises(mode, lambda i, v, s: ops.tensorkit_sparse_to_dense(
            sparse_indices=i, output_shape=s, sparse_values=v, default_value=0.0), i, v, shape,
            match="TensorkitSparseToDense|ValidateIndices")
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            ops.tensorkit_sparse_to_dense(sparse_indices=i, output_shape=shape, sparse_values=v,
                                          default_value=0.0)


@pytest.mark.parametrize("mode", MODES)
def test_mismatched_concat_shapes(mode):
    i = tf.constant([[0, 0]], I64)
    v = tf.constant([1.0])
    raises(mode, lambda i, v: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[[2, 3], [2, 4]], concat_dim=0), i, v,
        match="input 1")
    raises(mode, lambda i, v: ops.tensorkit_sparse_concat(
        indices=[i, i], values=[v, v], shapes=[[2, 3], [2, 3]], concat_dim=2), i, v,
        match="axis 2|concat")


def test_same_message_as_tensorkit():
    # The InvalidArgument status carries tensorkit's message unchanged (and nothing crashed).
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        ops.tensorkit_sparse_reorder(input_indices=tf.constant([[0, 9]], I64),
                                     input_values=[1.0], input_shape=[2, 2])
    assert ("TensorkitSparseReorder: entry 0 at [0 9] is out of bounds for shape [2 2] "
            "(axis 1: 9 >= 2)") in e.value.message


def test_valid_input_is_passed_through():
    # Sorted, unique and in bounds: the inputs are the outputs (TensorFlow's behaviour too).
    idx = tf.constant([[0, 0], [0, 1], [1, 1]], I64)
    v = tf.constant([1, 2, 3], tf.int32)
    out = ops.tensorkit_sparse_reorder(input_indices=idx, input_values=v, input_shape=[2, 2])
    assert_same(out.output_indices, idx)
    assert_same(out.output_values, v)


# --- the library ------------------------------------------------------------------------------


def test_read_sparse_inflates_with_its_own_zlib(tmp_path):
    # Deflated .npz members: the op library's own (static, local) zlib inflates them inside a
    # process where libtensorflow_framework exports another zlib.
    rng = np.random.default_rng(7)
    dense = (rng.random((30, 20)) < 0.1) * rng.standard_normal((30, 20))
    np.savez_compressed(tmp_path / "dense.npz", a=dense)
    row, col = np.nonzero(dense)
    np.savez_compressed(tmp_path / "coo.npz", row=row.astype(np.int32), col=col.astype(np.int32),
                        data=dense[row, col], shape=np.array([30, 20]), format=np.array(b"coo"))
    for name in ["dense.npz", "coo.npz"]:
        i, v, s = ops.tensorkit_read_sparse(path=str(tmp_path / name), dtype=tf.float64)
        np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.SparseTensor(i, v, s)), dense)
    with pytest.raises(tf.errors.InvalidArgumentError, match="missing.npz"):
        ops.tensorkit_read_sparse(path=str(tmp_path / "missing.npz"), dtype=tf.float32)
    (tmp_path / "bad.npz").write_bytes((tmp_path / "coo.npz").read_bytes()[:200])
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad.npz"):
        ops.tensorkit_read_sparse(path=str(tmp_path / "bad.npz"), dtype=tf.float32)


def test_zlib_stays_private():
    # libtensorflow_framework exports zlib; the op library must neither import zlib symbols
    # (they would bind to TensorFlow's copy) nor need libz.so: its own copy is static and local.
    undefined = subprocess.run(["nm", "-D", "--undefined-only", LIB], capture_output=True,
                               text=True, check=True).stdout.split()
    for sym in ["inflate", "inflateInit2_", "deflate", "deflateInit2_", "crc32"]:
        assert sym not in undefined
    needed = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True,
                            check=True).stdout
    assert "libz.so" not in needed
    local = subprocess.run(["nm", LIB], capture_output=True, text=True, check=True).stdout
    assert " t inflate\n" in local  # linked in, not exported
    exported = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True,
                              text=True, check=True).stdout
    assert "tensorkit" not in exported.replace("tensorkit_sparse_", "")  # only the C interface


THREADS_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import tensorflow as tf
    budget = int(sys.argv[2])
    tf.config.threading.set_intra_op_parallelism_threads(budget)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    ops = tf.load_op_library(sys.argv[1])
    rng = np.random.default_rng(0)
    idx = tf.constant(rng.integers(0, 1000, (2_000_000, 2)), tf.int64)
    vals = tf.ones([2_000_000])
    tasks = lambda: len(os.listdir("/proc/self/task"))
    ops.tensorkit_sparse_reorder(input_indices=idx[:10], input_values=vals[:10],
                                 input_shape=[1000, 1000])
    before = tasks()
    for _ in range(3):
        ops.tensorkit_sparse_reorder(input_indices=idx, input_values=vals,
                                     input_shape=[1000, 1000])
    print(tasks() - before)
""")


@pytest.mark.parametrize("budget", [1, 2])
def test_thread_budget_is_the_ops(budget):
    # Worker threads that tensorkit starts inside an op: at most the op's budget minus the
    # calling thread (TENSORKIT_NUM_THREADS unset, so the global limit would be every core).
    env = {k: v for k, v in os.environ.items() if k != "TENSORKIT_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", THREADS_SCRIPT, LIB, str(budget)], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert int(out.split()[-1]) <= budget - 1


# --- sparse DLPack ----------------------------------------------------------------------------


def test_sparse_dlpack_round_trip_with_numpy_is_zero_copy():
    rng = np.random.default_rng(6)
    idx = np.stack([rng.integers(0, 40, 500), rng.integers(0, 30, 500)], axis=1).astype(np.int64)
    vals = rng.standard_normal(500).astype(np.float32)
    st = tensorkit_tf.SparseTensor.from_dlpack(idx, vals, [40, 30])
    assert (st.rank, st.nnz) == (2, 500)
    i2, v2, shape, order = st.to_dlpack()
    assert (shape, order) == ([40, 30], [-1, -1])
    back_i, back_v = np.from_dlpack(i2), np.from_dlpack(v2)
    # The very same memory: NumPy -> tensorkit -> NumPy copied nothing.
    assert back_i.ctypes.data == idx.ctypes.data and back_v.ctypes.data == vals.ctypes.data
    np.testing.assert_array_equal(back_v, vals)
    # Reorder gives new tensorkit memory; exported, it stays alive after the handle is gone.
    st.reorder([1, 0])
    i3, v3, _, order = st.to_dlpack()
    assert order == [1, 0]
    del st
    si, sv = np.from_dlpack(i3), np.from_dlpack(v3)
    perm = np.lexsort((idx[:, 0], idx[:, 1]))  # stable: by axis 1, then axis 0
    np.testing.assert_array_equal(si, idx[perm])
    np.testing.assert_array_equal(sv, vals[perm])


def test_sparse_dlpack_with_tensorflow():
    idx = tf.constant([[1, 2], [0, 0], [1, 0]], I64)
    vals = tf.constant([3.0, 1.0, 2.0], tf.float64)
    st = tensorkit_tf.SparseTensor.from_dlpack(tf.experimental.dlpack.to_dlpack(idx),
                                               tf.experimental.dlpack.to_dlpack(vals), [2, 3])
    st.reorder([0, 1])
    i2, v2, shape, order = st.to_dlpack()
    ti = tf.experimental.dlpack.from_dlpack(i2.__dlpack__())
    tv = tf.experimental.dlpack.from_dlpack(v2.__dlpack__())
    ref = tf.sparse.reorder(tf.sparse.SparseTensor(idx, vals, [2, 3]))
    assert_same(ti, ref.indices)
    assert_same(tv, ref.values)
    assert (shape, order) == ([2, 3], [0, 1])


def test_sparse_dlpack_errors():
    idx = np.zeros((3, 2), np.int64)
    with pytest.raises(tensorkit_tf.TensorkitError, match="values"):
        tensorkit_tf.SparseTensor.from_dlpack(idx, np.zeros(4, np.float32), [2, 2])
    with pytest.raises(tensorkit_tf.TensorkitError, match="int64"):
        tensorkit_tf.SparseTensor.from_dlpack(idx.astype(np.int32), np.zeros(3), [2, 2])
    st = tensorkit_tf.SparseTensor.from_dlpack(idx, np.zeros(3), [2, 2])
    with pytest.raises(tensorkit_tf.TensorkitError, match="permutation"):
        st.reorder([0, 0])
