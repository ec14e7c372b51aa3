"""torch.ops.tensorkit's jagged operators against FBGEMM's (torch.ops.fbgemm.*): the same results
on random inputs (empty batches and empty rows included) and on the cases of FBGEMM's own tests,
gradients by gradcheck in float64, and torch.library.opcheck for each operator."""

import pytest
import torch

from torch_env import FB, HAVE_FBGEMM, TK, offsets_of, random_lengths

needs_fbgemm = pytest.mark.skipif(not HAVE_FBGEMM, reason="fbgemm_gpu is not installed")

# Batch sizes that include the empty batch, inner dims that include a folded (1-D) one.
BATCHES = [0, 1, 7, 64]


@needs_fbgemm
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (0, 3), (4, 0), (5, 7)])
def test_cumsum_equals_fbgemm(dtype, shape):
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(0, 100, shape, generator=gen).to(dtype)
    got = TK.asynchronous_complete_cumsum(x)
    assert got.dtype == dtype
    assert torch.equal(got, FB.asynchronous_complete_cumsum(x))


def test_cumsum_values():
    assert TK.asynchronous_complete_cumsum(torch.tensor([7, 0, 3])).tolist() == [0, 7, 7, 10]
    # float64 too (FBGEMM has no float64 kernel).
    assert TK.asynchronous_complete_cumsum(torch.tensor([0.5, 2.0])).tolist() == [0, 0.5, 2.5]
    assert TK.asynchronous_complete_cumsum(torch.tensor([[1, 2], [3, 4]])).tolist() == [
        [0, 1, 3], [0, 3, 7]]


@needs_fbgemm
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("inner", [None, 1, 5])
@pytest.mark.parametrize("offsets_dtype", [torch.int32, torch.int64])
def test_jagged_to_padded_dense_equals_fbgemm(batch, inner, offsets_dtype):
    gen = torch.Generator().manual_seed(batch * 31 + (inner or 0))
    lengths = random_lengths(gen, batch, 6)
    offsets = offsets_of(lengths, offsets_dtype)
    n = int(lengths.sum())
    values = torch.randn((n,) if inner is None else (n, inner), generator=gen)
    for max_length in (0, 3, 6, 9):  # truncating, exact and padding lengths
        args = (values, [offsets], [max_length], -2.5)
        got = TK.jagged_to_padded_dense(*args)
        assert torch.equal(got, FB.jagged_to_padded_dense(*args)), max_length


@needs_fbgemm
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float16, torch.bfloat16,
                                   torch.float64])
def test_jagged_to_padded_dense_dtypes(dtype):
    offsets = torch.tensor([0, 2, 2, 5])
    values = torch.arange(10).view(5, 2).to(dtype)
    got = TK.jagged_to_padded_dense(values, [offsets], [3], 7.0)
    assert got.dtype == dtype
    # FBGEMM has no float64 kernel: its float32 result, exact for these small integers.
    want = FB.jagged_to_padded_dense(values.float(), [offsets], [3], 7.0).to(dtype)
    assert torch.equal(got, want)


@needs_fbgemm
def test_jagged_to_padded_dense_offsets_inside_values():
    # Rows that start after 0 and end before the values do (FBGEMM reads only their items).
    values = torch.arange(8.0)
    offsets = torch.tensor([1, 3, 3, 6])
    args = (values, [offsets], [4], 0.0)
    assert torch.equal(TK.jagged_to_padded_dense(*args), FB.jagged_to_padded_dense(*args))


@needs_fbgemm
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("max_length", [0, 2, 6])
def test_dense_to_jagged_equals_fbgemm(batch, max_length):
    gen = torch.Generator().manual_seed(batch + 100 * max_length)
    lengths = random_lengths(gen, batch, 5)
    offsets = offsets_of(lengths)
    dense = torch.randn(batch, max_length, 3, generator=gen)
    got_values, got_offsets = TK.dense_to_jagged(dense, [offsets])
    want_values, _ = FB.dense_to_jagged(dense, [offsets])
    assert torch.equal(got_values, want_values)
    assert got_offsets[0] is offsets
    total = int(offsets[-1]) + 2  # total_L past the last offset: the tail is zeros
    got = TK.dense_to_jagged_forward(dense, [offsets], total)
    assert torch.equal(got, FB.dense_to_jagged_forward(dense, [offsets], total))


def test_dense_to_jagged_values():
    dense = torch.tensor([[[1.0], [2.0]], [[3.0], [4.0]], [[5.0], [6.0]]])
    values, _ = TK.dense_to_jagged(dense, [torch.tensor([0, 1, 1, 4])])
    # Row 2 has 3 items but the dense form only 2: the third is 0 (FBGEMM's rule).
    assert values.squeeze(1).tolist() == [1.0, 5.0, 6.0, 0.0]


@needs_fbgemm
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lengths_dtype", [torch.int32, torch.int64])
def test_permute_2D_sparse_data_equals_fbgemm(batch, weighted, lengths_dtype):
    gen = torch.Generator().manual_seed(batch * 7 + weighted)
    num_features = 5
    lengths = random_lengths(gen, num_features * batch, 4).view(num_features, batch)
    lengths = lengths.to(lengths_dtype)
    n = int(lengths.sum())
    values = torch.randint(0, 1000, (n,), generator=gen)
    weights = torch.rand(n, generator=gen) if weighted else None
    for permute in ([4, 0, 2, 1, 3], [1, 1, 3], [], [0, 1, 2, 3, 4]):
        perm = torch.tensor(permute, dtype=torch.int32)
        got = TK.permute_2D_sparse_data(perm, lengths, values, weights)
        want = FB.permute_2D_sparse_data(perm, lengths, values, weights)
        assert got[0].dtype == lengths_dtype
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]), permute
        assert (got[2] is None) == (want[2] is None)
        if weighted:
            assert torch.equal(got[2], want[2])
        got_sum = TK.permute_2D_sparse_data(perm, lengths, values, weights, int(got[0].sum()))
        assert torch.equal(got_sum[1], got[1])


@needs_fbgemm
def test_permute_fbgemm_test_case():
    # The example of FBGEMM's permute test: 3 features, batch 2, float weights.
    lengths = torch.tensor([[0, 1], [2, 1], [0, 3]], dtype=torch.int32)
    values = torch.tensor([10, 20, 21, 30, 40, 41, 42], dtype=torch.int32)
    weights = torch.tensor([1.0, 2.0, 2.1, 3.0, 4.0, 4.1, 4.2])
    perm = torch.tensor([2, 0, 1], dtype=torch.int32)
    got = TK.permute_2D_sparse_data(perm, lengths, values, weights)
    assert got[0].tolist() == [[0, 3], [0, 1], [2, 1]]
    assert got[1].tolist() == [40, 41, 42, 10, 20, 21, 30]
    want = FB.permute_2D_sparse_data(perm, lengths, values, weights)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_jagged_gradients():
    gen = torch.Generator().manual_seed(3)
    lengths = torch.tensor([2, 0, 4, 1])
    offsets = offsets_of(lengths)
    values = torch.randn(7, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    for max_length in (0, 2, 5):  # truncated items get no gradient
        assert torch.autograd.gradcheck(
            lambda v: TK.jagged_to_padded_dense(v, [offsets], [max_length], 1.5), (values,))
    values_1d = torch.randn(7, dtype=torch.float64, generator=gen, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda v: TK.jagged_to_padded_dense(v, [offsets], [3], 0.0), (values_1d,))
    dense = torch.randn(4, 3, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    assert torch.autograd.gradcheck(lambda d: TK.dense_to_jagged(d, [offsets])[0], (dense,))
    assert torch.autograd.gradcheck(
        lambda d: TK.dense_to_jagged_forward(d, [offsets], 9), (dense,))


@needs_fbgemm
def test_jagged_gradients_equal_fbgemm():
    offsets = torch.tensor([0, 3, 3, 5])
    values = torch.randn(5, 4, requires_grad=True)
    grad = torch.randn(3, 2, 4)
    got, = torch.autograd.grad(TK.jagged_to_padded_dense(values, [offsets], [2]), values, grad)
    want, = torch.autograd.grad(FB.jagged_to_padded_dense(values, [offsets], [2]), values, grad)
    assert torch.equal(got, want)


def _opcheck(op, args):
    torch.library.opcheck(op, args)


def test_opcheck():
    offsets = torch.tensor([0, 2, 2, 5])
    values = torch.randn(5, 3, requires_grad=True)
    _opcheck(TK.asynchronous_complete_cumsum, (torch.tensor([3, 0, 2]),))
    _opcheck(TK.asynchronous_complete_cumsum, (torch.tensor([[3, 0], [1, 2]]),))
    _opcheck(TK.jagged_to_padded_dense, (values, [offsets], [4], 0.5))
    _opcheck(TK.jagged_to_padded_dense, (values.detach(), [offsets], [2], 0.0))
    _opcheck(TK.jagged_to_padded_dense_backward, (torch.randn(3, 4, 3), [offsets], 5))
    dense = torch.randn(3, 4, 3, requires_grad=True)
    _opcheck(TK.dense_to_jagged_forward, (dense, [offsets], 5))
    _opcheck(TK.dense_to_jagged_forward, (dense.detach(), [offsets]))
    lengths = torch.tensor([[1, 2], [0, 3]])
    perm = torch.tensor([1, 0, 1], dtype=torch.int32)
    _opcheck(TK.permute_2D_sparse_data, (perm, lengths, torch.arange(6), torch.rand(6), 9))
    _opcheck(TK.permute_2D_sparse_data, (perm, lengths, torch.arange(6)))
