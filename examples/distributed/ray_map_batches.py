#!/usr/bin/env python3
"""Ray Data maps tensorkit over Arrow batches: map_batches hands each worker a pyarrow.Table,
tensorkit takes its columns without a copy (tk.from_arrow: list<string> -> JaggedTensor,
float64 -> Tensor), hashes the tokens into buckets and bucketizes the prices, and gives Arrow
back (pa.array over tensorkit's results, again without a copy). Ray starts its workers on this
machine (ray.init); on a cluster the same code runs where Ray places the blocks.

  python3 ray_map_batches.py [--rows N] [--check]

--check compares what Ray gathers with the same function applied to the whole table in this
process, and with NumPy's searchsorted for the buckets; exit status 1 when they differ.
`make ray-example` makes .venvs/ray (ray[data], pinned) with the package and runs this.
"""
import argparse
import sys

import numpy as np
import pyarrow as pa

import tensorkit as tk

NUM_BUCKETS = 1 << 16
PRICE_BOUNDARIES = [1.0, 10.0, 100.0, 1000.0]


def featurize(batch: pa.Table) -> pa.Table:
    """One batch: token bucket ids (list<int64>) and the price's bucket (int32)."""
    tokens = tk.from_arrow(batch["tokens"])  # JaggedTensor of strings, Arrow's buffers
    price = tk.from_arrow(batch["price"])  # Tensor over the float64 buffer
    return pa.table({"id": batch["id"],
                     "token_ids": pa.array(tk.hash_bucket_fast(tokens, NUM_BUCKETS)),
                     "price_bucket": pa.array(tk.bucketize(price, PRICE_BOUNDARIES))})


def make_table(rows, seed=0):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(5000)], dtype=object)
    lengths = rng.integers(0, 8, rows)
    flat = words[rng.integers(0, len(words), int(lengths.sum()))].tolist()
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    tokens = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.string()))
    price = np.round(10 ** rng.uniform(-1, 4, rows), 2)
    return pa.table({"id": np.arange(rows, dtype=np.int64), "tokens": tokens, "price": price})


def run_on_ray(table, batch_size):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        ds = ray.data.from_arrow(table).map_batches(featurize, batch_format="pyarrow",
                                                    batch_size=batch_size)
        out = pa.concat_tables(ray.get(ds.to_arrow_refs()))
    finally:
        ray.shutdown()
    return out.sort_by("id")


def check(table, got):
    """Problems found: Ray's result against featurize over the whole table and NumPy."""
    problems = []
    want = featurize(table)
    for name in ("id", "token_ids", "price_bucket"):
        if not got[name].combine_chunks().equals(want[name].combine_chunks()):
            problems.append(f"{name} differs from featurize over the whole table")
    price = table["price"].to_numpy()
    buckets = np.searchsorted(np.array(PRICE_BOUNDARIES, np.float32), price.astype(np.float32),
                              side="right")
    if not np.array_equal(got["price_bucket"].to_numpy(), buckets):
        problems.append("price_bucket differs from NumPy's searchsorted")
    if got.num_rows != table.num_rows:
        problems.append(f"{got.num_rows} rows back for {table.num_rows}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    table = make_table(args.rows)
    got = run_on_ray(table, args.batch_size)
    ids = got["token_ids"].combine_chunks()
    print(f"{got.num_rows} rows through Ray Data's map_batches; {len(ids.values)} token ids, "
          f"price buckets {np.bincount(got['price_bucket'].to_numpy()).tolist()}")
    if args.check:
        problems = check(table, got)
        for p in problems:
            print("check:", p)
        if problems:
            return 1
        print("check: Ray's result equals the same function over the whole table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
