"""The comparison pipeline: the same batches as tensorkit_pipeline.py from pyarrow, NumPy and
torch alone (no tensorkit). It reads Parquet only: without TensorFlow or tensorkit there is no
tf.Example parser at hand, so for the TFRecord file it reads a Parquet copy of the same rows.

Hashing: TensorFlow's StringToHashBucketFast is FarmHash's Fingerprint64 of the bytes modulo the
number of buckets; PyTorch and pyarrow have no FarmHash, so fingerprint64 below computes it in
Python (each distinct string once per worker)."""

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

from pipeline_common import (BOUNDARIES, BUCKETS, CATEGORICAL_KEYS, DENSE_KEYS, MISSING_ID,
                             SPARSE_KEYS, dense_input, my_batches)

_M = (1 << 64) - 1
_K0, _K1, _K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _u64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _u32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v, shift):
    return ((v >> shift) | (v << (64 - shift))) & _M


def _mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _weak32(s, i, a, b):
    w, x, y, z = _u64(s, i), _u64(s, i + 8), _u64(s, i + 16), _u64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s):
    """FarmHash Fingerprint64 (its "na" 64-bit hash) of bytes `s`, as TensorFlow computes it."""
    n = len(s)
    if n <= 16:
        if n >= 8:
            mul = _K2 + n * 2
            a = (_u64(s, 0) + _K2) & _M
            b = _u64(s, n - 8)
            c = (_rot(b, 37) * mul + a) & _M
            d = ((_rot(a, 25) + b) * mul) & _M
            return _len16(c, d, mul)
        if n >= 4:
            return _len16((n + (_u32(s, 0) << 3)) & _M, _u32(s, n - 4), _K2 + n * 2)
        if n > 0:
            y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
            z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
            return (_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
        return _K2
    mul = _K2 + n * 2
    if n <= 32:
        a = (_u64(s, 0) * _K1) & _M
        b = _u64(s, 8)
        c = (_u64(s, n - 8) * mul) & _M
        d = (_u64(s, n - 16) * _K2) & _M
        return _len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                      (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    if n <= 64:
        a = (_u64(s, 0) * _K2) & _M
        b = _u64(s, 8)
        c = (_u64(s, n - 8) * mul) & _M
        d = (_u64(s, n - 16) * _K2) & _M
        y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
        z = _len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
        e = (_u64(s, 16) * mul) & _M
        f = _u64(s, 24)
        g = ((y + _u64(s, n - 32)) * mul) & _M
        h = ((z + _u64(s, n - 24)) * mul) & _M
        return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                      (e + _rot((f + a) & _M, 18) + g) & _M, mul)
    # Longer: 64-byte blocks through two 128-bit states, then the last 64 bytes.
    x = 81
    y = (81 * _K1 + 113) & _M
    z = (_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = w = (0, 0)
    x = (x * _K2 + _u64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last = end + ((n - 1) & 63) - 63
    i = 0
    while i != end:
        x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _u64(s, i + 40)) & _M
        z = (_rot((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak32(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
    mul = _K1 + ((z & 0xFF) << 1)
    i = last
    w = ((w[0] + ((n - 1) & 63)) & _M, w[1])
    v = ((v[0] + w[0]) & _M, v[1])
    w = ((w[0] + v[0]) & _M, w[1])
    x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _u64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
    z, x = x, z
    return _len16((_len16(v[0], w[0], mul) + _mix(y) * _K0 + z) & _M,
                  (_len16(v[1], w[1], mul) + x) & _M, mul)


def fill_empty_rows(values, lengths, default):
    """tf.sparse.fill_empty_rows on a jagged tensor: each empty row gets the one value
    `default`; the other rows keep theirs, in order."""
    rows = lengths.shape[0]
    out_lengths = torch.clamp(lengths, min=1)
    out = torch.full((int(out_lengths.sum()),), default, dtype=values.dtype)
    out_starts = torch.cumsum(out_lengths, 0) - out_lengths
    in_starts = torch.cumsum(lengths, 0) - lengths
    row = torch.repeat_interleave(torch.arange(rows), lengths)
    position = out_starts[row] + torch.arange(values.shape[0]) - in_starts[row]
    out[position] = values
    return out, out_lengths


class TorchBatches(torch.utils.data.IterableDataset):
    """(dense [B, 13] float32, KeyedJaggedTensor, labels [B] float32) from a Parquet file whose
    row groups are batch_size rows: worker w reads row groups w, w + W, ..."""

    def __init__(self, path, epochs=None):
        self.path = path
        self.epochs = epochs
        self.boundaries = torch.tensor(BOUNDARIES, dtype=torch.float32)

    def __iter__(self):
        parquet = pq.ParquetFile(self.path)
        buckets = {}  # string -> id: each distinct value is hashed once
        for g in my_batches(parquet.num_row_groups, self.epochs):
            yield self.batch(parquet.read_row_group(g), buckets)

    def batch(self, table, buckets):
        values, lengths = [], []
        for key in CATEGORICAL_KEYS:
            column = table.column(key)
            lengths.append(pc.fill_null(pc.list_value_length(column), 0).to_numpy())
            ids = []
            for s in pc.list_flatten(column).to_pylist():
                if s not in buckets:
                    buckets[s] = fingerprint64(s.encode()) % BUCKETS
                ids.append(buckets[s])
            values.append(np.array(ids, dtype=np.int64))
        cat_values, cat_lengths = fill_empty_rows(
            torch.from_numpy(np.concatenate(values)),
            torch.from_numpy(np.concatenate(lengths).astype(np.int64)), MISSING_ID)
        dense = np.stack([table.column(k).to_numpy() for k in DENSE_KEYS])  # [13, B]
        dense_ids = torch.bucketize(torch.from_numpy(dense), self.boundaries, right=True)
        kjt = KeyedJaggedTensor(
            keys=SPARSE_KEYS, values=torch.cat([cat_values, dense_ids.reshape(-1)]),
            lengths=torch.cat([cat_lengths, torch.ones(dense.size, dtype=torch.int64)]))
        labels = torch.from_numpy(table.column("label").to_numpy().astype(np.float32))
        return dense_input(dense), kjt, labels
