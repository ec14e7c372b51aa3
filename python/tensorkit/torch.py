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

__all__ = ["embedding_bag", "embedding_bags", "from_torchrec", "library_path", "ops",
           "to_torchrec", "use_for_torchrec"]

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
                        include_last_offset=False, padding_idx=None, sparse=False):
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
    (input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
     sparse) = inputs
    ctx.args = (input, weight, offsets, mode, per_sample_weights, include_last_offset,
                padding_idx)
    ctx.sparse = sparse


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
    if ctx.needs_input_grad[1] and ctx.sparse:
        # torch's sparse embedding gradient: a sparse_coo [V, D] with one sparse dim, here
        # coalesced (each id that occurs once, ascending).
        rows, grad_rows = ops.embedding_bag_sparse_backward(
            grad, input, weight, offsets, mode, psw, include_last_offset, padding_idx)
        grad_weight = torch.sparse_coo_tensor(rows.unsqueeze(0), grad_rows, weight.shape,
                                              is_coalesced=True, check_invariants=False)
    elif ctx.needs_input_grad[1]:
        grad_weight = ops.embedding_bag_backward(grad, input, weight, offsets, mode, psw,
                                                 include_last_offset, padding_idx)
    if psw is not None and ctx.needs_input_grad[4]:
        grad_psw = _per_sample_weights_grad(grad, input, weight, offsets, include_last_offset,
                                            padding_idx)
    return None, grad_weight, None, None, grad_psw, None, None, None


torch.library.register_autograd("tensorkit::embedding_bag", _embedding_bag_backward,
                                setup_context=_embedding_bag_setup)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """torch.nn.functional.embedding_bag on tensorkit's kernels: the same arguments and result
    (the bags' [B, D] reductions), a dense weight gradient or, with sparse=True, a
    torch.sparse_coo one (coalesced). Bad offsets and ids out of range raise RuntimeError naming
    the position."""
    if max_norm is not None or scale_grad_by_freq:
        raise NotImplementedError(
            "tensorkit.torch.embedding_bag: max_norm and scale_grad_by_freq are not supported in "
            "this version")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "tensorkit.torch.embedding_bag: per_sample_weights are only supported for mode='sum' "
            f"(got mode={mode!r}), as in torch")
    return ops.embedding_bag(input, weight, offsets, mode, per_sample_weights,
                             include_last_offset, padding_idx, sparse)


# ---- permute_2D_sparse_data: gradients of values and weights -------------------------------


def _permute_setup(ctx, inputs, output):
    permute, lengths, values, weights, _sum = inputs
    ctx.save_for_backward(permute, lengths)
    ctx.num_values = values.shape[0]
    ctx.has_weights = weights is not None


def _permute_sources(permute, lengths):
    # The input position of each output item: output feature i is input feature permute[i]'s
    # items in order. Repeated features send several output items to one input item, whose
    # gradients add up (FBGEMM's inverse permute assumes a permutation).
    per_feature = lengths.sum(1)
    starts = torch.cumsum(per_feature, 0) - per_feature
    chosen = per_feature[permute.long()]
    out_starts = torch.cumsum(chosen, 0) - chosen
    shift = torch.repeat_interleave(starts[permute.long()] - out_starts, chosen)
    return torch.arange(shift.shape[0], device=lengths.device) + shift


def _permute_backward(ctx, grad_lengths, grad_values, grad_weights):
    permute, lengths = ctx.saved_tensors
    src = _permute_sources(permute, lengths)

    def scatter(grad):
        if grad is None:
            return None
        out = grad.new_zeros([ctx.num_values, *grad.shape[1:]])
        return out.index_add_(0, src, grad)

    return (None, None, scatter(grad_values),
            scatter(grad_weights) if ctx.has_weights else None, None)


torch.library.register_autograd("tensorkit::permute_2D_sparse_data", _permute_backward,
                                setup_context=_permute_setup)


# ---- block_bucketize_sparse_features -------------------------------------------------------


@torch.library.register_fake("tensorkit::block_bucketize_sparse_features")
def _block_bucketize_fake(lengths, indices, bucketize_pos, sequence, block_sizes, my_size,
                          weights=None, batch_size_per_feature=None, max_B=-1,
                          block_bucketize_pos=None, keep_orig_idx=False, total_num_blocks=None,
                          keep_orig_idx_per_feature=None):
    n = indices.shape[0]
    return (lengths.new_empty([lengths.numel() * my_size]), indices.new_empty([n]),
            None if weights is None else weights.new_empty([n]),
            indices.new_empty([n]) if bucketize_pos else None,
            indices.new_empty([n]) if sequence else None)


# ---- embedding_bags: table-batched bags over a KJT's values and lengths --------------------


def _bags_batch(lengths, num_tables):
    return lengths.shape[1] if lengths.dim() == 2 else lengths.shape[0] // num_tables


@torch.library.register_fake("tensorkit::embedding_bags")
def _embedding_bags_fake(weights, values, lengths, modes, per_sample_weights=None):
    width = sum(w.shape[1] for w in weights)
    return weights[0].new_empty([_bags_batch(lengths, len(weights)), width])


@torch.library.register_fake("tensorkit::embedding_bags_backward")
def _embedding_bags_backward_fake(grad, weights, values, lengths, modes, per_sample_weights):
    return [w.new_empty(w.shape) for w in weights]


def _embedding_bags_setup(ctx, inputs, output):
    ctx.args = inputs
    # The weights' gradient under sqrtn reads the output (saved, not held: no reference cycle).
    ctx.save_for_backward(output if inputs[4] is not None and "sqrtn" in inputs[3] else None)


def _embedding_bags_weights_grad(grad, output, weights, values, lengths, modes, psw):
    # Position p of feature f, bag b, id v, weight w_p, x_p = weights[f][v], g = grad[b, cols
    # of f]; dot_p = g . x_p. sum: out = sum_q w_q x_q, so dot_p. mean (FBGEMM's: over the
    # count L of ids): dot_p / L. sqrtn (over r = sqrt(sum_q w_q^2)): out = S / r, so
    # dot_p / r - (g . out) w_p / r^2, and 0 where r = 0 (the forward gives 0 there).
    num_tables = len(weights)
    lens = lengths.reshape(num_tables, -1).long()
    batch = lens.shape[1]
    segment = torch.repeat_interleave(torch.arange(lens.numel(), device=values.device),
                                      lens.reshape(-1))
    grad_psw = psw.new_zeros(psw.shape)
    start = col = 0
    for f, count in enumerate(lens.sum(1).tolist()):
        width = weights[f].shape[1]
        stop = start + count
        rows = segment[start:stop] - f * batch
        g = grad[:, col:col + width]
        dots = (g[rows] * weights[f][values[start:stop].long()]).sum(-1)
        if modes[f] == "sum":
            part = dots
        elif modes[f] == "mean":
            part = dots / lens[f][rows].to(dots.dtype)
        elif modes[f] == "sqrtn":
            w = psw[start:stop].to(dots.dtype)
            r = torch.zeros(batch, dtype=dots.dtype, device=dots.device).index_add_(
                0, rows, w * w).sqrt()[rows]
            g_out = (g * output[:, col:col + width]).sum(-1)[rows]
            safe = torch.where(r > 0, r, torch.ones_like(r))
            part = torch.where(r > 0, dots / safe - g_out * w / (safe * safe),
                               torch.zeros_like(dots))
        else:  # max, min: the forward refuses weights
            raise RuntimeError(f"tensorkit::embedding_bags: mode {modes[f]!r} takes no weights")
        grad_psw[start:stop] = part.to(psw.dtype)
        start = stop
        col += width
    return grad_psw


def _embedding_bags_backward(ctx, grad):
    weights, values, lengths, modes, psw = ctx.args
    grads = None
    if any(ctx.needs_input_grad[0]) if isinstance(ctx.needs_input_grad[0], (list, tuple)) \
            else ctx.needs_input_grad[0]:
        grads = ops.embedding_bags_backward(grad, weights, values, lengths, modes, psw)
    grad_psw = None
    if psw is not None and ctx.needs_input_grad[4]:
        output, = ctx.saved_tensors
        grad_psw = _embedding_bags_weights_grad(grad, output, weights, values, lengths, modes,
                                                psw)
    return grads, None, None, None, grad_psw


torch.library.register_autograd("tensorkit::embedding_bags", _embedding_bags_backward,
                                setup_context=_embedding_bags_setup)


def embedding_bags(weights, values, lengths, modes="sum", per_sample_weights=None):
    """One table per feature of a KeyedJaggedTensor (its values and lengths [F * B] or [F, B],
    feature-major, TorchRec's layout) reduced into one [B, sum of D] output, feature f's bags in
    its columns: FBGEMM's table-batched embedding forward, with each table's gradient and the
    per_sample_weights' gradient.
    modes: one of "sum", "mean", "sqrtn", "max", "min", or one per table. With
    per_sample_weights (not for "max" and "min"), "mean" is FBGEMM's PoolingMode.MEAN: the
    weighted sum over the count of ids in the bag; "sqrtn" divides the weighted sum by the root
    of the sum of the squared weights (TensorFlow's embedding_lookup_sparse). FBGEMM's own
    per_sample_weights gradient under MEAN leaves out the 1 / count; this one is the derivative
    of the forward (gradcheck)."""
    weights = list(weights)
    if isinstance(modes, str):
        modes = [modes] * len(weights)
    return ops.embedding_bags(weights, values, lengths, list(modes), per_sample_weights)


@torch.library.register_fake("tensorkit::embedding_bag_sparse_backward")
def _embedding_bag_sparse_backward_fake(grad, input, weight, offsets, mode, per_sample_weights,
                                        include_last_offset, padding_idx):
    rows = torch.library.get_ctx().new_dynamic_size()
    return input.new_empty([rows], dtype=torch.int64), weight.new_empty([rows, weight.shape[1]])


# ---- fill_empty_rows, segment_reduce, bucketize --------------------------------------------


@torch.library.register_fake("tensorkit::fill_empty_rows")
def _fill_empty_rows_fake(indices, values, dense_shape, default_value):
    total = torch.library.get_ctx().new_dynamic_size()
    return (indices.new_empty([total, indices.shape[1]]), values.new_empty([total]),
            values.new_empty([dense_shape[0]], dtype=torch.bool),
            indices.new_empty([indices.shape[0]]))


@torch.library.register_fake("tensorkit::fill_empty_rows_grad")
def _fill_empty_rows_grad_fake(reverse_index_map, grad_values):
    return grad_values.new_empty([reverse_index_map.shape[0]]), grad_values.new_empty([])


def _fill_empty_rows_setup(ctx, inputs, output):
    ctx.default_shape = inputs[3].shape
    ctx.save_for_backward(output[3])
    ctx.set_materialize_grads(True)


def _fill_empty_rows_backward(ctx, grad_indices, grad_values, grad_indicator, grad_map):
    reverse_index_map, = ctx.saved_tensors
    d_values, d_default = ops.fill_empty_rows_grad(reverse_index_map, grad_values)
    return None, d_values, None, d_default.reshape(ctx.default_shape)


torch.library.register_autograd("tensorkit::fill_empty_rows", _fill_empty_rows_backward,
                                setup_context=_fill_empty_rows_setup)


@torch.library.register_fake("tensorkit::segment_reduce")
def _segment_reduce_fake(data, segment_ids, num_segments, reduce="sum", sorted=True):
    if num_segments < 0:
        num_segments = torch.library.get_ctx().new_dynamic_size()
    inner = data.shape[1:] if sorted else data.shape[segment_ids.dim():]
    return data.new_empty([num_segments, *inner])


@torch.library.register_fake("tensorkit::segment_reduce_backward")
def _segment_reduce_backward_fake(grad, segment_ids, num_rows, reduce):
    return grad.new_empty([num_rows, *grad.shape[1:]])


def _segment_reduce_setup(ctx, inputs, output):
    data, segment_ids, _num, reduce, _sorted = inputs
    ctx.reduce = reduce
    ctx.save_for_backward(data, segment_ids, output)


def _segment_reduce_backward(ctx, grad):
    data, segment_ids, output = ctx.saved_tensors
    if segment_ids.dim() != 1:
        raise NotImplementedError(
            "tensorkit.torch.segment_reduce: the gradient needs 1-D segment_ids")
    if ctx.reduce in ("sum", "mean", "sqrtn"):
        return (ops.segment_reduce_backward(grad, segment_ids, data.shape[0], ctx.reduce),
                None, None, None, None)
    # max, min: the gradient goes to the rows equal to their segment's result, shared equally
    # among ties (TensorFlow's segment_max gradient); rows of dropped (negative) ids get none.
    ids = segment_ids.long()
    valid = ids >= 0
    safe = torch.where(valid, ids, torch.zeros_like(ids))
    shape = [-1] + [1] * (data.dim() - 1)
    hit = (data == output.index_select(0, safe)) & valid.view(shape)
    ties = torch.zeros_like(output).index_add_(0, safe, hit.to(output.dtype))
    share = grad.index_select(0, safe) / ties.index_select(0, safe).clamp_min(1)
    return torch.where(hit, share, torch.zeros_like(share)), None, None, None, None


torch.library.register_autograd("tensorkit::segment_reduce", _segment_reduce_backward,
                                setup_context=_segment_reduce_setup)


@torch.library.register_fake("tensorkit::bucketize")
def _bucketize_fake(values, boundaries, offsets=None):
    return values.new_empty(values.shape, dtype=torch.int32)


# ---- TorchRec --------------------------------------------------------------------------------


def to_torchrec(kjt):
    """A torchrec KeyedJaggedTensor over a tensorkit.KeyedJaggedTensor's memory (values, lengths,
    offsets and weights cross through DLPack; nothing is copied). The tensorkit tensors stay
    alive as long as the torch ones."""
    from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

    def cross(t):
        return None if t is None else torch.from_dlpack(t)

    lengths = cross(kjt.lengths)
    return KeyedJaggedTensor(keys=list(kjt.keys), values=cross(kjt.values),
                             weights=cross(kjt.weights), lengths=lengths.reshape(-1),
                             offsets=cross(kjt.offsets), stride=kjt.batch_size)


def from_torchrec(kjt):
    """A tensorkit.KeyedJaggedTensor over a torchrec KeyedJaggedTensor's values, lengths and
    weights (no copy; lengths become [F, B]). A KJT whose features differ in batch size
    (variable stride per key) has no such form: ValueError."""
    import tensorkit as tk

    if kjt.variable_stride_per_key():
        raise ValueError("tensorkit.torch.from_torchrec: the features differ in batch size "
                         "(variable stride per key); tensorkit's KeyedJaggedTensor has one B")
    weights = kjt.weights_or_none()
    return tk.KeyedJaggedTensor(
        list(kjt.keys()), tk.from_dlpack(kjt.values()),
        tk.from_dlpack(kjt.lengths().reshape(len(kjt.keys()), kjt.stride())),
        None if weights is None else tk.from_dlpack(weights))


def _permute_input1d(permute, lengths, values, stride, weights=None, permuted_lengths_sum=None):
    out_lengths, out_values, out_weights = ops.permute_2D_sparse_data(
        permute, lengths.view(-1, stride), values, weights, permuted_lengths_sum)
    return out_lengths.view(-1), out_values, out_weights


# FBGEMM's name -> (schema, the tensorkit implementation): what TorchRec's KeyedJaggedTensor and
# JaggedTensor call (permute, to_padded_dense, offsets) and the sharding step.
_FBGEMM_OPS = {
    "asynchronous_complete_cumsum": (
        "asynchronous_complete_cumsum(Tensor t_in) -> Tensor",
        lambda t_in: ops.asynchronous_complete_cumsum(t_in)),
    "jagged_to_padded_dense": (
        "jagged_to_padded_dense(Tensor values, Tensor[] offsets, SymInt[] max_lengths, "
        "float padding_value=0) -> Tensor",
        lambda values, offsets, max_lengths, padding_value=0.0:
            ops.jagged_to_padded_dense(values, offsets, max_lengths, padding_value)),
    "dense_to_jagged": (
        "dense_to_jagged(Tensor dense, Tensor[] x_offsets, SymInt? total_L=None) "
        "-> (Tensor, Tensor[])",
        lambda dense, x_offsets, total_L=None: ops.dense_to_jagged(dense, x_offsets, total_L)),
    "permute_2D_sparse_data": (
        "permute_2D_sparse_data(Tensor permute, Tensor lengths, Tensor values, "
        "Tensor? weights=None, SymInt? permuted_lengths_sum=None) -> (Tensor, Tensor, Tensor?)",
        lambda permute, lengths, values, weights=None, permuted_lengths_sum=None:
            ops.permute_2D_sparse_data(permute, lengths, values, weights, permuted_lengths_sum)),
    "permute_2D_sparse_data_input1D": (
        "permute_2D_sparse_data_input1D(Tensor permute, Tensor lengths, Tensor values, "
        "SymInt stride, Tensor? weights=None, SymInt? permuted_lengths_sum=None) "
        "-> (Tensor, Tensor, Tensor?)",
        _permute_input1d),
    "block_bucketize_sparse_features": (
        "block_bucketize_sparse_features(Tensor lengths, Tensor indices, bool bucketize_pos, "
        "bool sequence, Tensor block_sizes, SymInt my_size, Tensor? weights=None, "
        "Tensor? batch_size_per_feature=None, SymInt max_B=-1, "
        "Tensor[]? block_bucketize_pos=None, bool keep_orig_idx=False, "
        "Tensor? total_num_blocks=None, Tensor? keep_orig_idx_per_feature=None) "
        "-> (Tensor, Tensor, Tensor?, Tensor?, Tensor?)",
        lambda *args: ops.block_bucketize_sparse_features(*args)),
}
_fbgemm_libraries = []


def _fbgemm_schema_exists(name):
    try:
        torch._C._dispatch_find_schema_or_throw(f"fbgemm::{name}", "")
        return True
    except RuntimeError:
        return False


def use_for_torchrec(override=False):
    """Lets TorchRec's KeyedJaggedTensor.permute, JaggedTensor.to_padded_dense (and offsets, and
    the sharding step's block bucketizing) run on tensorkit's kernels, through the names TorchRec
    calls (torch.ops.fbgemm.*).

    Where FBGEMM's operator is absent (fbgemm_gpu not loaded, or built for another torch), it is
    defined under FBGEMM's name and schema as a composite of tensorkit's operator, so autograd and
    torch.compile come with it. Where FBGEMM's is present it is kept, unless override=True: then
    tensorkit's kernel replaces FBGEMM's CPU kernel (FBGEMM's autograd and meta kernels stay).
    Call it before the first call of those operators; FBGEMM loaded afterwards fails to register
    a namespace already defined. Returns {name: "defined" | "overridden" | "fbgemm"}."""
    done = {}
    for name, (schema, impl) in _FBGEMM_OPS.items():
        if not _fbgemm_schema_exists(name):
            lib = torch.library.Library("fbgemm", "FRAGMENT")
            lib.define(schema)
            lib.impl(name, impl, "CompositeImplicitAutograd")
            _fbgemm_libraries.append(lib)
            done[name] = "defined"
        elif override:
            lib = torch.library.Library("fbgemm", "IMPL")
            lib.impl(name, impl, "CPU", allow_override=True) if _impl_takes_override() else \
                lib.impl(name, impl, "CPU")
            _fbgemm_libraries.append(lib)
            done[name] = "overridden"
        else:
            done[name] = "fbgemm"
    return done


def _impl_takes_override():
    import inspect

    return "allow_override" in inspect.signature(torch.library.Library.impl).parameters
