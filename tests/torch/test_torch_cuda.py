"""torch.ops.tensorkit.* on CUDA tensors: which operators have a CUDA kernel (checked without a
device too), and, where a device exists, each of them equal to its CPU kernel (forward and
gradients), on torch's current stream, with malformed inputs raising; the operators without a
device path refuse CUDA tensors naming the operator."""

import pytest
import torch

import tensorkit.torch as tkt
from torch_env import TK, offsets_of, random_lengths

# The operators with a CUDA kernel (the features library's device bodies) and those without.
ON_CUDA = ["embedding_bag", "embedding_bag_backward", "embedding_bags", "embedding_bags_backward",
           "jagged_to_padded_dense", "segment_reduce", "fill_empty_rows", "fill_empty_rows_grad",
           "bucketize"]
CPU_ONLY = ["asynchronous_complete_cumsum", "jagged_to_padded_dense_backward",
            "dense_to_jagged_forward", "permute_2D_sparse_data",
            "block_bucketize_sparse_features", "embedding_bag_sparse_backward",
            "segment_reduce_backward"]

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def _has_kernel(name, key):
    return torch._C._dispatch_has_kernel_for_dispatch_key(f"tensorkit::{name}", key)


@pytest.mark.parametrize("name", ON_CUDA)
def test_registered_for_cuda(name):
    assert _has_kernel(name, "CPU") and _has_kernel(name, "CUDA")


@pytest.mark.parametrize("name", CPU_ONLY)
def test_cpu_only(name):
    assert _has_kernel(name, "CPU") and not _has_kernel(name, "CUDA")


def _both(fn, *args):
    """fn on the CPU arguments and on their CUDA copies, the second result brought back."""
    cpu = fn(*args)
    dev = fn(*[a.cuda() if isinstance(a, torch.Tensor) else
               [t.cuda() for t in a] if isinstance(a, list) else a for a in args])
    if isinstance(dev, (tuple, list)):
        return cpu, type(dev)(d.cpu() if d is not None else None for d in dev)
    return cpu, dev.cpu()


@needs_cuda
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_equals_cpu(mode):
    gen = torch.Generator().manual_seed(3)
    lengths = random_lengths(gen, 200, 9)
    ids = torch.randint(0, 500, (int(lengths.sum()),), generator=gen)
    offsets = offsets_of(lengths)[:-1]
    weight = torch.randn(500, 24, generator=gen)
    grad = torch.randn(200, 24, generator=gen)

    def run(ids, weight, offsets, grad):
        w = weight.clone().requires_grad_(True)
        out = tkt.embedding_bag(ids, w, offsets, mode=mode, padding_idx=7)
        out.backward(grad)
        return out.detach(), w.grad

    (out, g), (out_d, g_d) = _both(run, ids, weight, offsets, grad)
    assert torch.equal(out, out_d)  # the library's device bodies give the CPU's bits
    assert torch.equal(g, g_d)


@needs_cuda
def test_embedding_bags_equal_cpu():
    gen = torch.Generator().manual_seed(5)
    sizes = [40, 90, 25]
    tables = [torch.randn(v, 8, generator=gen) for v in sizes]
    lengths = random_lengths(gen, 3 * 50, 6)
    per = lengths.view(3, 50).sum(1).tolist()
    values = torch.cat([torch.randint(0, v, (n,), generator=gen) for v, n in zip(sizes, per)])
    psw = torch.rand(values.numel(), generator=gen)
    grad = torch.randn(50, 24, generator=gen)

    def run(tables, values, lengths, psw, grad):
        leaves = [t.clone().requires_grad_(True) for t in tables]
        w = psw.clone().requires_grad_(True)
        out = tkt.embedding_bags(leaves, values, lengths, ["sum", "mean", "sqrtn"], w)
        out.backward(grad)
        return (out.detach(), w.grad, *[t.grad for t in leaves])

    cpu, dev = _both(run, tables, values, lengths, psw, grad)
    for a, b in zip(cpu, dev):
        torch.testing.assert_close(a, b)


@needs_cuda
def test_feature_ops_equal_cpu():
    gen = torch.Generator().manual_seed(6)
    lengths = random_lengths(gen, 64, 7)
    offsets = offsets_of(lengths)
    values = torch.randn(int(lengths.sum()), 3, generator=gen)
    cpu, dev = _both(lambda v, o: TK.jagged_to_padded_dense(v, [o], [5], -1.0), values, offsets)
    assert torch.equal(cpu, dev)

    ids = torch.sort(torch.randint(0, 10, (100,), generator=gen)).values
    data = torch.randn(100, 4, generator=gen)
    for reduce in ("sum", "mean", "max"):
        cpu, dev = _both(lambda d, s: TK.segment_reduce(d, s, 10, reduce, True), data, ids)
        assert torch.equal(cpu, dev)

    flat = values[:, 0].contiguous()
    boundaries = torch.linspace(-2, 2, 9)
    cpu, dev = _both(lambda v, b, o: TK.bucketize(v, b, o), flat, boundaries, offsets)
    assert torch.equal(cpu, dev)

    indices = torch.tensor([[0, 1], [2, 0], [2, 3], [5, 1]])
    vals = torch.tensor([1.0, 2.0, 3.0, 4.0])
    cpu, dev = _both(lambda i, v, d: TK.fill_empty_rows(i, v, [7, 4], d), indices, vals,
                     torch.tensor(-1.0))
    for a, b in zip(cpu, dev):
        assert torch.equal(a, b)
    rev = cpu[3]
    grad_values = torch.randn(cpu[1].shape, generator=gen)
    cpu, dev = _both(lambda r, g: TK.fill_empty_rows_grad(r, g), rev, grad_values)
    for a, b in zip(cpu, dev):
        assert torch.equal(a, b)


@needs_cuda
def test_runs_on_torchs_current_stream():
    gen = torch.Generator().manual_seed(8)
    weight = torch.randn(1000, 64, generator=gen)
    ids = torch.randint(0, 1000, (4000,), generator=gen)
    offsets = torch.arange(0, 4000, 40)
    want = tkt.embedding_bag(ids, weight, offsets, mode="sum")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        # Made and used on the side stream only: correct results need the op to run there.
        w, i, o = weight.cuda(), ids.cuda(), offsets.cuda()
        got = tkt.embedding_bag(i, w, o, mode="sum") * 1.0
    stream.synchronize()
    assert torch.equal(got.cpu(), want)


@needs_cuda
def test_malformed_inputs_raise_on_cuda():
    weight = torch.randn(5, 4, device="cuda")
    with pytest.raises(RuntimeError, match="tensorkit::embedding_bag.*id 9"):
        tkt.embedding_bag(torch.tensor([1, 9], device="cuda"), weight,
                          torch.tensor([0], device="cuda"), mode="sum")
    with pytest.raises(RuntimeError, match="tensorkit::embedding_bag.*offsets"):
        tkt.embedding_bag(torch.tensor([1, 2], device="cuda"), weight,
                          torch.tensor([0, 3], device="cuda"), mode="sum")


@needs_cuda
def test_ops_without_device_path_refuse_naming_the_op():
    lengths = torch.tensor([[1, 2], [0, 1]], device="cuda")
    values = torch.arange(4, device="cuda")
    perm = torch.tensor([1, 0], dtype=torch.int32, device="cuda")
    with pytest.raises((RuntimeError, NotImplementedError), match="permute_2D_sparse_data"):
        TK.permute_2D_sparse_data(perm, lengths, values)
