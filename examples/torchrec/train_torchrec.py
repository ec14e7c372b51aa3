"""Trains a TorchRec EmbeddingBagCollection model on CPU from batches that tensorkit builds
(tensorkit_pipeline.py) and, for comparison, from batches that pyarrow and torch build alone
(torch_pipeline.py), each in a DataLoader with worker processes. Seeded alike, the two loss
curves are equal.

    python train_torchrec.py --source parquet    # Criteo-like rows written by pyarrow
    python train_torchrec.py --source tfrecord   # examples/feature_pipeline.cc's file

It writes its data to a temporary folder (or --data DIR), then prints the two loss curves and
each pipeline's rows/s (the pipeline alone, no training: one pass in the main process, ten
passes with the workers)."""

import argparse
import itertools
import os
import sys
import tempfile
import time

import torch
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_common import (BOUNDARIES, BUCKETS, CATEGORICAL_KEYS,  # noqa: E402
                             DENSE_KEYS, NUM_DENSE, SPARSE_KEYS)


class Model(torch.nn.Module):
    """A small DLRM: one table per categorical feature (BUCKETS ids and the missing id), one
    table shared by the 13 bucketized floats, an MLP over log(1 + floats), a top MLP over
    everything to one logit."""

    def __init__(self, dim=8):
        super().__init__()
        tables = [EmbeddingBagConfig(name=f"t_{k}", embedding_dim=dim,
                                     num_embeddings=BUCKETS + 1, feature_names=[k])
                  for k in CATEGORICAL_KEYS]
        tables.append(EmbeddingBagConfig(name="t_dense_buckets", embedding_dim=dim,
                                         num_embeddings=len(BOUNDARIES) + 1,
                                         feature_names=DENSE_KEYS))
        self.sparse = EmbeddingBagCollection(tables=tables, device=torch.device("cpu"))
        self.dense = torch.nn.Sequential(torch.nn.Linear(NUM_DENSE, 16), torch.nn.ReLU())
        self.top = torch.nn.Sequential(torch.nn.Linear(16 + dim * len(SPARSE_KEYS), 32),
                                       torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def forward(self, dense, kjt):
        pooled = self.sparse(kjt).values()  # [B, 39 * dim]
        return self.top(torch.cat([self.dense(dense), pooled], 1)).squeeze(1)


def loader(dataset, workers):
    # batch_size=None: the dataset yields whole batches.
    return torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)


def train(batches, steps, seed=0, lr=0.01, keep=False):
    """Trains a fresh Model (initialised from `seed`) for `steps` batches: the losses, and the
    batches themselves when `keep`."""
    torch.manual_seed(seed)
    model = Model()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=lr)
    losses, kept = [], []
    for dense, kjt, labels in itertools.islice(batches, steps):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(dense, kjt), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        if keep:
            kept.append((dense, kjt, labels))
    return torch.stack(losses), kept


def datasets(source, folder, rows, batch_size, epochs=None):
    """(tensorkit's dataset, the comparison dataset) over the data of `source`, written to
    `folder` first. The comparison reads Parquet: for the TFRecord source, a Parquet copy of the
    records' rows."""
    import criteo_data as data
    import tensorkit_pipeline
    import torch_pipeline

    parquet = os.path.join(folder, f"{source}.parquet")
    if source == "parquet":
        columns = data.make_rows(rows, seed=2)
        data.write_parquet(parquet, columns, row_group_size=batch_size)
        ours = tensorkit_pipeline.ParquetBatches(parquet, epochs)
    else:
        columns = data.make_records(rows, seed=1)  # criteo::MakeRecords(2000, 1) by default
        tfrecord = os.path.join(folder, "criteo.tfrecord")
        data.write_tfrecord(tfrecord, columns)
        data.write_parquet(parquet, columns, row_group_size=batch_size)
        ours = tensorkit_pipeline.TFRecordBatches(tfrecord, batch_size, rows, epochs)
    return ours, torch_pipeline.TorchBatches(parquet, epochs)


def rows_per_second(dataset, workers, rows, batch_size, passes):
    """The pipeline alone over `passes` passes of the file (worker start included), in rows/s.
    The comparison pipeline hashes each distinct string once per worker, so its later passes
    are cheaper than its first."""
    start = time.perf_counter()
    n = sum(len(labels) for _, _, labels in
            itertools.islice(iter(loader(dataset, workers)), passes * -(-rows // batch_size)))
    return n / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=["parquet", "tfrecord"], default="parquet")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch's intra-op threads for training (the workers take the other "
                             "cores; this model is small)")
    parser.add_argument("--data", help="folder for the data files (default: a temporary one)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data or tmp
        ours, theirs = datasets(args.source, folder, args.rows, args.batch_size)
        curves = {}
        for name, dataset in (("tensorkit", ours), ("torch", theirs)):
            start = time.perf_counter()
            curves[name], _ = train(iter(loader(dataset, args.workers)), args.steps)
            print(f"{name:9s} pipeline: {args.steps} steps in "
                  f"{time.perf_counter() - start:.1f} s, loss {curves[name][:10].mean():.4f} "
                  f"(first 10) -> {curves[name][-10:].mean():.4f} (last 10)")
        same = torch.equal(curves["tensorkit"], curves["torch"])
        print("loss curves equal:", same)
        for workers, passes in ((0, 1), (args.workers, 10)):
            for name, dataset in (("tensorkit", ours), ("torch", theirs)):
                rate = rows_per_second(dataset, workers, args.rows, args.batch_size, passes)
                print(f"{name:9s} pipeline alone, {workers} workers, {passes} passes: "
                      f"{rate:,.0f} rows/s")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
