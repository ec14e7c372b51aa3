"""examples/torchrec/: a TorchRec EmbeddingBagCollection model trained from tensorkit's batches
(Parquet through Arrow, and the C++ example's TFRecord file), in DataLoaders with two worker
processes, against the same model fed by a pyarrow/torch pipeline. The batches must be equal
batch for batch, and so must the loss curves, exactly: both models start from the same seed and
run the same operators on bitwise-equal inputs in the same order, so no reduction is ordered
differently. Short runs on small data written to a temporary folder."""

import hashlib
import os
import random
import sys

import numpy as np
import pytest
import torch

import tensorkit as tk

pytest.importorskip("torchrec")
pq = pytest.importorskip("pyarrow.parquet")

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "torchrec")
sys.path.insert(0, os.path.normpath(EXAMPLE))
import criteo_data  # noqa: E402
import torch_pipeline  # noqa: E402
import train_torchrec  # noqa: E402
from pipeline_common import BUCKETS, SPARSE_KEYS  # noqa: E402

WORKERS = 2
# The model is small: one intra-op thread trains it fastest, and two OpenMP threads on a CI
# machine of two cores, one of them busy with a worker, wait on each other for seconds.
torch.set_num_threads(1)

# sha256 of the TFRecord file examples/feature_pipeline.cc writes (criteo::MakeRecords(2000, 1)
# through io::WriteTFRecords), taken from the C++ program's file.
CPP_EXAMPLE_FILE_SHA256 = "6809d63c23843c562a4340953aca027fac26bb428b3482bce4cd65ade8b5e8e9"


def test_fingerprint64_is_tensorflows_hash():
    # The comparison pipeline's FarmHash against tk.hash_bucket_fast, over every code path
    # (lengths 0-3, 4-7, 8-16, 17-32, 33-64, and the 64-byte blocks).
    rng = random.Random(5)
    strings = [bytes(rng.randrange(256) for _ in range(n)) for n in range(200)] * 2
    for num_buckets in (BUCKETS, 2**61 - 1):
        ours = np.asarray(tk.hash_bucket_fast(np.array(strings, dtype=object), num_buckets))
        theirs = [torch_pipeline.fingerprint64(s) % num_buckets for s in strings]
        assert ours.tolist() == theirs


def test_fill_empty_rows_reference():
    values, lengths = torch_pipeline.fill_empty_rows(
        torch.tensor([5, 6, 7]), torch.tensor([0, 2, 0, 1, 0]), 9)
    assert values.tolist() == [9, 5, 6, 9, 7, 9] and lengths.tolist() == [1, 2, 1, 1, 1]


def _assert_same_batches(ours, theirs):
    assert len(ours) == len(theirs)
    for i, ((d1, k1, y1), (d2, k2, y2)) in enumerate(zip(ours, theirs)):
        assert k1.keys() == k2.keys() == SPARSE_KEYS, i
        assert k1.values().dtype == k2.values().dtype == torch.int64, i
        assert torch.equal(k1.values(), k2.values()), i
        assert torch.equal(k1.lengths(), k2.lengths()), i
        assert torch.equal(d1, d2) and torch.equal(y1, y2), i


def _run_both(ours, theirs, steps):
    curves, batches = {}, {}
    for name, dataset in (("tensorkit", ours), ("torch", theirs)):
        loader = train_torchrec.loader(dataset, WORKERS)
        assert loader.num_workers == WORKERS
        curves[name], batches[name] = train_torchrec.train(iter(loader), steps, seed=3,
                                                           keep=True)
    _assert_same_batches(batches["tensorkit"], batches["torch"])
    assert torch.equal(curves["tensorkit"], curves["torch"])
    first, last = curves["tensorkit"][:10].mean(), curves["tensorkit"][-10:].mean()
    assert last < 0.7 * first, (first, last)
    return batches["tensorkit"]


def _assert_file_order(batches, parquet_path, batch_size):
    # Two workers, each reading its own row groups, hand the batches over in file order, epoch
    # after epoch: no batch missing, none twice.
    groups = pq.ParquetFile(parquet_path)
    for i, (_, kjt, labels) in enumerate(batches):
        g = i % groups.num_row_groups
        expected = groups.read_row_group(g).column("label").to_numpy()
        assert labels.tolist() == expected.tolist(), i
        assert kjt.stride() == batch_size


def test_parquet_pipeline(tmp_path):
    # 1024 rows in 16 row groups of 64: 80 steps are five epochs.
    ours, theirs = train_torchrec.datasets("parquet", str(tmp_path), rows=1024, batch_size=64)
    table = pq.read_table(str(tmp_path / "parquet.parquet"))
    assert pq.ParquetFile(str(tmp_path / "parquet.parquet")).num_row_groups == 16
    assert table.column("C1").null_count > 0  # null rows, read as empty ones
    batches = _run_both(ours, theirs, steps=80)
    _assert_file_order(batches, str(tmp_path / "parquet.parquet"), 64)
    # Empty rows were filled: every categorical bag has an id.
    assert all(int(kjt.lengths().min()) >= 1 for _, kjt, _ in batches)


def test_tfrecord_pipeline(tmp_path):
    # The C++ example's file: 2000 records, read in 20 batches of 100; 60 steps are 3 epochs.
    ours, theirs = train_torchrec.datasets("tfrecord", str(tmp_path), rows=2000, batch_size=100)
    with open(tmp_path / "criteo.tfrecord", "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == CPP_EXAMPLE_FILE_SHA256
    batches = _run_both(ours, theirs, steps=60)
    _assert_file_order(batches, str(tmp_path / "tfrecord.parquet"), 100)


def test_tfrecord_rows_equal_parquet_copy(tmp_path):
    # The comparison pipeline reads a Parquet copy of the TFRecord file's rows: the copy is
    # the records' rows (tensorkit's parser reading the file against pyarrow reading the copy).
    columns = criteo_data.make_records(50, seed=4)
    criteo_data.write_tfrecord(str(tmp_path / "r.tfrecord"), columns)
    parsed = tk.io.parse_example(list(tk.io.tfrecord_iterator(str(tmp_path / "r.tfrecord"))),
                                 {"C7": tk.io.VarLenFeature("string"),
                                  "I3": tk.io.FixedLenFeature([1], "float32")})
    st = parsed["C7"]
    rows = [[] for _ in range(50)]
    for (r, _), v in zip(np.asarray(st.indices).tolist(), st.values.numpy()):
        rows[r].append(v.decode() if isinstance(v, bytes) else v)
    assert rows == columns["C7"]
    assert np.array_equal(parsed["I3"].reshape(-1), columns["I3"])
