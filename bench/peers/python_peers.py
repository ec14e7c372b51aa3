"""The Python package against the functions it replaces, side by side on the same files, 2
threads: tk.io's svmlight and Matrix Market drop-ins against scikit-learn's and SciPy's (in one
process, the Python package's venv .venvs/python: SciPy 1.17, scikit-learn 1.9), and
tk.io.parse_example / tfrecord_iterator against tf.io's (TensorFlow in its own venv, .venvs/tf,
run as a child process on the same file). Every result is checked equal before it is timed.
The script re-runs itself with .venvs/python's interpreter when the current one lacks tensorkit
(`make python` makes that venv)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
THREADS = 2

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--rows", type=int, default=200_000, help="samples of the libsvm file")
ap.add_argument("--records", type=int, default=16384, help="tf.Example records")
ap.add_argument("--tf-child", default="", help=argparse.SUPPRESS)
args = ap.parse_args()

TF_SCRIPT = r"""
import json, os, statistics, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["CUDA_VISIBLE_DEVICES"] = ""
import numpy as np, tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(int(sys.argv[3]))
tf.config.threading.set_inter_op_parallelism_threads(1)
path, kinds, repeat = sys.argv[1], sys.argv[2].split(","), int(sys.argv[4])
def spec(kind):
    s = {"label": tf.io.FixedLenFeature([], tf.int64)}
    s.update({f"I{i}": tf.io.FixedLenFeature([], tf.float32) for i in range(1, 14)})
    if kind != "numbers":
        make = {"fixed": lambda: tf.io.FixedLenFeature([], tf.string),
                "varlen": lambda: tf.io.VarLenFeature(tf.string),
                "ragged": lambda: tf.io.RaggedFeature(tf.string)}[kind]
        s.update({f"C{i}": make() for i in range(1, 27)})
    return s
def med(fn):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
out = {"iterate": med(lambda: list(tf.compat.v1.io.tf_record_iterator(path)))}
x = tf.constant(list(tf.compat.v1.io.tf_record_iterator(path)))
def to_numpy(r):  # what a Python caller then holds: NumPy arrays
    return {k: (v.numpy() if isinstance(v, tf.Tensor) else v) for k, v in r.items()}
for kind in kinds:
    s = spec(kind)
    out[kind] = med(lambda: to_numpy(tf.io.parse_example(x, s)))
    r = to_numpy(tf.io.parse_example(x, s))
    out[kind + "_check"] = {k: ([x.decode("latin-1") if isinstance(x, bytes) else x
                                 for x in np.asarray(v).tolist()]
                                if kind in ("fixed", "numbers") else None)
                            for k, v in r.items() if k in ("label", "I1", "C1")}
print(json.dumps(out))
"""


def venv_python(name):
    return os.path.join(ROOT, ".venvs", name, "bin", "python")


try:
    import tensorkit as tk  # noqa: F401
except ImportError:
    py = venv_python("python")
    if os.path.exists(py) and os.path.realpath(sys.executable) != os.path.realpath(py):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(ROOT, args.build, "python")
        sys.exit(subprocess.run([py] + sys.argv, env=env).returncode)
    print("python_peers: skipped, no tensorkit package (make python builds it)")
    sys.exit(0)

os.environ["TENSORKIT_NUM_THREADS"] = str(THREADS)
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn.datasets  # noqa: E402
import tensorkit as tk  # noqa: E402

import peerlib  # noqa: E402

tk.set_num_threads(THREADS)
rng = np.random.default_rng(0)
tmp = tempfile.mkdtemp(prefix="python_peers.")


def same_sparse(a, b):
    a, b = sp.csr_array(a), sp.csr_array(b)
    a.sum_duplicates()
    b.sum_duplicates()
    return a.shape == b.shape and (a != b).nnz == 0


# --- libsvm -----------------------------------------------------------------------------------
X = sp.random(args.rows, 1000, density=0.02, format="csr", random_state=1, dtype=np.float64)
X.data = np.round(X.data * 100, 3)
y = rng.integers(0, 5, args.rows).astype(np.float64)
svm = os.path.join(tmp, "data.svm")
sklearn.datasets.dump_svmlight_file(X, y, svm)
Xk, yk = tk.io.load_svmlight_file(svm)
Xs, ys = sklearn.datasets.load_svmlight_file(svm)
assert same_sparse(Xk, Xs) and np.array_equal(yk, ys), "load_svmlight_file differs"
out_k, out_s = os.path.join(tmp, "k.svm"), os.path.join(tmp, "s.svm")
tk.io.dump_svmlight_file(X, y, out_k)
sklearn.datasets.dump_svmlight_file(X, y, out_s)
with open(out_k, "rb") as a, open(out_s, "rb") as b:
    assert a.read() == b.read(), "dump_svmlight_file differs"
rows = []
t = peerlib.median_times_interleaved({
    "tensorkit": lambda: tk.io.load_svmlight_file(svm),
    "scikit-learn": lambda: sklearn.datasets.load_svmlight_file(svm)})
rows.append((f"load_svmlight_file {args.rows}x1000, {X.nnz} nnz", t))
t = peerlib.median_times_interleaved({
    "tensorkit": lambda: tk.io.dump_svmlight_file(X, y, out_k),
    "scikit-learn": lambda: sklearn.datasets.dump_svmlight_file(X, y, out_s)}, repeat=3)
rows.append(("dump_svmlight_file (same bytes)", t))

# --- Matrix Market ----------------------------------------------------------------------------
nnz = 10 * args.rows
M = sp.coo_array((np.round(rng.random(nnz) * 1000, 3),
                  (rng.integers(0, 200_000, nnz), rng.integers(0, 200_000, nnz))),
                 shape=(200_000, 200_000))
mtx = os.path.join(tmp, "m.mtx")
scipy.io.mmwrite(mtx, M)
assert same_sparse(tk.io.mmread(mtx), scipy.io.mmread(mtx)), "mmread differs"
out_k, out_s = os.path.join(tmp, "k.mtx"), os.path.join(tmp, "s.mtx")
tk.io.mmwrite(out_k, M)
scipy.io.mmwrite(out_s, M)
with open(out_k, "rb") as a, open(out_s, "rb") as b:
    assert a.read() == b.read(), "mmwrite differs"
t = peerlib.median_times_interleaved({
    "tensorkit": lambda: tk.io.mmread(mtx), "SciPy": lambda: scipy.io.mmread(mtx)})
rows.append((f"mmread {M.nnz} entries", t))
t = peerlib.median_times_interleaved({
    "tensorkit": lambda: tk.io.mmwrite(out_k, M), "SciPy": lambda: scipy.io.mmwrite(out_s, M)})
rows.append(("mmwrite (same bytes)", t))
peerlib.print_table("tk.io against scikit-learn 1.9 and SciPy 1.17 (one process)", rows)

# --- TFRecord and tf.Example ------------------------------------------------------------------
tf_py = venv_python("tf")
if not os.path.exists(tf_py):
    print("\ntf.io rows skipped: no .venvs/tf (make tf-ops makes it)")
    sys.exit(0)
n = args.records
feats = {"label": rng.integers(0, 2, n)}
for i in range(1, 14):
    feats[f"I{i}"] = rng.integers(0, 1000, n).astype(np.float32)
for i in range(1, 27):
    feats[f"C{i}"] = np.array([b"%08x" % v for v in rng.integers(0, 2**32, n)], dtype=object)
path = os.path.join(tmp, "criteo.tfrecord")
with tk.io.TFRecordWriter(path) as w:
    for r in tk.io.serialize_examples(feats):
        w.write(r)
kinds = ["numbers", "fixed", "varlen", "ragged"]
res = subprocess.run([tf_py, "-c", TF_SCRIPT, path, ",".join(kinds), str(THREADS),
                      str(peerlib.REPEAT)], capture_output=True, text=True)
if res.returncode != 0:
    print("\ntf.io rows skipped: TensorFlow failed:", res.stderr[-2000:])
    sys.exit(0)
tf_times = json.loads(res.stdout.strip().splitlines()[-1])


def tk_spec(kind):
    s = {"label": tk.io.FixedLenFeature([], "int64")}
    s.update({f"I{i}": tk.io.FixedLenFeature([], "float32") for i in range(1, 14)})
    if kind != "numbers":
        make = {"fixed": lambda: tk.io.FixedLenFeature([], "string"),
                "varlen": lambda: tk.io.VarLenFeature("string"),
                "ragged": lambda: tk.io.RaggedFeature("string")}[kind]
        s.update({f"C{i}": make() for i in range(1, 27)})
    return s


records = list(tk.io.tfrecord_iterator(path))
rows = [(f"tfrecord_iterator, {n} records", {
    "tensorkit": peerlib.median_time(lambda: list(tk.io.tfrecord_iterator(path))),
    "tf.io": tf_times["iterate"]})]
for kind in kinds:
    s = tk_spec(kind)
    got = tk.io.parse_example(records, s)
    want = tf_times[kind + "_check"]
    for k, v in want.items():
        if v is not None:
            g = [x.decode("latin-1") if isinstance(x, bytes) else x
                 for x in np.asarray(got[k]).tolist()]
            assert g == v, f"parse_example {kind} {k} differs from TensorFlow's"
    rows.append((f"parse_example, 26 strings {kind}" if kind != "numbers" else
                 "parse_example, label + 13 floats",
                 {"tensorkit": peerlib.median_time(lambda: tk.io.parse_example(records, s)),
                  "tf.io": tf_times[kind]}))
peerlib.print_table("tk.io against tf.io of TensorFlow 2.21 (outputs as NumPy on both sides)",
                    rows)
