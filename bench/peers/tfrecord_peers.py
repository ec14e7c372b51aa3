"""TFRecord reading and tf.Example parsing: TensorFlow against tensorkit's ops
(libtensorkit_tf_ops.so) in one TensorFlow process on the same inputs, 2 threads. Criteo-like
records: an int64 label, 13 float and 26 bytes features (8 hex characters each), the bytes
features parsed as FixedLenFeature, VarLenFeature or RaggedFeature (values and row splits).
Run with the TensorFlow venv's python (the script re-runs itself with .venvs/tf when it can);
--tf-ops names the library when it is not build/lib's."""
import argparse
import os
import sys

import tf_peer_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
THREADS = 2

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--batch", type=int, default=8192)
args = ap.parse_args()

tf_peer_env.tensorflow_or_exit("tfrecord_peers")
os.environ["TENSORKIT_NUM_THREADS"] = str(THREADS)
sys.path.insert(0, HERE)
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import peerlib  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(1)
ops = tf_peer_env.tensorkit_ops_or_exit(args.build, "tfrecord_peers")
import tensorkit_tf  # noqa: E402  (on the path tensorkit_ops_or_exit sets)
rng = np.random.default_rng(0)


def criteo(n):
    out = []
    for _ in range(n):
        f = {"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.integers(2))]))}
        for i, v in enumerate(rng.integers(0, 1000, 13)):
            f[f"I{i + 1}"] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
        for i, v in enumerate(rng.integers(0, 2**32, 26)):
            f[f"C{i + 1}"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"%08x" % v]))
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


def spec(kind):
    s = {"label": tf.io.FixedLenFeature([], tf.int64)}
    s.update({f"I{i}": tf.io.FixedLenFeature([], tf.float32, default_value=0.0)
              for i in range(1, 14)})
    s.update({f"C{i}": {"Fixed": tf.io.FixedLenFeature([], tf.string),
                        "VarLen": tf.io.VarLenFeature(tf.string),
                        "Ragged": tf.io.RaggedFeature(tf.string)}[kind] for i in range(1, 27)})
    return s


def raw_args(serialized, spec):
    sparse = sorted(k for k, v in spec.items() if isinstance(v, tf.io.VarLenFeature))
    ragged = sorted(k for k, v in spec.items() if isinstance(v, tf.io.RaggedFeature))
    dense = sorted(k for k, v in spec.items() if isinstance(v, tf.io.FixedLenFeature))
    defaults = [tf.constant([], dtype=spec[k].dtype) if spec[k].default_value is None else
                tf.reshape(tf.constant(spec[k].default_value, dtype=spec[k].dtype), spec[k].shape)
                for k in dense]
    return dict(serialized=serialized, names=[], sparse_keys=sparse, dense_keys=dense,
                ragged_keys=ragged, dense_defaults=defaults, num_sparse=len(sparse),
                sparse_types=[spec[k].dtype for k in sparse],
                ragged_value_types=[spec[k].dtype for k in ragged],
                ragged_split_types=[spec[k].row_splits_dtype for k in ragged],
                dense_shapes=[spec[k].shape for k in dense])


def same(a, b):
    for x, y in zip(tf.nest.flatten(a, expand_composites=True),
                    tf.nest.flatten(b, expand_composites=True)):
        assert np.array_equal(x.numpy(), y.numpy())


rows = []
records = criteo(args.batch)
batch = tf.constant(records)
for kind in ("Fixed", "VarLen", "Ragged"):
    a = raw_args(batch, spec(kind))
    ours = lambda a=a: ops.tensorkit_parse_example_v2(**a)  # noqa: E731
    theirs = lambda a=a: tf.raw_ops.ParseExampleV2(**a)  # noqa: E731
    same(ours(), theirs())
    # Calls of a few ms: interleaved and many, so that load bursts fall on both sides.
    rows.append((f"ParseExampleV2 {args.batch} Criteo records, C* {kind}",
                 peerlib.median_times_interleaved({"tensorkit": ours, "tensorflow": theirs},
                                                  repeat=51)))


def sequence_examples(n):
    """SequenceExamples of a session: a label and a user id, then 1..19 steps of an item id and
    0..2 query strings each."""
    out = []
    for _ in range(n):
        context = {"label": tf.train.Feature(int64_list=tf.train.Int64List(
                       value=[int(rng.integers(2))])),
                   "user": tf.train.Feature(bytes_list=tf.train.BytesList(
                       value=[b"u%07d" % rng.integers(10**7)]))}
        steps = int(rng.integers(1, 20))
        lists = {"item": tf.train.FeatureList(feature=[tf.train.Feature(
                     int64_list=tf.train.Int64List(value=[int(rng.integers(10**6))]))
                     for _ in range(steps)]),
                 "query": tf.train.FeatureList(feature=[tf.train.Feature(
                     bytes_list=tf.train.BytesList(
                         value=[b"q%05d" % rng.integers(10**5)] * int(rng.integers(0, 3))))
                     for _ in range(steps)])}
        out.append(tf.train.SequenceExample(
            context=tf.train.Features(feature=context),
            feature_lists=tf.train.FeatureLists(feature_list=lists)).SerializeToString())
    return out


seq_batch = tf.constant(sequence_examples(2 * args.batch))
context_spec = {"label": tf.io.FixedLenFeature([], tf.int64),
                "user": tf.io.FixedLenFeature([], tf.string)}
list_spec = {"item": tf.io.FixedLenSequenceFeature([], tf.int64),
             "query": tf.io.RaggedFeature(tf.string)}
ours = lambda: tensorkit_tf.parse_sequence_example(seq_batch, context_spec, list_spec)  # noqa
theirs = lambda: tf.io.parse_sequence_example(seq_batch, context_spec, list_spec)  # noqa
same(ours(), theirs())
rows.append((f"parse_sequence_example {2 * args.batch} sessions (item and query lists)",
             peerlib.median_times_interleaved({"tensorkit": ours, "tensorflow": theirs},
                                              repeat=21)))

with tempfile.TemporaryDirectory() as d:
    for comp in ("", "GZIP"):
        path = os.path.join(d, "r.tfrecord")
        with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=comp)) as w:
            for _ in range(8):
                for r in records:
                    w.write(r)
        n = 8 * len(records)
        ds = tf.data.TFRecordDataset(path, compression_type=comp).batch(n)
        ours = lambda p=path, c=comp: ops.tensorkit_tf_record_read(p, compression_type=c)  # noqa
        theirs = lambda ds=ds: next(iter(ds))  # noqa: E731
        same(ours(), theirs())
        rows.append((f"read {n} records ({os.path.getsize(path) >> 20} MiB) {comp or 'NONE'}",
                     {"tensorkit": peerlib.median_time(ours, repeat=9),
                      "tensorflow": peerlib.median_time(theirs, repeat=9)}))

peerlib.print_table(f"TFRecord and tf.Example, {THREADS} threads", rows)
