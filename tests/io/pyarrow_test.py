#!/usr/bin/env python3
"""The Arrow C Data Interface (io/arrow.h) against pyarrow: arrays pyarrow makes (and reads from
Parquet files it writes) go into tensorkit and back out, equal and, where the layout allows,
over the same buffers; arrays tensorkit makes are read by pyarrow and written to Parquet.

Usage: pyarrow_test.py --lib build/lib/libtensorkit_arrow_capi.so [unittest args]
(run by ctest as io.pyarrow with .venvs/arrow/bin/python; `make arrow-venv` makes that venv)
"""
import ctypes
import os
import struct
import sys
import tempfile
import unittest

import pyarrow as pa
import pyarrow.parquet as pq

LIB = None


class Pair:
    """An ArrowArray and an ArrowSchema, as raw memory (80 and 72 bytes, zeroed)."""

    def __init__(self):
        self.array = ctypes.create_string_buffer(80)
        self.schema = ctypes.create_string_buffer(72)

    @property
    def addresses(self):
        return ctypes.addressof(self.array), ctypes.addressof(self.schema)


def lib():
    l = ctypes.CDLL(LIB)
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    l.tk_arrow_reexport.argtypes = [ctypes.c_int, ctypes.c_int, vp, vp, vp, vp, ctypes.c_char_p, i64]
    l.tk_arrow_make.argtypes = [ctypes.c_int, i64, vp, vp, ctypes.c_char_p, i64]
    return l


class ArrowError(Exception):
    pass


def through_tensorkit(arr, kind, options=0):
    """arr exported by pyarrow, imported by tensorkit as `kind`, exported again, imported back."""
    src, dst = Pair(), Pair()
    arr._export_to_c(*src.addresses)
    err = ctypes.create_string_buffer(2048)
    if _lib.tk_arrow_reexport(kind, options, *src.addresses, *dst.addresses, err, len(err)):
        raise ArrowError(err.value.decode())
    return pa.Array._import_from_c(*dst.addresses)


def made_by_tensorkit(kind, n):
    dst = Pair()
    err = ctypes.create_string_buffer(2048)
    if _lib.tk_arrow_make(kind, n, *dst.addresses, err, len(err)):
        raise ArrowError(err.value.decode())
    return pa.Array._import_from_c(*dst.addresses)


TENSOR, JAGGED, KEYED, WEIGHTS = 0, 1, 2, 3


class PyarrowTest(unittest.TestCase):
    def test_primitive_arrays_of_every_type(self):
        for typ, values in [(pa.int8(), [-128, 0, 127]), (pa.uint8(), [0, 255]),
                            (pa.int16(), [-300, 7]), (pa.int32(), [1, -(2**31)]),
                            (pa.int64(), [2**62, -1]), (pa.float32(), [0.5, -1e30]),
                            (pa.float64(), [1e300, -0.0]), (pa.bool_(), [True, False] * 9)]:
            arr = pa.array(values, typ)
            back = through_tensorkit(arr, TENSOR)
            self.assertEqual(back.type, typ)
            self.assertEqual(back.to_pylist(), arr.to_pylist(), typ)
        import numpy as np  # float16 arrays need NumPy in pyarrow
        h = pa.array(np.array([1.5, -2.0, 65504.0], np.float16))
        self.assertEqual(through_tensorkit(h, TENSOR).to_pylist(), h.to_pylist())
        # Strings: tensorkit exports binary (bytes need not be UTF-8).
        s = pa.array(["a", "", "ü\x00"])
        self.assertEqual(through_tensorkit(s, TENSOR).to_pylist(),
                         [x.encode() for x in s.to_pylist()])
        self.assertEqual(through_tensorkit(pa.array([b"x", b""], pa.large_binary()), TENSOR)
                         .to_pylist(), [b"x", b""])

    def test_string_and_binary_views(self):
        # The layout of polars and newer pyarrow: inline up to 12 bytes, else in data buffers
        # (two here, from the concatenation); tensorkit reads them and exports binary.
        long = "a string longer than twelve bytes"
        words = pa.concat_arrays([pa.array(["", "twelve bytes", long], pa.string_view()),
                                  pa.array([long + "!", "ü"], pa.string_view())])
        self.assertEqual(through_tensorkit(words, TENSOR).to_pylist(),
                         [w.encode() for w in words.to_pylist()])
        self.assertEqual(through_tensorkit(words.slice(2, 2), TENSOR).to_pylist(),
                         [long.encode(), (long + "!").encode()])
        raw = pa.array([b"\xff" * 13, b"\x00"], pa.binary_view())
        self.assertEqual(through_tensorkit(raw, TENSOR).to_pylist(), raw.to_pylist())
        rows = [[long, "b"], [], ["c"]]
        for typ in [pa.list_(pa.string_view()), pa.large_list(pa.string_view())]:
            self.assertEqual(through_tensorkit(pa.array(rows, typ), JAGGED).to_pylist(),
                             [[w.encode() for w in r] for r in rows])
        st = pa.StructArray.from_arrays([pa.array(rows, pa.list_(pa.string_view()))], ["tags"])
        self.assertEqual(through_tensorkit(st, KEYED).to_pylist(),
                         [{"tags": [w.encode() for w in r]} for r in rows])
        # A view past the end of its data buffer: an Error, not a read outside it.
        bad = pa.Array.from_buffers(pa.string_view(), 1, [
            None, pa.py_buffer(struct.pack("<i4sii", 40, b"abcd", 0, 0)), pa.py_buffer(b"abcd")])
        with self.assertRaisesRegex(ArrowError, r"slot 0 of bytes \[0, 40\) of data buffer 0, "
                                                r"which holds 4 bytes"):
            through_tensorkit(bad, TENSOR)

    def test_numbers_are_not_copied(self):
        arr = pa.array(range(1000), pa.int64())
        back = through_tensorkit(arr, TENSOR)
        self.assertEqual(back.buffers()[1].address, arr.buffers()[1].address)
        # A slice is read in place from its offset.
        sl = arr.slice(10, 5)
        back = through_tensorkit(sl, TENSOR)
        self.assertEqual(back.to_pylist(), list(range(10, 15)))
        self.assertEqual(back.buffers()[1].address, arr.buffers()[1].address + 10 * 8)

    def test_fixed_size_lists_are_2d_tensors(self):
        arr = pa.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
                       pa.list_(pa.float32(), 3))
        back = through_tensorkit(arr, TENSOR)
        self.assertEqual(back.type, pa.list_(pa.float32(), 3))
        self.assertEqual(back.to_pylist(), arr.to_pylist())
        self.assertEqual(through_tensorkit(arr.slice(1, 2), TENSOR).to_pylist(),
                         arr.to_pylist()[1:])

    def test_lists_are_jagged_tensors(self):
        rows = [[1, 2], [], [3, 4, 5], [6]]
        for typ in [pa.list_(pa.int64()), pa.large_list(pa.int64()), pa.list_(pa.int32())]:
            arr = pa.array(rows, typ)
            back = through_tensorkit(arr, JAGGED)
            self.assertEqual(back.type, pa.large_list(typ.value_type))
            self.assertEqual(back.to_pylist(), rows, typ)
            self.assertEqual(through_tensorkit(arr.slice(1, 3), JAGGED).to_pylist(), rows[1:])
        large = pa.array(rows, pa.large_list(pa.int64()))
        back = through_tensorkit(large, JAGGED)
        self.assertEqual(back.buffers()[1].address, large.buffers()[1].address)  # offsets
        self.assertEqual(back.buffers()[3].address, large.buffers()[3].address)  # values
        words = pa.array([["a", "bc"], [], ["d"]])
        self.assertEqual(through_tensorkit(words, JAGGED).to_pylist(),
                         [[b"a", b"bc"], [], [b"d"]])
        emb = pa.array([[[1.0, 2.0]], [], [[3.0, 4.0], [5.0, 6.0]]],
                       pa.list_(pa.list_(pa.float64(), 2)))
        self.assertEqual(through_tensorkit(emb, JAGGED).to_pylist(), emb.to_pylist())

    def test_nulls_are_refused_or_read_by_option(self):
        arr = pa.array([[1, 2], None, [3], None, []], pa.list_(pa.int64()))
        with self.assertRaisesRegex(ArrowError, "null at row 1.*null_lists_as_empty"):
            through_tensorkit(arr, JAGGED)
        self.assertEqual(through_tensorkit(arr, JAGGED, 1).to_pylist(), [[1, 2], [], [3], [], []])
        vals = pa.array([[1, None], [None, 4, 5]], pa.list_(pa.int64()))
        with self.assertRaisesRegex(ArrowError, "null value at slot 1"):
            through_tensorkit(vals, JAGGED)
        self.assertEqual(through_tensorkit(vals, WEIGHTS, 2).to_pylist(), [1, 0, 0, 1, 1])
        with self.assertRaisesRegex(ArrowError, "null at slot 1"):
            through_tensorkit(pa.array([1, None, 3]), TENSOR)
        with self.assertRaisesRegex(ArrowError, "unsigned.*cast"):
            through_tensorkit(pa.array([1, 2], pa.uint32()), TENSOR)
        with self.assertRaisesRegex(ArrowError, "dictionary"):
            through_tensorkit(pa.array(["a", "b", "a"]).dictionary_encode(), TENSOR)

    def test_structs_of_lists_are_keyed_jagged_tensors(self):
        a = pa.array([[1.0], [2.0, 3.0], []], pa.list_(pa.float32()))
        b = pa.array([[], [4.0], [5.0, 6.0, 7.0]], pa.list_(pa.float32()))
        st = pa.StructArray.from_arrays([a, b], names=["clicks", "views"])
        back = through_tensorkit(st, KEYED)
        self.assertEqual(back.type.names if hasattr(back.type, "names") else
                         [f.name for f in back.type], ["clicks", "views"])
        self.assertEqual(back.to_pylist(), st.to_pylist())
        self.assertEqual(through_tensorkit(st.slice(1, 2), KEYED).to_pylist(), st.to_pylist()[1:])

    def test_parquet_files_pyarrow_writes(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.parquet")
            ids = [[i, i + 1][: i % 3] for i in range(500)]
            table = pa.table({"ids": pa.array(ids, pa.list_(pa.int64())),
                              "score": pa.array([i / 4 for i in range(500)], pa.float64()),
                              "emb": pa.array([[float(i)] * 4 for i in range(500)],
                                              pa.list_(pa.float32(), 4))})
            pq.write_table(table, path, row_group_size=128)
            read = pq.read_table(path)
            self.assertEqual(through_tensorkit(read["ids"].combine_chunks(), JAGGED).to_pylist(),
                             ids)
            self.assertEqual(through_tensorkit(read["score"].combine_chunks(), TENSOR).to_pylist(),
                             table["score"].to_pylist())
            self.assertEqual(through_tensorkit(read["emb"].combine_chunks(), TENSOR).to_pylist(),
                             table["emb"].to_pylist())
            # Each row group's chunk on its own (an offset into the shared buffers, or not).
            for chunk in read["ids"].chunks:
                self.assertEqual(through_tensorkit(chunk, JAGGED).to_pylist(), chunk.to_pylist())

    def test_arrays_tensorkit_makes_pyarrow_reads_and_writes(self):
        n = 300
        dense = made_by_tensorkit(0, n)
        self.assertEqual(dense.type, pa.float64())
        self.assertEqual(dense.to_pylist(), [i / 2 for i in range(n)])
        jag = made_by_tensorkit(1, n)
        self.assertEqual(jag.to_pylist(), [[i + k for k in range(i % 4)] for i in range(n)])
        keyed = made_by_tensorkit(2, n)
        self.assertEqual(keyed.to_pylist(),
                         [{"a": [float(k) for k in range(i % 3)],
                           "b": [10.0 + k for k in range((i + 1) % 3)]} for i in range(n)])
        fixed = made_by_tensorkit(3, n)
        self.assertEqual(fixed.to_pylist(), [[3 * i, 3 * i + 1, 3 * i + 2] for i in range(n)])
        strs = made_by_tensorkit(4, n)
        self.assertEqual(strs.to_pylist(), [b"s%d" % i for i in range(n)])
        for arr in [dense, jag, keyed, fixed, strs]:
            arr.validate(full=True)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tk.parquet")
            pq.write_table(pa.table({"dense": dense, "jag": jag, "keyed": keyed, "fixed": fixed,
                                     "strs": strs}), path)
            back = pq.read_table(path)
            self.assertEqual(back["jag"].to_pylist(), jag.to_pylist())
            self.assertEqual(back["keyed"].to_pylist(), keyed.to_pylist())
            self.assertEqual(back["fixed"].to_pylist(), fixed.to_pylist())


if __name__ == "__main__":
    args = sys.argv[:]
    if "--lib" in args:
        i = args.index("--lib")
        LIB = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    _lib = lib()
    unittest.main(argv=args)
