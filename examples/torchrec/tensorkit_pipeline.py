"""The tensorkit input pipeline: batches for a TorchRec model from a Parquet file (Arrow in,
tk.from_arrow) or a TFRecord file of tf.Examples (tk.io.tfrecord_iterator, tk.io.parse_example),
categorical values hashed (tk.hash_bucket_fast: TensorFlow's StringToHashBucketFast), empty rows
filled (tk.fill_empty_rows), floats bucketized (tk.bucketize), a torchrec KeyedJaggedTensor out
(tensorkit.torch.to_torchrec, sharing tensorkit's memory). Each is a torch IterableDataset whose
DataLoader workers read their own row groups or records; a worker's batch crosses to the main
process as one buffer (WorkerBatch)."""

import numpy as np
import pyarrow.parquet as pq
import torch

import tensorkit as tk
import tensorkit.torch as tkt
from pipeline_common import (BOUNDARIES, BUCKETS, CATEGORICAL_KEYS, DENSE_KEYS, MISSING_ID,
                             SPARSE_KEYS, dense_input, my_batches)


def assemble(hashed, cat_lengths, dense, label):
    """The batch from the hashed categorical ids (int64, feature-major), their lengths [26 * B],
    the floats [13, B] and the labels [B]: (dense input, KeyedJaggedTensor, labels), or in a
    DataLoader worker a WorkerBatch that becomes that tuple in the main process."""
    batch = dense.shape[1]
    # Every empty categorical row gets MISSING_ID (tf.sparse.fill_empty_rows on the [26 * B, L]
    # sparse form of all 26 features at once).
    jagged = tk.JaggedTensor(hashed, lengths=cat_lengths)
    filled, _, _ = tk.fill_empty_rows(jagged.to_sparse(), MISSING_ID)
    filled = tk.JaggedTensor.from_sparse(filled)
    # The floats' bucket ids (TensorFlow's Bucketize: float32 boundaries), one per row.
    dense_ids = tk.bucketize(dense, BOUNDARIES).astype("int64")  # [13, B]
    values = np.concatenate([np.asarray(filled.values), np.asarray(dense_ids).reshape(-1)])
    lengths = np.concatenate([np.asarray(filled.lengths),
                              np.ones(dense_ids.shape[0] * batch, dtype=np.int64)])
    labels = np.asarray(label, dtype=np.float32).reshape(-1)
    if torch.utils.data.get_worker_info() is not None:
        return WorkerBatch(dense_input(dense).numpy(), values, lengths, labels)
    kjt = tk.KeyedJaggedTensor(SPARSE_KEYS, values, lengths)
    return dense_input(dense), tkt.to_torchrec(kjt), torch.from_numpy(labels)


class WorkerBatch:
    """A batch made in a DataLoader worker, sent to the main process as one buffer: the ids,
    lengths, offsets, dense input and labels side by side in one bytearray, which pickles by
    value through the worker's pipe (tens of KiB a batch). Unpickled it is the batch tuple, its
    tensors views of that buffer. Sent as they are, the batch's five tensors would each be moved
    into a shared-memory segment and its file descriptor passed over a socket of its own, which
    costs more than the worker takes to make the batch."""

    __slots__ = ("buffer", "sizes")

    def __init__(self, dense, values, lengths, labels):
        offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # The 8-byte parts first, so that every part is aligned for its dtype.
        parts = [values.astype(np.int64, copy=False), lengths.astype(np.int64, copy=False),
                 offsets, np.ascontiguousarray(dense, dtype=np.float32), labels]
        self.sizes = (values.shape[0], lengths.shape[0], labels.shape[0])
        self.buffer = bytearray(sum(p.nbytes for p in parts))
        flat = np.frombuffer(self.buffer, dtype=np.uint8)
        at = 0
        for p in parts:
            flat[at:at + p.nbytes] = p.reshape(-1).view(np.uint8)
            at += p.nbytes

    def __reduce__(self):
        return _unpack_batch, (self.buffer, self.sizes)


def _unpack_batch(buffer, sizes):
    from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

    num_values, num_lengths, batch = sizes
    flat = np.frombuffer(buffer, dtype=np.uint8)
    at = 0

    def take(count, dtype):
        nonlocal at
        nbytes = count * np.dtype(dtype).itemsize
        part = torch.from_numpy(flat[at:at + nbytes].view(dtype))
        at += nbytes
        return part

    values, lengths = take(num_values, np.int64), take(num_lengths, np.int64)
    offsets = take(num_lengths + 1, np.int64)
    dense = take(batch * len(DENSE_KEYS), np.float32).view(batch, len(DENSE_KEYS))
    labels = take(batch, np.float32)
    kjt = KeyedJaggedTensor(keys=SPARSE_KEYS, values=values, lengths=lengths, offsets=offsets,
                            stride=batch)
    return dense, kjt, labels


def _one_thread():
    # DataLoader workers run torch on one thread each; tensorkit likewise, so that W workers
    # share the cores rather than each taking all of them.
    if torch.utils.data.get_worker_info() is not None:
        tk.set_num_threads(1)


class ParquetBatches(torch.utils.data.IterableDataset):
    """(dense [B, 13] float32, KeyedJaggedTensor, labels [B] float32) from a Parquet file whose
    row groups are batch_size rows: worker w reads row groups w, w + W, ..."""

    def __init__(self, path, epochs=None):
        self.path = path
        self.epochs = epochs

    def __iter__(self):
        _one_thread()
        parquet = pq.ParquetFile(self.path)
        for g in my_batches(parquet.num_row_groups, self.epochs):
            yield self.batch(parquet.read_row_group(g))

    @staticmethod
    def batch(table):
        # The 26 list<string> columns as one KeyedJaggedTensor of strings (lengths [26, B]);
        # Arrow's offsets and strings are shared, not copied. Null rows are empty rows.
        cats = tk.from_arrow(table.select(CATEGORICAL_KEYS), null_lists_as_empty=True)
        # All features share the bucket count: one call hashes every value of the batch.
        hashed = tk.hash_bucket_fast(cats.values, BUCKETS)
        dense = np.stack([np.asarray(tk.from_arrow(table.column(k))) for k in DENSE_KEYS])
        return assemble(hashed, np.asarray(cats.lengths).reshape(-1), dense,
                        tk.from_arrow(table.column("label")))


class TFRecordBatches(torch.utils.data.IterableDataset):
    """The same batches from a TFRecord file of tf.Examples: consecutive runs of batch_size
    records, worker w parsing runs w, w + W, ... (every worker walks the file's framing; only
    its own records are parsed)."""

    SPEC = {"label": tk.io.FixedLenFeature([1], "int64", default_value=0),
            **{k: tk.io.FixedLenFeature([1], "float32", default_value=0.0) for k in DENSE_KEYS},
            **{k: tk.io.RaggedFeature("string", row_splits_dtype="int64")
               for k in CATEGORICAL_KEYS}}

    def __init__(self, path, batch_size, num_records=None, epochs=None):
        self.path = path
        self.batch_size = batch_size
        if num_records is None:  # one pass over the framing
            num_records = sum(1 for _ in tk.io.tfrecord_iterator(path))
        self.num_batches = -(-num_records // batch_size)
        self.epochs = epochs

    def __iter__(self):
        _one_thread()
        wanted = None
        records = []
        for g in my_batches(self.num_batches, self.epochs):
            if wanted is None or g <= wanted:  # a new pass over the file
                reader = enumerate(tk.io.tfrecord_iterator(self.path))
            wanted = g
            first = g * self.batch_size
            for i, record in reader:
                if i >= first:
                    records.append(record)
                if len(records) == self.batch_size:
                    break
            yield self.batch(records)
            records = []

    @classmethod
    def batch(cls, records):
        parsed = tk.io.parse_example(records, cls.SPEC)
        hashed = [tk.hash_bucket_fast(parsed[k], BUCKETS) for k in CATEGORICAL_KEYS]
        dense = np.stack([parsed[k].reshape(-1) for k in DENSE_KEYS])
        return assemble(np.concatenate([np.asarray(h.values) for h in hashed]),
                        np.concatenate([np.asarray(h.lengths) for h in hashed]), dense,
                        parsed["label"])
