"""tensorkit.torch.embedding_bag (torch.ops.tensorkit.embedding_bag) against
torch.nn.functional.embedding_bag: the same results and weight gradients on random inputs (empty
batches and empty bags included) for every mode, offsets with and without include_last_offset,
per_sample_weights and padding_idx; gradcheck in float64; opcheck; torch.compile without graph
breaks."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import tensorkit.torch as tkt
from torch_env import TK, offsets_of, random_lengths


def _case(seed, batch, num_rows=20, dim=6, dtype=torch.float32, max_len=5):
    gen = torch.Generator().manual_seed(seed)
    lengths = random_lengths(gen, batch, max_len)
    ids = torch.randint(0, num_rows, (int(lengths.sum()),), generator=gen)
    weight = torch.randn(num_rows, dim, generator=gen, dtype=dtype)
    return gen, lengths, ids, weight


def _compare(ids, weight, offsets, tol=0.0, **kw):
    w1 = weight.clone().requires_grad_(True)
    w2 = weight.clone().requires_grad_(True)
    got = tkt.embedding_bag(ids, w1, offsets, **kw)
    want = F.embedding_bag(ids, w2, offsets, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    grad = torch.randn(got.shape, dtype=got.dtype)
    g1, = torch.autograd.grad(got, w1, grad)
    g2, = torch.autograd.grad(want, w2, grad)
    torch.testing.assert_close(g1, g2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [0, 1, 9, 100])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 3, -1])
def test_equals_torch(batch, mode, include_last_offset, padding_idx):
    _, lengths, ids, weight = _case(batch * 13 + len(mode), batch)
    offsets = offsets_of(lengths)
    if not include_last_offset:
        offsets = offsets[:-1]
    _compare(ids, weight, offsets, tol=1e-6, mode=mode, include_last_offset=include_last_offset,
             padding_idx=padding_idx)


@pytest.mark.parametrize("batch", [0, 5, 64])
def test_per_sample_weights_equal_torch(batch):
    gen, lengths, ids, weight = _case(batch + 1, batch)
    psw = torch.rand(ids.shape, generator=gen)
    offsets = offsets_of(lengths)[:-1]
    got = tkt.embedding_bag(ids, weight, offsets, mode="sum", per_sample_weights=psw)
    want = F.embedding_bag(ids, weight, offsets, mode="sum", per_sample_weights=psw)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("ids_dtype,offsets_dtype",
                         list(itertools.product([torch.int32, torch.int64], repeat=2)))
def test_index_dtypes(ids_dtype, offsets_dtype):
    _, lengths, ids, weight = _case(5, 12)
    offsets = offsets_of(lengths, offsets_dtype)[:-1]
    want = F.embedding_bag(ids, weight, offsets.long(), mode="sum")
    assert torch.equal(tkt.embedding_bag(ids.to(ids_dtype), weight, offsets, mode="sum"), want)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_2d_input_equals_torch(mode):
    gen = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 10, (6, 4), generator=gen)
    weight = torch.randn(10, 3, generator=gen)
    _compare(ids, weight, None, tol=1e-6, mode=mode)
    _compare(ids[:0], weight, None, mode=mode)


def test_ignored_tail_with_include_last_offset():
    # Ids after offsets[-1] belong to no bag, as in torch's forward. Their rows get no gradient:
    # torch 2.14's backward gives the row of such an id a value most of the time (it reads a bag
    # past the last one), so the gradient is checked against the one worked out by hand.
    weight = torch.randn(6, 2)
    ids = torch.tensor([1, 2, 3, 4, 5])
    offsets = torch.tensor([0, 2, 4])
    w = weight.clone().requires_grad_(True)
    got = tkt.embedding_bag(ids, w, offsets, mode="sum", include_last_offset=True)
    want = F.embedding_bag(ids, weight, offsets, mode="sum", include_last_offset=True)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    grad = torch.randn(got.shape)
    g, = torch.autograd.grad(got, w, grad)
    expected = torch.zeros(6, 2)
    expected[1] = expected[2] = grad[0]
    expected[3] = expected[4] = grad[1]
    torch.testing.assert_close(g, expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_table_dtypes(dtype):
    _, lengths, ids, weight = _case(8, 30, dtype=dtype)
    offsets = offsets_of(lengths)[:-1]
    got = tkt.embedding_bag(ids, weight, offsets, mode="mean")
    want = F.embedding_bag(ids, weight.double(), offsets, mode="mean").to(dtype)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck(mode):
    gen = torch.Generator().manual_seed(4)
    ids = torch.tensor([0, 2, 2, 5, 1, 3, 5])
    offsets = torch.tensor([0, 3, 3, 6])  # an empty bag, and a last one of one id
    # Distinct values so that max mode's winners are not ties (gradcheck perturbs them).
    weight = (torch.randperm(36, generator=gen).double() / 7).view(6, 6).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda w: tkt.embedding_bag(ids, w, offsets, mode=mode, padding_idx=1), (weight,))
    if mode == "sum":
        psw = torch.rand(7, dtype=torch.float64, generator=gen, requires_grad=True)
        assert torch.autograd.gradcheck(
            lambda w, p: tkt.embedding_bag(ids, w, offsets, mode="sum", per_sample_weights=p,
                                           padding_idx=2),
            (weight, psw))
        ids2 = ids[:6].view(2, 3)
        psw2 = psw.detach()[:6].view(2, 3).requires_grad_(True)
        assert torch.autograd.gradcheck(
            lambda w, p: tkt.embedding_bag(ids2, w, None, mode="sum", per_sample_weights=p),
            (weight, psw2))


def test_opcheck():
    ids = torch.tensor([0, 2, 2, 5, 1, 3])
    offsets = torch.tensor([0, 3, 3])
    weight = torch.randn(6, 4, requires_grad=True)
    psw = torch.rand(6, requires_grad=True)
    for args in [
        (ids, weight, offsets, "sum", None, False, None),
        (ids, weight, offsets, "mean", None, False, 2),
        (ids, weight, offsets, "max", None, False, None),
        (ids, weight, offsets, "sum", psw, False, None),
        (ids, weight, torch.tensor([0, 3, 6]), "sum", None, True, None),
        (ids.view(2, 3), weight, None, "mean", None, False, None),
    ]:
        torch.library.opcheck(TK.embedding_bag, args)
    grad = torch.randn(3, 4)
    torch.library.opcheck(TK.embedding_bag_backward,
                          (grad, ids, weight.detach(), offsets, "max", None, False, None))


def test_compile_without_graph_breaks():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Parameter(torch.randn(50, 8))
            self.linear = torch.nn.Linear(8 + 4 * 3, 1)

        def forward(self, ids, offsets, dense_values, dense_offsets):
            pooled = tkt.embedding_bag(ids, self.table, offsets, mode="sum")
            padded = TK.jagged_to_padded_dense(dense_values, [dense_offsets], [4], 0.0)
            return self.linear(torch.cat([pooled, padded.flatten(1)], 1)).sum()

    model = Model()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)  # a break raises
    ids = torch.tensor([1, 4, 4, 9, 30])
    offsets = torch.tensor([0, 2, 2])  # 3 bags, one empty
    dense_values = torch.randn(6, 3, requires_grad=True)
    dense_offsets = torch.tensor([0, 1, 1, 6])  # 3 rows, one empty, one truncated
    loss = compiled(ids, offsets, dense_values, dense_offsets)
    loss.backward()
    want = model(ids, offsets, dense_values, dense_offsets)
    torch.testing.assert_close(loss, want)
    assert model.table.grad is not None and dense_values.grad is not None
