"""TensorFlow's id ops against tensorkit's (libtensorkit_tf_ops.so) in one TensorFlow process on
the same inputs, 2 threads by default (--threads; TensorFlow's intra-op pool, which is also tensorkit's budget inside
the ops): Bucketize of 10M float32 values over 1000 boundaries, and SparseCountSparseOutput of
5M ids (100K rows of 50, ids in [0, 1M)), unweighted and with float32 weights. Medians of
peerlib's repeats; each pair is first checked to agree bit for bit. Needs the venv of
`make tf-ops` (re-runs itself with it; skips with a message without it)."""
import argparse
import os
import sys

import tf_peer_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--threads", type=int, default=2)
args = ap.parse_args()
THREADS = args.threads

tf_peer_env.tensorflow_or_exit("tf_ids_peers")
os.environ["TENSORKIT_NUM_THREADS"] = str(THREADS)
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import peerlib  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(THREADS)
ops = tf_peer_env.tensorkit_ops_or_exit(args.build, "tf_ids_peers")
rng = np.random.default_rng(0)


def pair(name, ours, theirs):
    """Times both, after checking that they agree bit for bit on this input."""
    for x, y in zip(tf.nest.flatten(ours()), tf.nest.flatten(theirs())):
        assert x.dtype == y.dtype and np.array_equal(x.numpy(), y.numpy()), name
    return (name, {"tensorkit": peerlib.median_time(ours), "tensorflow": peerlib.median_time(theirs)})


rows = []

# Bucketize: 10M normal float32 values over 1000 sorted normal boundaries.
values = tf.constant(rng.standard_normal(10_000_000).astype(np.float32))
boundaries = np.sort(rng.standard_normal(1000)).astype(np.float32).tolist()
rows.append(pair("Bucketize 10M f32, 1000 boundaries",
                 lambda: ops.tensorkit_bucketize(input=values, boundaries=boundaries),
                 lambda: tf.raw_ops.Bucketize(input=values, boundaries=boundaries)))

# SparseCountSparseOutput: 100K rows of 50 ids in [0, 1M), VarLenFeature layout [100K, 50].
batch, length = 100_000, 50
idx = np.stack([np.repeat(np.arange(batch), length), np.tile(np.arange(length), batch)], 1)
indices = tf.constant(idx.astype(np.int64))
ids = tf.constant(rng.integers(0, 1_000_000, batch * length).astype(np.int64))
shape = tf.constant([batch, length], tf.int64)
weights = tf.constant(rng.random(batch * length).astype(np.float32))
for label, w, binary in [("counts", tf.constant([], tf.int64), False),
                         ("f32 weights", weights, False),
                         ("binary", tf.constant([], tf.int64), True)]:
    kw = dict(indices=indices, values=ids, dense_shape=shape, weights=w, binary_output=binary)
    rows.append(pair(f"SparseCountSparseOutput 5M ids [100K 50], {label}",
                     lambda kw=kw: ops.tensorkit_sparse_count_sparse_output(**kw),
                     lambda kw=kw: tf.raw_ops.SparseCountSparseOutput(**kw)))

peerlib.print_table(f"TensorFlow {tf.__version__} id ops vs tensorkit's, {THREADS} threads", rows)
