#!/usr/bin/python3
"""libsvm files between tensorkit and scikit-learn (Debian's python3-sklearn).

Files written by sklearn.datasets.dump_svmlight_file (0- and 1-based, with qids, multilabel,
float and integer values) and hand-written edge cases (comments, blank lines, CRLF, explicit
zeros, 1e-400, inf, '+' signs) are converted by the `tensorkit` tool to .npz (scipy CSR plus
labels/qids members) and .mtx, and compared with what load_svmlight_file reads; .npz files are
converted back to .svm and load_svmlight_file must read the same matrix and labels.

Usage: sklearn_libsvm.py --tool build/bin/tensorkit   (exit 77 = skipped: no scikit-learn)
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file
except ImportError:
    print("skipped: needs numpy, scipy and scikit-learn")
    sys.exit(77)

TOOL = None
failed = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failed.append(what)
        print("FAIL:", what)


def tk(*args, ok=True):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise RuntimeError(f"tensorkit {' '.join(args)} failed:\n{r.stderr}{r.stdout}")
    return r


def same_csr(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and
            np.array_equal(a.indices, b.indices) and
            np.array_equal(a.data, b.data, equal_nan=True))


def compare(path, what, multilabel=False, base="auto", query_id=False):
    zero_based = {"auto": "auto", "zero": True, "one": False}[base]
    want = load_svmlight_file(path, multilabel=multilabel, zero_based=zero_based,
                              query_id=query_id)
    npz = path + ".npz"
    extra = ["--multilabel"] if multilabel else []
    tk("convert", path, npz, "--index-base", base, *extra)
    got = sp.load_npz(npz)
    members = np.load(npz)
    check(got.format == "csr", f"{what}: .npz holds a scipy CSR matrix")
    check(same_csr(got, want[0]), f"{what}: features equal load_svmlight_file's")
    if multilabel:
        labels, offsets = members["labels"], members["label_offsets"]
        rows = [tuple(labels[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]
        check(rows == [tuple(float(v) for v in r) for r in want[1]], f"{what}: multilabels")
    else:
        check(np.array_equal(members["labels"], want[1]), f"{what}: labels")
    if query_id:
        check(np.array_equal(members["qids"], want[2]), f"{what}: qids")
    mtx = path + ".mtx"
    tk("convert", path, mtx, "--index-base", base, *extra)
    m = scipy.io.mmread(mtx)
    check(same_csr(m, want[0]), f"{what}: .mtx equals load_svmlight_file's features")
    # And back: tensorkit writes .svm (1-based), scikit-learn reads the same.
    back = path + ".back.svm"
    tk("convert", npz, back)
    again = load_svmlight_file(back, multilabel=multilabel, zero_based=False,
                               query_id=query_id, n_features=want[0].shape[1])
    check(same_csr(again[0], want[0]), f"{what}: tensorkit's .svm reads back in scikit-learn")
    if not multilabel:
        check(np.array_equal(again[1], want[1]), f"{what}: labels read back")
    if query_id:
        check(np.array_equal(again[2], want[2]), f"{what}: qids read back")


def main():
    global TOOL
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    TOOL = ap.parse_args().tool
    rng = np.random.default_rng(26)
    with tempfile.TemporaryDirectory() as d:
        for i, (zero_based, qid, integer) in enumerate(
                [(False, False, False), (True, False, False), (False, True, False),
                 (True, True, True), (False, False, True)]):
            x = sp.random(300, 40, density=0.1, format="csr", random_state=i,
                          data_rvs=lambda n: rng.standard_normal(n) * 1e3)
            if integer:
                x.data = np.round(x.data)
            y = rng.integers(-3, 4, 300).astype(float) / 2
            path = os.path.join(d, f"dump{i}.svm")
            q = np.repeat(np.arange(30), 10) if qid else None
            dump_svmlight_file(x, y, path, zero_based=zero_based, query_id=q)
            compare(path, f"dump_svmlight_file zero_based={zero_based} qid={qid} "
                    f"integer={integer}", query_id=qid)
            compare(path, f"dump {i} read zero-based", base="zero", query_id=qid)
        # Multilabel.
        x = sp.random(50, 20, density=0.2, format="csr", random_state=7)
        y = [tuple(sorted(set(rng.integers(0, 5, rng.integers(0, 4)).tolist()))) for _ in
             range(50)]
        from sklearn.preprocessing import MultiLabelBinarizer
        path = os.path.join(d, "multi.svm")
        dump_svmlight_file(x, MultiLabelBinarizer(classes=range(5)).fit_transform(y), path,
                           multilabel=True)
        compare(path, "multilabel", multilabel=True)
        # Hand-written edge cases.
        edge = os.path.join(d, "edge.svm")
        with open(edge, "wb") as f:
            f.write(b"# header comment\n1 1:0.5 3:2 # trailing\n\n-1\t2:1e-400  4:+3\r\n"
                    b"  0.25\n2 1:inf 2:0\n+3 7:-1e300\n")
        compare(edge, "hand-written edge cases")
        # Errors: tensorkit refuses what scikit-learn refuses, naming the line.
        bad = os.path.join(d, "bad.svm")
        with open(bad, "wb") as f:
            f.write(b"1 1:1\n2 3:1 2:1\n")
        r = tk("convert", bad, bad + ".npz", ok=False)
        check(r.returncode != 0 and "line 2" in r.stderr and "sorted and unique" in r.stderr,
              f"unsorted indices refused naming the line: {r.stderr.strip()}")
        try:
            load_svmlight_file(bad)
            check(False, "scikit-learn refuses unsorted indices too")
        except ValueError:
            check(True, "scikit-learn refuses unsorted indices too")
    print(f"{passed} checks passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
