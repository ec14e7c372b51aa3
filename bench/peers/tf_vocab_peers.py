"""Keras's StringLookup and IntegerLookup (TensorFlow 2.21's venv) against tensorkit's
Vocabulary::Lookup (bench_vocab), on the same values in one run, 2 threads each: 10M queries in
a vocabulary of 1M tokens, about 1 query in 11 out of vocabulary (bench/vocab_bench.cc says how
the values are made). Medians of REPEAT runs, ratio = Keras time / tensorkit time. Re-runs itself
with the venv's interpreter, and skips with a message when there is none."""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
VENV_PYTHON = os.path.join(ROOT, ".venvs", "tf", "bin", "python")
THREADS = 2
VOCAB, QUERIES, RANGE = 1_000_000, 10_000_000, 1_100_000

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--python", default=VENV_PYTHON, help="an interpreter with TensorFlow and Keras")
args = ap.parse_args()

try:
    import tensorflow  # noqa: F401
except ImportError:
    if os.path.exists(args.python) and os.path.realpath(sys.executable) != os.path.realpath(
            args.python):
        sys.exit(subprocess.run([args.python, *sys.argv]).returncode)
    print("tf_vocab_peers: skipped, no TensorFlow (make tf-ops installs it into .venvs/tf)")
    sys.exit(0)

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
sys.path.insert(0, HERE)
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import peerlib  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(1)
binary = os.path.join(ROOT, args.build, "bin", "bench_vocab")
if not os.path.exists(binary):
    print(f"tf_vocab_peers: skipped, {binary} is not built (cmake --build build --target "
          "bench_vocab)")
    sys.exit(0)

ours = peerlib.run_tensorkit(binary, "BM_Lookup", threads=THREADS)
ids = (np.arange(QUERIES, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(RANGE)
ids = ids.astype(np.int64)
names = np.char.add("token_", np.char.zfill(np.arange(VOCAB).astype(str), 7))
queries = tf.constant(np.char.add("token_", np.char.zfill(ids.astype(str), 7)).astype(object))
strings = keras.layers.StringLookup(vocabulary=names)
int_vocab = np.arange(VOCAB, dtype=np.int64) * 7919
int_queries = tf.constant(ids * 7919)
integers = keras.layers.IntegerLookup(vocabulary=int_vocab)
# The same ids as tensorkit's on these values (token i is id i + 1 behind the one OOV id).
expect = np.where(ids < VOCAB, ids + 1, 0)
assert np.array_equal(strings(queries[:100000]).numpy(), expect[:100000])
assert np.array_equal(integers(int_queries[:100000]).numpy(), expect[:100000])
rows = [
    ("Lookup 10M strings, 1M vocabulary",
     {"tensorkit": ours["BM_LookupStrings/real_time"],
      "keras": peerlib.median_time(lambda: strings(queries).numpy())}),
    ("Lookup 10M int64, 1M vocabulary",
     {"tensorkit": ours["BM_LookupInt64/real_time"],
      "keras": peerlib.median_time(lambda: integers(int_queries).numpy())}),
]
peerlib.print_table(f"Vocabulary lookup ({THREADS} threads)", rows)
