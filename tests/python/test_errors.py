"""Every tensorkit::Error code becomes its tk.Error subclass and built-in exception, with the
library's message."""

import numpy as np
import pytest

import tensorkit as tk

BUILTIN = {
    "InvalidArgument": ValueError,
    "ShapeMismatch": ValueError,
    "DTypeMismatch": ValueError,
    "DeviceMismatch": ValueError,
    "Corrupt": ValueError,
    "OutOfRange": IndexError,
    "Unsupported": NotImplementedError,
    "Io": OSError,
    "ResourceExhausted": MemoryError,
    "Cancelled": KeyboardInterrupt,
}


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_hierarchy(name):
    cls = getattr(tk, name)
    assert issubclass(cls, tk.Error) and issubclass(cls, BUILTIN[name])
    assert cls.__module__ == "tensorkit"
    assert issubclass(tk.Error, Exception)


def test_invalid_argument_and_message():
    with pytest.raises(tk.InvalidArgument) as e:
        tk.asarray([1.0], dtype="complex_float")
    assert "complex_float" in str(e.value)


def test_shape_mismatch():
    st = tk.SparseTensor(np.array([[0, 1]]), np.array([1.0]), (2, 2))
    with pytest.raises(tk.ShapeMismatch):
        tk.sparse_dense_matmul(st, np.ones((3, 2)))


def test_dtype_mismatch():
    with pytest.raises(tk.DTypeMismatch):
        tk.SparseTensor(np.array([[0.5, 1]]), np.array([1.0]), (2, 2))


def test_out_of_range():
    st = tk.SparseTensor(np.array([[0, 5]]), np.array([1.0]), (2, 2))
    with pytest.raises(IndexError) as e:
        st.to_dense()
    assert isinstance(e.value, tk.OutOfRange)


def test_unsupported():
    with pytest.raises(NotImplementedError) as e:
        tk.asarray(np.zeros(2, dtype=np.uint32))
    assert isinstance(e.value, tk.Unsupported)


def test_io_and_corrupt(tmp_path):
    with pytest.raises(OSError) as e:
        tk.io.read(str(tmp_path / "missing.npy"))
    assert isinstance(e.value, tk.Io) and "missing.npy" in str(e.value)
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1\n")
    with pytest.raises(ValueError) as e:
        tk.io.read(bad)
    assert isinstance(e.value, tk.Corrupt) and "bad.mtx" in str(e.value)


def test_resource_exhausted():
    with pytest.raises(MemoryError) as e:
        tk.SparseTensor(np.zeros((1, 2), dtype=np.int64), np.ones(1), (1 << 40, 1 << 20)).to_dense()
    assert isinstance(e.value, tk.Error)


def test_device_mismatch_or_unavailable():
    # Without a GPU, asking for one is a library error (Unsupported or InvalidArgument), never a
    # crash.
    with pytest.raises(tk.Error):
        tk.asarray([1.0]).to("cuda:7")
