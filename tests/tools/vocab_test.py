#!/usr/bin/python3
"""Drives `tensorkit vocab fit|merge|build|lookup|sketch|sketch-merge|boundaries`: counts files, shards merged against the whole,
vocabulary files, lookups, failures and exit codes. Standard library only.

Usage: vocab_test.py --tool build/bin/tensorkit [unittest args]
"""
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_test import npy_image, read_npy  # noqa: E402

TOOL = None
HEADER = "#tensorkit-vocabulary-counts\t1\t"


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120,
                          errors="replace")


def unicode_npy(strings):
    """A NumPy '<U' array of the strings (UTF-32 code units, zero-padded)."""
    width = max([1] + [len(s) for s in strings])
    data = b"".join(s.encode("utf-32-le").ljust(4 * width, b"\0") for s in strings)
    return npy_image("<U%d" % width, [len(strings)], data)


def bytes_npy(items):
    width = max([1] + [len(b) for b in items])
    return npy_image("|S%d" % width, [len(items)], b"".join(b.ljust(width, b"\0") for b in items))


def int_npy(values, code="<i8"):
    fmt = {"<i8": "q", "<i4": "i"}[code]
    return npy_image(code, [len(values)], struct.pack("<%d%s" % (len(values), fmt), *values))


class VocabTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")

    def ok(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_fit_counts_strings_and_bytes(self):
        a = self.write("a.npy", unicode_npy(["b", "a", "c", "a", "b", "d", "caf\u00e9"]))
        b = self.write("b.npy", bytes_npy([b"a", b"x\ty"]))
        r = self.ok("vocab", "fit", "-o", self.path("c.tsv"), a, b)
        self.assertIn("counted 9 values, 6 distinct strings", r.stdout)
        self.assertEqual(self.read("c.tsv"), HEADER + "string\n3\ta\n2\tb\n1\tc\n1\tcaf\u00e9\n"
                         "1\td\n1\tx\\ty\n")

    def test_fit_counts_integers(self):
        i = self.write("i.npy", int_npy([5, -3, -3, 9], "<i4"))
        self.ok("vocab", "fit", "-o", self.path("c.tsv"), i)
        self.assertEqual(self.read("c.tsv"), HEADER + "int64\n2\t-3\n1\t5\n1\t9\n")

    def test_shards_merged_equal_the_whole(self):
        rng = random.Random(7)
        files = []
        for k in range(12):
            words = ["w%d" % int(rng.paretovariate(1.2)) for _ in range(rng.randrange(0, 400))]
            files.append(self.write("part%02d.npy" % k, unicode_npy(words)))
        lst = self.write("list.txt", "\n".join(files[6:]).encode() + b"\n")
        self.ok("vocab", "fit", "-o", self.path("all.tsv"), *files)
        shards = []
        for k in range(3):
            out = self.path("shard%d.tsv" % k)
            r = self.ok("vocab", "fit", "--shard", "%d/3" % k, "--inputs-from", lst, "-o", out,
                        *files[:6])
            self.assertIn("(shard %d/3)" % k, r.stdout)
            shards.append(out)
        self.ok("vocab", "merge", "-o", self.path("merged.tsv"), *shards)
        self.assertEqual(self.read("merged.tsv"), self.read("all.tsv"))
        # The thread count changes nothing either.
        self.ok("--threads", "1", "vocab", "fit", "-o", self.path("t1.tsv"), *files)
        self.assertEqual(self.read("t1.tsv"), self.read("all.tsv"))
        # build adds up its counts files itself.
        self.ok("vocab", "build", "-o", self.path("v1.txt"), *shards)
        self.ok("vocab", "build", "-o", self.path("v2.txt"), self.path("all.tsv"))
        self.assertEqual(self.read("v1.txt"), self.read("v2.txt"))

    def test_build_options(self):
        c = self.write("c.tsv", (HEADER + "string\n5\tz\n3\tb\n3\ta\n2\tq\n1\tr\n").encode())
        self.ok("vocab", "build", "-o", self.path("v.txt"), c)
        self.assertEqual(self.read("v.txt"), "z\na\nb\nq\nr\n")
        self.ok("vocab", "build", "--min-frequency", "3", "-o", self.path("v.txt"), c)
        self.assertEqual(self.read("v.txt"), "z\na\nb\n")
        self.ok("vocab", "build", "--max-tokens", "2", "--ties", "descending", "-o",
                self.path("v.txt"), c)
        self.assertEqual(self.read("v.txt"), "z\nb\n")
        self.ok("vocab", "build", "--mask", "z", "-o", self.path("v.txt"), c)
        self.assertEqual(self.read("v.txt"), "a\nb\nq\nr\n")

    def test_lookup(self):
        v = self.write("v.txt", b"x\ny\n")
        a = self.write("a.npy", unicode_npy(["y", "q", "x", ""]))
        self.ok("vocab", "lookup", "--vocab", v, "-o", self.path("ids.npy"), a)
        self.assertEqual(read_npy(self.path("ids.npy")), ("<i8", [4], [2, 0, 1, 0]))
        self.ok("vocab", "lookup", "--vocab", v, "--mask", "", "--num-oov", "2", "-o",
                self.path("ids.npy"), a)
        descr, shape, ids = read_npy(self.path("ids.npy"))
        self.assertEqual(ids[0], 4)
        self.assertEqual(ids[2], 3)
        self.assertEqual(ids[3], 0)
        self.assertIn(ids[1], (1, 2))
        iv = self.write("iv.txt", b"10\n20\n")
        i = self.write("i.npy", int_npy([20, -7, 10]))
        self.ok("vocab", "lookup", "--vocab", iv, "--dtype", "int64", "--num-oov", "3", "-o",
                self.path("ids.npy"), i)
        self.assertEqual(read_npy(self.path("ids.npy"))[2], [4, 2, 3])  # -7 floormod 3 = 2
        r = run("vocab", "lookup", "--vocab", iv, "--dtype", "int64", "--num-oov", "0", "-o",
                self.path("none.npy"), i)
        self.assertEqual(r.returncode, 1)
        self.assertIn("value 1 (-7) is not in the vocabulary", r.stderr)
        self.assertFalse(os.path.exists(self.path("none.npy")))

    def test_failures_write_nothing(self):
        a = self.write("a.npy", unicode_npy(["a"]))
        f = self.write("f.npy", npy_image("<f8", [1], struct.pack("<d", 1.5)))
        i = self.write("i.npy", int_npy([1]))
        out = self.path("c.tsv")
        r = run("vocab", "fit", "-o", out, a, f, self.path("missing.npy"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("2 of 3 input(s) failed", r.stderr)
        self.assertIn("f.npy: VocabularyCounter::Add: values of dtype float64", r.stderr)
        self.assertIn("missing.npy", r.stderr)
        self.assertFalse(os.path.exists(out))
        r = run("vocab", "fit", "-o", out, i, a)
        self.assertEqual(r.returncode, 1)
        self.assertIn("'%s' holds strings but '%s' integers" % (a, i), r.stderr)
        bad = self.write("bad.tsv", (HEADER + "string\n3\ta\n0\tb\n").encode())
        r = run("vocab", "merge", "-o", out, bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("line 3 column 1", r.stderr)
        self.assertFalse(os.path.exists(out))
        ints = self.write("ints.tsv", (HEADER + "int64\n3\t1\n").encode())
        strs = self.write("strs.tsv", (HEADER + "string\n3\ta\n").encode())
        r = run("vocab", "merge", "-o", out, strs, ints)
        self.assertEqual(r.returncode, 1)
        self.assertIn("ints.tsv", r.stderr)
        nl = self.write("nl.tsv", (HEADER + "string\n3\ta\\nb\n").encode())
        r = run("vocab", "build", "-o", self.path("v.txt"), nl)
        self.assertEqual(r.returncode, 1)
        self.assertIn("holds a '\\n'", r.stderr)

    def test_quantile_sketches_over_shards(self):
        """Sketch shards, merge them, take boundaries: every boundary's rank among all values is
        within the reported error of i / N of them, and the merged sketch of the shards gives
        what `boundaries` gives from the shard sketches directly."""
        rng = random.Random(25)
        files, values = [], []
        for k in range(4):
            v = [rng.gauss(0, 1) * (k + 1) + k for _ in range(20000)]
            values += v
            files.append(self.write("v%d.npy" % k, npy_image(
                "<f8", [len(v)], struct.pack("<%dd" % len(v), *v))))
        # A shard may hold none of the inputs (shards follow the paths' hashes): it still merges.
        empty = self.path("none.qsketch")
        for k in range(64):
            r = run("vocab", "sketch", "--shard", "%d/64" % k, "--capacity", "256", "-o", empty,
                    files[0])
            self.assertEqual(r.returncode, 0, r.stderr)
            if "from 0 file(s)" in r.stdout:
                break
        self.assertIn("sketched 0 values", r.stdout)
        sketches = [empty]
        for k in range(2):  # two shards of the inputs, as two workers would run them
            out = self.path("s%d.qsketch" % k)
            r = run("vocab", "sketch", "--shard", "%d/2" % k, "--capacity", "256", "-o", out,
                    *files)
            self.assertEqual(r.returncode, 0, r.stderr)
            sketches.append(out)
        merged = self.path("all.qsketch")
        r = run("vocab", "sketch-merge", "-o", merged, *sketches)
        self.assertEqual(r.returncode, 0, r.stderr)
        error = int(r.stdout.split("rank error at most ")[1].split(",")[0])
        self.assertIn("%d values" % len(values), r.stdout)
        r = run("vocab", "boundaries", "--buckets", "10", "-o", self.path("b.npy"), merged)
        self.assertEqual(r.returncode, 0, r.stderr)
        descr, shape, b = read_npy(self.path("b.npy"))
        self.assertEqual(descr, "<f4")
        self.assertEqual(len(b), 9)
        self.assertEqual(b, sorted(set(b)))
        ordered = sorted(values)
        import bisect
        for i, x in enumerate(b, start=1):
            rank = bisect.bisect_left(ordered, x)
            self.assertLessEqual(abs(rank - i * len(values) / 10), error + 2, (i, x, rank))
        again = run("vocab", "boundaries", "--buckets", "10", *sketches)
        self.assertEqual(again.stdout.split(":", 1)[1], r.stdout.split(":", 1)[1])
        # A sketch file that is not one, and strings, are refused.
        bad = self.write("bad.qsketch", b"not a sketch")
        r = run("vocab", "boundaries", "--buckets", "4", bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("bad.qsketch", r.stderr)
        strs = self.write("s.npy", unicode_npy(["a", "b"]))
        r = run("vocab", "sketch", "-o", self.path("x.qsketch"), strs)
        self.assertEqual(r.returncode, 1)
        self.assertNotEqual(r.stderr, "")

    def test_usage_errors(self):
        a = self.write("a.npy", unicode_npy(["a"]))
        for args in (["vocab"], ["vocab", "fit", a], ["vocab", "fit", "-o", self.path("c.tsv")],
                     ["vocab", "build", "--max-tokens", "-2", "-o", "v.txt", "c.tsv"],
                     ["vocab", "build", "--ties", "random", "-o", "v.txt", "c.tsv"],
                     ["vocab", "fit", "--shard", "3/2", "-o", self.path("c.tsv"), a],
                     ["vocab", "lookup", "--vocab", "v.txt", "-o", "o.npy"]):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tool":
        TOOL = os.path.abspath(args[1])
        args = args[2:]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=1)
