"""Arrow in and out through the PyCapsule interface (tk.from_arrow, __arrow_c_array__,
__arrow_c_stream__) with pyarrow, polars and DuckDB: zero-copy shown by addresses, lifetimes
by deleting one side, the null rule of io/arrow.h, chunked inputs."""

import gc
import struct
import threading
import weakref

import numpy as np
import pytest

import tensorkit as tk

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def address(buf):
    return buf.address


# --- in: primitive arrays -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_primitive_zero_copy(dtype):
    data = (np.arange(17) % 7).astype(dtype)
    arr = pa.array(data)
    t = tk.from_arrow(arr)
    assert isinstance(t, tk.Tensor) and t.dtype == dtype and t.shape == (17,)
    assert t.data_ptr == address(arr.buffers()[1])
    np.testing.assert_array_equal(t.numpy(), data)


def test_sliced_bool_string_and_fixed_size_list():
    arr = pa.array(np.arange(10, dtype=np.int32)).slice(3, 4)
    t = tk.from_arrow(arr)
    assert t.numpy().tolist() == [3, 4, 5, 6]
    assert t.data_ptr == address(arr.buffers()[1]) + 3 * 4
    assert tk.from_arrow(pa.array([True, False, True])).numpy().tolist() == [True, False, True]
    s = tk.from_arrow(pa.array(["a", "", "ßx"]))
    assert s.dtype == "string" and s.numpy().tolist() == ["a", "", "ßx"]
    assert tk.from_arrow(pa.array([b"\xff", b"q"], pa.large_binary())).numpy().tolist() == \
        [b"\xff", "q"]
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(6, dtype=np.float32)), 3)
    m = tk.from_arrow(fsl)
    assert m.shape == (2, 3) and m.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


def test_import_lifetime():
    # Arrow-allocated memory: held by the tensor after the pyarrow array is gone, released
    # (the producer's release callback) when the last user goes.
    before = pa.total_allocated_bytes()
    arr = pc.multiply(pa.array(np.arange(100000, dtype=np.float64)), 2)
    assert pa.total_allocated_bytes() > before
    t = tk.from_arrow(arr)
    del arr
    gc.collect()
    assert pa.total_allocated_bytes() > before
    assert t.numpy()[99999] == 199998
    view = t.numpy()
    del t
    gc.collect()
    assert view[5] == 10  # the NumPy view keeps the tensor's storage
    del view
    gc.collect()
    assert pa.total_allocated_bytes() == before


def test_import_lifetime_of_numpy_backed_arrays():
    # pa.array over NumPy memory shares it; so does the tensor: the NumPy array lives until both
    # are gone.
    data = np.arange(50, dtype=np.int64)
    ref = weakref.ref(data)
    arr = pa.array(data)
    t = tk.from_arrow(arr)
    assert t.data_ptr == data.__array_interface__["data"][0]
    del arr, data
    gc.collect()
    assert ref() is not None and t.numpy()[49] == 49
    del t
    gc.collect()
    assert ref() is None


def test_release_in_another_thread():
    data = np.arange(1000, dtype=np.int64)
    ref = weakref.ref(data)
    box = [tk.from_arrow(pa.array(data))]
    del data
    gc.collect()
    assert ref() is not None

    def drop():
        box.clear()  # the last reference goes in this thread; the release takes the GIL
        gc.collect()

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    gc.collect()
    assert ref() is None


# --- in: lists, structs, tables, chunks ---------------------------------------------------------

def test_lists_as_jagged():
    for typ in (pa.list_(pa.int64()), pa.large_list(pa.int64())):
        arr = pa.array([[1, 2], [], [3, 4, 5]], type=typ)
        jt = tk.from_arrow(arr)
        assert isinstance(jt, tk.JaggedTensor) and jt.batch_size == 3
        assert jt.offsets.numpy().tolist() == [0, 2, 2, 5]
        assert jt.values.numpy().tolist() == [1, 2, 3, 4, 5]
        assert jt.values.data_ptr == address(arr.values.buffers()[1])
    large = pa.array([[1.5], [2.5, 3.5]], type=pa.large_list(pa.float32()))
    jt = tk.from_arrow(large)
    assert jt.offsets.data_ptr == address(large.buffers()[1])  # int64 offsets shared too
    sliced = tk.from_arrow(pa.array([[1], [2, 3], [4]]).slice(1, 2))
    assert sliced.offsets.numpy().tolist() == [0, 2, 3] and sliced.values.numpy().tolist() == \
        [2, 3, 4]
    strings = tk.from_arrow(pa.array([["a", "b"], ["c"]]))
    assert strings.dtype == "string" and strings[1].numpy().tolist() == ["c"]


def test_record_batch_table_struct_as_keyed():
    batch = pa.record_batch({"user": pa.array([[1, 2], [3]]), "item": pa.array([[7], [8, 9]])})
    kjt = tk.from_arrow(batch)
    assert isinstance(kjt, tk.KeyedJaggedTensor)
    assert kjt.keys == ["user", "item"] and kjt.batch_size == 2
    assert kjt.lengths.numpy().tolist() == [[2, 1], [1, 2]]
    assert kjt.values.numpy().tolist() == [1, 2, 3, 7, 8, 9]
    struct = pa.StructArray.from_arrays([pa.array([[1], [2]]), pa.array([[3], []])], ["a", "b"])
    assert tk.from_arrow(struct).keys == ["a", "b"]
    # A table of two batches: one KeyedJaggedTensor of 4 rows.
    table = pa.Table.from_batches([batch, batch])
    both = tk.from_arrow(table)
    assert both.batch_size == 4 and both.lengths.numpy().tolist() == [[2, 1, 2, 1], [1, 2, 1, 2]]
    assert both["item"].values.numpy().tolist() == [7, 8, 9, 7, 8, 9]
    with pytest.raises(ValueError):
        tk.from_arrow(pa.record_batch({"a": pa.array([[1]]), "b": pa.array([[1.0]])}))


def test_chunked_arrays():
    ca = pa.chunked_array([np.arange(3, dtype=np.float32), np.arange(3, 5, dtype=np.float32)])
    t = tk.from_arrow(ca)
    assert t.numpy().tolist() == [0, 1, 2, 3, 4]
    one = pa.chunked_array([np.arange(4)])
    assert tk.from_arrow(one).data_ptr == address(one.chunk(0).buffers()[1])  # no copy
    lists = pa.chunked_array([pa.array([[1], [2, 3]]), pa.array([[], [4]])])
    jt = tk.from_arrow(lists)
    assert jt.offsets.numpy().tolist() == [0, 1, 3, 3, 4] and jt.values.numpy().tolist() == \
        [1, 2, 3, 4]
    empty = tk.from_arrow(pa.chunked_array([], type=pa.int16()))
    assert empty.dtype == "int16" and empty.shape == (0,)
    empty_lists = tk.from_arrow(pa.chunked_array([], type=pa.list_(pa.float64())))
    assert isinstance(empty_lists, tk.JaggedTensor) and empty_lists.batch_size == 0
    none = tk.from_arrow(pa.RecordBatchReader.from_batches(
        pa.schema({"a": pa.list_(pa.int64()), "b": pa.large_list(pa.int64())}), []))
    assert none.keys == ["a", "b"] and none.batch_size == 0 and none.lengths.shape == (2, 0)
    assert tk.from_arrow(pa.chunked_array([], type=pa.list_(pa.int32(), 3))).shape == (0, 3)
    reader = pa.RecordBatchReader.from_batches(
        pa.schema({"k": pa.list_(pa.int64())}),
        [pa.record_batch({"k": pa.array([[i, i]])}) for i in range(3)])
    kjt = tk.from_arrow(reader)
    assert kjt.batch_size == 3 and kjt.values.numpy().tolist() == [0, 0, 1, 1, 2, 2]


# --- in: string_view and binary_view ------------------------------------------------------------

LONG = "a string of more than twelve bytes"


def test_string_view_arrays():
    values = ["", "short", "exactly12byt", "thirteen byte", LONG, "ß" * 7]
    arr = pa.array(values, pa.string_view())
    t = tk.from_arrow(arr)
    assert t.dtype == "string" and t.numpy().tolist() == values
    assert tk.from_arrow(arr.slice(2, 3)).numpy().tolist() == values[2:5]
    bv = pa.array([b"\xff\x00", b"\xfe" * 20], pa.binary_view())
    assert tk.from_arrow(bv).numpy().tolist() == [b"\xff\x00", b"\xfe" * 20]
    # Views into two data buffers (concatenated arrays keep both).
    two = pa.concat_arrays([pa.array([LONG + "1"], pa.string_view()),
                            pa.array(["x", LONG + "2"], pa.string_view())])
    assert len(two.buffers()) == 4
    assert tk.from_arrow(two).numpy().tolist() == [LONG + "1", "x", LONG + "2"]
    with pytest.raises(tk.InvalidArgument, match="null at slot 1"):
        tk.from_arrow(pa.array(["a", None], pa.string_view()))
    empty = tk.from_arrow(pa.chunked_array([], type=pa.string_view()))
    assert empty.dtype == "string" and empty.shape == (0,)
    chunks = pa.chunked_array([pa.array(["a", LONG], pa.string_view()),
                               pa.array(["b"], pa.string_view())])
    assert tk.from_arrow(chunks).numpy().tolist() == ["a", LONG, "b"]


def test_string_view_lists_structs_tables():
    for typ in (pa.list_(pa.string_view()), pa.large_list(pa.string_view()),
                pa.list_(pa.binary_view())):
        arr = pa.array([[b"a", LONG.encode()], [], [b"c"]], typ)
        jt = tk.from_arrow(arr)
        assert jt.lengths.numpy().tolist() == [2, 0, 1]
        got = [v.encode() if isinstance(v, str) else v for v in jt.values.numpy().tolist()]
        assert got == [b"a", LONG.encode(), b"c"]
    sliced = pa.array([["x"], ["y", LONG], ["z"]], pa.list_(pa.string_view())).slice(1, 2)
    assert tk.from_arrow(sliced).values.numpy().tolist() == ["y", LONG, "z"]
    struct = pa.StructArray.from_arrays(
        [pa.array([["a"], [LONG]], pa.list_(pa.string_view())),
         pa.array([[], ["b", "c"]], pa.list_(pa.string_view()))], ["k1", "k2"])
    kjt = tk.from_arrow(struct)
    assert kjt.keys == ["k1", "k2"] and kjt.values.numpy().tolist() == ["a", LONG, "b", "c"]
    batch = pa.record_batch({"q": pa.array([["w" * 20], []], pa.large_list(pa.string_view()))})
    table = pa.Table.from_batches([batch, batch])
    kjt = tk.from_arrow(table)
    assert kjt.batch_size == 4 and kjt.values.numpy().tolist() == ["w" * 20] * 2
    nulls = pa.array([["a", None, LONG]], pa.list_(pa.string_view()))
    with pytest.raises(tk.InvalidArgument, match="null value at slot 1"):
        tk.from_arrow(nulls)
    jt = tk.from_arrow(nulls, null_values_as_zero_weight=True)
    assert jt.values.numpy().tolist() == ["a", "", LONG]
    assert jt.weights.numpy().tolist() == [1.0, 0.0, 1.0]


def views(*entries):
    """16-byte string views: (length, inline bytes) or (length, prefix, buffer index, offset)."""
    out = b""
    for e in entries:
        if len(e) == 2:
            out += struct.pack("<i12s", e[0], e[1])
        else:
            out += struct.pack("<i4sii", *e)
    return pa.py_buffer(out)


def test_corrupt_string_views_are_errors():
    data = pa.py_buffer(b"0123456789abcdefghij")  # 20 bytes

    def import_(*entries, typ=pa.string_view(), name=None):
        arr = pa.Array.from_buffers(typ, len(entries), [None, views(*entries), data])
        if name is not None:
            return tk.from_arrow(pa.record_batch({name: pa.ListArray.from_arrays([0, len(entries)],
                                                                                 arr)}))
        return tk.from_arrow(arr)

    ok = import_((3, b"abc"), (15, b"0123", 0, 0), (14, b"6789", 0, 6))
    assert ok.numpy().tolist() == ["abc", "0123456789abcde", "6789abcdefghij"]
    with pytest.raises(tk.InvalidArgument,
                       match=r"slot 1 of bytes \[10, 25\) of data buffer 0, which holds 20 bytes"):
        import_((3, b"abc"), (15, b"abcd", 0, 10))
    with pytest.raises(tk.InvalidArgument, match=r"slot 0 \(length 13\) into data buffer 1, "
                                                 r"but the array has 1 data buffers"):
        import_((13, b"0123", 1, 0))
    with pytest.raises(tk.InvalidArgument, match="data buffer -1"):
        import_((13, b"0123", -1, 0))
    with pytest.raises(tk.InvalidArgument, match=r"bytes \[-4, 9\)"):
        import_((13, b"0123", 0, -4))
    with pytest.raises(tk.InvalidArgument, match="length -5 at slot 2"):
        import_((0, b""), (1, b"x"), (-5, b""))
    with pytest.raises(tk.InvalidArgument, match="prefix differs"):
        import_((13, b"zzzz", 0, 0))
    # Inside a table's list column: the error names the column.
    with pytest.raises(tk.InvalidArgument, match="field 'tags.item' has a string view at slot 0"):
        import_((30, b"0123", 0, 0), name="tags")


# --- read-only: Arrow data is immutable ---------------------------------------------------------

def test_imported_arrow_memory_is_read_only():
    arr = pc.multiply(pa.array(np.arange(6, dtype=np.float64)), 2)  # Arrow-allocated
    t = tk.from_arrow(arr)
    assert t.readonly and t.data_ptr == address(arr.buffers()[1])
    view = np.asarray(t)
    assert not view.flags.writeable and view.ctypes.data == t.data_ptr
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1
    assert memoryview(t).readonly
    # The versioned DLPack capsule carries the flag; the old one cannot, so it is refused,
    # unless a copy is asked for.
    assert not np.from_dlpack(t).flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()
    t.__dlpack__(copy=True)
    assert np.asarray(t.copy()).flags.writeable
    assert arr.to_pylist() == [0, 2, 4, 6, 8, 10]
    # Lists: the shared values and int64 offsets are read-only, the same for views of them.
    jt = tk.from_arrow(pa.array([[1, 2], [3]], pa.large_list(pa.int64())))
    assert jt.values.readonly and jt.offsets.readonly
    assert jt[1].data_ptr == jt.values.data_ptr + 16  # a view of the values
    assert not jt.values.numpy().flags.writeable and not jt[1].numpy().flags.writeable
    kjt = tk.from_arrow(pa.record_batch({"a": pa.array([[1.0], [2.0, 3.0]])}))
    assert not kjt["a"].values.numpy().flags.writeable
    # Copies made by the import are the caller's: writable.
    assert not tk.from_arrow(pa.array([True, False])).readonly
    assert not tk.from_arrow(pa.array([[1], [2]], pa.list_(pa.int64()))).offsets.readonly


# --- the null rule ------------------------------------------------------------------------------

def test_nulls():
    with pytest.raises(tk.InvalidArgument, match="null at slot 1"):
        tk.from_arrow(pa.array([1.0, None, 3.0]))
    with pytest.raises(ValueError, match="null"):
        tk.from_arrow(pa.array([[1], None, [2]]))
    jt = tk.from_arrow(pa.array([[1], None, [2, 3]]), null_lists_as_empty=True)
    assert jt.lengths.numpy().tolist() == [1, 0, 2] and jt.values.numpy().tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="null value"):
        tk.from_arrow(pa.array([[1, None], [3]]))
    jt = tk.from_arrow(pa.array([[1, None], [3]]), null_values_as_zero_weight=True)
    assert jt.weights.numpy().tolist() == [1.0, 0.0, 1.0]
    # Chunks with and without nulls: weights 1 where a chunk had none.
    ca = pa.chunked_array([pa.array([[1, 2]]), pa.array([[None]], pa.list_(pa.int64()))])
    assert tk.from_arrow(ca, null_values_as_zero_weight=True).weights.numpy().tolist() == \
        [1.0, 1.0, 0.0]
    table = pa.Table.from_batches([
        pa.record_batch({"a": pa.array([[1]])}),
        pa.record_batch({"a": pa.array([[None, 2]], pa.list_(pa.int64()))})])
    kjt = tk.from_arrow(table, null_values_as_zero_weight=True)
    assert kjt.weights.numpy().tolist() == [1.0, 0.0, 1.0]


def test_unsupported_inputs():
    with pytest.raises(NotImplementedError, match="unsigned"):
        tk.from_arrow(pa.array([1, 2], pa.uint32()))
    with pytest.raises(NotImplementedError):
        tk.from_arrow(pa.array(["a", "b"]).dictionary_encode())
    with pytest.raises(TypeError):
        tk.from_arrow(np.arange(3))
    with pytest.raises(TypeError):
        tk.from_arrow(None)


# --- out ----------------------------------------------------------------------------------------

def test_export_tensor_zero_copy_and_lifetime():
    data = np.arange(8, dtype=np.float64)
    t = tk.asarray(data)
    arr = pa.array(t)
    assert arr.type == pa.float64() and address(arr.buffers()[1]) == t.data_ptr
    assert address(arr.buffers()[1]) == data.__array_interface__["data"][0]
    del t, data
    gc.collect()
    assert arr.to_pylist() == list(range(8))  # the export holds the memory
    m = pa.array(tk.asarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
    assert m.type == pa.list_(pa.int32(), 3) and m.to_pylist() == [[0, 1, 2], [3, 4, 5]]
    assert pa.array(tk.asarray(np.array(["x", "yz"]))).to_pylist() == [b"x", b"yz"]
    with pytest.raises(NotImplementedError):
        pa.array(tk.asarray(np.zeros((2, 2, 2))))


def test_export_jagged_and_keyed():
    values = np.array([1, 2, 3, 4, 5], np.int64)
    jt = tk.JaggedTensor(values, lengths=[2, 0, 3])
    arr = pa.array(jt)
    assert arr.type == pa.large_list(pa.int64())
    assert arr.to_pylist() == [[1, 2], [], [3, 4, 5]]
    assert address(arr.values.buffers()[1]) == values.__array_interface__["data"][0]
    back = tk.from_arrow(arr)
    assert back.values.data_ptr == jt.values.data_ptr  # round trip, still no copy

    kjt = tk.KeyedJaggedTensor(["a", "b"], np.arange(6, dtype=np.float32), [1, 2, 3, 0])
    rb = pa.record_batch(kjt)
    assert rb.schema.names == ["a", "b"] and rb.num_rows == 2
    assert rb.column("a").to_pylist() == [[0.0], [1.0, 2.0]]
    assert rb.column("b").to_pylist() == [[3.0, 4.0, 5.0], []]
    table = pa.table(kjt)
    assert table.num_rows == 2 and table.column("b").to_pylist() == [[3.0, 4.0, 5.0], []]
    ptr = kjt.values.data_ptr
    del kjt
    gc.collect()
    assert address(rb.column("b").values.buffers()[1]) in range(ptr, ptr + 6 * 4)
    assert rb.column("b").to_pylist() == [[3.0, 4.0, 5.0], []]
    again = tk.from_arrow(rb)
    assert again.keys == ["a", "b"] and again.lengths.numpy().tolist() == [[1, 2], [3, 0]]


def test_capsules_directly():
    t = tk.asarray(np.arange(3, dtype=np.int64))
    schema, array = t.__arrow_c_array__()
    assert type(schema).__name__ == "PyCapsule"
    arr = pa.Array._import_from_c_capsule(schema, array)
    assert arr.to_pylist() == [0, 1, 2]
    ca = pa.chunked_array(t)  # through __arrow_c_stream__
    assert ca.num_chunks == 1 and ca.to_pylist() == [0, 1, 2]
    # Capsules nobody consumed free their structs (and drop tensorkit's references).
    for _ in range(1000):
        t.__arrow_c_array__()
        t.__arrow_c_stream__()


# --- polars and DuckDB --------------------------------------------------------------------------

def test_polars():
    pl = pytest.importorskip("polars")
    s = pl.Series("x", np.arange(5, dtype=np.int32))
    t = tk.from_arrow(s)
    assert t.dtype == "int32" and t.numpy().tolist() == [0, 1, 2, 3, 4]
    lists = pl.Series("ids", [[1, 2], [], [3]])
    jt = tk.from_arrow(lists)
    assert jt.lengths.numpy().tolist() == [2, 0, 1] and jt.values.numpy().tolist() == [1, 2, 3]
    df = pl.DataFrame({"a": [[1, 2], [3]], "b": [[4], [5, 6]]})
    kjt = tk.from_arrow(df)
    assert kjt.keys == ["a", "b"] and kjt.lengths.numpy().tolist() == [[2, 1], [1, 2]]
    # A frame built from two chunks.
    two = pl.concat([df, df], rechunk=False)
    assert tk.from_arrow(two).batch_size == 4
    # Out: a DataFrame over a KeyedJaggedTensor, a Series over a Tensor.
    back = pl.DataFrame(kjt)
    assert back.columns == ["a", "b"] and back["b"].to_list() == [[4], [5, 6]]
    assert pl.Series(tk.asarray(np.arange(3.0))).to_list() == [0.0, 1.0, 2.0]
    # polars' strings are string_view; the old layout (large_string) reads the same.
    words = pl.Series("w", ["a", "bc", "a string longer than twelve bytes", ""])
    assert pa.chunked_array(words).type == pa.string_view()
    assert tk.from_arrow(words).numpy().tolist() == words.to_list()
    old = words.to_arrow(compat_level=pl.CompatLevel.oldest())
    assert tk.from_arrow(old).numpy().tolist() == words.to_list()
    with pytest.raises(tk.InvalidArgument, match="null at slot 1"):
        tk.from_arrow(pl.Series("w", ["a", None]))


def test_polars_string_lists_and_frames():
    pl = pytest.importorskip("polars")
    tags = pl.Series("tags", [["red", "a rather long tag value"], [], ["blue"]])
    jt = tk.from_arrow(tags)
    assert jt.dtype == "string" and jt.lengths.numpy().tolist() == [2, 0, 1]
    assert jt.values.numpy().tolist() == ["red", "a rather long tag value", "blue"]
    df = pl.DataFrame({"user": [["u1"], ["u2", "u3" * 10]], "item": [["i" * 13], []]})
    kjt = tk.from_arrow(df)
    assert kjt.keys == ["user", "item"] and kjt.lengths.numpy().tolist() == [[1, 2], [1, 0]]
    assert kjt.values.numpy().tolist() == ["u1", "u2", "u3" * 10, "i" * 13]
    # Two chunks, and a null inside a list weighed 0 (its value read as "").
    two = pl.concat([df, df], rechunk=False)
    assert tk.from_arrow(two)["user"].values.numpy().tolist() == ["u1", "u2", "u3" * 10] * 2
    jt = tk.from_arrow(pl.Series("t", [["x", None], ["y"]]), null_values_as_zero_weight=True)
    assert jt.values.numpy().tolist() == ["x", "", "y"]
    assert jt.weights.numpy().tolist() == [1.0, 0.0, 1.0]


def test_duckdb():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    rel = con.sql("select [i, i + 1]::BIGINT[] as a, [i * 10]::BIGINT[] as b "
                  "from range(4) t(i) order by i")
    kjt = tk.from_arrow(rel)
    assert kjt.keys == ["a", "b"] and kjt.batch_size == 4
    assert kjt["a"].values.numpy().tolist() == [0, 1, 1, 2, 2, 3, 3, 4]
    assert kjt["b"].values.numpy().tolist() == [0, 10, 20, 30]
    # A reader over a query of several batches.
    reader = con.sql("select [i::DOUBLE] as x from range(5000) t(i) order by i").to_arrow_reader(
        1024)
    x = tk.from_arrow(reader)
    assert x.batch_size == 5000 and x.values.numpy().tolist() == list(range(5000))
    # DuckDB reads tensorkit's export (a stream) as a table.
    exported = tk.KeyedJaggedTensor(["u"], np.array([5, 6, 7]), [[2, 1]])
    assert con.sql("select len(u) as n from exported").fetchall() == [(2,), (1,)]
