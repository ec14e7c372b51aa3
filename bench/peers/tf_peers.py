"""TensorFlow's sparse ops against tensorkit's replacements (libtensorkit_tf_ops.so), side by
side in one TensorFlow process on the same inputs, 2 threads (TensorFlow's intra-op pool, which
is also tensorkit's budget inside the ops). Needs the venv of `make tf-ops`; this script re-runs
itself with that interpreter, and skips with a message when there is none."""
import argparse
import os
import sys

import tf_peer_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
THREADS = 2

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--only", default="", help="comma-separated groups: sparse, ids, fill (SparseFillEmptyRows only)")
args = ap.parse_args()

tf_peer_env.tensorflow_or_exit("tf_peers")
os.environ["TENSORKIT_NUM_THREADS"] = str(THREADS)
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import peerlib  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(1)
ops = tf_peer_env.tensorkit_ops_or_exit(args.build, "tf_peers")
rng = np.random.default_rng(0)


def unique_entries(shape, nnz):
    flat = rng.choice(int(np.prod(shape)), nnz, replace=False)
    return np.stack(np.unravel_index(flat, shape), axis=1).astype(np.int64)


def pair(name, ours, theirs, check):
    """Times both, after checking that they agree on this input."""
    check(ours(), theirs())
    return (name, {"tensorkit": peerlib.median_time(ours), "tensorflow": peerlib.median_time(theirs)})


def same(a, b):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        assert np.array_equal(x.numpy(), y.numpy())


def close(a, b):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-3)


rows = []

def fill_rows():
    """SparseFillEmptyRows alone (also part of the sparse group)."""
    # SparseFillEmptyRows: 5M entries of [1M, 1000] with 10% of the rows empty, sorted and shuffled.
    rows_fill, cols_fill = 1_000_000, 1000
    kept = np.sort(rng.choice(rows_fill, rows_fill * 9 // 10, replace=False))
    fill_rows = np.sort(rng.choice(kept, 5_000_000))
    fill_idx_np = np.stack([fill_rows, rng.integers(0, cols_fill, fill_rows.size)], axis=1)
    fill_shape = tf.constant([rows_fill, cols_fill], tf.int64)
    fill_vals = tf.constant(rng.standard_normal(fill_rows.size).astype(np.float32))
    for label, order in [("sorted rows", np.arange(fill_rows.size)),
                         ("shuffled", rng.permutation(fill_rows.size))]:
        fi = tf.constant(fill_idx_np[order].astype(np.int64))
        fv = tf.gather(fill_vals, order)
        rows.append(pair(f"SparseFillEmptyRows 5M [1M 1000] 10% empty, {label}",
                         lambda fi=fi, fv=fv: ops.tensorkit_sparse_fill_empty_rows(
                             indices=fi, values=fv, dense_shape=fill_shape, default_value=0.0),
                         lambda fi=fi, fv=fv: tf.raw_ops.SparseFillEmptyRows(
                             indices=fi, values=fv, dense_shape=fill_shape, default_value=0.0),
                         same))


def sparse_rows():
    """The sparse ops and the jagged-feature ops (reorder, products, ..., segment reductions)."""
    # SparseReorder: 5M random 3-D entries.
    shape3 = [1000, 1000, 1000]
    idx = tf.constant(unique_entries(shape3, 5_000_000))
    vals = tf.constant(rng.standard_normal(5_000_000).astype(np.float32))
    s3 = tf.constant(shape3, tf.int64)
    rows.append(pair("SparseReorder 5M entries [1000 1000 1000] f32",
                     lambda: ops.tensorkit_sparse_reorder(input_indices=idx, input_values=vals,
                                                          input_shape=s3),
                     lambda: tf.raw_ops.SparseReorder(input_indices=idx, input_values=vals,
                                                      input_shape=s3), same))

    # SparseTensorDenseMatMul: 2M entries of [4096 4096] times [4096 64].
    shape2 = [4096, 4096]
    idx2 = tf.constant(unique_entries(shape2, 2_000_000))
    vals2 = tf.constant(rng.standard_normal(2_000_000).astype(np.float32))
    s2 = tf.constant(shape2, tf.int64)
    b = tf.constant(rng.standard_normal((4096, 64)).astype(np.float32))
    rows.append(pair("SparseTensorDenseMatMul 2M nnz [4096 4096] x [4096 64]",
                     lambda: ops.tensorkit_sparse_tensor_dense_mat_mul(a_indices=idx2, a_values=vals2,
                                                                       a_shape=s2, b=b),
                     lambda: tf.raw_ops.SparseTensorDenseMatMul(a_indices=idx2, a_values=vals2,
                                                                a_shape=s2, b=b), close))

    # SparseReduceSum: the 5M 3-D entries over their last axis, and the 2M 2-D ones by row.
    for name, i, v, s, axes in [("SparseReduceSum 5M [1000 1000 1000] axis 2", idx, vals, s3, [2]),
                                ("SparseReduceSum 2M [4096 4096] axis 1", idx2, vals2, s2, [1])]:
        rows.append(pair(name,
                         lambda i=i, v=v, s=s, a=axes: ops.tensorkit_sparse_reduce_sum(
                             input_indices=i, input_values=v, input_shape=s, reduction_axes=a),
                         lambda i=i, v=v, s=s, a=axes: tf.raw_ops.SparseReduceSum(
                             input_indices=i, input_values=v, input_shape=s, reduction_axes=a),
                         close))

    # SparseToDense: the 2M entries, sorted (validate_indices), into a [4096 4096] matrix.
    sorted2 = tf.raw_ops.SparseReorder(input_indices=idx2, input_values=vals2, input_shape=s2)
    rows.append(pair("SparseToDense 2M sorted entries -> [4096 4096]",
                     lambda: ops.tensorkit_sparse_to_dense(
                         sparse_indices=sorted2.output_indices, output_shape=s2,
                         sparse_values=sorted2.output_values, default_value=0.0),
                     lambda: tf.raw_ops.SparseToDense(
                         sparse_indices=sorted2.output_indices, output_shape=s2,
                         sparse_values=sorted2.output_values, default_value=0.0), same))

    # SparseConcat: two halves of the 5M 3-D entries along axis 1.
    half = 2_500_000
    parts_i, parts_v = [idx[:half], idx[half:]], [vals[:half], vals[half:]]
    rows.append(pair("SparseConcat 2 x 2.5M [1000 1000 1000] axis 1",
                     lambda: ops.tensorkit_sparse_concat(indices=parts_i, values=parts_v,
                                                         shapes=[s3, s3], concat_dim=1),
                     lambda: tf.raw_ops.SparseConcat(indices=parts_i, values=parts_v,
                                                     shapes=[s3, s3], concat_dim=1), same))
    # SparseReshape: the 5M 3-D entries to [1000, 1000000] and to [-1, 1000, 100, 10].
    for new_shape in [[1000, 1000000], [-1, 1000, 100, 10]]:
        ns = tf.constant(new_shape, tf.int64)
        rows.append(pair(f"SparseReshape 5M [1000 1000 1000] -> {new_shape}",
                         lambda ns=ns: ops.tensorkit_sparse_reshape(input_indices=idx, input_shape=s3,
                                                                    new_shape=ns),
                         lambda ns=ns: tf.raw_ops.SparseReshape(input_indices=idx, input_shape=s3,
                                                                new_shape=ns), same))

    # SparseSlice and SparseSplit of the 5M entries: a quarter box, and 4 pieces along axis 1.
    start, size = tf.constant([0, 250, 0], tf.int64), tf.constant([1000, 500, 1000], tf.int64)
    rows.append(pair("SparseSlice 5M [1000 1000 1000] -> [1000 500 1000]",
                     lambda: ops.tensorkit_sparse_slice(indices=idx, values=vals, shape=s3,
                                                        start=start, size=size),
                     lambda: tf.raw_ops.SparseSlice(indices=idx, values=vals, shape=s3, start=start,
                                                    size=size), same))
    axis1 = tf.constant(1, tf.int64)
    rows.append(pair("SparseSplit 5M [1000 1000 1000] axis 1 into 4",
                     lambda: ops.tensorkit_sparse_split(split_dim=axis1, indices=idx, values=vals,
                                                        shape=s3, num_split=4),
                     lambda: tf.raw_ops.SparseSplit(split_dim=axis1, indices=idx, values=vals,
                                                    shape=s3, num_split=4), same))

    fill_rows()

    # SparseSegmentSum / Mean / SqrtN: 5M rows of a [1M, 64] float32 table into 64K sorted segments.
    seg_data = tf.constant(rng.standard_normal((1_000_000, 64)).astype(np.float32))
    seg_idx = tf.constant(rng.integers(0, 1_000_000, 5_000_000).astype(np.int32))
    seg_ids = tf.constant(np.sort(rng.integers(0, 65536, 5_000_000)).astype(np.int32))
    for kind, ours_op, theirs_op in [("Sum", ops.tensorkit_sparse_segment_sum, tf.raw_ops.SparseSegmentSum),
                                     ("Mean", ops.tensorkit_sparse_segment_mean, tf.raw_ops.SparseSegmentMean),
                                     ("SqrtN", ops.tensorkit_sparse_segment_sqrt_n, tf.raw_ops.SparseSegmentSqrtN)]:
        rows.append(pair(f"SparseSegment{kind} 5M rows of [1M 64] f32 -> 64K segments",
                         lambda o=ours_op: o(data=seg_data, indices=seg_idx, segment_ids=seg_ids),
                         lambda o=theirs_op: o(data=seg_data, indices=seg_idx, segment_ids=seg_ids),
                         close))


def feature_id_rows():
    """Hashing and crossing (the feature-pipeline ids ops)."""
    # StringToHashBucketFast: 5M strings of 4..40 bytes (ids, tokens, URLs' pieces).
    words = np.array([b"tok%d-%s" % (i, b"x" * int(i % 37)) for i in
                      rng.integers(0, 10_000_000, 5_000_000)], dtype=object)
    s = tf.constant(words)
    rows.append(pair("StringToHashBucketFast 5M strings",
                     lambda: ops.tensorkit_string_to_hash_bucket_fast(s, num_buckets=1 << 20),
                     lambda: tf.raw_ops.StringToHashBucketFast(input=s, num_buckets=1 << 20),
                     same))
    # SparseCrossHashed / SparseCross of three string features, 200k rows of about 3 values.
    batch = 200_000
    feats = []
    for f in range(3):
        lengths = rng.integers(1, 6, batch)
        r = np.repeat(np.arange(batch), lengths)
        c = np.concatenate([np.arange(n) for n in lengths])
        v = np.array([b"f%d_%d" % (f, x) for x in rng.integers(0, 100_000, r.size)], dtype=object)
        feats.append((tf.constant(np.stack([r, c], 1).astype(np.int64)), tf.constant(v),
                      tf.constant([batch, 5], tf.int64)))
    cargs = dict(indices=[x[0] for x in feats], values=[x[1] for x in feats],
                 shapes=[x[2] for x in feats], dense_inputs=[])
    hashed = dict(num_buckets=1 << 20, strong_hash=False, salt=[1, 2])
    rows.append(pair("SparseCrossHashed 3 string features, 200k rows x ~3 values",
                     lambda: ops.tensorkit_sparse_cross_hashed(**cargs, **hashed),
                     lambda: tf.raw_ops.SparseCrossHashed(**cargs, **hashed), same))
    v1 = dict(hashed_output=True, num_buckets=1 << 20, hash_key=0xDECAFCAFFE,
              out_type=tf.int64, internal_type=tf.string)
    rows.append(pair("SparseCross hashed, same features",
                     lambda: ops.tensorkit_sparse_cross(**cargs, **v1),
                     lambda: tf.raw_ops.SparseCross(**cargs, **v1), same))
    rows.append(pair("SparseCrossV2 strings, same features",
                     lambda: ops.tensorkit_sparse_cross_v2(**cargs, sep="_X_"),
                     lambda: tf.raw_ops.SparseCrossV2(**cargs, sep="_X_"), same))


GROUPS = {"sparse": sparse_rows, "ids": feature_id_rows, "fill": fill_rows}
for group in (args.only.split(",") if args.only else GROUPS):
    GROUPS[group]()

peerlib.print_table(f"TensorFlow {tf.__version__} ops vs tensorkit's, {THREADS} threads", rows)
