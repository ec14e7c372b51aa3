#!/usr/bin/python3
"""Drives the built `tensorkit` binary: batches with failures, --resume, interrupted writes,
usage errors and exit codes, validate/info/concat. Standard library only.

Usage: tool_test.py --tool build/bin/tensorkit [unittest args]
"""
import json
import os
import pty
import subprocess
import sys
import tempfile
import unittest

TOOL = None

GENERAL = """%%MatrixMarket matrix coordinate real general
% two rows, three columns
2 3 3
1 1 1.5
2 3 -2
1 2 4
"""


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("TENSORKIT_IO_FAIL_AFTER_BYTES", None)
    e.update(env or {})
    return subprocess.run([TOOL, *args], capture_output=True, text=True, env=e)


class ToolTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tk_tool_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def info(self, path):
        r = run("info", "--json", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def good_inputs(self, n=3, cube=False):
        files = []
        for k in range(n):
            files.append(self.write(f"good{k}.mtx", GENERAL.replace("1 1 1.5", f"1 1 {k + 1}.5")))
        if cube:  # rank 3: fits .npy and .tns only
            files.append(self.write("cube.tns", "1 1 1 2.0\n2 3 4 -1\n"))
        return files

    def test_batch_keeps_going_and_reports_every_failure(self):
        good = self.good_inputs(cube=True)
        bad1 = self.write("bad1.mtx", GENERAL.replace("2 3 -2", "0 3 -2"))
        bad2 = self.write("bad2.mtx", "not a matrix market file\n")
        out = self.path("out")
        r = run("convert", "--to", "npy", "-o", out, good[0], bad1, *good[1:], bad2)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("failed 2", r.stdout)
        failures = r.stderr[r.stderr.index("failures:"):]
        self.assertIn("bad1.mtx", failures)
        self.assertIn("line 5", failures)  # the zero index, named by line
        self.assertIn("bad2.mtx", failures)
        self.assertEqual(sorted(os.listdir(out)), ["cube.npy", "good0.npy", "good1.npy", "good2.npy"])
        self.assertEqual(self.info(os.path.join(out, "good2.npy"))["shape"], [2, 3])
        self.assertEqual(self.info(os.path.join(out, "cube.npy"))["shape"], [2, 3, 4])

    def test_plain_progress_lines_off_a_terminal(self):
        good = self.good_inputs(2)
        r = run("convert", "--to", "npz", "-o", self.path("out"), *good)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.startswith("[")]
        self.assertEqual(len(lines), len(good))
        self.assertNotIn("\r", r.stderr)

    def test_progress_bar_on_a_terminal(self):
        good = self.good_inputs(2)
        master, slave = pty.openpty()
        p = subprocess.Popen([TOOL, "convert", "--to", "npz", "-o", self.path("out"), *good],
                             stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        self.assertEqual(p.wait(), 0)
        text = b"".join(chunks).decode()
        self.assertIn("\r", text)
        self.assertIn("#", text)
        self.assertIn(f"{len(good)}/{len(good)}", text)

    def test_resume_skips_existing_outputs(self):
        good = self.good_inputs(2)
        out = self.path("out")
        self.assertEqual(run("convert", "--to", "mtx", "-o", out, *good[:1]).returncode, 0)
        first = os.path.join(out, "good0.mtx")
        with open(first, "a") as f:
            f.write("% marker\n")  # still valid; proves the file is not rewritten
        r = run("convert", "--resume", "--to", "mtx", "-o", out, *good)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("skipped 1", r.stdout)
        self.assertIn("converted 1", r.stdout)
        with open(first) as f:
            self.assertIn("% marker", f.read())
        r = run("convert", "--to", "mtx", "-o", out, *good)
        with open(first) as f:
            self.assertNotIn("% marker", f.read())

    def test_interrupted_write_leaves_no_partial_output(self):
        src = self.write("big.tns", "".join(f"{i} {i % 7 + 1} {i * 0.5}\n" for i in range(1, 2000)))
        out = self.path("big.mtx")
        r = run("convert", src, out, env={"TENSORKIT_IO_FAIL_AFTER_BYTES": "1000"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("injected", r.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(self.dir)), ["big.tns"])  # no temporary left
        # An existing output stays as it was.
        self.write("big.mtx", "original")
        r = run("convert", src, out, env={"TENSORKIT_IO_FAIL_AFTER_BYTES": "10"})
        self.assertEqual(r.returncode, 1)
        with open(out) as f:
            self.assertEqual(f.read(), "original")
        self.assertEqual(sorted(os.listdir(self.dir)), ["big.mtx", "big.tns"])
        # Without the fault the same command succeeds.
        self.assertEqual(run("convert", src, out).returncode, 0)
        self.assertEqual(self.info(out)["nnz"], 1999)

    def test_batch_with_injected_failure_reports_all(self):
        good = self.good_inputs(2)
        out = self.path("out")
        r = run("convert", "--to", "npy", "-o", out, *good, env={"TENSORKIT_IO_FAIL_AFTER_BYTES": "3"})
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"failed {len(good)}", r.stdout)
        self.assertEqual(os.listdir(out), [])

    def test_usage_errors_exit_2_and_help_exits_0(self):
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("frobnicate").returncode, 2)
        self.assertEqual(run("convert", "a.mtx").returncode, 2)
        self.assertEqual(run("convert", "a.mtx", "b.npy", "c.npy").returncode, 2)
        self.assertEqual(run("convert", "--to", "xyz", "-o", self.dir, "a.mtx").returncode, 2)
        self.assertEqual(run("info").returncode, 2)
        self.assertEqual(run("concat", "-o", "x.npy", "a.npy").returncode, 2)  # no --axis
        for sub in ["convert", "info", "validate", "concat"]:
            r = run(sub, "--help")
            self.assertEqual(r.returncode, 0, sub)
            self.assertIn("Usage", r.stdout)
            self.assertIn("Exit codes", r.stdout)
        self.assertEqual(run("--help").returncode, 0)

    def test_validate(self):
        ok = self.write("ok.mtx", GENERAL)
        r = run("validate", ok)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("valid", r.stdout)
        dup = self.write("dup.mtx", GENERAL.replace("2 3 3\n", "2 3 4\n") + "2 3 5\n")
        r = run("validate", dup)
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid", r.stdout)
        self.assertIn("[1 2]", r.stdout)  # the repeated coordinates
        truncated = self.write("short.mtx", GENERAL.replace("2 3 3\n", "2 3 5\n"))
        r = run("validate", truncated)
        self.assertEqual(r.returncode, 1)
        self.assertIn("declares 5 entries", r.stdout)
        r = run("validate", self.path("missing.npy"))
        self.assertEqual(r.returncode, 1)

    def test_coalesce_sums_duplicates(self):
        dup = self.write("dup.mtx", GENERAL.replace("2 3 3\n", "2 3 4\n") + "2 3 5\n")
        out = self.path("c.mtx")
        self.assertEqual(run("convert", "--coalesce", dup, out).returncode, 0)
        with open(out) as f:
            lines = [l.split() for l in f if not l.startswith("%")]
        self.assertEqual(lines[0], ["2", "3", "3"])
        self.assertEqual(lines[1:], [["1", "1", "1.5"], ["1", "2", "4"], ["2", "3", "3"]])
        self.assertEqual(run("validate", out).returncode, 0)

    def test_info_json(self):
        d = self.info(self.write("m.mtx", GENERAL))
        self.assertEqual(d["format"], "mtx")
        self.assertEqual(d["shape"], [2, 3])
        self.assertEqual(d["nnz"], 3)
        self.assertEqual(d["dtype"], "float64")
        self.assertAlmostEqual(d["density"], 0.5)
        r = run("info", self.path("m.mtx"))
        self.assertIn("shape:   [2 3]", r.stdout)

    def test_concat_sparse_and_dense(self):
        a = self.write("a.mtx", GENERAL)
        b = self.write("b.mtx", GENERAL)
        out = self.path("ab.mtx")
        r = run("concat", "--axis", "0", "-o", out, a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.info(out)
        self.assertEqual((d["shape"], d["nnz"]), ([4, 3], 6))
        self.assertEqual(run("convert", a, self.path("a.npy")).returncode, 0)
        r = run("concat", "--axis", "1", "-o", self.path("wide.npy"), self.path("a.npy"), b)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.info(self.path("wide.npy"))
        self.assertEqual((d["shape"], d["nnz"], d["sparse"]), ([2, 6], 6, False))
        r = run("concat", "--axis", "0", "-o", self.path("bad.mtx"), a, self.write("c.tns", "1 1 1 1\n"))
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists(self.path("bad.mtx")))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tool":
        TOOL = os.path.abspath(args[1])
        args = args[2:]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=1)
