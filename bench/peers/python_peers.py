"""The Python package against the functions it replaces, side by side on the same files, 2
threads: tk.io's svmlight and Matrix Market drop-ins against scikit-learn's and SciPy's (in one
process, the Python package's venv .venvs/python: SciPy 1.17, scikit-learn 1.9), and
tk.io.parse_example / tfrecord_iterator against tf.io's (TensorFlow in its own venv, .venvs/tf,
run as a child process on the same file). Every result is checked equal before it is timed.
Also the binding against the library itself: the cost of a call on a tiny input (Python against
bench_binding's C++ calls), and tk.embedding_bag with torch tensors in and out (in .venvs/torch,
a child process) against bench_embedding's EmbeddingBag on embedding_peers.py's table and bags.
The script re-runs itself with .venvs/python's interpreter when the current one lacks tensorkit
(`make python` makes that venv)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
THREADS = 2

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--rows", type=int, default=200_000, help="samples of the libsvm file")
ap.add_argument("--records", type=int, default=16384, help="tf.Example records")
ap.add_argument("--tf-child", default="", help=argparse.SUPPRESS)
ap.add_argument("--sections", default="files,binding,embedding,tf",
                help="comma-separated: files (svmlight, Matrix Market), binding, embedding, tf")
args = ap.parse_args()
SECTIONS = set(args.sections.split(","))

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


def files_section():
    """The svmlight and Matrix Market drop-ins against scikit-learn and SciPy."""
    rows = []
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
    t = peerlib.median_times_interleaved({
        "tensorkit": lambda: tk.io.load_svmlight_file(svm),
        "scikit-learn": lambda: sklearn.datasets.load_svmlight_file(svm)})
    rows.append((f"load_svmlight_file {args.rows}x1000, {X.nnz} nnz", t))
    t = peerlib.median_times_interleaved({
        "tensorkit": lambda: tk.io.dump_svmlight_file(X, y, out_k),
        "scikit-learn": lambda: sklearn.datasets.dump_svmlight_file(X, y, out_s)}, repeat=3)
    rows.append(("dump_svmlight_file (same bytes)", t))

    # --- Matrix Market ------------------------------------------------------------------------
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

# --- The binding's own cost -------------------------------------------------------------------
def per_call(fn, calls=100_000, repeat=7):
    """Median seconds per call of fn() in a tight Python loop."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times)


def binding_section():
    """A call on a tiny input from Python against the same call in C++ (bench_binding)."""
    cxx = peerlib.run_tensorkit(os.path.join(args.build, "bin", "bench_binding"), "BM_Tiny",
                                threads=THREADS)
    one_int = np.array([12345], dtype=np.int64)
    one_float = np.array([42.0], dtype=np.float32)
    boundaries = np.array([1, 10, 100, 1000], dtype=np.float32)
    t_int, t_float = tk.asarray(one_int), tk.asarray(one_float)
    assert int(np.asarray(tk.hash_bucket_fast(one_int, 100))[0]) == int(
        np.asarray(tk.hash_bucket_fast(t_int, 100))[0])
    empty = per_call(lambda: None)  # the loop and the lambda: not the binding's
    rows = [
        ("hash_bucket_fast, 1 int64", "BM_TinyHashBucketFast",
         {"NumPy in": lambda: tk.hash_bucket_fast(one_int, 100),
          "tk.Tensor in": lambda: tk.hash_bucket_fast(t_int, 100)}),
        ("bucketize, 1 float32, 4 boundaries", "BM_TinyBucketize",
         {"NumPy in": lambda: tk.bucketize(one_float, boundaries),
          "tk.Tensor in": lambda: tk.bucketize(t_float, boundaries)}),
        ("asarray of a NumPy array (zero-copy import)", None,
         {"NumPy in": lambda: tk.asarray(one_int)}),
    ]
    print("\nThe binding's cost, 1-element inputs (medians, ns per call; Python's loop "
          f"and lambda, {empty * 1e9:.0f} ns, subtracted)")
    for name, bench, fns in rows:
        c = cxx[bench] if bench else 0.0
        parts = []
        for label, fn in fns.items():
            py = per_call(fn) - empty
            parts.append(f"{label} {py * 1e9:.0f} ns (+{(py - c) * 1e9:.0f})")
        cpart = f"C++ {c * 1e9:.0f} ns; " if bench else ""
        print(f"  {name}: {cpart}Python " + ", ".join(parts))


# --- tk.embedding_bag with torch tensors ------------------------------------------------------
EMBEDDING_SCRIPT = r"""
import json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import embedding_peers as ep  # the table and bags of embedding_peers.py (2 threads)
import numpy as np, torch, torch.nn.functional as F
import tensorkit as tk
torch.set_num_threads(2)
tk.set_num_threads(2)
repeat = int(sys.argv[2])
table, ids, offsets = ep.make_input()
tt, ti, to = torch.from_numpy(table), torch.from_numpy(ids), torch.from_numpy(offsets)
# The library advises huge pages for its own tensors (bench_embedding's table); NumPy's and
# torch's tables sit in 4 KiB pages, where the random row reads wait on TLB misses. Both timed.
tt_tk = torch.from_dlpack(tk.asarray(table, copy=True))
def bag(mode, table=tt):  # torch tensors in, a torch tensor out, through DLPack
    return torch.from_dlpack(tk.embedding_bag(table, tk.JaggedTensor(ti, offsets=to), mode))
jt = tk.JaggedTensor(ti, offsets=to)
r = tk.embedding_bag(tt, jt, "sum")
zero_copy = (tk.asarray(tt).data_ptr == tt.data_ptr() and jt.values.data_ptr == ti.data_ptr()
             and jt.offsets.data_ptr == to.data_ptr()
             and torch.from_dlpack(r).data_ptr() == r.data_ptr)
def med(fn):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
out = {"zero_copy": zero_copy, "torch": torch.__version__}
with torch.no_grad():
    for mode in ("sum", "mean", "max"):
        want = F.embedding_bag(ti, tt, to[:-1], mode=mode)
        assert torch.allclose(bag(mode), want, rtol=1e-5, atol=1e-5), mode
        out[mode] = med(lambda: bag(mode))
        out["tk_table_" + mode] = med(lambda: bag(mode, tt_tk))
        out["torch_" + mode] = med(lambda: F.embedding_bag(ti, tt, to[:-1], mode=mode))
print(json.dumps(out))
"""


def embedding_section():
    """tk.embedding_bag from Python (torch tensors in and out) against the C++ EmbeddingBag on
    the same table and bags, and torch's embedding_bag beside."""
    torch_py = venv_python("torch")
    if not os.path.exists(torch_py):
        print("\nembedding_bag rows skipped: no .venvs/torch (make torch-ops makes it)")
        return
    binary = os.path.join(args.build, "bin", "bench_embedding")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, args.build, "python"),
               OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")
    runs = []
    for _ in range(2):  # C++, Python, C++, Python: both see the same load
        runs.append(peerlib.run_tensorkit(binary, "BM_EmbeddingBag/", threads=THREADS))
        res = subprocess.run([torch_py, "-c", EMBEDDING_SCRIPT, HERE, str(peerlib.REPEAT)],
                             capture_output=True, text=True, env=env)
        if res.returncode != 0:
            print("\nembedding_bag rows skipped: the torch child failed:", res.stderr[-2000:])
            return
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    cxx, py = runs[0::2], runs[1::2]
    rows = []
    for mode in ("sum", "mean", "max"):
        c = statistics.median([next(v for k, v in r.items() if k.startswith(
            f"BM_EmbeddingBag/{mode}")) for r in cxx])
        rows.append((f"EmbeddingBag {mode} f32 [1M, 64], 64k bags ~40",
                     {"tensorkit": statistics.median([r[mode] for r in py]), "C++": c,
                      "Python, table in tensorkit memory": statistics.median(
                          [r["tk_table_" + mode] for r in py]),
                      "torch": statistics.median([r["torch_" + mode] for r in py])}))
    peerlib.print_table(f"tk.embedding_bag from Python, torch {py[0]['torch']} tensors in and "
                        "out (x > 1: Python's call is faster)", rows)
    print(f"zero-copy by pointers (table, ids, offsets in; result out): {py[0]['zero_copy']}")




def tf_section():
    """tk.io.tfrecord_iterator and parse_example against tf.io (TensorFlow in .venvs/tf)."""
    tf_py = venv_python("tf")
    if not os.path.exists(tf_py):
        print("\ntf.io rows skipped: no .venvs/tf (make tf-ops makes it)")
        return
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
        return
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


if "files" in SECTIONS:
    files_section()
if "binding" in SECTIONS:
    binding_section()
if "embedding" in SECTIONS:
    embedding_section()
if "tf" in SECTIONS:
    tf_section()
