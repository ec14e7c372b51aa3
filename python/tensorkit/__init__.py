"""tensorkit: dense and sparse tensors, their files and feature pipelines (a C++ library), from
Python. Arrays cross without a copy (DLPack, the buffer protocol), every call releases the GIL,
and every library error is a tensorkit.Error subclass that is also the matching built-in
exception."""

from ._tensorkit import (
    Corrupt,
    DeviceMismatch,
    DTypeMismatch,
    Error,
    InvalidArgument,
    Io,
    OutOfRange,
    ResourceExhausted,
    ShapeMismatch,
    SparseTensor,
    Tensor,
    Unsupported,
    asarray,
    from_dlpack,
    get_num_threads,
    set_num_threads,
    sparse_dense_matmul,
    sparse_reduce_sum,
    sparse_sparse_matmul,
)
from . import io

__version__ = "0.1.0"

__all__ = [
    "Corrupt",
    "DTypeMismatch",
    "DeviceMismatch",
    "Error",
    "InvalidArgument",
    "Io",
    "OutOfRange",
    "ResourceExhausted",
    "ShapeMismatch",
    "SparseTensor",
    "Tensor",
    "Unsupported",
    "asarray",
    "from_dlpack",
    "get_num_threads",
    "io",
    "set_num_threads",
    "sparse_dense_matmul",
    "sparse_reduce_sum",
    "sparse_sparse_matmul",
]
