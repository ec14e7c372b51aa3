"""tk.SparseTensor against NumPy and SciPy: construction, structure ops, conversions, products."""

import numpy as np
import pytest
import scipy.sparse as sp

import tensorkit as tk


def random_sparse(shape, density, rng, dtype=np.float64):
    dense = rng.random(shape)
    dense[dense > density] = 0
    return dense.astype(dtype)


def test_construct_and_properties():
    idx = np.array([[1, 2], [0, 0], [1, 0]])
    vals = np.array([3.0, 1.0, 2.0])
    st = tk.SparseTensor(idx, vals, (2, 3))
    assert st.nnz == 3 and st.rank == 2 and st.shape == (2, 3)
    assert st.order is None and st.dtype == "float64"
    assert st.values.data_ptr == vals.__array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(st.indices), idx)
    st.validate()
    assert st.reorder((0, 1)) is st
    assert st.order == (0, 1)
    np.testing.assert_array_equal(np.asarray(st.indices), [[0, 0], [1, 0], [1, 2]])
    np.testing.assert_array_equal(st.to_dense().numpy(), [[1, 0, 0], [2, 0, 3]])
    # int32 indices (SciPy's) are accepted, converted.
    st32 = tk.SparseTensor(idx.astype(np.int32), vals, [2, 3], order=None)
    np.testing.assert_array_equal(st32.to_dense().numpy(), st.to_dense().numpy())


def test_validate_names_entry():
    st = tk.SparseTensor(np.array([[0, 0], [0, 0]]), np.array([1.0, 2.0]), (2, 2))
    assert not st.indices_valid()
    with pytest.raises(tk.InvalidArgument):
        st.validate()
    st.coalesce()
    assert st.nnz == 1 and st.values.numpy().tolist() == [3.0] and st.order == (0, 1)


def test_from_dense_and_strings():
    rng = np.random.default_rng(0)
    d = random_sparse((4, 5, 3), 0.3, rng)
    st = tk.SparseTensor.from_dense(d)
    assert st.order == (0, 1, 2) and st.nnz == np.count_nonzero(d)
    np.testing.assert_array_equal(st.to_dense().numpy(), d)
    s = tk.SparseTensor(np.array([[0], [2]]), np.array(["a", "bc"]), (3,))
    assert s.dtype == "string"
    assert s.to_dense().numpy().tolist() == ["a", "", "bc"]


def test_concat():
    a = tk.SparseTensor.from_dense(np.array([[1.0, 0], [0, 2]]))
    b = tk.SparseTensor.from_dense(np.array([[0, 3.0]]))
    c = tk.SparseTensor.concat([a, b])
    np.testing.assert_array_equal(c.to_dense().numpy(), [[1, 0], [0, 2], [0, 3]])
    d = tk.SparseTensor.concat([a, a], axis=1)
    np.testing.assert_array_equal(d.to_dense().numpy(), [[1, 0, 1, 0], [0, 2, 0, 2]])


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_to_scipy(fmt):
    rng = np.random.default_rng(1)
    d = random_sparse((7, 5), 0.4, rng)
    st = tk.SparseTensor.from_dense(d)
    m = st.to_scipy(fmt)
    assert m.format == fmt and isinstance(m, sp.sparray)
    np.testing.assert_array_equal(m.toarray(), d)


SCIPY_FORMATS = ["coo", "csr", "csc", "bsr", "dia", "lil", "dok"]


@pytest.mark.parametrize("fmt", SCIPY_FORMATS)
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_from_scipy_every_format(fmt, kind):
    rng = np.random.default_rng(2)
    d = random_sparse((6, 8), 0.3, rng)
    cls = getattr(sp, f"{fmt}_{kind}")
    m = cls(d)
    st = tk.SparseTensor.from_scipy(m)
    assert st.shape == (6, 8)
    np.testing.assert_array_equal(st.to_dense().numpy(), d)


def test_from_scipy_shares_values_and_handles_unsorted_and_duplicates():
    m = sp.csr_array(np.array([[0, 2.0, 3.0], [4.0, 0, 0]]))
    st = tk.SparseTensor.from_scipy(m)
    assert st.values.data_ptr == m.data.__array_interface__["data"][0]
    u = sp.csr_array((np.array([1.0, 2.0, 5.0]), np.array([2, 0, 2]), np.array([0, 3, 3])),
                     shape=(2, 3))
    assert not u.has_sorted_indices
    np.testing.assert_array_equal(tk.SparseTensor.from_scipy(u).coalesce().to_dense().numpy(),
                                  u.toarray())
    one_d = sp.coo_array(np.array([0, 1.0, 0, 2.0]))
    np.testing.assert_array_equal(tk.SparseTensor.from_scipy(one_d).to_dense().numpy(),
                                  [0, 1, 0, 2])
    with pytest.raises(TypeError):
        tk.SparseTensor.from_scipy(np.zeros((2, 2)))


def test_products_and_reduce_against_scipy():
    rng = np.random.default_rng(3)
    a = random_sparse((9, 6), 0.3, rng)
    b = random_sparse((6, 4), 0.5, rng)
    sa, sb = tk.SparseTensor.from_dense(a), tk.SparseTensor.from_dense(b)
    np.testing.assert_allclose(tk.sparse_dense_matmul(sa, b).numpy(), a @ b)
    np.testing.assert_allclose(tk.sparse_dense_matmul(sa, b[:, 0]).numpy(), a @ b[:, 0])
    np.testing.assert_allclose(tk.sparse_dense_matmul(sp.csr_matrix(a), b).numpy(), a @ b)
    np.testing.assert_allclose(tk.sparse_sparse_matmul(sa, sb).to_dense().numpy(), a @ b)
    ref = (sp.csr_array(a) @ sp.csr_array(b)).toarray()
    np.testing.assert_allclose(tk.sparse_sparse_matmul(sp.csr_array(a), sb).to_dense().numpy(), ref)
    np.testing.assert_allclose(tk.sparse_reduce_sum(sa, 1).numpy(), a.sum(axis=1))
    np.testing.assert_allclose(tk.sparse_reduce_sum(sa, [-2]).numpy(), a.sum(axis=0))
    np.testing.assert_allclose(tk.sparse_reduce_sum(sa).numpy(), a.sum())
    batch = random_sparse((2, 3, 6), 0.4, rng)
    np.testing.assert_allclose(
        tk.sparse_dense_matmul(tk.SparseTensor.from_dense(batch), b).numpy(), batch @ b)


def test_lifetime_of_sparse_inputs():
    import gc

    idx = np.array([[0, 1], [1, 0]])
    vals = np.array([5.0, 6.0])
    st = tk.SparseTensor(idx, vals, (2, 2))
    del idx, vals
    gc.collect()
    np.testing.assert_array_equal(st.to_dense().numpy(), [[0, 5], [6, 0]])
    v = st.values.numpy()
    del st
    gc.collect()
    assert v.tolist() == [5.0, 6.0]
