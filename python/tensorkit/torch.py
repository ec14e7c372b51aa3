"""tensorkit's feature operators as PyTorch operators: ``torch.ops.tensorkit.*``.

Importing this module loads the operator library built against the installed torch
(``libtensorkit_torch_ops.so``, from ``embed/torch/``) and registers, for each operator, what
``torch.compile`` and autograd need beside its C++ kernel: a fake (meta) kernel and, where the
operator is differentiable, its backward. Where FBGEMM has the operator, schema and semantics are
FBGEMM's (``torch.ops.fbgemm.*``); ``embedding_bag`` takes the arguments of
``torch.nn.functional.embedding_bag``. Malformed inputs raise RuntimeError naming the operator and
the position.

The library is found, in this order, at ``$TENSORKIT_TORCH_OPS``, beside this file, or in the
build tree of the checkout this file belongs to (``build/lib``).
"""

import os

import torch

__all__ = ["embedding_bag", "library_path", "ops"]

_LIBRARY_NAME = "libtensorkit_torch_ops.so"


def library_path():
    """The path of the operator library that this module loads (FileNotFoundError if none)."""
    env = os.environ.get("TENSORKIT_TORCH_OPS")
    if env:
        if not os.path.exists(env):
            raise FileNotFoundError(f"TENSORKIT_TORCH_OPS names {env}, which does not exist")
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.dirname(os.path.realpath(__file__))  # python/tensorkit in a checkout
    for candidate in (
        os.path.join(here, _LIBRARY_NAME),
        os.path.join(source, "..", "..", "build", "lib", _LIBRARY_NAME),
    ):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise FileNotFoundError(
        f"{_LIBRARY_NAME} not found (set TENSORKIT_TORCH_OPS, or build it: `make torch-ops`)")


torch.ops.load_library(library_path())
ops = torch.ops.tensorkit


# ---- fake kernels: output shapes without data, for torch.compile and meta tensors -----------


@torch.library.register_fake("tensorkit::asynchronous_complete_cumsum")
def _cumsum_fake(t_in):
    torch._check(t_in.dim() in (1, 2), lambda: "t_in must be 1-D or 2-D")
    return t_in.new_empty([*t_in.shape[:-1], t_in.shape[-1] + 1])


@torch.library.register_fake("tensorkit::jagged_to_padded_dense")
def _jagged_to_padded_dense_fake(values, offsets, max_lengths, padding_value=0.0):
    torch._check(len(offsets) == 1 and len(max_lengths) == 1,
                 lambda: "one jagged dimension is supported")
    return values.new_empty([offsets[0].shape[0] - 1, max_lengths[0], *values.shape[1:]])


@torch.library.register_fake("tensorkit::jagged_to_padded_dense_backward")
def _jagged_to_padded_dense_backward_fake(grad_output, offsets, total_L):
    return grad_output.new_empty([total_L, *grad_output.shape[2:]])


@torch.library.register_fake("tensorkit::dense_to_jagged_forward")
def _dense_to_jagged_forward_fake(dense, x_offsets, total_L=None):
    if total_L is None:
        total_L = torch.library.get_ctx().new_dynamic_size()
    return dense.new_empty([total_L, *dense.shape[2:]])


@torch.library.register_fake("tensorkit::permute_2D_sparse_data")
def _permute_fake(permute, lengths, values, weights=None, permuted_lengths_sum=None):
    n = permuted_lengths_sum
    if n is None:
        n = torch.library.get_ctx().new_dynamic_size()
    out_weights = None if weights is None else weights.new_empty([n])
    return (lengths.new_empty([permute.shape[0], lengths.shape[1]]),
            values.new_empty([n, *values.shape[1:]]), out_weights)


def _num_bags(input, offsets, include_last_offset):
    if input.dim() == 2:
        return input.shape[0]
    return offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]


@torch.library.register_fake("tensorkit::embedding_bag")
def _embedding_bag_fake(input, weight, offsets=None, mode="mean", per_sample_weights=None,
                        include_last_offset=False, padding_idx=None):
    return weight.new_empty([_num_bags(input, offsets, include_last_offset), weight.shape[1]])


@torch.library.register_fake("tensorkit::embedding_bag_backward")
def _embedding_bag_backward_fake(grad, input, weight, offsets, mode, per_sample_weights,
                                 include_last_offset, padding_idx):
    return weight.new_empty(weight.shape)


# ---- autograd ------------------------------------------------------------------------------


def _jagged_to_padded_dense_setup(ctx, inputs, output):
    values, offsets, _max_lengths, _padding_value = inputs
    ctx.offsets = offsets
    ctx.total_L = values.shape[0]


def _jagged_to_padded_dense_backward(ctx, grad):
    # Padding and truncated items get no gradient; items no row covers get zeros.
    grad_values = ops.jagged_to_padded_dense_backward(grad, ctx.offsets, ctx.total_L)
    return grad_values, [None] * len(ctx.offsets), None, None


torch.library.register_autograd("tensorkit::jagged_to_padded_dense",
                                _jagged_to_padded_dense_backward,
                                setup_context=_jagged_to_padded_dense_setup)


def _dense_to_jagged_setup(ctx, inputs, output):
    dense, x_offsets, _total_L = inputs
    ctx.offsets = x_offsets
    ctx.max_length = dense.shape[1]


def _dense_to_jagged_backward(ctx, grad):
    grad_dense = ops.jagged_to_padded_dense(grad, ctx.offsets, [ctx.max_length], 0.0)
    return grad_dense, [None] * len(ctx.offsets), None


torch.library.register_autograd("tensorkit::dense_to_jagged_forward", _dense_to_jagged_backward,
                                setup_context=_dense_to_jagged_setup)

_lib = torch.library.Library("tensorkit", "IMPL")


def _dense_to_jagged(dense, x_offsets, total_L=None):
    # FBGEMM's composite: the jagged values and the offsets given.
    return ops.dense_to_jagged_forward(dense, x_offsets, total_L), x_offsets


_lib.impl("dense_to_jagged", _dense_to_jagged, "CompositeImplicitAutograd")


def _embedding_bag_setup(ctx, inputs, output):
    input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx = inputs
    ctx.args = (input, weight, offsets, mode, per_sample_weights, include_last_offset,
                padding_idx)


def _per_sample_weights_grad(grad, input, weight, offsets, include_last_offset, padding_idx):
    # d out[b] / d w[p] = weight[input[p]] for each id p of bag b: a dot product per id.
    flat = input.reshape(-1).long()
    if input.dim() == 2:
        bag = torch.arange(input.shape[0], device=input.device).repeat_interleave(input.shape[1])
        used = flat
    else:
        num_bags = _num_bags(input, offsets, include_last_offset)
        ends = offsets.long()
        if not include_last_offset:
            ends = torch.cat([ends, ends.new_tensor([flat.shape[0]])])
        counts = ends[1:] - ends[:-1]
        bag = torch.arange(num_bags, device=input.device).repeat_interleave(counts)
        used = flat[: bag.shape[0]]
    out = torch.zeros(flat.shape[0], dtype=grad.dtype, device=grad.device)
    dots = (grad[bag] * weight[used]).sum(-1)
    if padding_idx is not None:
        pad = padding_idx if padding_idx >= 0 else padding_idx + weight.shape[0]
        dots = torch.where(used == pad, torch.zeros_like(dots), dots)
    out[: bag.shape[0]] = dots
    return out.reshape(input.shape)


def _embedding_bag_backward(ctx, grad):
    input, weight, offsets, mode, psw, include_last_offset, padding_idx = ctx.args
    grad_weight = grad_psw = None
    if ctx.needs_input_grad[1]:
        grad_weight = ops.embedding_bag_backward(grad, input, weight, offsets, mode, psw,
                                                 include_last_offset, padding_idx)
    if psw is not None and ctx.needs_input_grad[4]:
        grad_psw = _per_sample_weights_grad(grad, input, weight, offsets, include_last_offset,
                                            padding_idx)
    return None, grad_weight, None, None, grad_psw, None, None


torch.library.register_autograd("tensorkit::embedding_bag", _embedding_bag_backward,
                                setup_context=_embedding_bag_setup)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """torch.nn.functional.embedding_bag on tensorkit's kernels: the same arguments and result
    (the bags' [B, D] reductions), a dense weight gradient. Bad offsets and ids out of range
    raise RuntimeError naming the position."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "tensorkit.torch.embedding_bag: max_norm, scale_grad_by_freq and sparse=True are not "
            "supported in this version")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "tensorkit.torch.embedding_bag: per_sample_weights are only supported for mode='sum' "
            f"(got mode={mode!r}), as in torch")
    return ops.embedding_bag(input, weight, offsets, mode, per_sample_weights,
                             include_last_offset, padding_idx)
