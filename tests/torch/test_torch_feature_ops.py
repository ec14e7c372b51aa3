"""The feature operators of the second step: embedding_bags against FBGEMM's CPU table-batched
embedding and per-table F.embedding_bag, embedding_bag's sparse gradient against torch's, and
fill_empty_rows, segment_reduce, bucketize and permute_2D_sparse_data's gradients against torch
references; gradcheck in float64, opcheck, and malformed inputs as RuntimeErrors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tensorkit.torch as tkt
from torch_env import FB, HAVE_FBGEMM, TK, offsets_of, random_lengths

needs_fbgemm = pytest.mark.skipif(not HAVE_FBGEMM, reason="fbgemm_gpu is not installed")


def _kjt(gen, sizes, B, weighted=False):
    lengths = random_lengths(gen, len(sizes) * B, 4)
    per = lengths.view(len(sizes), B).sum(1).tolist()
    values = torch.cat([torch.randint(0, v, (n,), generator=gen) for v, n in zip(sizes, per)]
                       or [torch.zeros(0, dtype=torch.long)])
    weights = torch.rand(values.numel(), generator=gen) if weighted else None
    return values, lengths, weights


def _reference(tables, values, lengths, modes, weights=None):
    F_, B = len(tables), lengths.numel() // len(tables)
    lens = lengths.view(F_, B)
    out, start = [], 0
    for f, table in enumerate(tables):
        n = int(lens[f].sum())
        offsets = offsets_of(lens[f])[:-1]
        w = None if weights is None else weights[start:start + n]
        out.append(F.embedding_bag(values[start:start + n], table, offsets, mode=modes[f],
                                   per_sample_weights=w))
        start += n
    return torch.cat(out, 1)


@pytest.mark.parametrize("B", [0, 1, 17])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_bags_equals_torch(B, weighted):
    gen = torch.Generator().manual_seed(B + 50 * weighted)
    sizes, dims = [7, 30, 5], [4, 3, 8]
    tables = [torch.randn(v, d, generator=gen) for v, d in zip(sizes, dims)]
    values, lengths, weights = _kjt(gen, sizes, B, weighted)
    modes = ["sum"] * 3 if weighted else ["sum", "mean", "max"]
    got = tkt.embedding_bags(tables, values, lengths, modes, weights)
    assert got.shape == (B, sum(dims))
    torch.testing.assert_close(got, _reference(tables, values, lengths, modes, weights))
    # lengths [F, B] as well as TorchRec's [F * B]
    assert torch.equal(tkt.embedding_bags(tables, values, lengths.view(3, B), modes, weights), got)


@pytest.mark.parametrize("modes", [["sum", "mean", "max"], ["sum", "sum", "sum"]])
def test_embedding_bags_gradients(modes):
    gen = torch.Generator().manual_seed(4)
    sizes = [6, 9, 4]
    tables = [torch.randn(v, 3, generator=gen, dtype=torch.float64, requires_grad=True)
              for v in sizes]
    values, lengths, _ = _kjt(gen, sizes, 5)
    assert torch.autograd.gradcheck(
        lambda *t: tkt.embedding_bags(list(t), values, lengths, modes), tuple(tables))
    grad = torch.randn(5, 9, dtype=torch.float64, generator=gen)
    got = torch.autograd.grad(tkt.embedding_bags(tables, values, lengths, modes), tables, grad)
    want = torch.autograd.grad(_reference(tables, values, lengths, modes), tables, grad)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    if modes[0] == "sum" and modes[1] == "sum":
        w = torch.rand(values.numel(), dtype=torch.float64, generator=gen, requires_grad=True)
        assert torch.autograd.gradcheck(
            lambda ww: tkt.embedding_bags(tables, values, lengths, modes, ww), (w,))


def _weighted_reference(tables, values, lengths, modes, weights):
    # From torch ops only, differentiable in the tables and the weights: sum, mean over the count
    # of ids (FBGEMM's PoolingMode.MEAN), sqrtn over the root of the sum of squared weights (0
    # where that is 0).
    F_, B = len(tables), lengths.numel() // len(tables)
    lens = lengths.view(F_, B)
    out, start = [], 0
    for f, table in enumerate(tables):
        n = int(lens[f].sum())
        offsets = offsets_of(lens[f])[:-1]
        ids, w = values[start:start + n], weights[start:start + n]
        bag = torch.repeat_interleave(torch.arange(B), lens[f])
        summed = F.embedding_bag(ids, table, offsets, mode="sum", per_sample_weights=w)
        if modes[f] == "mean":
            summed = summed / lens[f].clamp_min(1).to(summed.dtype).unsqueeze(1)
        elif modes[f] == "sqrtn":
            r = torch.zeros(B, dtype=w.dtype).index_add(0, bag, w * w).sqrt().unsqueeze(1)
            summed = torch.where(r > 0, summed / torch.where(r > 0, r, torch.ones_like(r)),
                                 torch.zeros_like(summed))
        out.append(summed)
        start += n
    return torch.cat(out, 1)


@pytest.mark.parametrize("modes", [["mean", "sqrtn", "sum"], ["sqrtn", "mean", "mean"]])
@pytest.mark.parametrize("B", [0, 1, 6])
def test_embedding_bags_weighted_modes(modes, B):
    gen = torch.Generator().manual_seed(B * 7 + len(modes[0]))
    sizes = [6, 9, 4]
    tables = [torch.randn(v, 3, generator=gen, dtype=torch.float64, requires_grad=True)
              for v in sizes]
    values, lengths, _ = _kjt(gen, sizes, B)
    psw = (torch.rand(values.numel(), dtype=torch.float64, generator=gen) + 0.1).requires_grad_()
    got = tkt.embedding_bags(tables, values, lengths, modes, psw)
    want = _weighted_reference(tables, values, lengths, modes, psw)
    torch.testing.assert_close(got, want)
    grad = torch.randn(got.shape, dtype=torch.float64, generator=gen)
    got_grads = torch.autograd.grad(got, [*tables, psw], grad)
    want_grads = torch.autograd.grad(want, [*tables, psw], grad)
    for a, b in zip(got_grads, want_grads):
        torch.testing.assert_close(a, b)
    if B:
        assert torch.autograd.gradcheck(
            lambda w, *t: tkt.embedding_bags(list(t), values, lengths, modes, w),
            (psw, *tables))


def test_embedding_bags_weighted_sqrtn_zero_weights():
    # A bag whose weights are all 0 gives zeros and no gradient (the divisor 0 rule).
    table = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    psw = torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64, requires_grad=True)
    out = tkt.embedding_bags([table], torch.tensor([1, 2, 3]), torch.tensor([2, 1]), "sqrtn",
                             psw)
    assert torch.equal(out[0], torch.zeros(2, dtype=torch.float64))
    torch.testing.assert_close(out[1], table.detach()[3])
    out.sum().backward()
    assert torch.equal(psw.grad, torch.zeros(3, dtype=torch.float64))
    assert torch.equal(table.grad[1:3], torch.zeros(2, 2, dtype=torch.float64))


def test_embedding_bags_weighted_max_refused():
    with pytest.raises(RuntimeError, match="tensorkit::embedding_bags"):
        tkt.embedding_bags([torch.randn(3, 2)], torch.tensor([0, 1]), torch.tensor([2]), "max",
                           torch.rand(2))


@needs_fbgemm
@pytest.mark.parametrize("B", [1, 33])
def test_embedding_bags_weighted_mean_equals_fbgemm_tbe(B):
    # FBGEMM's weighted MEAN pooling divides by the count of ids. (Its per_sample_weights
    # gradient leaves that division out, so only the forward and the table gradient compare.)
    from fbgemm_gpu.split_embedding_configs import EmbOptimType
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import (EmbeddingLocation,
                                                                      PoolingMode)
    from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
        ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)

    gen = torch.Generator().manual_seed(B + 3)
    sizes, dims = [50, 20], [8, 4]
    tbe = SplitTableBatchedEmbeddingBagsCodegen(
        [(v, d, EmbeddingLocation.HOST, ComputeDevice.CPU) for v, d in zip(sizes, dims)],
        optimizer=EmbOptimType.EXACT_SGD, learning_rate=0.0, pooling_mode=PoolingMode.MEAN)
    with torch.no_grad():
        for t in tbe.split_embedding_weights():
            t.copy_(torch.randn(t.shape, generator=gen))
    tables = [t.detach().clone() for t in tbe.split_embedding_weights()]
    values, lengths, psw = _kjt(gen, sizes, B, weighted=True)
    want = tbe(values, offsets_of(lengths), per_sample_weights=psw)
    got = tkt.embedding_bags(tables, values, lengths, "mean", psw)
    torch.testing.assert_close(got, want.detach(), rtol=1e-5, atol=1e-5)


@needs_fbgemm
@pytest.mark.parametrize("B", [1, 64])
@pytest.mark.parametrize("pooling", ["sum", "mean"])
def test_embedding_bags_equals_fbgemm_tbe(B, pooling):
    from fbgemm_gpu.split_embedding_configs import EmbOptimType
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import (EmbeddingLocation,
                                                                      PoolingMode)
    from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
        ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)

    gen = torch.Generator().manual_seed(B)
    sizes, dims = [50, 20, 33], [8, 4, 12]
    tbe = SplitTableBatchedEmbeddingBagsCodegen(
        [(v, d, EmbeddingLocation.HOST, ComputeDevice.CPU) for v, d in zip(sizes, dims)],
        optimizer=EmbOptimType.EXACT_SGD, learning_rate=0.0,
        pooling_mode=PoolingMode.SUM if pooling == "sum" else PoolingMode.MEAN)
    tables = [t.detach().clone() for t in tbe.split_embedding_weights()]
    values, lengths, _ = _kjt(gen, sizes, B)
    want = tbe(values, offsets_of(lengths))
    got = tkt.embedding_bags(tables, values, lengths, pooling)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_embedding_bags_opcheck():
    tables = [torch.randn(5, 2, requires_grad=True), torch.randn(4, 3, requires_grad=True)]
    values, lengths = torch.tensor([1, 4, 0, 3, 2]), torch.tensor([2, 0, 1, 2])
    torch.library.opcheck(TK.embedding_bags, (tables, values, lengths, ["sum", "max"]))
    torch.library.opcheck(TK.embedding_bags,
                          (tables, values, lengths, ["sum", "sum"], torch.rand(5)))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("B", [0, 1, 9])
def test_embedding_bag_sparse_gradient_equals_torch(mode, B):
    gen = torch.Generator().manual_seed(B)
    lengths = random_lengths(gen, B, 5)
    ids = torch.randint(0, 12, (int(lengths.sum()),), generator=gen)
    offsets = offsets_of(lengths)[:-1]
    w1 = torch.randn(12, 3, generator=gen, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    grad = torch.randn(B, 3, generator=gen)
    tkt.embedding_bag(ids, w1, offsets, mode=mode, sparse=True, padding_idx=2).backward(grad)
    # torch has no sparse gradient for max: its dense one is the reference there
    F.embedding_bag(ids, w2, offsets, mode=mode, sparse=mode != "max",
                    padding_idx=2).backward(grad)
    assert w1.grad.layout == torch.sparse_coo
    torch.testing.assert_close(w1.grad.to_dense(), w2.grad.to_dense())
    # the pattern: exactly the ids that occur, padding excluded
    assert w1.grad._indices()[0].tolist() == sorted(set(ids.tolist()) - {2})
    # coalesced as it leaves the operator
    w3 = w1.detach().clone().requires_grad_(True)
    g, = torch.autograd.grad(tkt.embedding_bag(ids, w3, offsets, mode=mode, sparse=True,
                                               padding_idx=2), w3, grad)
    assert g.is_coalesced()


def test_embedding_bag_sparse_trains_with_sparse_sgd():
    w = torch.nn.Parameter(torch.ones(6, 2))
    opt = torch.optim.SGD([w], lr=0.5)
    tkt.embedding_bag(torch.tensor([1, 3, 3]), w, torch.tensor([0, 1]), mode="sum",
                      sparse=True).sum().backward()
    opt.step()
    assert w[1].tolist() == [0.5, 0.5] and w[3].tolist() == [0.0, 0.0] and w[0].tolist() == [1, 1]


# ---- fill_empty_rows ----------------------------------------------------------------------


def _fill_reference(indices, values, rows, default):
    idx, val = indices.numpy(), values.numpy()
    out_i, out_v, rim = [], [], np.zeros(len(idx), dtype=np.int64)
    present = set(idx[:, 0].tolist())
    order = np.argsort(idx[:, 0], kind="stable")
    by_row = {r: [k for k in order if idx[k, 0] == r] for r in range(rows)}
    for r in range(rows):
        if r not in present:
            out_i.append([r] + [0] * (idx.shape[1] - 1))
            out_v.append(default)
        for k in by_row[r]:
            rim[k] = len(out_i)
            out_i.append(idx[k].tolist())
            out_v.append(val[k])
    empty = np.array([r not in present for r in range(rows)])
    return (torch.tensor(out_i, dtype=torch.long).reshape(-1, idx.shape[1]),
            torch.tensor(np.array(out_v, dtype=val.dtype)), torch.tensor(empty),
            torch.tensor(rim))


@pytest.mark.parametrize("rows", [0, 1, 6])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_fill_empty_rows_equals_reference(rows, dtype):
    gen = torch.Generator().manual_seed(rows)
    nnz = 0 if rows == 0 else 5
    indices = torch.stack([torch.randint(0, max(rows, 1), (nnz,), generator=gen),
                           torch.randint(0, 4, (nnz,), generator=gen)], 1)
    indices = indices[torch.argsort(indices[:, 0] * 4 + indices[:, 1])]
    values = torch.arange(1, nnz + 1).to(dtype)
    got = TK.fill_empty_rows(indices, values, [rows, 4], torch.tensor(-7, dtype=dtype))
    want = _fill_reference(indices, values, rows, -7)
    for a, b in zip(got, want):
        assert torch.equal(a, b.to(a.dtype)), (a, b)


def test_fill_empty_rows_gradient():
    indices = torch.tensor([[0, 1], [2, 0], [2, 3]])
    values = torch.randn(3, dtype=torch.float64, requires_grad=True)
    default = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda v, d: TK.fill_empty_rows(indices, v, [5, 4], d)[1], (values, default))
    torch.library.opcheck(TK.fill_empty_rows, (indices, values.detach(), [5, 4],
                                               torch.tensor(0.5, dtype=torch.float64)))


# ---- segment_reduce -----------------------------------------------------------------------


def _segment_reference(data, ids, num, reduce, sorted_):
    ids = ids.long()
    keep = ids >= 0
    data, ids = data[keep], ids[keep]
    out = torch.zeros(num, *data.shape[1:], dtype=data.dtype)
    idx = ids.view(-1, *[1] * (data.dim() - 1)).expand_as(data)
    if reduce in ("sum", "mean", "sqrtn"):
        out.scatter_add_(0, idx, data)
        count = torch.zeros(num, dtype=data.dtype).index_add_(0, ids, torch.ones_like(ids,
                                                                                    dtype=data.dtype))
        scale = {"sum": torch.ones_like(count), "mean": count, "sqrtn": count.sqrt()}[reduce]
        return out / scale.clamp_min(1).view(-1, *[1] * (data.dim() - 1))
    out = out.scatter_reduce(0, idx, data, "amax" if reduce == "max" else "amin",
                             include_self=False)
    if not sorted_:  # TensorFlow's unsorted rule: empty segments hold the dtype's extreme
        info = torch.finfo(data.dtype) if data.is_floating_point() else torch.iinfo(data.dtype)
        counts = torch.zeros(num).index_add_(0, ids, torch.ones(ids.shape[0]))
        fill = info.min if reduce == "max" else info.max
        out[counts == 0] = fill
    return out


@pytest.mark.parametrize("reduce", ["sum", "mean", "sqrtn", "max", "min"])
@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("n", [0, 1, 40])
def test_segment_reduce_equals_torch(reduce, sorted_, n):
    gen = torch.Generator().manual_seed(n)
    num = 7
    ids = torch.randint(0 if sorted_ else -1, num, (n,), generator=gen)
    if sorted_:
        ids = ids.sort().values
    data = torch.randn(n, 3, generator=gen)
    got = TK.segment_reduce(data, ids, num, reduce, sorted_)
    torch.testing.assert_close(got, _segment_reference(data, ids, num, reduce, sorted_))


@pytest.mark.parametrize("reduce", ["sum", "mean", "sqrtn", "max", "min"])
@pytest.mark.parametrize("sorted_", [True, False])
def test_segment_reduce_gradients(reduce, sorted_):
    gen = torch.Generator().manual_seed(8)
    ids = torch.tensor([0, 0, 1, 3, 3, 3]) if sorted_ else torch.tensor([3, 0, -1, 1, 0, 3])
    data = torch.randn(6, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    assert torch.autograd.gradcheck(lambda d: TK.segment_reduce(d, ids, 5, reduce, sorted_),
                                    (data,))
    torch.library.opcheck(TK.segment_reduce, (data, ids, 5, reduce, sorted_))


# ---- bucketize ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float64])
@pytest.mark.parametrize("batch", [0, 1, 12])
def test_bucketize_jagged_equals_torch(dtype, batch):
    gen = torch.Generator().manual_seed(batch)
    lengths = random_lengths(gen, batch, 5)
    values = (torch.randn(int(lengths.sum()), generator=gen) * 10).to(dtype)
    boundaries = torch.tensor([-5.0, -1.0, 0.0, 0.0, 2.5, 8.0])
    for b in (boundaries, boundaries.double()):
        got = TK.bucketize(values, b, offsets_of(lengths))
        assert got.dtype == torch.int32
        assert torch.equal(got, torch.bucketize(values, b, right=True, out_int32=True))
    assert torch.equal(TK.bucketize(values, boundaries),
                       torch.bucketize(values, boundaries, right=True, out_int32=True))
    torch.library.opcheck(TK.bucketize, (values, boundaries, offsets_of(lengths)))


# ---- permute_2D_sparse_data's gradients ---------------------------------------------------


@pytest.mark.parametrize("permute", [[2, 0, 1], [1, 1, 0], []])
def test_permute_gradients(permute):
    gen = torch.Generator().manual_seed(len(permute))
    lengths = random_lengths(gen, 3 * 4, 3).view(3, 4)
    n = int(lengths.sum())
    values = torch.randn(n, dtype=torch.float64, generator=gen, requires_grad=True)
    weights = torch.rand(n, dtype=torch.float64, generator=gen, requires_grad=True)
    perm = torch.tensor(permute, dtype=torch.int32)
    assert torch.autograd.gradcheck(
        lambda v, w: TK.permute_2D_sparse_data(perm, lengths, v, w)[1:], (values, weights))


@needs_fbgemm
def test_permute_gradients_equal_fbgemm():
    gen = torch.Generator().manual_seed(2)
    lengths = random_lengths(gen, 4 * 6, 3).view(4, 6)
    n = int(lengths.sum())
    perm = torch.tensor([3, 1, 0, 2], dtype=torch.int32)
    grads = []
    for op in (TK, FB):
        v = torch.randn(n, generator=torch.Generator().manual_seed(0), requires_grad=True)
        w = torch.rand(n, generator=torch.Generator().manual_seed(1), requires_grad=True)
        _, pv, pw = op.permute_2D_sparse_data(perm, lengths, v, w)
        (pv * torch.arange(n) + pw * torch.arange(n) ** 2).sum().backward()
        grads.append((v.grad, w.grad))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


def test_malformed_feature_ops():
    cases = [
        (lambda: tkt.embedding_bags([torch.randn(3, 2)], torch.tensor([0, 5]),
                                    torch.tensor([1, 1]), "sum"),
         ["tensorkit::embedding_bags", "id 5"]),
        (lambda: tkt.embedding_bags([torch.randn(3, 2)] * 2, torch.tensor([0, 1]),
                                    torch.tensor([1, 2, 0, 1]), "sum"),
         ["tensorkit::embedding_bags"]),
        (lambda: tkt.embedding_bags([torch.randn(3, 2)] * 2, torch.tensor([0]),
                                    torch.tensor([1, 2, 0]), "sum"),
         ["tensorkit::embedding_bags", "[F * B]"]),
        (lambda: TK.segment_reduce(torch.ones(3, 2), torch.tensor([0, 2, 1]), 3),
         ["tensorkit::segment_reduce"]),
        (lambda: TK.segment_reduce(torch.ones(3, 2), torch.tensor([0, 1, 9]), 3, "sum", False),
         ["tensorkit::segment_reduce", "9"]),
        (lambda: TK.fill_empty_rows(torch.tensor([[5, 0]]), torch.ones(1), [3, 2],
                                    torch.tensor(0.0)),
         ["tensorkit::fill_empty_rows", "5"]),
        (lambda: TK.bucketize(torch.ones(3), torch.tensor([1.0, 0.0])),
         ["tensorkit::bucketize"]),
        (lambda: TK.bucketize(torch.ones(3), torch.tensor([1.0]), torch.tensor([0, 4])),
         ["tensorkit::bucketize"]),
        (lambda: tkt.embedding_bag(torch.tensor([1, 9]), torch.randn(4, 2, requires_grad=True),
                                   torch.tensor([0]), mode="sum", sparse=True).sum().backward(),
         ["tensorkit::embedding_bag", "id 9"]),
    ]
    for fn, needles in cases:
        with pytest.raises(RuntimeError) as e:
            fn()
        for needle in needles:
            assert needle in str(e.value), (needle, str(e.value))
