"""tensorkit's C++ library (dense and sparse tensors, files) for Python"""

from collections.abc import Sequence

from tensorkit import (
    Corrupt as Corrupt,
    DTypeMismatch as DTypeMismatch,
    DeviceMismatch as DeviceMismatch,
    Error as Error,
    InvalidArgument as InvalidArgument,
    Io as Io,
    OutOfRange as OutOfRange,
    ResourceExhausted as ResourceExhausted,
    ShapeMismatch as ShapeMismatch,
    Unsupported as Unsupported
)


class Tensor:
    """
    A dense tensor: shape, strides (in elements), dtype and device over shared memory. Crosses to NumPy, PyTorch and others without a copy (DLPack, the buffer protocol).
    """

    def __init__(self, obj: object) -> None:
        """The same as tensorkit.asarray(obj)."""

    @property
    def shape(self) -> tuple: ...

    @property
    def strides(self) -> tuple:
        """Strides in elements (NumPy's are in bytes)."""

    @property
    def dtype(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def itemsize(self) -> int: ...

    @property
    def readonly(self) -> bool:
        """Whether the memory was imported read-only."""

    @property
    def data_ptr(self) -> int:
        """The address of the element with all-zero index."""

    def is_contiguous(self) -> bool: ...

    def __len__(self) -> int: ...

    def numpy(self) -> object:
        """
        A NumPy array over the same memory (string tensors: an object array, copied).
        """

    def astype(self, dtype: object) -> Tensor:
        """A converted copy (C order)."""

    def copy(self) -> Tensor:
        """A copy in new memory."""

    def to(self, device: str) -> Tensor:
        """This tensor on another device (a copy), or itself."""

    def __dlpack__(self, *, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> object: ...

    def __dlpack_device__(self) -> tuple: ...

    def __repr__(self) -> str: ...

def asarray(obj: object, dtype: object | None = None, copy: bool | None = None) -> Tensor:
    """
    A tensorkit.Tensor over obj's memory (DLPack or the buffer protocol, any strides, read-only arrays included), or a copy where needed (lists, scalars, strings, a dtype conversion). copy=True always copies; copy=False raises ValueError where a copy is needed.
    """

def from_dlpack(obj: object) -> Tensor:
    """A tensorkit.Tensor over the memory of an object speaking DLPack."""

class SparseTensor:
    """
    A sparse tensor in coordinate form: indices int64 [nnz, rank], values [nnz] of any dtype, the dense shape, and the order the entries are known to be sorted in.
    """

    def __init__(self, indices: object, values: object, shape: Sequence[int], order: Sequence[int] | None = None) -> None:
        """
        Shares the memory of indices (int64) and values. order: the axes the entries are sorted by, or None when unknown. Checks shapes and dtypes, not index contents (validate() does).
        """

    @property
    def indices(self) -> Tensor: ...

    @property
    def values(self) -> Tensor: ...

    @property
    def shape(self) -> tuple: ...

    @property
    def order(self) -> object: ...

    @property
    def nnz(self) -> int: ...

    @property
    def rank(self) -> int: ...

    @property
    def ndim(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def device(self) -> str: ...

    def validate(self) -> None:
        """
        Raises tensorkit.Error naming the first entry out of bounds, out of order or repeated.
        """

    def indices_valid(self) -> bool: ...

    def reorder(self, order: Sequence[int]) -> object:
        """
        Sorts the entries (stable) by the axes in `order`, a permutation of all axes; in place, returns self.
        """

    def coalesce(self) -> object:
        """Sorts in C order and sums repeated indices; in place, returns self."""

    def to_dense(self) -> Tensor: ...

    def to(self, device: str) -> SparseTensor: ...

    @staticmethod
    def from_dense(a: object) -> SparseTensor:
        """The nonzero elements of a dense array, in C order."""

    @staticmethod
    def concat(sparse_tensors: Sequence[SparseTensor], axis: int | None = None) -> SparseTensor:
        """
        Concatenates along `axis`, or along the inputs' common order[0] when None (TensorFlow's rule).
        """

    def to_scipy(self, format: object = 'coo') -> object:
        """
        This tensor as a scipy.sparse array: "coo" (any rank SciPy takes), "csr" or "csc" (2-D, through the library's CsrMatrix / CscMatrix). The values are shared where SciPy keeps them as given.
        """

    @staticmethod
    def from_scipy(m: object) -> SparseTensor:
        """
        A SparseTensor from any scipy.sparse matrix or array, every format; the values are shared when SciPy's data array can be.
        """

    def __repr__(self) -> str: ...

def sparse_dense_matmul(a: object, b: object) -> Tensor:
    """
    a @ b for a sparse a [M, K] (or a batch [B, M, K]) and a dense b: a dense result.
    """

def sparse_sparse_matmul(a: object, b: object) -> SparseTensor:
    """
    a @ b for sparse a [M, K] and b [K, N]: a sparse result in C order without duplicates.
    """

def sparse_reduce_sum(st: object, axes: object | None = None) -> Tensor:
    """
    The sum over `axes` (an int, a sequence, or None for all) as a dense tensor.
    """

def set_num_threads(n: int) -> None:
    """
    Sets how many threads tensorkit's parallel work uses (TENSORKIT_NUM_THREADS otherwise).
    """

def get_num_threads() -> int:
    """The thread count tensorkit uses."""
