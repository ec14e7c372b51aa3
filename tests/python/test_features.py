"""The feature ops from Python (DESIGN.md section 10, "Features") against NumPy references, and
TensorFlow's values where the semantics are TensorFlow's: constants TensorFlow 2.21 printed, and,
where the venv .venvs/tf exists, one run of TensorFlow itself on random inputs."""

import collections
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorkit as tk

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMBINERS = ["sum", "mean", "sqrtn", "max", "min"]


def rows_of(values, lengths):
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return [values[offsets[i]:offsets[i + 1]] for i in range(len(lengths))]


def reduce_rows(rows, combiner, width, weights=None, empty=0.0):
    """One combined row of `rows` [n, width] (NumPy's float64), the ops' combiner rules."""
    if len(rows) == 0:
        return np.full(width, empty)
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, np.float64)
    s = (rows * w[:, None]).sum(axis=0)
    if combiner == "sum":
        return s
    if combiner == "mean":
        return s / w.sum() if w.sum() != 0 else np.zeros(width)
    if combiner == "sqrtn":
        n = np.sqrt((w * w).sum())
        return s / n if n != 0 else np.zeros(width)
    return rows.max(axis=0) if combiner == "max" else rows.min(axis=0)


# --- JaggedTensor -------------------------------------------------------------------------------

def test_jagged_from_lengths_and_offsets():
    values = np.arange(10, dtype=np.float32)
    jt = tk.JaggedTensor(values, lengths=np.array([3, 0, 5, 2], np.int32))
    assert jt.batch_size == 4 and len(jt) == 4 and jt.num_values == 10 and jt.dtype == "float32"
    assert jt.weights is None and jt.device == "cpu"
    np.testing.assert_array_equal(jt.offsets.numpy(), [0, 3, 3, 8, 10])
    np.testing.assert_array_equal(jt.lengths.numpy(), [3, 0, 5, 2])
    # The values are the caller's memory.
    assert jt.values.data_ptr == values.__array_interface__["data"][0]
    same = tk.JaggedTensor(values, offsets=[0, 3, 3, 8, 10])
    for i in range(4):
        np.testing.assert_array_equal(same[i].numpy(), jt[i].numpy())
    np.testing.assert_array_equal(jt[-1].numpy(), [8, 9])
    with pytest.raises(IndexError):
        jt[4]
    assert [r.tolist() for r in jt.tolist()] == [[0, 1, 2], [], [3, 4, 5, 6, 7], [8, 9]]
    assert "batch_size=4" in repr(jt)


def test_jagged_rows_are_views():
    values = np.arange(6, dtype=np.int64)
    jt = tk.JaggedTensor(values, lengths=[2, 4])
    row = jt[1]
    assert row.data_ptr == values.__array_interface__["data"][0] + 2 * 8
    values[3] = 30
    assert row.numpy().tolist() == [2, 30, 4, 5]


def test_jagged_argument_errors():
    v = np.arange(4)
    with pytest.raises(tk.InvalidArgument):
        tk.JaggedTensor(v)  # neither lengths nor offsets
    with pytest.raises(ValueError):
        tk.JaggedTensor(v, lengths=[4], offsets=[0, 4])
    with pytest.raises(ValueError):
        tk.JaggedTensor(v, lengths=[1, 2])  # adds up to 3, not 4
    with pytest.raises(ValueError):
        tk.JaggedTensor(v, offsets=[0, 3, 2, 4])
    with pytest.raises(ValueError):
        tk.JaggedTensor(v, lengths=np.array([1.0, 3.0]))
    with pytest.raises(TypeError):
        tk.JaggedTensor(None, lengths=[1])


def test_jagged_weights():
    w = np.array([0.5, 1.0, 2.0], np.float32)
    jt = tk.JaggedTensor(np.array([4, 5, 6]), lengths=[1, 2], weights=w)
    assert jt.weights.data_ptr == w.__array_interface__["data"][0]
    np.testing.assert_array_equal(jt.row_weights(1).numpy(), [1.0, 2.0])
    plain = tk.JaggedTensor(np.array([4, 5, 6]), lengths=[1, 2])
    np.testing.assert_array_equal(plain.with_weights(w).weights.numpy(), w)
    with pytest.raises(ValueError):
        tk.JaggedTensor(np.array([4, 5, 6]), lengths=[1, 2], weights=np.ones(2, np.float32))


def test_jagged_padded_round_trip():
    rng = np.random.default_rng(0)
    lengths = np.array([2, 0, 4, 1])
    values = rng.random((7, 3)).astype(np.float32)
    jt = tk.JaggedTensor(values, lengths=lengths)
    padded = jt.to_padded(pad=-1).numpy()
    expect = np.full((4, 4, 3), -1, np.float32)
    for i, r in enumerate(rows_of(values, lengths)):
        expect[i, :len(r)] = r
    np.testing.assert_array_equal(padded, expect)
    # Longer rows are truncated.
    np.testing.assert_array_equal(jt.to_padded(1).numpy(), np.where(
        lengths[:, None, None] > 0, expect[:, :1], 0))
    back = tk.JaggedTensor.from_padded(padded, lengths)
    np.testing.assert_array_equal(back.values.numpy(), values)
    np.testing.assert_array_equal(back.offsets.numpy(), jt.offsets.numpy())
    with pytest.raises(ValueError):
        tk.JaggedTensor.from_padded(padded, [5, 0, 0, 0])


def test_jagged_sparse_round_trip():
    jt = tk.JaggedTensor(np.array([1.0, 2.0, 3.0]), lengths=[2, 0, 1])
    st = jt.to_sparse()
    assert st.shape == (3, 2)
    np.testing.assert_array_equal(st.indices.numpy(), [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(st.to_dense().numpy(), [[1, 2], [0, 0], [3, 0]])
    back = tk.JaggedTensor.from_sparse(st)
    np.testing.assert_array_equal(back.lengths.numpy(), [2, 0, 1])
    # Unsorted entries, and scipy.sparse input.
    st2 = tk.SparseTensor(np.array([[1, 1], [1, 0], [0, 0]]), np.array([5, 4, 3]), [2, 3])
    j2 = tk.JaggedTensor.from_sparse(st2)
    assert [r.tolist() for r in j2.tolist()] == [[3], [4, 5]]
    import scipy.sparse as sp
    j3 = tk.JaggedTensor.from_sparse(sp.coo_array(np.array([[7, 8], [0, 9]])))
    assert [r.tolist() for r in j3.tolist()] == [[7, 8], [9]]


def test_jagged_strings():
    for values in (np.array(["a", "bc", "déf"]), np.array([b"a", b"bc", "déf".encode()]),
                   np.array(["a", b"bc", "déf"], dtype=object)):
        jt = tk.JaggedTensor(values, lengths=[1, 2])
        assert jt.dtype == "string"
        row = jt[1].numpy()
        assert [x if isinstance(x, str) else x.decode() for x in row] == ["bc", "déf"]


# --- KeyedJaggedTensor --------------------------------------------------------------------------

def make_kjt(weights=False):
    # keys a, b; batch 3; lengths [[1, 0, 2], [2, 1, 1]]
    values = np.arange(7, dtype=np.int64) * 10
    w = np.linspace(0.5, 2.0, 7).astype(np.float32) if weights else None
    return tk.KeyedJaggedTensor(["a", "b"], values, [1, 0, 2, 2, 1, 1], weights=w), values


def test_kjt_properties_and_views():
    kjt, values = make_kjt()
    assert kjt.keys == ["a", "b"] and kjt.batch_size == 3 and kjt.num_keys == 2
    np.testing.assert_array_equal(kjt.lengths.numpy(), [[1, 0, 2], [2, 1, 1]])
    np.testing.assert_array_equal(kjt.offsets.numpy(), [0, 1, 1, 3, 5, 6, 7])
    assert kjt.values.data_ptr == values.__array_interface__["data"][0]
    b = kjt["b"]
    assert b.values.data_ptr == values.__array_interface__["data"][0] + 3 * 8
    assert [r.tolist() for r in b.tolist()] == [[30, 40], [50], [60]]
    assert "a" in kjt and "c" not in kjt
    assert sorted(kjt.to_dict()) == ["a", "b"]
    with pytest.raises(ValueError):
        kjt["c"]
    same = tk.KeyedJaggedTensor(["a", "b"], values, np.array([[1, 0, 2], [2, 1, 1]]))
    np.testing.assert_array_equal(same.offsets.numpy(), kjt.offsets.numpy())
    with pytest.raises(ValueError):
        tk.KeyedJaggedTensor(["a", "b"], values, [1, 2, 4])  # 3 lengths for 2 keys
    with pytest.raises(ValueError):
        tk.KeyedJaggedTensor(["a", "a"], values, [3, 4])


def test_kjt_permute_concat_split():
    kjt, values = make_kjt(weights=True)
    p = kjt.permute(["b", "a", "b"])
    assert p.keys == ["b", "a", "b"]
    np.testing.assert_array_equal(p.values.numpy(), np.concatenate(
        [values[3:], values[:3], values[3:]]))
    np.testing.assert_array_equal(p.weights.numpy(), np.concatenate(
        [kjt.weights.numpy()[3:], kjt.weights.numpy()[:3], kjt.weights.numpy()[3:]]))
    both = tk.KeyedJaggedTensor.concat([kjt, kjt])
    assert both.batch_size == 6
    np.testing.assert_array_equal(both.lengths.numpy(), [[1, 0, 2] * 2, [2, 1, 1] * 2])
    np.testing.assert_array_equal(both["a"].values.numpy(), np.tile(values[:3], 2))
    parts = kjt.split([2, 1])
    assert [x.batch_size for x in parts] == [2, 1]
    np.testing.assert_array_equal(parts[1].lengths.numpy(), [[2], [1]])
    np.testing.assert_array_equal(parts[1].values.numpy(), [10, 20, 60])
    with pytest.raises(ValueError):
        kjt.split([2, 2])
    st = kjt.to_sparse("a")
    np.testing.assert_array_equal(st.to_dense().numpy(), [[0, 0], [0, 0], [10, 20]])


# --- fill_empty_rows ----------------------------------------------------------------------------

def test_fill_empty_rows_tensorflow_values():
    # tf.sparse.fill_empty_rows(SparseTensor([[3,1],[0,2],[3,0]], [1.,2.,3.], [5,4]), -7.)
    st = tk.SparseTensor(np.array([[3, 1], [0, 2], [3, 0]]), np.array([1.0, 2.0, 3.0]), [5, 4])
    out, empty, reverse = tk.fill_empty_rows(st, -7.0)
    np.testing.assert_array_equal(out.indices.numpy(),
                                  [[0, 2], [1, 0], [2, 0], [3, 1], [3, 0], [4, 0]])
    np.testing.assert_array_equal(out.values.numpy(), [2.0, -7.0, -7.0, 1.0, 3.0, -7.0])
    np.testing.assert_array_equal(empty.numpy(), [False, True, True, False, True])
    # reverse_index_map: where each input entry went.
    np.testing.assert_array_equal(out.values.numpy()[reverse.numpy()], st.values.numpy())
    np.testing.assert_array_equal(reverse.numpy(), [3, 0, 4])


def test_fill_empty_rows_strings_and_errors():
    st = tk.SparseTensor(np.array([[0], [2]]), np.array(["x", "y"]), [4])
    out, empty, _ = tk.fill_empty_rows(st, "none")
    assert out.values.numpy().tolist() == ["x", "none", "y", "none"]
    assert empty.numpy().tolist() == [False, True, False, True]
    ints = tk.SparseTensor(np.array([[1, 0]]), np.array([5], np.int32), [2, 2])
    out, _, _ = tk.fill_empty_rows(ints, np.int64(9))
    assert out.values.dtype == "int32" and out.values.numpy().tolist() == [9, 5]
    bad = tk.SparseTensor(np.array([[5, 0]]), np.array([1.0]), [2, 2])
    with pytest.raises(IndexError):
        tk.fill_empty_rows(bad, 0.0)


# --- segment reductions -------------------------------------------------------------------------

def segment_reference(data, ids, num_segments, combiner, empty_max_min):
    out = []
    for s in range(num_segments):
        rows = data[ids == s].astype(np.float64)
        if len(rows) == 0 and combiner in ("max", "min"):
            out.append(np.full(data.shape[1], empty_max_min[combiner]))
        else:
            out.append(reduce_rows(rows, combiner, data.shape[1]))
    return np.array(out)


@pytest.mark.parametrize("combiner", COMBINERS)
def test_segment_reduce(combiner):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((40, 3)).astype(np.float32)
    ids = np.sort(rng.integers(0, 12, 40)).astype(np.int32)
    got = tk.segment_reduce(data, ids, -1, combiner).numpy()
    n = ids[-1] + 1
    # Gaps give 0 for every combiner (tf.math.segment_max's rule).
    expect = segment_reference(data, ids, n, combiner, {"max": 0.0, "min": 0.0})
    assert got.shape == (n, 3) and got.dtype == np.float32
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-6)
    got20 = tk.segment_reduce(data, ids, 20, combiner).numpy()
    assert got20.shape == (20, 3) and not got20[n:].any()


@pytest.mark.parametrize("combiner", COMBINERS)
def test_unsorted_segment_reduce(combiner):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((50, 2))
    ids = rng.integers(-2, 9, 50)  # negative ids are dropped
    got = tk.unsorted_segment_reduce(data, ids, 10, combiner=combiner).numpy()
    lo, hi = np.finfo(np.float64).min, np.finfo(np.float64).max
    expect = segment_reference(data, ids, 10, combiner, {"max": lo, "min": hi})
    np.testing.assert_allclose(got, expect, rtol=1e-12)


@pytest.mark.parametrize("combiner", COMBINERS)
def test_sparse_segment_reduce(combiner):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((8, 4)).astype(np.float32)
    indices = rng.integers(0, 8, 30)
    ids = np.sort(rng.integers(0, 6, 30))
    got = tk.sparse_segment_reduce(data, indices, ids, 7, combiner).numpy()
    expect = segment_reference(data[indices], ids, 7, combiner, {"max": 0.0, "min": 0.0})
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-6)


def test_segment_errors():
    data = np.ones((3, 2), np.float32)
    with pytest.raises(ValueError, match="sorted|non-decreasing|order"):
        tk.segment_reduce(data, [1, 0, 1])
    with pytest.raises(ValueError):
        tk.segment_reduce(data, [0, 0, 1], combiner="median")
    with pytest.raises((ValueError, IndexError)):
        tk.unsorted_segment_reduce(data, [0, 5, 1], 3)
    with pytest.raises((ValueError, IndexError)):
        tk.sparse_segment_reduce(data, [0, 7], [0, 0], 1)
    with pytest.raises(ValueError):
        tk.segment_reduce(np.ones((3, 2), np.int32), [0, 0, 1], combiner="mean")


# --- embedding bags -----------------------------------------------------------------------------

def bag_reference(table, ids_values, lengths, combiner, weights=None, padding_id=-1):
    out = []
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for b in range(len(lengths)):
        ids = ids_values[offsets[b]:offsets[b + 1]]
        w = None if weights is None else weights[offsets[b]:offsets[b + 1]]
        keep = ids != padding_id
        rows = table[ids[keep]].astype(np.float64)
        out.append(reduce_rows(rows, combiner, table.shape[1],
                               None if w is None else w[keep]))
    return np.array(out)


@pytest.mark.parametrize("combiner", COMBINERS)
def test_embedding_bag(combiner):
    rng = np.random.default_rng(4)
    table = rng.standard_normal((20, 8)).astype(np.float32)
    lengths = np.array([3, 0, 1, 5, 2])
    ids_values = rng.integers(0, 20, lengths.sum())
    ids = tk.JaggedTensor(ids_values, lengths=lengths)
    got = tk.embedding_bag(table, ids, combiner).numpy()
    np.testing.assert_allclose(got, bag_reference(table, ids_values, lengths, combiner),
                               rtol=1e-5, atol=1e-6)
    # A padding id is skipped and not counted.
    pad = int(ids_values[0])
    got = tk.embedding_bag(table, ids, combiner, padding_id=pad).numpy()
    np.testing.assert_allclose(
        got, bag_reference(table, ids_values, lengths, combiner, padding_id=pad),
        rtol=1e-5, atol=1e-6)


def test_embedding_bag_weights_and_errors():
    rng = np.random.default_rng(5)
    table = rng.standard_normal((6, 4))
    lengths = np.array([2, 3])
    ids_values = np.array([0, 5, 1, 1, 2], np.int32)
    w = np.array([0.5, 2.0, 1.0, -1.0, 3.0], np.float64)
    ids = tk.JaggedTensor(ids_values, lengths=lengths, weights=w)
    for combiner in ("sum", "mean", "sqrtn"):
        np.testing.assert_allclose(
            tk.embedding_bag(table, ids, combiner).numpy(),
            bag_reference(table, ids_values, lengths, combiner, weights=w), rtol=1e-12)
    with pytest.raises(ValueError):
        tk.embedding_bag(table, ids, "max")  # weights need sum, mean or sqrtn
    with pytest.raises(IndexError):
        tk.embedding_bag(table, tk.JaggedTensor(np.array([6]), lengths=[1]))
    with pytest.raises(TypeError):
        tk.embedding_bag(table, np.array([0, 1]))


def test_embedding_bags_table_batched():
    rng = np.random.default_rng(6)
    t1 = rng.standard_normal((10, 3)).astype(np.float32)
    t2 = rng.standard_normal((4, 5)).astype(np.float32)
    kjt = tk.KeyedJaggedTensor(["u", "v"], np.array([1, 2, 9, 0, 3, 3]), [[2, 1], [0, 3]])
    got = tk.embedding_bags([t1, t2], kjt, ["mean", "max"]).numpy()
    assert got.shape == (2, 8)
    np.testing.assert_allclose(got[:, :3], bag_reference(t1, np.array([1, 2, 9]), [2, 1], "mean"),
                               rtol=1e-6)
    np.testing.assert_allclose(got[:, 3:], bag_reference(t2, np.array([0, 3, 3]), [0, 3], "max"),
                               rtol=1e-6)
    same = tk.embedding_bags([t1, t2], kjt, "sum").numpy()
    np.testing.assert_allclose(same[:, 3:], bag_reference(t2, np.array([0, 3, 3]), [0, 3], "sum"),
                               rtol=1e-6)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_bag_backward(combiner):
    rng = np.random.default_rng(7)
    lengths = np.array([2, 0, 3])
    ids_values = np.array([4, 1, 1, 4, 0])
    ids = tk.JaggedTensor(ids_values, lengths=lengths)
    grad = rng.standard_normal((3, 2)).astype(np.float32)
    g = tk.embedding_bag_backward(grad, ids, combiner, 6)
    assert isinstance(g, tk.SparseTensor) and g.shape == (6, 2)
    # Dense reference: d table[ids[p]] += grad[b] / divisor(b).
    expect = np.zeros((6, 2))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for b in range(3):
        n = lengths[b]
        scale = {"sum": 1.0, "mean": 1.0 / max(n, 1), "sqrtn": 1.0 / np.sqrt(max(n, 1))}[combiner]
        for p in range(offsets[b], offsets[b + 1]):
            expect[ids_values[p]] += grad[b] * scale
    np.testing.assert_allclose(g.to_dense().numpy(), expect, rtol=1e-6)
    # One entry per column of each distinct id: rows 0, 1, 4.
    assert sorted(set(g.indices.numpy()[:, 0].tolist())) == [0, 1, 4]


def test_embedding_bag_backward_max_needs_table():
    table = np.array([[1.0, 5.0], [3.0, 2.0]], np.float32)
    ids = tk.JaggedTensor(np.array([0, 1]), lengths=[2])
    grad = np.array([[10.0, 20.0]], np.float32)
    with pytest.raises(ValueError):
        tk.embedding_bag_backward(grad, ids, "max", 2)
    g = tk.embedding_bag_backward(grad, ids, "max", 2, table=table).to_dense().numpy()
    np.testing.assert_array_equal(g, [[0, 20], [10, 0]])  # column winners: row 1, then row 0


# --- hashes -------------------------------------------------------------------------------------

# Printed by TensorFlow 2.21: tf.strings.to_hash_bucket_fast(S, 1000), ..._strong(S, 1000, [7, 11]).
S = ["", "a", "hello", "тест", "tensorkit", "\x00x"]
TF_FAST_1000 = [263, 939, 296, 937, 807, 17]
TF_STRONG_1000_7_11 = [847, 380, 813, 778, 75, 575]


def test_hash_bucket_tensorflow_values():
    for values in (np.array(S), np.array([s.encode() for s in S], dtype=object),
                   np.array(S, dtype=object), S):
        got = tk.hash_bucket_fast(values, 1000)
        assert got.dtype == "int64" and got.numpy().tolist() == TF_FAST_1000
        assert tk.hash_bucket_strong(values, 1000, [7, 11]).numpy().tolist() == \
            TF_STRONG_1000_7_11
    # NumPy's S arrays drop trailing NULs, as NumPy itself does; non-UTF-8 bytes hash as bytes.
    got = tk.hash_bucket_fast(np.array([b"\xff\xfe", b"abc"]), 2**62).numpy().tolist()
    assert got == [1432599169808672139, 2640714258260161385]
    # TensorFlow's key attribute is int64: -1 is 2**64 - 1.
    assert tk.hash_bucket_strong(["a", "b"], 97, [-1, 12345678901234567]).numpy().tolist() == [2, 4]
    assert tk.hash_bucket_strong(["a", "b"], 97, np.array(
        [2**64 - 1, 12345678901234567], np.uint64)).numpy().tolist() == [2, 4]
    # Integers hash through their decimal string (tf.strings.as_string, then the hash).
    ints = np.array([0, -12, 2**40])
    assert tk.hash_bucket_fast(ints, 100).numpy().tolist() == [35, 69, 78]
    assert tk.hash_bucket_fast(ints.astype(np.int32)[:2], 100).numpy().tolist() == [35, 69]
    assert tk.hash_bucket_fast(ints.astype(str), 100).numpy().tolist() == [35, 69, 78]


def test_hash_bucket_keeps_structure():
    values = np.array(S).reshape(2, 3)
    assert tk.hash_bucket_fast(values, 1000).numpy().tolist() == \
        np.array(TF_FAST_1000).reshape(2, 3).tolist()
    jt = tk.JaggedTensor(np.array(S), lengths=[2, 0, 4])
    hj = tk.hash_bucket_fast(jt, 1000)
    assert isinstance(hj, tk.JaggedTensor)
    assert hj.offsets.numpy().tolist() == [0, 2, 2, 6] and hj.values.numpy().tolist() == \
        TF_FAST_1000
    st = tk.SparseTensor(np.array([[0, 1], [1, 0]]), np.array(["hello", "a"]), [2, 2])
    hs = tk.hash_bucket_strong(st, 1000, [7, 11])
    assert isinstance(hs, tk.SparseTensor) and hs.values.numpy().tolist() == [813, 380]
    np.testing.assert_array_equal(hs.indices.numpy(), st.indices.numpy())
    with pytest.raises(ValueError):
        tk.hash_bucket_fast(np.array(["a"]), 0)
    with pytest.raises(TypeError):
        tk.hash_bucket_strong(["a"], 10, [1])


# --- bucketize ----------------------------------------------------------------------------------

def test_bucketize():
    rng = np.random.default_rng(8)
    values = rng.standard_normal(100) * 3
    boundaries = np.array([-2.0, -0.5, 0.0, 0.25, 4.0])
    got = tk.bucketize(values, boundaries)
    assert got.dtype == "int32"
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(boundaries, values, side="right"))
    # A list of boundaries is TensorFlow's float32 attribute: printed by TensorFlow 2.21,
    # Bucketize([16777217, 16777219, -5, 3], boundaries=[16777218.0, 16777220.0]).
    ints = np.array([16777217, 16777219, -5, 3])
    assert tk.bucketize(ints, [16777218.0, 16777220.0]).numpy().tolist() == [0, 2, 0, 0]
    assert tk.bucketize(ints, np.array([16777218.0, 16777220.0])).numpy().tolist() == [0, 1, 0, 0]
    jt = tk.JaggedTensor(np.array([0.1, 5.0, -3.0]), lengths=[1, 2])
    bj = tk.bucketize(jt, [0.0, 1.0])
    assert isinstance(bj, tk.JaggedTensor) and bj.values.numpy().tolist() == [1, 2, 0]
    with pytest.raises(ValueError):
        tk.bucketize(values, [1.0, 0.0])


# --- Vocabulary ---------------------------------------------------------------------------------

def test_vocabulary_fit_lookup_against_counter(tmp_path):
    rng = np.random.default_rng(9)
    words = np.array(["w%d" % i for i in rng.zipf(1.6, 500) % 40])
    voc = tk.Vocabulary.fit(words, min_frequency=2, max_tokens=10)
    counts = collections.Counter(words.tolist())
    kept = sorted((w for w in counts if counts[w] >= 2), key=lambda w: (-counts[w], w))[:10]
    assert voc.tokens.numpy().tolist() == kept and len(voc) == len(kept)
    assert voc.size == len(kept) and voc.num_ids == len(kept) + 1 and voc.token_start == 1
    ids = voc.lookup(words).numpy()
    index = {w: i + 1 for i, w in enumerate(kept)}
    np.testing.assert_array_equal(ids, [index.get(w, 0) for w in words.tolist()])
    # Jagged input keeps its structure; a file written is read back.
    jt = tk.JaggedTensor(words[:5], lengths=[2, 3])
    lj = voc.lookup(jt)
    assert isinstance(lj, tk.JaggedTensor) and lj.values.numpy().tolist() == ids[:5].tolist()
    path = tmp_path / "vocab.txt"
    voc.save(path)
    assert path.read_text().split("\n")[:-1] == kept
    again = tk.Vocabulary.load(path)
    np.testing.assert_array_equal(again.lookup(words).numpy(), ids)


def test_vocabulary_integers_mask_and_parts(tmp_path):
    voc = tk.Vocabulary.fit([np.array([5, 7, 5]), tk.JaggedTensor(np.array([7, 5, 1]),
                                                                    lengths=[3])],
                            num_oov_indices=2, mask_token=0)
    # Ids: 0 mask, 1-2 OOV, then 5 (3 times), 7 (twice), 1.
    assert voc.dtype == "int64" and voc.tokens.numpy().tolist() == [5, 7, 1]
    assert voc.lookup(np.array([5, 7, 1, 0, 9, 10], np.int32)).numpy().tolist() == \
        [3, 4, 5, 0, 1 + 9 % 2, 1 + 10 % 2]
    voc.save(str(tmp_path / "ints.txt"))
    back = tk.Vocabulary.load(str(tmp_path / "ints.txt"), dtype="int64")
    assert back.lookup([7, 2]).numpy().tolist() == [2, 0]
    fixed = tk.Vocabulary.from_tokens(["x", "y"], num_oov_indices=0)
    assert fixed.lookup(np.array(["y", "x"])).numpy().tolist() == [1, 0]
    with pytest.raises(ValueError):
        fixed.lookup(["z"])  # no OOV ids: an error
    with pytest.raises(OSError):
        tk.Vocabulary.load(tmp_path / "missing.txt")


def test_num_threads():
    n = tk.get_num_threads()
    tk.set_num_threads(1)
    try:
        assert tk.get_num_threads() == 1
        data = np.arange(12, dtype=np.float64).reshape(6, 2)
        one = tk.segment_reduce(data, [0, 0, 1, 1, 2, 2]).numpy()
    finally:
        tk.set_num_threads(n)
    assert tk.get_num_threads() == n
    np.testing.assert_array_equal(one, tk.segment_reduce(data, [0, 0, 1, 1, 2, 2]).numpy())


# --- TensorFlow itself, where its venv exists ---------------------------------------------------

TF_SCRIPT = r"""
import sys
import numpy as np
import tensorflow as tf
i = np.load(sys.argv[1], allow_pickle=False)
o = {}
strings = [s.encode() for s in i["strings"].tolist()]
o["fast"] = tf.strings.to_hash_bucket_fast(strings, 7919).numpy()
o["strong"] = tf.strings.to_hash_bucket_strong(strings, 7919, [123, -456]).numpy()
o["int_fast"] = tf.strings.to_hash_bucket_fast(tf.strings.as_string(i["ints"]), 101).numpy()
o["bucketize"] = tf.raw_ops.Bucketize(input=i["values"],
                                      boundaries=i["boundaries"].tolist()).numpy()
d, ids = i["data"], i["sorted_ids"]
for name, f in [("sum", tf.math.segment_sum), ("mean", tf.math.segment_mean),
                ("max", tf.math.segment_max), ("min", tf.math.segment_min)]:
    o["segment_" + name] = f(d, ids).numpy()
u = i["unsorted_ids"]
for name, f in [("sum", tf.math.unsorted_segment_sum), ("mean", tf.math.unsorted_segment_mean),
                ("sqrtn", tf.math.unsorted_segment_sqrt_n), ("max", tf.math.unsorted_segment_max),
                ("min", tf.math.unsorted_segment_min)]:
    o["unsorted_" + name] = f(d, u, 12).numpy()
for name, f in [("sum", tf.sparse.segment_sum), ("mean", tf.sparse.segment_mean),
                ("sqrtn", tf.sparse.segment_sqrt_n)]:
    o["sparse_" + name] = f(d, i["indices"], ids, num_segments=15).numpy()
st = tf.sparse.SparseTensor(i["sp_indices"], i["sp_values"], i["sp_shape"])
out, empty = tf.sparse.fill_empty_rows(st, -1.5)
o["fill_indices"], o["fill_values"], o["fill_empty"] = (out.indices.numpy(), out.values.numpy(),
                                                        empty.numpy())
np.savez(sys.argv[2], **o)
"""


@pytest.mark.skipif(not (ROOT / ".venvs/tf/bin/python").exists(),
                    reason="no .venvs/tf (TensorFlow); the constants above still check its values")
def test_against_tensorflow(tmp_path):
    rng = np.random.default_rng(10)
    strings = np.array(["".join(chr(c) for c in rng.integers(32, 0x500, rng.integers(0, 12)))
                        for _ in range(200)])
    inputs = dict(
        strings=strings, ints=rng.integers(-10**12, 10**12, 100),
        values=rng.standard_normal(200).astype(np.float32) * 4,
        boundaries=np.sort(rng.standard_normal(9)).astype(np.float32) * 4,
        data=rng.standard_normal((60, 3)).astype(np.float32),
        sorted_ids=np.sort(rng.integers(0, 15, 60)),
        unsorted_ids=rng.integers(-1, 12, 60),
        indices=rng.integers(0, 60, 60),
        sp_indices=np.stack([rng.integers(0, 30, 25), rng.integers(0, 4, 25)], 1),
        sp_values=rng.standard_normal(25), sp_shape=np.array([30, 4]))
    # fill_empty_rows wants distinct indices.
    _, first = np.unique(inputs["sp_indices"], axis=0, return_index=True)
    inputs["sp_indices"] = inputs["sp_indices"][np.sort(first)]
    inputs["sp_values"] = inputs["sp_values"][np.sort(first)]
    np.savez(tmp_path / "in.npz", **inputs)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([str(ROOT / ".venvs/tf/bin/python"), "-c", TF_SCRIPT, str(tmp_path / "in.npz"),
                    str(tmp_path / "out.npz")], check=True, env=env, capture_output=True,
                   timeout=300)
    tf = np.load(tmp_path / "out.npz")
    i = inputs
    np.testing.assert_array_equal(tk.hash_bucket_fast(strings, 7919).numpy(), tf["fast"])
    np.testing.assert_array_equal(tk.hash_bucket_strong(strings, 7919, [123, -456]).numpy(),
                                  tf["strong"])
    np.testing.assert_array_equal(tk.hash_bucket_fast(i["ints"], 101).numpy(), tf["int_fast"])
    np.testing.assert_array_equal(tk.bucketize(i["values"], i["boundaries"].tolist()).numpy(),
                                  tf["bucketize"])
    for c in ("sum", "mean", "max", "min"):
        np.testing.assert_allclose(tk.segment_reduce(i["data"], i["sorted_ids"], -1, c).numpy(),
                                   tf["segment_" + c], rtol=1e-6, atol=1e-7)
    for c in ("sum", "mean", "sqrtn", "max", "min"):
        np.testing.assert_allclose(
            tk.unsorted_segment_reduce(i["data"], i["unsorted_ids"], 12, c).numpy(),
            tf["unsorted_" + c], rtol=1e-6, atol=1e-7)
    for c in ("sum", "mean", "sqrtn"):
        np.testing.assert_allclose(
            tk.sparse_segment_reduce(i["data"], i["indices"], i["sorted_ids"], 15, c).numpy(),
            tf["sparse_" + c], rtol=1e-6, atol=1e-7)
    st = tk.SparseTensor(i["sp_indices"], i["sp_values"], i["sp_shape"].tolist())
    out, empty, _ = tk.fill_empty_rows(st, -1.5)
    np.testing.assert_array_equal(out.indices.numpy(), tf["fill_indices"])
    np.testing.assert_array_equal(out.values.numpy(), tf["fill_values"])
    np.testing.assert_array_equal(empty.numpy(), tf["fill_empty"])
