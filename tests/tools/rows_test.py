#!/usr/bin/python3
"""`tensorkit info --rows`: per-row entry counts checked against NumPy on random files (Debian's
/usr/bin/python3 with python3-numpy and python3-scipy).

Usage: rows_test.py --tool build/bin/tensorkit [unittest args]   (exit 77 = skipped: no numpy)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import scipy.sparse as sp
except ImportError:
    print("skipped: needs numpy and scipy")
    sys.exit(77)

TOOL = None


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)


def write_mtx(path, shape, rows, cols):
    """A coordinate real general .mtx with the entries in the order given (repeats allowed)."""
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (*shape, len(rows)))
        f.writelines("%d %d 1\n" % (i + 1, j + 1) for i, j in zip(rows, cols))
    return path


def bin_starts(max_len):
    """The documented histogram rule: B = min(10, max) bins over [1, max]."""
    b = min(10, max_len)
    start = [1] + [0] * (b - 1) + [max_len + 1]
    for k in range(1, b):
        s = math.floor((max_len + 1) ** (k / b) + 0.5)
        s = max(s, start[k - 1] + 1)
        start[k] = min(s, max_len + 1 - (b - k))
    return start


class RowsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tk_rows_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def rows_json(self, path):
        r = run("info", "--json", "--rows", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["rows"]

    def check_against_numpy(self, got, lengths, what):
        lengths = np.asarray(lengths, dtype=np.int64)
        self.assertEqual(got["rows"], len(lengths), what)
        self.assertEqual(got["entries"], int(lengths.sum()), what)
        self.assertEqual(got["empty"], int((lengths == 0).sum()), what)
        self.assertEqual(got["min"], int(lengths.min()), what)
        self.assertEqual(got["max"], int(lengths.max()), what)
        self.assertEqual(got["mean"], float(lengths.mean()), what)
        for key, q in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)]:
            self.assertEqual(got[key], float(np.quantile(lengths, q)), (what, key))
        hist = got["histogram"]
        self.assertEqual(hist[0], {"lo": 0, "hi": 0, "rows": got["empty"]}, what)
        mx = int(lengths.max())
        if mx == 0:
            self.assertEqual(len(hist), 1, what)
            return
        starts = bin_starts(mx)
        self.assertEqual([b["lo"] for b in hist[1:]], starts[:-1], what)
        self.assertEqual([b["hi"] for b in hist[1:]], [s - 1 for s in starts[1:]], what)
        for b in hist[1:]:
            self.assertEqual(b["rows"], int(((lengths >= b["lo"]) & (lengths <= b["hi"])).sum()),
                             (what, b))
        self.assertEqual(sum(b["rows"] for b in hist), len(lengths), what)

    def test_random_files_match_numpy(self):
        rng = np.random.default_rng(30)
        cases = [((50, 40), 300), ((1000, 7), 5000), ((3, 100000), 20000), ((2000, 2000), 1500),
                 ((1, 9), 4), ((7, 1), 30)]
        for n, (shape, nnz) in enumerate(cases):
            # Skewed rows (a power law) so that the quantiles and bins differ; repeats allowed.
            r = np.minimum((rng.pareto(1.2, nnz) * shape[0] / 20).astype(np.int64), shape[0] - 1)
            c = rng.integers(0, shape[1], nnz)
            m = write_mtx(self.path("r%d.mtx" % n), shape, r, c)
            lengths = np.bincount(r, minlength=shape[0])
            self.check_against_numpy(self.rows_json(m), lengths, m)
            # The same matrix as scipy CSR (sorted rows) read from .npz.
            z = self.path("r%d.npz" % n)
            sp.save_npz(z, sp.csr_matrix((np.ones(nnz), (r, c)), shape=shape))
            csr = sp.load_npz(z)
            csr_lengths = np.diff(csr.indptr)  # repeats were summed by scipy
            self.check_against_numpy(self.rows_json(z), csr_lengths, z)
            # And as libsvm, a line a row ("0" alone for an empty one), 1-based.
            svm = self.path("r%d.svm" % n)
            with open(svm, "w") as f:
                for i in range(shape[0]):
                    cols = csr.indices[csr.indptr[i]:csr.indptr[i + 1]]
                    f.write(" ".join(["0"] + ["%d:1" % (j + 1) for j in sorted(cols)]) + "\n")
            self.check_against_numpy(self.rows_json(svm), csr_lengths, svm)

    def test_tfrecord_features_match_numpy(self):
        # Each feature's values per record; a record without the feature counts as empty (as
        # a VarLenFeature parses it) and is also counted apart ("absent").
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from tool_test import example, tfrecord
        rng = np.random.default_rng(31)
        n = 3000
        ids = np.minimum(rng.pareto(1.0, n).astype(np.int64), 200)
        has_ids = rng.random(n) < 0.8
        tags = rng.integers(0, 4, n)
        has_tags = rng.random(n) < 0.5
        records = []
        for i in range(n):
            f = {}
            if has_ids[i]:
                f["ids"] = ("int64", rng.integers(-9, 9, ids[i]).tolist())
            if has_tags[i]:
                f["tags"] = ("bytes", [b"t"] * int(tags[i]))
            records.append(example(f))
        path = self.path("f.tfrecord")
        with open(path, "wb") as out:
            out.write(tfrecord(records))
        r = run("info", "--json", "--rows", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = {f["key"]: f for f in json.loads(r.stdout)["features"]}
        for key, lengths, present in [("ids", ids, has_ids), ("tags", tags, has_tags)]:
            self.assertEqual(got[key]["absent"], int((~present).sum()), key)
            self.check_against_numpy(got[key]["rows"], np.where(present, lengths, 0), key)
        text = run("info", "--rows", path).stdout
        self.assertIn("    records: %d, %d with no values (%d without the feature)"
                      % (n, int((np.where(has_tags, tags, 0) == 0).sum()), int((~has_tags).sum())),
                      text)
        self.assertEqual(run("info", "--distinct", path).returncode, 2)

    def test_far_more_rows_than_entries(self):
        # Counted by sorting the row indices: nothing is allocated per row.
        rng = np.random.default_rng(3)
        r = rng.integers(0, 300000, 1000)
        m = write_mtx(self.path("tall.mtx"), (300000, 5), r, rng.integers(0, 5, 1000))
        self.check_against_numpy(self.rows_json(m), np.bincount(r, minlength=300000), m)
        big = write_mtx(self.path("huge.mtx"), (10**12, 3), [0, 0, 5, 10**12 - 1], [0, 1, 2, 2])
        got = self.rows_json(big)
        self.assertEqual((got["rows"], got["empty"], got["min"], got["max"]),
                         (10**12, 10**12 - 3, 0, 2))
        self.assertEqual((got["p50"], got["p90"], got["p99"]), (0.0, 0.0, 0.0))
        self.assertEqual(got["mean"], 4 / 10**12)
        self.assertEqual([b["rows"] for b in got["histogram"]], [10**12 - 3, 2, 1])

    def test_no_entries_and_no_rows(self):
        got = self.rows_json(write_mtx(self.path("e.mtx"), (4, 3), [], []))
        self.assertEqual((got["rows"], got["empty"], got["max"], got["p99"]), (4, 4, 0, 0.0))
        self.assertEqual(got["histogram"], [{"lo": 0, "hi": 0, "rows": 4}])
        got = self.rows_json(write_mtx(self.path("z.mtx"), (0, 3), [], []))
        self.assertEqual((got["rows"], got["min"], got["mean"], got["p50"]), (0, None, None, None))

    def test_text_form(self):
        m = write_mtx(self.path("t.mtx"), (5, 4), [0, 0, 0, 2, 4, 4], [0, 1, 2, 0, 3, 3])
        r = run("info", "--rows", m)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("rows:    5 (axis 0), 2 empty", lines)
        self.assertIn("length:  min 0, max 3, mean 1.2, p50 1, p90 2.6, p99 2.96", lines)
        bars = [l.split() for l in lines[lines.index("rows:    5 (axis 0), 2 empty") + 2:]]
        self.assertEqual(bars, [["0", "2", "#" * 40], ["1", "1", "#" * 20], ["2", "1", "#" * 20],
                                ["3", "1", "#" * 20]])
        # Without --rows nothing about rows is printed or computed.
        self.assertNotIn("rows", json.loads(run("info", "--json", m).stdout))

    def test_files_without_rows_are_refused(self):
        np.save(self.path("d.npy"), np.eye(3))
        with open(self.path("cube.tns"), "w") as f:
            f.write("1 1 1 2.0\n2 2 2 3.0\n")
        with open(self.path("line.tns"), "w") as f:
            f.write("# shape: 10\n3 1.0\n")
        for name, needle in [("d.npy", "dense array of dims [3 3]"),
                             ("cube.tns", "rank-3 sparse tensor of shape [2 2 2]"),
                             ("line.tns", "rank-1 sparse tensor of shape [10]")]:
            r = run("info", "--rows", self.path(name))
            self.assertEqual(r.returncode, 1, (name, r.stdout))
            self.assertIn("info --rows: '%s' holds a %s" % (self.path(name), needle), r.stderr)
            self.assertEqual(r.stdout, "", name)
        r = run("info", "--rows", self.path("missing.mtx"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing.mtx", r.stderr)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tool":
        TOOL = os.path.abspath(args[1])
        args = args[2:]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=1)
