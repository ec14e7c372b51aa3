"""The tensorkit input pipeline: batches for a TorchRec model from a Parquet file (Arrow in,
tk.from_arrow) or a TFRecord file of tf.Examples (tk.io.tfrecord_iterator, tk.io.parse_example),
categorical values hashed (tk.hash_bucket_fast: TensorFlow's StringToHashBucketFast), empty rows
filled (tk.fill_empty_rows), floats bucketized (tk.bucketize), a torchrec KeyedJaggedTensor out
(tensorkit.torch.to_torchrec, sharing tensorkit's memory). Each is a torch IterableDataset whose
DataLoader workers read their own row groups or records."""

import numpy as np
import pyarrow.parquet as pq
import torch

import tensorkit as tk
import tensorkit.torch as tkt
from pipeline_common import (BOUNDARIES, BUCKETS, CATEGORICAL_KEYS, DENSE_KEYS, MISSING_ID,
                             SPARSE_KEYS, dense_input, my_batches)


def assemble(hashed, cat_lengths, dense, label):
    """The batch from the hashed categorical ids (int64, feature-major), their lengths [26 * B],
    the floats [13, B] and the labels [B]."""
    batch = dense.shape[1]
    # Every empty categorical row gets MISSING_ID (tf.sparse.fill_empty_rows on the [26 * B, L]
    # sparse form of all 26 features at once).
    jagged = tk.JaggedTensor(hashed, lengths=cat_lengths)
    filled, _, _ = tk.fill_empty_rows(jagged.to_sparse(), MISSING_ID)
    filled = tk.JaggedTensor.from_sparse(filled)
    # The floats' bucket ids (TensorFlow's Bucketize: float32 boundaries), one per row.
    dense_ids = tk.bucketize(dense, BOUNDARIES).astype("int64")  # [13, B]
    kjt = tk.KeyedJaggedTensor(
        SPARSE_KEYS,
        np.concatenate([np.asarray(filled.values), np.asarray(dense_ids).reshape(-1)]),
        np.concatenate([np.asarray(filled.lengths), np.ones(dense_ids.shape[0] * batch,
                                                            dtype=np.int64)]))
    labels = torch.from_numpy(np.asarray(label, dtype=np.float32).reshape(-1))
    return dense_input(dense), tkt.to_torchrec(kjt), labels


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
