"""tk.Tensor, tk.asarray and tk.from_dlpack: zero-copy in and out, lifetimes, dtypes."""

import gc
import weakref

import numpy as np
import pytest

import tensorkit as tk

NUMERIC = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]


def ptr(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_asarray_shares_memory_every_dtype(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    t = tk.asarray(a)
    assert t.dtype == dtype
    assert t.shape == (3, 4)
    assert t.strides == (4, 1)
    assert t.device == "cpu"
    assert t.data_ptr == ptr(a)
    back = np.asarray(t)
    assert back.dtype == a.dtype
    assert ptr(back) == ptr(a)
    np.testing.assert_array_equal(back, a)


def test_strided_and_negative_strides_without_copy():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    for view in (base[::2, 1::3], base[::-1], base[:, ::-2], base.T, base[::-2, ::-3].T):
        t = tk.asarray(view, copy=False)
        assert t.shape == view.shape
        assert t.strides == tuple(s // 8 for s in view.strides)
        assert t.data_ptr == ptr(view)
        np.testing.assert_array_equal(t.numpy(), view)
        np.testing.assert_array_equal(np.from_dlpack(t), view)


def test_writes_are_seen_on_both_sides():
    a = np.zeros((2, 3), dtype=np.int32)
    t = tk.asarray(a)
    np.asarray(t)[1, 2] = 7
    assert a[1, 2] == 7
    a[0, 0] = 5
    assert t.numpy()[0, 0] == 5


def test_read_only_arrays_stay_read_only():
    a = np.arange(6.0)
    a.flags.writeable = False
    t = tk.asarray(a)
    assert t.readonly
    assert t.data_ptr == ptr(a)
    out = np.asarray(t)
    assert not out.flags.writeable
    with pytest.raises(ValueError):
        out[0] = 1
    # The versioned capsule says read-only; the old one cannot, so it is refused.
    assert not np.from_dlpack(t).flags.writeable
    with pytest.raises(BufferError):
        t.__dlpack__()
    b = tk.asarray(b"abc")
    assert b.readonly and b.dtype == "uint8" and b.numpy().tolist() == [97, 98, 99]


def test_read_only_is_a_property_of_the_memory():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    a.flags.writeable = False
    t = tk.asarray(a)
    # Every handle on the memory says so: NumPy's view of it, and tensorkit's import of that.
    again = tk.asarray(np.asarray(t)[1:])
    assert again.readonly and again.data_ptr == ptr(a) + 16
    assert tk.from_dlpack(np.from_dlpack(t)).readonly
    assert not t.copy().readonly and np.asarray(t.astype("int64")).flags.writeable
    # Writable memory imported after read-only memory was freed (perhaps at the same address) is
    # writable: the flag lives and dies with its memory.
    del t, again
    gc.collect()
    for _ in range(100):
        w = tk.asarray(np.zeros(12, dtype=np.int32))
        assert not w.readonly and np.asarray(w).flags.writeable
        w.__dlpack__()  # the unversioned capsule too


def test_buffer_protocol_objects():
    import array

    arr = array.array("d", [1.0, 2.0, 3.0])
    t = tk.asarray(arr)
    assert t.dtype == "float64" and t.numpy().tolist() == [1.0, 2.0, 3.0]
    np.asarray(t)[0] = 9
    assert arr[0] == 9
    m = memoryview(bytearray(8)).cast("i")
    assert tk.asarray(m).dtype == "int32"


def test_source_deleted_tensor_still_right():
    a = np.arange(1000, dtype=np.float32)
    expect = a.copy()
    ref = weakref.ref(a)
    t = tk.asarray(a)
    del a
    gc.collect()
    assert ref() is not None  # the tensor keeps the array alive
    np.testing.assert_array_equal(t.numpy(), expect)
    del t
    gc.collect()
    assert ref() is None  # and lets it go with the last reference


def test_tensor_deleted_exports_still_right():
    t = tk.asarray([[1.5, 2.5], [3.5, 4.5]])
    via_buffer = np.asarray(t)
    via_dlpack = np.from_dlpack(t)
    capsule = t.__dlpack__(max_version=(1, 0))
    del t
    gc.collect()
    np.testing.assert_array_equal(via_buffer, [[1.5, 2.5], [3.5, 4.5]])
    np.testing.assert_array_equal(via_dlpack, via_buffer)
    del capsule  # an unconsumed capsule frees what it holds
    gc.collect()


def test_dlpack_round_trip_both_versions():
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4)[:, ::-1]
    t = tk.from_dlpack(a)
    assert t.data_ptr == ptr(a)
    assert t.__dlpack_device__() == (1, 0)

    class Legacy:
        """A producer of the unversioned protocol only."""

        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    t2 = tk.from_dlpack(Legacy(a))
    assert t2.data_ptr == ptr(a)
    np.testing.assert_array_equal(t2.numpy(), a)
    # Both capsule kinds out: NumPy takes the versioned one, and the old one from a producer
    # without max_version.
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(t.__dlpack__())
    out = np.from_dlpack(t)
    np.testing.assert_array_equal(out, a)
    assert ptr(out) == ptr(a)
    old = np.from_dlpack(Legacy(t))
    np.testing.assert_array_equal(old, a)
    assert ptr(old) == ptr(a)
    copied = np.from_dlpack(t, copy=True)
    np.testing.assert_array_equal(copied, a)
    assert ptr(copied) != ptr(a)


def test_capsule_consumed_once():
    t = tk.asarray(np.arange(3.0))
    cap = t.__dlpack__(max_version=(1, 1))

    class Holder:
        def __dlpack__(self, stream=None, max_version=None):
            return cap

    tk.from_dlpack(Holder())
    with pytest.raises(TypeError):
        tk.from_dlpack(Holder())


def test_asarray_copies_and_dtypes():
    t = tk.asarray([[1, 2], [3, 4]])
    assert t.dtype == "int64" and t.shape == (2, 2)
    a = np.arange(4, dtype=np.float32)
    c = tk.asarray(a, copy=True)
    assert c.data_ptr != ptr(a)
    np.testing.assert_array_equal(c.numpy(), a)
    d = tk.asarray(a, dtype="float64")
    assert d.dtype == "float64" and d.numpy().tolist() == [0, 1, 2, 3]
    assert tk.asarray(a, dtype=np.float32).data_ptr == ptr(a)
    with pytest.raises(ValueError):
        tk.asarray(a, dtype="int32", copy=False)
    with pytest.raises(ValueError):
        tk.asarray([1, 2], copy=False)
    assert tk.asarray(3.5).shape == ()
    assert tk.asarray(t) is not None and tk.asarray(t).data_ptr == t.data_ptr
    h = t.astype("float16")
    assert h.dtype == "float16" and np.asarray(h).dtype == np.float16
    assert t.astype("bfloat16").dtype == "bfloat16"
    np.testing.assert_array_equal(t.astype("bfloat16").astype("float32").numpy(), [[1, 2], [3, 4]])


def test_strings():
    for a in (np.array([["a", "bé"], ["", "xyz"]]),
              np.array([[b"a", b"b\xc3\xa9"], [b"", b"xyz"]]),
              np.array([["a", "bé"], ["", "xyz"]], dtype=object)):
        t = tk.asarray(a)
        assert t.dtype == "string" and t.shape == (2, 2)
        assert t.numpy().tolist() == [["a", "bé"], ["", "xyz"]]
    with pytest.raises(BufferError):
        memoryview(tk.asarray(np.array(["a"])))


def test_unsupported_inputs_raise_not_crash():
    with pytest.raises(tk.Unsupported):
        tk.asarray(np.arange(3, dtype=np.uint16))
    with pytest.raises(tk.Unsupported):
        tk.asarray(np.arange(3, dtype=np.complex128))
    with pytest.raises(tk.Unsupported):
        tk.asarray(np.zeros((2, 2)).view("i4")[:, ::3].view("V4"))
    with pytest.raises(TypeError):
        tk.asarray(None)
    with pytest.raises(TypeError):
        tk.from_dlpack(object())
    with pytest.raises(tk.Error):
        tk.asarray([1], dtype="nope")
    with pytest.raises(NotImplementedError):
        tk.asarray([1.0]).astype("bfloat16").numpy()
    # An expanded (stride 0) view: tensorkit views never alias elements.
    with pytest.raises(tk.Unsupported):
        tk.asarray(np.broadcast_to(np.arange(3.0), (4, 3)))


def test_odd_shapes():
    for shape in [(), (0,), (3, 0, 2), (1, 1, 5)]:
        a = np.ones(shape, dtype=np.float64)
        t = tk.asarray(a)
        assert t.shape == shape
        np.testing.assert_array_equal(np.asarray(t), a)
        np.testing.assert_array_equal(np.from_dlpack(t), a)
    with pytest.raises(TypeError):
        len(tk.asarray(1.0))
    assert len(tk.asarray([1, 2, 3])) == 3
    assert "shape=(2, 3)" in repr(tk.asarray(np.zeros((2, 3))))


def test_torch_half_types_if_present():
    torch = pytest.importorskip("torch")
    for dtype, name in [(torch.bfloat16, "bfloat16"), (torch.float16, "float16")]:
        x = torch.arange(6, dtype=dtype).reshape(2, 3)[:, ::2]
        t = tk.from_dlpack(x)
        assert t.dtype == name and t.data_ptr == x.data_ptr()
        y = torch.from_dlpack(t)
        assert y.data_ptr() == x.data_ptr() and torch.equal(y, x)


BASIC_KEYS = [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 1), (None, 0), (slice(None, None, -1),),
    (0, slice(3, 0, -2)), (slice(5, 1),), (slice(1, 5, -1),), (Ellipsis, None),
    (1, Ellipsis, slice(None, None, 2)), (slice(-100, 100),), np.int64(1), np.array(1),
    (slice(None, None, -1), slice(None, None, -2)), (slice(2, None, -1), None, -2), (),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_indexing_is_numpys_as_views(key):
    a = np.arange(24.0).reshape(2, 3, 4)
    t = tk.asarray(a)
    r, e = t[key], a[key]
    assert r.shape == e.shape
    assert np.array_equal(np.asarray(r), e)
    if e.size:
        assert np.shares_memory(np.asarray(r), a)  # a view, not a copy
    # the same on a negatively strided source
    b = a[::-1, :, ::-1]
    assert np.array_equal(np.asarray(tk.asarray(b)[key]), b[key])


def test_indexing_strings_and_bfloat16_keeps_dtype():
    s = tk.asarray(np.array(["a", "bc", "d"]))
    assert s[1:].tolist() == ["bc", "d"]
    assert s[-1].tolist() == "d"
    h = tk.asarray(np.arange(4, dtype=np.float32)).astype("bfloat16")
    assert h[::-2].dtype == "bfloat16" and h[::-2].shape == (2,)


@pytest.mark.parametrize("key, error", [
    ((0, 0, 0, 0), IndexError), (5, IndexError), (-3, IndexError), ([0, 1], TypeError),
    (1.5, TypeError), (True, TypeError), (np.array([0, 1]), TypeError),
    ((Ellipsis, Ellipsis), IndexError), ("a", TypeError),
])
def test_indexing_refusals(key, error):
    t = tk.asarray(np.zeros((2, 3, 4)))
    with pytest.raises(error, match=r"Tensor\[\.\.\.\]"):
        t[key]


def test_iteration_tolist_item_nbytes():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tk.asarray(a)
    assert [r.tolist() for r in t] == a.tolist()
    assert t.tolist() == a.tolist()
    assert t[1, 2].item() == 5 and isinstance(t[1, 2].item(), int)
    assert t.nbytes == a.nbytes
    with pytest.raises(ValueError, match="Tensor.item"):
        t.item()


def test_array_protocol_copy_and_dtype():
    a = np.arange(4, dtype=np.float32)
    t = tk.asarray(a)
    assert np.shares_memory(np.asarray(t), a)
    assert not np.shares_memory(np.array(t, copy=True), a)
    assert np.array(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float64, copy=False)
    s = tk.asarray(np.array(["x", "yz"]))
    assert np.asarray(s).tolist() == ["x", "yz"]  # an object array, not a 0-d wrapper
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(s, copy=False)
    h = tk.asarray(a).astype("bfloat16")
    with pytest.raises(tk.Unsupported, match="bfloat16"):
        np.asarray(h)
