"""What the torch tests share: tensorkit.torch and FBGEMM's CPU operators, loaded once."""

import torch

import tensorkit.torch as tkt  # noqa: F401  (registers torch.ops.tensorkit.*)

try:
    import fbgemm_gpu  # noqa: F401  (registers torch.ops.fbgemm.*)

    HAVE_FBGEMM = True
except (ImportError, OSError):  # absent, or built for another torch
    HAVE_FBGEMM = False

TK = torch.ops.tensorkit
FB = torch.ops.fbgemm if HAVE_FBGEMM else None


def random_lengths(gen, batch, max_len, empty_fraction=0.3):
    """int64 [batch] lengths in [0, max_len], about empty_fraction of them 0."""
    lengths = torch.randint(0, max_len + 1, (batch,), generator=gen)
    empty = torch.rand(batch, generator=gen) < empty_fraction
    return torch.where(empty, torch.zeros_like(lengths), lengths)


def offsets_of(lengths, dtype=torch.int64):
    out = torch.zeros(lengths.numel() + 1, dtype=dtype)
    out[1:] = torch.cumsum(lengths, 0)
    return out
