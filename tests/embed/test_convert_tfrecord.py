"""`tensorkit convert FILE.tfrecord OUT.npz` against TensorFlow: TensorFlow writes tf.Examples
(tf.io.TFRecordWriter, uncompressed / GZIP / ZLIB), the tool converts them, and every feature's
members equal what tf.io.parse_example gives for a RaggedFeature of that key: row_splits and
values (bytes as value_splits over their concatenation)."""

import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")
TOOL = os.environ.get("TENSORKIT_TOOL", "build/bin/tensorkit")


def random_examples(rng, n):
    """n records: int64 (full range), float32 and bytes (NULs, empty values) lists of 0 to 4
    values, each absent from some records; "rare" only in a few."""
    out = []
    for i in range(n):
        f = {}
        if rng.random() < 0.8:
            f["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=rng.integers(
                -2**63, 2**63 - 1, int(rng.integers(0, 5)), dtype=np.int64, endpoint=True)))
        if rng.random() < 0.7:
            f["score"] = tf.train.Feature(float_list=tf.train.FloatList(
                value=rng.standard_normal(int(rng.integers(0, 5))).astype(np.float32)))
        if rng.random() < 0.6:
            f["tokens"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[
                bytes(rng.integers(0, 256, int(rng.integers(0, 6))).tolist())
                for _ in range(int(rng.integers(0, 4)))]))
        if i % 97 == 5:
            f["rare"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


DTYPES = {"ids": tf.int64, "score": tf.float32, "tokens": tf.string, "rare": tf.int64}


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tensorflow_writes_tensorkit_converts_as_parse_example_reads(tmp_path, compression):
    records = random_examples(np.random.default_rng(len(compression)), 3000)
    path = str(tmp_path / "in.tfrecord")
    with tf.io.TFRecordWriter(path, options=compression or None) as w:
        for r in records:
            w.write(r)
    out = str(tmp_path / "out.npz")
    subprocess.run([TOOL, "convert", path, out], check=True)
    spec = {k: tf.io.RaggedFeature(d, row_splits_dtype=tf.int64) for k, d in DTYPES.items()}
    parsed = tf.io.parse_example(tf.constant(records), spec)
    with np.load(out) as z:
        assert sorted(z.files) == sorted(
            [f"{k}.{m}" for k in DTYPES for m in ("row_splits", "values")] +
            ["tokens.value_splits"])
        for key in DTYPES:
            ragged = parsed[key]
            np.testing.assert_array_equal(z[f"{key}.row_splits"], ragged.row_splits.numpy())
            if key != "tokens":
                got = z[f"{key}.values"]
                assert got.dtype == ragged.values.dtype.as_numpy_dtype
                np.testing.assert_array_equal(got, ragged.values.numpy())
                continue
            data, splits = z["tokens.values"].tobytes(), z["tokens.value_splits"]
            assert z["tokens.values"].dtype == np.uint8
            got = [data[splits[k]:splits[k + 1]] for k in range(len(splits) - 1)]
            assert got == list(ragged.values.numpy())


def test_batches_of_files_and_errors(tmp_path):
    good = tmp_path / "good.tfrecord"
    with tf.io.TFRecordWriter(str(good), options="GZIP") as w:
        for r in random_examples(np.random.default_rng(7), 50):
            w.write(r)
    mixed = tmp_path / "mixed.tfrecord"
    with tf.io.TFRecordWriter(str(mixed)) as w:
        for f in (tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
                  tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))):
            w.write(tf.train.Example(features=tf.train.Features(
                feature={"a": f})).SerializeToString())
    run = subprocess.run([TOOL, "convert", "--to", "npz", "-o", str(tmp_path / "out"),
                          str(good), str(mixed)], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "converted 1, skipped 0, failed 1" in run.stdout
    assert "feature 'a' is a int64_list first" in run.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["good.npz"]
    with np.load(tmp_path / "out" / "good.npz") as z:
        assert z["ids.row_splits"].shape == (51,)
