"""SparseTensor <-> scipy.sparse, behind SparseTensor.to_scipy and SparseTensor.from_scipy. The
compressed forms come from the library (CsrMatrix, CscMatrix); SciPy is imported only when these
are called."""

import numpy as np

from ._tensorkit import SparseTensor

_FORMATS = ("coo", "csr", "csc")


def to_scipy(self, format="coo"):
    """This tensor as a scipy.sparse array: "coo" (any rank SciPy takes), "csr" or "csc" (2-D).
    The values are shared where SciPy keeps them as given."""
    import scipy.sparse as sp

    if format not in _FORMATS:
        raise ValueError(f"to_scipy: format {format!r} is not one of {', '.join(_FORMATS)}")
    if self.device != "cpu":
        raise ValueError(f"to_scipy: the tensor is on {self.device}; call .to('cpu') first")
    if format == "coo":
        indices = np.asarray(self.indices)
        coords = tuple(indices[:, k] for k in range(self.rank))
        return sp.coo_array((self.values.numpy(), coords), shape=self.shape)
    if self.rank != 2:
        raise ValueError(
            f"to_scipy: format {format!r} needs a 2-D tensor, this one has rank {self.rank}")
    ptr, minor, values = self._compressed(0 if format == "csr" else 1)
    cls = sp.csr_array if format == "csr" else sp.csc_array
    return cls((values.numpy(), np.asarray(minor), np.asarray(ptr)), shape=self.shape)


def from_scipy(m):
    """A SparseTensor from any scipy.sparse matrix or array (every format). CSR and CSC with
    sorted indices go through the library's compressed matrices; other formats through COO.
    The values are shared when SciPy's data array can be."""
    fmt = getattr(m, "format", None)
    if fmt is None or not hasattr(m, "tocoo"):
        raise TypeError(
            f"from_scipy: expected a scipy.sparse matrix or array, got {type(m).__name__}")
    if fmt in ("csr", "csc") and m.ndim == 2 and m.has_sorted_indices:
        return SparseTensor._from_compressed(m.indptr, m.indices, m.data, m.shape,
                                             0 if fmt == "csr" else 1)
    coo = m if fmt == "coo" else m.tocoo()
    coords = coo.coords if hasattr(coo, "coords") else (coo.row, coo.col)
    if len(coords) == 0:
        indices = np.zeros((coo.nnz, 0), dtype=np.int64)
    else:
        indices = np.stack([np.asarray(c, dtype=np.int64) for c in coords], axis=1)
    order = tuple(range(len(coords))) if coo.has_canonical_format else None
    return SparseTensor(indices, coo.data, coo.shape, order)

