"""The Criteo-like feature pipeline end to end (examples/criteo_pipeline.h) in tensorkit and in
TensorFlow, side by side in one run on the same TFRecord file of 131072 tf.Example records
(13 float and 26 categorical features; bench_pipeline writes it on its first run), 2 threads:
read, parse, hash every categorical feature, cross C1 x C2 (hashed), bucketize the floats, fill
C3's empty rows, and sum embedding bags, per batch of 4096 records. TensorFlow runs tf.data
(TFRecordDataset, batch) into one tf.function of tf.io.parse_example and the same feature ops.
Prints the medians and rows/s. Re-runs itself with the TensorFlow venv when it can."""
import argparse
import os
import sys

import tf_peer_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
THREADS = 2
ROWS, BATCH, BUCKETS, DIM = 131072, 4096, 10000, 8

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--repeat", type=int, default=3)
args = ap.parse_args()

tf_peer_env.tensorflow_or_exit("pipeline_peers")
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import peerlib  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(THREADS)
bench_dir = os.environ.get("TENSORKIT_BENCH_DIR", "/tmp/tensorkit_io_bench")
os.environ["TENSORKIT_BENCH_DIR"] = bench_dir
binary = os.path.join(ROOT, args.build, "bin", "bench_pipeline")
# Google Benchmark reports a median from 2 repetitions on.
tk = peerlib.run_tensorkit(binary, "BM_CriteoPipeline", threads=THREADS,
                          repeat=max(2, args.repeat))
tk_s = next(v for k, v in tk.items() if k.split("/")[0] == "BM_CriteoPipeline")
path = os.path.join(bench_dir, "criteo_131072.tfrecord")

spec = {"label": tf.io.FixedLenFeature([1], tf.int64, default_value=[0])}
for d in range(13):
    spec[f"I{d + 1}"] = tf.io.FixedLenFeature([1], tf.float32, default_value=[0.0])
for c in range(26):
    spec[f"C{c + 1}"] = tf.io.VarLenFeature(tf.string)
rng = np.random.default_rng(7)
tables = [tf.constant(rng.uniform(-0.05, 0.05, (BUCKETS, DIM)).astype(np.float32))
          for _ in range(28)] + [tf.constant(rng.uniform(-0.05, 0.05, (21, DIM)).astype(np.float32))]
boundaries = [i * i * 0.5 for i in range(20)]


@tf.function
def step(serialized):
    p = tf.io.parse_example(serialized, spec)
    out, ids = [], []
    for c in range(26):
        sp = p[f"C{c + 1}"]
        h = tf.SparseTensor(sp.indices, tf.strings.to_hash_bucket_fast(sp.values, BUCKETS),
                            sp.dense_shape)
        ids.append(h)
        out.append(tf.nn.embedding_lookup_sparse(tables[c], h, None, combiner="sum"))
    crossed = tf.raw_ops.SparseCrossHashed(
        indices=[p["C1"].indices, p["C2"].indices], values=[p["C1"].values, p["C2"].values],
        shapes=[p["C1"].dense_shape, p["C2"].dense_shape], dense_inputs=[],
        num_buckets=BUCKETS, strong_hash=False, salt=[0, 0])
    cr = tf.SparseTensor(crossed.output_indices, crossed.output_values, crossed.output_shape)
    out.append(tf.nn.embedding_lookup_sparse(tables[26], cr, None, combiner="sum"))
    filled, _ = tf.sparse.fill_empty_rows(ids[2], tf.constant(0, tf.int64))
    out.append(tf.nn.embedding_lookup_sparse(tables[27], filled, None, combiner="sum"))
    for d in range(13):
        b = tf.raw_ops.Bucketize(input=p[f"I{d + 1}"], boundaries=boundaries)
        out.append(tf.nn.embedding_lookup(tables[28], tf.reshape(b, [-1])))
    return out


def tf_epoch():
    for batch in tf.data.TFRecordDataset(path).batch(BATCH):
        out = step(batch)
    return out[-1].numpy()


tf_s = peerlib.median_time(tf_epoch, repeat=args.repeat)
rows = [(f"pipeline, {ROWS} Criteo-like rows, batch {BATCH}", {"tensorkit": tk_s,
                                                               "tensorflow": tf_s})]
peerlib.print_table(f"Feature pipeline end to end, TensorFlow {tf.__version__}, {THREADS} threads",
                    rows)
print(f"\nrows/s: tensorkit {ROWS / tk_s:,.0f}, tensorflow {ROWS / tf_s:,.0f}")
