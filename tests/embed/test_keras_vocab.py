"""`tensorkit vocab` against Keras 3's StringLookup and IntegerLookup on random data.

The tool fits and builds a vocabulary file; Keras adapts on the same data (same tokens in the same
order with --ties descending, Keras's tie order), loads the file with vocabulary=path, and its ids
for random queries must equal those of `tensorkit vocab lookup`, for several mask and OOV
settings. A vocabulary file Keras's tokens were written to is read by the tool the same way.
Needs the TensorFlow venv (skipped without it) and the tool (TENSORKIT_TOOL).
"""

import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

TOOL = os.environ.get("TENSORKIT_TOOL", "")
if not os.path.exists(TOOL):
    pytest.skip(f"TENSORKIT_TOOL={TOOL!r} is not the built tool", allow_module_level=True)

rng = np.random.default_rng(25)
# Words of a small alphabet with non-ASCII letters, Zipf-distributed so that counts tie and differ.
ALPHABET = list("abcxyz") + ["\u00e9", "\u4e2d", "\U0001f600", " "]


def words(n, distinct):
    pool = ["".join(rng.choice(ALPHABET, rng.integers(1, 6))) for _ in range(distinct)]
    pool = list(dict.fromkeys(pool))
    ranks = np.minimum(rng.zipf(1.3, n), len(pool)) - 1
    return np.array([pool[r] for r in ranks])


def tool(*args):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def build(tmp_path, data, *options):
    np.save(tmp_path / "data.npy", data)
    tool("vocab", "fit", "-o", str(tmp_path / "counts.tsv"), str(tmp_path / "data.npy"))
    tool("vocab", "build", "--ties", "descending", *options, "-o", str(tmp_path / "vocab.txt"),
         str(tmp_path / "counts.tsv"))
    return str(tmp_path / "vocab.txt")


def lookup(tmp_path, vocab, queries, *options):
    np.save(tmp_path / "queries.npy", queries)
    tool("vocab", "lookup", "--vocab", vocab, *options, "-o", str(tmp_path / "ids.npy"),
         str(tmp_path / "queries.npy"))
    return np.load(tmp_path / "ids.npy")


def file_tokens(path, parse=str):
    with open(path, encoding="utf-8") as f:
        return [parse(line) for line in f.read().split("\n")[:-1]]


@pytest.mark.parametrize("max_tokens", [None, 50])
def test_fit_equals_keras_adapt(tmp_path, max_tokens):
    data = words(20000, 400)
    vocab = build(tmp_path, data, *(["--max-tokens", str(max_tokens)] if max_tokens else []))
    layer = keras.layers.StringLookup(max_tokens=None if max_tokens is None else max_tokens + 1)
    layer.adapt(data)
    assert file_tokens(vocab) == [str(t) for t in layer.get_vocabulary()[1:]]


@pytest.mark.parametrize("num_oov,mask", [(1, None), (0, None), (1, ""), (3, None), (4, "")])
def test_string_lookup_ids(tmp_path, num_oov, mask):
    data = words(20000, 400)
    vocab = build(tmp_path, data, "--min-frequency", "2", *(["--mask", mask] if mask is not None
                                                                else []))
    queries = np.concatenate([words(5000, 800), data[:100], np.array([""] * 7)])
    if num_oov == 0:
        queries = np.array([t for t in queries if t in set(file_tokens(vocab)) or t == mask])
    layer = keras.layers.StringLookup(vocabulary=vocab, num_oov_indices=num_oov, mask_token=mask)
    want = layer(tf.constant(queries)).numpy()
    got = lookup(tmp_path, vocab, queries, "--num-oov", str(num_oov),
                 *(["--mask", mask] if mask is not None else []))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("num_oov,mask,method", [(1, None, "floormod"), (1, 0, "floormod"),
                                                 (3, None, "floormod"), (5, 0, "farmhash")])
def test_integer_lookup_ids(tmp_path, num_oov, mask, method):
    data = (rng.zipf(1.3, 20000) % 3000 - 1000).astype(np.int64)
    options = ["--mask", str(mask)] if mask is not None else []
    vocab = build(tmp_path, data, *options)
    queries = rng.integers(-2000, 4000, 10000).astype(np.int64)
    layer = keras.layers.IntegerLookup(vocabulary=vocab, num_oov_indices=num_oov, mask_token=mask,
                                       oov_method=method)
    want = layer(tf.constant(queries)).numpy()
    got = lookup(tmp_path, vocab, queries, "--dtype", "int64", "--num-oov", str(num_oov),
                 "--oov-method", method, *options)
    np.testing.assert_array_equal(got, want)
    if mask is None and method == "floormod":
        adapted = keras.layers.IntegerLookup()
        adapted.adapt(data)
        # Keras's adapt also drops its oov_token (-1) from the counts; tensorkit only the mask.
        assert [t for t in file_tokens(vocab, int) if t != -1] == \
            [int(t) for t in adapted.get_vocabulary()[1:]]


def test_keras_tokens_in_a_file_read_by_the_tool(tmp_path):
    layer = keras.layers.StringLookup(num_oov_indices=2)
    layer.adapt(words(5000, 200))
    path = tmp_path / "keras_vocab.txt"
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in layer.get_vocabulary(include_special_tokens=False)))
    queries = words(3000, 400)
    got = lookup(tmp_path, str(path), queries, "--num-oov", "2")
    np.testing.assert_array_equal(got, layer(tf.constant(queries)).numpy())
