"""
tensorkit's C++ library (dense and sparse tensors, files, feature ops) for Python
"""

from collections.abc import Sequence

from tensorkit import (
    Cancelled as Cancelled,
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

    def __getitem__(self, key: object) -> Tensor:
        """
        t[key]: NumPy's basic indexing (integers, slices of any step, ..., None) as a view of the same memory.
        """

    def __array__(self, dtype: object | None = None, copy: object | None = None) -> object:
        """
        NumPy's array protocol: np.asarray(t) shares the memory of a numeric CPU tensor.
        """

    def tolist(self) -> object:
        """The elements as nested Python lists (NumPy's tolist)."""

    def item(self) -> object:
        """The one element as a Python scalar."""

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (NumPy's nbytes)."""

    def astype(self, dtype: object) -> Tensor:
        """A converted copy (C order)."""

    def copy(self) -> Tensor:
        """A copy in new memory."""

    def to(self, device: str) -> Tensor:
        """This tensor on another device (a copy), or itself."""

    def __dlpack__(self, *, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> object: ...

    def __dlpack_device__(self) -> tuple: ...

    def __repr__(self) -> str: ...

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """
        Arrow C Data Interface capsules (schema, array) over this object's memory (no copy): pa.array(x), pa.record_batch(x). A Tensor is a primitive array (2-D: fixed_size_list), a JaggedTensor a large_list (without its weights), a KeyedJaggedTensor a struct of one large_list per key. requested_schema is not honoured.
        """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """
        A stream of one batch, the array of __arrow_c_array__: pa.table(x), polars.DataFrame(x).
        """

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

class JaggedTensor:
    """
    B rows of different lengths stored back to back: values [N, ...], offsets int64 [B + 1] (row i is values[offsets[i]:offsets[i + 1]]), optional float weights [N].
    """

    def __init__(self, values: object, lengths: object | None = None, offsets: object | None = None, weights: object | None = None) -> None:
        """
        Shares the memory of values, lengths or offsets (int64) and weights. lengths [B] or offsets [B + 1] (offsets[0] == 0, non-decreasing, offsets[B] == N): exactly one.
        """

    @property
    def values(self) -> Tensor: ...

    @property
    def offsets(self) -> Tensor:
        """int64 [B + 1]."""

    @property
    def lengths(self) -> Tensor:
        """int64 [B] (a new tensor)."""

    @property
    def weights(self) -> object:
        """float [N], or None."""

    @property
    def batch_size(self) -> int: ...

    @property
    def num_values(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def device(self) -> str: ...

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> Tensor:
        """Row i's values: a view, no copy."""

    def row_weights(self, i: int) -> Tensor:
        """Row i's weights: a view."""

    def with_weights(self, weights: object) -> JaggedTensor:
        """The same values and offsets with these weights (float [N])."""

    def to_padded(self, max_length: int | None = None, pad: object = 0) -> Tensor:
        """
        [B, max_length, ...]: each row's first max_length items (longer rows are truncated), then pad. max_length None or -1: the longest row's length.
        """

    @staticmethod
    def from_padded(dense: object, lengths: object) -> JaggedTensor:
        """Row i is dense[i, :lengths[i]]."""

    def to_sparse(self) -> SparseTensor:
        """
        TensorFlow's VarLenFeature layout: a [B, max length] SparseTensor, entry (i, j) the j-th item of row i.
        """

    @staticmethod
    def from_sparse(st: object) -> JaggedTensor:
        """The rows of a 2-D SparseTensor in TensorFlow's VarLenFeature layout."""

    def tolist(self) -> list:
        """The rows as a list of NumPy arrays (views; string rows are copied)."""

    def __repr__(self) -> str: ...

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """
        Arrow C Data Interface capsules (schema, array) over this object's memory (no copy): pa.array(x), pa.record_batch(x). A Tensor is a primitive array (2-D: fixed_size_list), a JaggedTensor a large_list (without its weights), a KeyedJaggedTensor a struct of one large_list per key. requested_schema is not honoured.
        """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """
        A stream of one batch, the array of __arrow_c_array__: pa.table(x), polars.DataFrame(x).
        """

class KeyedJaggedTensor:
    """
    F named jagged features of one batch of B rows in one values tensor (TorchRec's KeyedJaggedTensor): lengths [F, B], the values grouped by key.
    """

    def __init__(self, keys: Sequence[str], values: object, lengths: object, weights: object | None = None) -> None:
        """
        keys: unique names; lengths [F * B] (TorchRec's) or [F, B]; values [N, ...]; weights None or float [N]. Shares the memory of values and weights.
        """

    @property
    def keys(self) -> list[str]: ...

    @property
    def values(self) -> Tensor: ...

    @property
    def lengths(self) -> Tensor:
        """int64 [F, B]."""

    @property
    def offsets(self) -> Tensor:
        """int64 [F * B + 1]: the offsets of the F * B rows, feature-major."""

    @property
    def weights(self) -> object:
        """float [N], or None."""

    @property
    def batch_size(self) -> int: ...

    @property
    def num_keys(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def device(self) -> str: ...

    def __getitem__(self, key: str) -> JaggedTensor:
        """Feature `key` as a JaggedTensor over views of this tensor's values."""

    def __contains__(self, arg: str, /) -> bool: ...

    def to_dict(self) -> dict:
        """{key: JaggedTensor} (views)."""

    def permute(self, keys: Sequence[str]) -> KeyedJaggedTensor:
        """
        The features `keys` in that sequence (repeats allowed), values gathered.
        """

    @staticmethod
    def concat(kjts: Sequence[KeyedJaggedTensor]) -> KeyedJaggedTensor:
        """
        Joins batches with the same keys along the batch, or features of different keys and one batch size along the keys (TorchRec's concat).
        """

    def split(self, batch_sizes: Sequence[int]) -> list[KeyedJaggedTensor]:
        """Pieces of these batch sizes (adding up to batch_size)."""

    def to_sparse(self, key: str) -> SparseTensor:
        """
        Feature `key` as a [B, max length] SparseTensor (JaggedTensor.to_sparse).
        """

    def __repr__(self) -> str: ...

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """
        Arrow C Data Interface capsules (schema, array) over this object's memory (no copy): pa.array(x), pa.record_batch(x). A Tensor is a primitive array (2-D: fixed_size_list), a JaggedTensor a large_list (without its weights), a KeyedJaggedTensor a struct of one large_list per key. requested_schema is not honoured.
        """

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """
        A stream of one batch, the array of __arrow_c_array__: pa.table(x), polars.DataFrame(x).
        """

def fill_empty_rows(st: object, default_value: object) -> tuple[SparseTensor, Tensor, Tensor]:
    """
    TensorFlow's sparse.fill_empty_rows: (filled, empty_row_indicator, reverse_index_map).
    """

def segment_reduce(data: object, segment_ids: object, num_segments: int = -1, combiner: str = 'sum') -> Tensor:
    """
    TensorFlow's segment_sum / mean / sqrt_n / max / min over sorted segment_ids; num_segments -1: the last id + 1.
    """

def unsorted_segment_reduce(data: object, segment_ids: object, num_segments: int = -1, combiner: str = 'sum') -> Tensor:
    """
    TensorFlow's unsorted_segment_sum / mean / sqrt_n / max / min; negative ids are dropped; num_segments -1: the largest id + 1.
    """

def sparse_segment_reduce(data: object, indices: object, segment_ids: object, num_segments: int = -1, combiner: str = 'sum') -> Tensor:
    """
    TensorFlow's sparse_segment_sum / mean / sqrt_n (and max / min): rows data[indices[k]] reduced into segment segment_ids[k].
    """

def embedding_bag(table: object, ids: object, combiner: str = 'sum', padding_id: int = -1) -> Tensor:
    """
    [B, D]: bag b reduces the table rows of row b of ids (a JaggedTensor of int32 or int64, its weights scaling the rows); an empty bag gives zeros.
    """

def embedding_bags(tables: object, kjt: object, combiners: object = 'sum') -> Tensor:
    """
    One table and combiner per key of kjt (a combiner name applies to every key): [B, sum of D], key f's bags in its own columns.
    """

def embedding_bag_backward(grad: object, ids: object, combiner: str, num_rows: int, padding_id: int = -1, table: object | None = None) -> SparseTensor:
    """
    The gradient of embedding_bag with respect to the table: a [num_rows, D] SparseTensor holding the rows the ids touch. max and min need the forward table.
    """

def hash_bucket_fast(values: object, num_buckets: int) -> Tensor | JaggedTensor | SparseTensor:
    """
    TensorFlow's strings.to_hash_bucket_fast: Fingerprint64(value) % num_buckets, int64 of the input's structure. values: strings (NumPy U, S or object arrays), int32 / int64 (hashed through their decimal string), or a JaggedTensor / SparseTensor of them.
    """

def hash_bucket_strong(values: object, num_buckets: int, key: object) -> Tensor | JaggedTensor | SparseTensor:
    """
    TensorFlow's strings.to_hash_bucket_strong: SipHash-2-4 under key [k0, k1], modulo num_buckets.
    """

def bucketize(values: object, boundaries: object) -> Tensor | JaggedTensor | SparseTensor:
    """
    TensorFlow's Bucketize: the index of the first boundary above each value, int32 of the input's structure. A list of boundaries is float32 (TensorFlow's); an array keeps float64.
    """

class Vocabulary:
    """
    Tokens (strings or integers) and their ids, as Keras's StringLookup and IntegerLookup give them: [mask?][OOV ids][tokens].
    """

    @staticmethod
    def fit(values: object, min_frequency: int = 1, max_tokens: int | None = None, *, num_oov_indices: int = 1, mask_token: object | None = None) -> Vocabulary:
        """
        The tokens seen at least min_frequency times, at most max_tokens of them (mask and OOV ids not counted), most frequent first, ties by value ascending. values: an array, a JaggedTensor or SparseTensor, or a list of them.
        """

    @staticmethod
    def from_tokens(tokens: object, *, num_oov_indices: int = 1, mask_token: object | None = None) -> Vocabulary:
        """A vocabulary of these tokens in this order (Keras's vocabulary=[...])."""

    @staticmethod
    def load(path: object, dtype: object = 'string', *, num_oov_indices: int = 1, mask_token: object | None = None) -> Vocabulary:
        """
        Reads TensorFlow's vocabulary file (one token a line); dtype 'string' or an integer dtype for decimal lines.
        """

    def save(self, path: object) -> None:
        """Writes TensorFlow's vocabulary file (one token a line, in id order)."""

    def lookup(self, values: object) -> Tensor | JaggedTensor | SparseTensor:
        """The id of every value, int64 of the input's structure."""

    @property
    def tokens(self) -> Tensor:
        """The tokens in id order (1-D)."""

    @property
    def size(self) -> int:
        """Tokens, without the mask and OOV ids."""

    @property
    def num_ids(self) -> int:
        """Every id: tokens, OOV ids and the mask (Keras's vocabulary_size())."""

    @property
    def token_start(self) -> int:
        """The id of token 0."""

    @property
    def dtype(self) -> str: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

def from_arrow(obj: object, *, null_lists_as_empty: bool = False, null_values_as_zero_weight: bool = False) -> Tensor | JaggedTensor | KeyedJaggedTensor:
    """
    An Arrow array, chunked array, record batch, table or stream (pyarrow, polars, DuckDB: anything with __arrow_c_array__ or __arrow_c_stream__) without a copy: a primitive or fixed_size_list array -> Tensor; list / large_list -> JaggedTensor; a struct, record batch or table of list columns -> KeyedJaggedTensor (keys = the column names). Several batches are joined (a copy). Nulls are refused, unless null_lists_as_empty (a null list is an empty row) or null_values_as_zero_weight (null values inside lists get weight 0, the others 1).
    """

def set_num_threads(n: int) -> None:
    """
    Sets how many threads tensorkit's parallel work uses (TENSORKIT_NUM_THREADS otherwise).
    """

def get_num_threads() -> int:
    """The thread count tensorkit uses."""
