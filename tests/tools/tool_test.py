#!/usr/bin/python3
"""Drives the built `tensorkit` binary: batches with failures, --resume, interrupted writes,
usage errors and exit codes, validate/info/concat. Standard library only.

Usage: tool_test.py --tool build/bin/tensorkit [unittest args]
"""
import ast
import json
import os
import pty
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

TOOL = None

GENERAL = """%%MatrixMarket matrix coordinate real general
% two rows, three columns
2 3 3
1 1 1.5
2 3 -2
1 2 4
"""


HOOKS = ["TENSORKIT_IO_FAIL_AFTER_BYTES", "TENSORKIT_IO_STALL_AFTER_BYTES", "TENSORKIT_IO_NO_TMPFILE"]


def tool_env(env):
    e = dict(os.environ)
    for h in HOOKS:
        e.pop(h, None)
    e.update(env or {})
    return e


def run(*args, env=None, timeout=60):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, env=tool_env(env),
                          timeout=timeout, errors="replace")


def npy_image(descr, shape, data, fortran=False):
    """The bytes of a version-1 .npy file."""
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, repr(tuple(shape)))
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + data


def read_npy(path):
    """(descr, shape, values in C order) of a .npy of numbers written in C order."""
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    count = 1
    for d in h["shape"]:
        count *= d
    code = {"<f8": "d", "<i8": "q", "<f4": "f", "<i4": "i"}[h["descr"]]
    return h["descr"], list(h["shape"]), list(struct.unpack("<%d%s" % (count, code), b[10 + n:]))


def zip_member(name, data, compress, claimed=None):
    """(local header + data, central directory entry builder) of one zip member."""
    body = zlib.compress(data, 9)[2:-4] if compress else data
    crc = zlib.crc32(data)
    size = len(data) if claimed is None else claimed
    method = 8 if compress else 0
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(body), size,
                        len(name), 0) + name.encode() + body
    def central(offset):
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(body),
                           size, len(name), 0, 0, 0, 0, 0, offset) + name.encode()
    return local, central


def zip_archive(members):
    """A zip of (name, bytes, compress[, claimed size]) members."""
    out, cds = b"", []
    for m in members:
        local, central = zip_member(*m)
        cds.append(central(len(out)))
        out += local
    cd = b"".join(cds)
    return out + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(cds), len(cds), len(cd), len(out), 0)


def sanitized():
    """Whether the tool is built with AddressSanitizer, whose shadow memory follows every
    allocation, so that peak memory says nothing about the tool's own."""
    with open(TOOL, "rb") as f:
        return b"__asan_init" in f.read()


def peak_kib(args, env=None):
    """(exit code, stderr, peak resident KiB) of one tool run, measured alone."""
    probe = ("import resource, subprocess, sys, json\n"
             "r = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)\n"
             "print(json.dumps([r.returncode, r.stderr, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n")
    r = subprocess.run([sys.executable, "-c", probe, json.dumps([TOOL, *args])],
                       capture_output=True, text=True, env=tool_env(env), timeout=120)
    return json.loads(r.stdout)


def crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: the TFRecord framing's checksum."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def tfrecord(records):
    """The TFRecord framing of `records`: length, masked CRC of it, data, masked CRC of it."""
    def masked(c):
        return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    out = b""
    for r in records:
        n = struct.pack("<Q", len(r))
        out += n + struct.pack("<I", masked(crc32c(n))) + r + struct.pack("<I", masked(crc32c(r)))
    return out


def npz_arrays(path):
    """{member: (descr, values)} of a stored or deflated .npz of 1-D numeric or byte-string
    arrays, read with the standard library."""
    import zipfile
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            hlen = struct.unpack("<H", data[8:10])[0]
            header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
            body = data[10 + hlen:]
            descr = header["descr"]
            if descr.startswith("|S"):
                values = body.decode("latin1")
            else:
                code = {"<i8": "q", "<i4": "i", "<f8": "d", "<f4": "f", "|u1": "B"}[descr]
                values = list(struct.unpack("<%d%s" % (len(body) // struct.calcsize(code), code),
                                            body))
            out[name[:-4]] = (descr, values)
    return out


def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7F) | (0x80 if v > 0x7F else 0)])
        v >>= 7
        if not v:
            return out


def delimited(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def example(features):
    """A serialized tf.Example of {key: (kind, values)}, kind 'bytes', 'float' or 'int64'."""
    entries = b""
    for key, (kind, values) in features.items():
        if kind == "bytes":
            lst = delimited(1, b"".join(delimited(1, v) for v in values))
        elif kind == "float":
            lst = delimited(2, delimited(1, struct.pack("<%df" % len(values), *values)))
        else:
            lst = delimited(3, delimited(1, b"".join(varint(v & (2**64 - 1)) for v in values)))
        entries += delimited(1, delimited(1, key.encode()) + delimited(2, lst))
    return delimited(1, entries)


class ToolTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tk_tool_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write(self, name, text):
        with open(self.path(name), "wb" if isinstance(text, bytes) else "w") as f:
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
        self.assertEqual(run("spy").returncode, 2)  # no file
        for sub in ["convert", "info", "validate", "concat", "spy"]:
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
        self.assertIn("no repeated coordinates", r.stdout)
        # A repeated coordinate is valid (Matrix Market sums it) and counted; --strict refuses it.
        dup = self.write("dup.mtx", GENERAL.replace("2 3 3\n", "2 3 4\n") + "2 3 5\n")
        r = run("validate", dup)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("valid: %s: sparse [2 3] float64, 4 entries, 1 repeated coordinate (" % dup,
                      r.stdout)
        r = run("validate", "--strict", dup)
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid", r.stdout)
        self.assertIn("[1 2]", r.stdout)  # the repeated coordinates
        self.assertIn("no repeated coordinates", run("validate", "--strict", ok).stdout)
        truncated = self.write("short.mtx", GENERAL.replace("2 3 3\n", "2 3 5\n"))
        r = run("validate", truncated)
        self.assertEqual(r.returncode, 1)
        self.assertIn("declares 5 entries", r.stdout)
        r = run("validate", self.path("missing.npy"))
        self.assertEqual(r.returncode, 1)

    def scipy_npz(self, name, fmt, shape, members):
        """A scipy.sparse .npz of format `fmt` with int64 index `members` and float64 data."""
        i8 = lambda v: struct.pack("<%dq" % len(v), *v)
        arrays = [("format.npy", npy_image("<U3", (), fmt.encode("utf-32-le")), False),
                  ("shape.npy", npy_image("<i8", (len(shape),), i8(shape)), False)]
        for member, values in members.items():
            if member == "data":
                data = struct.pack("<%dd" % len(values), *values)
                arrays.append(("data.npy", npy_image("<f8", (len(values),), data), False))
            else:
                arrays.append((member + ".npy", npy_image("<i8", (len(values),), i8(values)), False))
        with open(self.path(name), "wb") as f:
            f.write(zip_archive(arrays))
        return self.path(name)

    def test_repeated_coordinates_are_valid_in_every_sparse_format(self):
        # Each format that allows repeats (Matrix Market, FROSTT, scipy coo/csr/csc) is valid with
        # them, and the valid: line counts them; --strict refuses every one.
        files = {
            "rep.mtx": (self.write("rep.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                              "3 3 5\n2 1 1\n1 1 2\n2 1 3\n1 1 4\n2 1 5\n"), 3),
            "rep.tns": (self.write("rep.tns", "1 2 1 1.0\n2 2 2 2\n1 2 1 3\n"), 1),
            "coo.npz": (self.scipy_npz("coo.npz", "coo", [3, 3], {
                "row": [2, 0, 2], "col": [1, 1, 1], "data": [1, 2, 3]}), 1),
            # SciPy's csr and csc allow repeats too (has_canonical_format False).
            "csr.npz": (self.scipy_npz("csr.npz", "csr", [2, 4], {
                "indptr": [0, 3, 4], "indices": [3, 0, 3, 3], "data": [1, 2, 3, 4]}), 1),
            "csc.npz": (self.scipy_npz("csc.npz", "csc", [4, 2], {
                "indptr": [0, 2, 2], "indices": [1, 1], "data": [5, 6]}), 1),
        }
        for name, (path, repeats) in files.items():
            r = run("validate", path)
            self.assertEqual(r.returncode, 0, name + ": " + r.stdout + r.stderr)
            self.assertIn(", %d repeated coordinate%s (they count as their sum" %
                          (repeats, "" if repeats == 1 else "s"), r.stdout, name)
            r = run("validate", "--strict", path)
            self.assertEqual(r.returncode, 1, name + ": " + r.stdout)
            self.assertIn("repeats entry", r.stdout, name)
            # Summed, they are canonical: --coalesce gives a file --strict accepts, every format.
            for ext in ["npz", "mtx", "tns"]:
                if ext == "mtx" and name == "rep.tns":
                    continue  # rank 3
                out = self.path("c_" + name + "." + ext)
                r = run("convert", "--coalesce", path, out)
                self.assertEqual(r.returncode, 0, r.stderr)
                r = run("validate", "--strict", out)
                self.assertEqual(r.returncode, 0, name + " -> " + ext + ": " + r.stdout)
        # Converted without --coalesce the repeats travel, and stay valid and counted.
        out = self.path("batch")
        r = run("convert", "--to", "npz", "-o", out, files["rep.mtx"][0])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("validate", os.path.join(out, "rep.npz"))
        self.assertIn(", 3 repeated coordinates", r.stdout)
        # What the formats forbid stays invalid, repeats or not.
        bad = {
            "oob.npz": self.scipy_npz("oob.npz", "coo", [2, 2], {
                "row": [0, 0, 2], "col": [1, 1, 0], "data": [1, 2, 3]}),
            "oob.mtx": self.write("oob.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                             "2 2 2\n1 1 1\n1 3 1\n"),
            "oob.tns": self.write("oob.tns", "# shape: 2 2\n1 1 1\n1 1 2\n3 1 1\n"),
            "dec.npz": self.scipy_npz("dec.npz", "csr", [2, 2], {
                "indptr": [0, 2, 1], "indices": [0, 0], "data": [1, 2]}),
        }
        for name, path in bad.items():
            r = run("validate", path)
            self.assertEqual(r.returncode, 1, name + ": " + r.stdout)
            self.assertTrue(r.stdout.startswith("invalid: "), name + ": " + r.stdout)
        # A skew-symmetric file with a diagonal entry is read as SciPy 1.17 reads it: the diagonal
        # kept as stored, beside the negated mirrors of the other entries.
        skew = self.write("skew.mtx", "%%MatrixMarket matrix coordinate real "
                                      "skew-symmetric\n2 2 2\n2 1 1\n2 2 1\n")
        r = run("validate", skew)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("3 entries", r.stdout)

    def test_the_repeated_sample_converts_and_validates(self):
        # examples/data/rmat_graph.mtx keeps its repeated edges (make run converts and validates
        # it): its .npz and .mtx outputs are valid, with as many repeats as the file has.
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        src = os.path.join(root, "examples", "data", "rmat_graph.mtx")
        with open(src) as f:
            pairs = [tuple(l.split()) for l in f if not l.startswith("%")][1:]
        repeats = len(pairs) - len(set(pairs))
        self.assertGreater(repeats, 0)
        r = run("convert", "--to", "npz", "-o", self.path("npz"), src)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("convert", "--reorder", "--to", "mtx", "-o", self.path("mtx"), src)
        self.assertEqual(r.returncode, 0, r.stderr)
        for f in [src, self.path("npz", "rmat_graph.npz"), self.path("mtx", "rmat_graph.mtx")]:
            r = run("validate", f)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertIn("8192 entries, %d repeated coordinates" % repeats, r.stdout)
            self.assertEqual(run("validate", "--strict", f).returncode, 1)

    def test_hypersparse_shapes_in_every_command(self):
        # A 2^40 x 2^40 matrix of 3 entries (as fast_matrix_market's dim_over_32_bit.mtx, which
        # SciPy reads): its volume (2^80) is no int64, and no command needs it but a dense output.
        big = 1 << 40
        m = self.write("web.mtx", "%%%%MatrixMarket matrix coordinate real general\n"
                                  "%d %d 3\n%d 1 2.5\n1 %d -1\n%d %d 4\n"
                                  % (big, big, big, big, big // 2, big // 2 + 1))
        d = self.info(m)
        self.assertEqual((d["shape"], d["nnz"]), ([big, big], 3))
        self.assertAlmostEqual(d["density"] / (3 / 2.0 ** 80), 1.0, places=5)  # 6 digits
        r = run("validate", m)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("sparse [%d %d] float64, 3 entries, no repeated coordinates" % (big, big),
                      r.stdout)
        self.assertEqual(run("validate", "--strict", m).returncode, 0)
        for ext in ["npz", "tns", "mtx"]:
            out = self.path("web_out." + ext)
            r = run("convert", m, out)
            self.assertEqual(r.returncode, 0, ext + ": " + r.stderr)
            d = self.info(out)
            self.assertEqual((d["shape"], d["nnz"]), ([big, big], 3), ext)
            self.assertEqual(run("validate", "--strict", out).returncode, 0, ext)
            r = run("spy", "--text", "--size", "16", out)
            self.assertEqual(r.returncode, 0, ext + ": " + r.stderr)
            self.assertIn("[%d %d] axes 0,1, 3 entries" % (big, big), r.stdout)
            r = run("info", "--json", "--rows", out)
            self.assertEqual(r.returncode, 0, ext + ": " + r.stderr)
            rows = json.loads(r.stdout)["rows"]
            self.assertEqual((rows["rows"], rows["entries"], rows["empty"], rows["max"]),
                             (big, 3, big - 3, 1), ext)
        with open(self.path("web_out.npz"), "rb") as f:
            self.assertIn(b"coo", f.read())
        # A dense output is refused, naming the size; nothing is written.
        for out in [self.path("web.npy"), self.path("batch")]:
            args = ["convert", m, out] if out.endswith(".npy") else ["convert", "--to", "npy",
                                                                     "-o", out, m]
            r = run(*args)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("[%d %d]" % (big, big), r.stderr)
            self.assertIn("keep it sparse", r.stderr)
        self.assertFalse(os.path.exists(self.path("web.npy")))
        # concat: sparse outputs join (2^41 rows), a dense one is refused.
        r = run("concat", "--axis", "0", "-o", self.path("two.mtx"), m, self.path("web_out.tns"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.info(self.path("two.mtx"))["shape"], [2 * big, big])
        r = run("concat", "--axis", "0", "-o", self.path("two.npy"), m, m)
        self.assertEqual(r.returncode, 1)
        self.assertIn("keep it sparse", r.stderr)
        # Each dim fits int64, the product does not: 2^62 x 4, and 3-D with a shape comment.
        w = self.write("wide.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                   "4611686018427387904 4 2\n4611686018427387904 4 1\n1 1 2\n")
        t = self.write("cube.tns", "# shape: %d %d %d\n%d 1 7 2\n3 %d %d -1\n"
                       % (big, big, big, big, big, big))
        for src, shape in [(w, [1 << 62, 4]), (t, [big, big, big])]:
            self.assertEqual(self.info(src)["shape"], shape)
            self.assertEqual(run("validate", "--strict", src).returncode, 0)
            for ext in ["npz", "tns"]:
                out = self.path(os.path.basename(src) + "." + ext)
                r = run("convert", src, out)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(self.info(out)["shape"], shape)
            r = run("spy", "--text", "--axes", "1,0", src)
            self.assertEqual(r.returncode, 0, r.stderr)
        # The largest dims of all: the text picture's characters cover 2^63 - 1 rows at most
        # (2t rows would overflow), and --rows counts 2^63 - 1 rows.
        most = self.write("most.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                      "9223372036854775807 9223372036854775807 2\n"
                                      "9223372036854775807 9223372036854775807\n1 1\n")
        for size in ["1", "2", "3", "512"]:
            r = run("spy", "--text", "--size", size, most)
            self.assertEqual(r.returncode, 0, r.stderr)
            cell = r.stdout.split("a character is ")[1].split(" cells")[0].split(" x ")
            self.assertTrue(all(0 < int(c) < 1 << 63 for c in cell), (size, cell))
        r = run("info", "--json", "--rows", most)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)["rows"]
        self.assertEqual((rows["rows"], rows["empty"]), ((1 << 63) - 1, (1 << 63) - 3))
        # libsvm: feature indices past 2^32, the shape [samples, largest index].
        s = self.write("wide.svm", "1 7:1 %d:2.5\n-1 %d:3\n" % (big, big - 1))
        self.assertEqual(self.info(s)["shape"], [2, big])
        r = run("spy", "--text", s)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("convert", s, self.path("wide_svm.mtx"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.info(self.path("wide_svm.mtx"))["shape"], [2, big])

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


    # --- hostile inputs and interruptions ---

    def test_fifo_and_device_are_refused_at_once(self):
        fifo = self.path("f.npy")
        os.mkfifo(fifo)
        r = run("info", fifo, timeout=20)
        self.assertEqual(r.returncode, 1)
        self.assertIn("FIFO", r.stderr)
        os.symlink("/dev/zero", self.path("z.npy"))
        r = run("info", self.path("z.npy"), timeout=20)
        self.assertEqual(r.returncode, 1)
        self.assertIn("character device", r.stderr)
        self.assertNotIn("Success", r.stderr)
        # Inside a batch: the others are converted, the FIFO is one failure.
        good = self.good_inputs(2)
        out = self.path("out")
        r = run("convert", "--to", "npy", "-o", out, good[0], fifo, good[1], timeout=30)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("converted 2, skipped 0, failed 1", r.stdout)
        self.assertIn("FIFO", r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["good0.npy", "good1.npy"])

    def test_dense_output_sums_duplicates_like_scipy(self):
        dup = self.write("dup.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                                    "1 1 1\n1 1 2\n2 1 4\n")
        self.assertEqual(run("convert", dup, self.path("dup.npy")).returncode, 0)
        self.assertEqual(read_npy(self.path("dup.npy"))[2], [3.0, 0.0, 4.0, 0.0])
        # A symmetric file that stores both triangles: each stored entry is mirrored, then summed.
        sym = self.write("sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n"
                                    "1 1 1\n2 1 5\n1 2 7\n")
        self.assertEqual(run("convert", sym, self.path("sym.npy")).returncode, 0)
        self.assertEqual(read_npy(self.path("sym.npy"))[2], [1.0, 12.0, 12.0, 0.0])
        # --coalesce first gives the same; so does concat into a dense output.
        self.assertEqual(run("convert", "--coalesce", dup, self.path("c.npy")).returncode, 0)
        self.assertEqual(read_npy(self.path("c.npy"))[2], [3.0, 0.0, 4.0, 0.0])
        self.assertEqual(run("concat", "--axis", "0", "-o", self.path("cat.npy"), dup, dup).returncode, 0)
        self.assertEqual(read_npy(self.path("cat.npy"))[2], [3.0, 0.0, 4.0, 0.0] * 2)
        # A batch to .npy as well.
        r = run("convert", "--to", "npy", "-o", self.path("b"), dup)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read_npy(self.path("b", "dup.npy"))[2], [3.0, 0.0, 4.0, 0.0])

    def test_scipy_npz_with_duplicates_and_unicode_format(self):
        i8 = lambda v: struct.pack("<%dq" % len(v), *v)
        f8 = lambda v: struct.pack("<%dd" % len(v), *v)
        fmt = "csr".encode("utf-32-le")
        npz = zip_archive([
            ("format.npy", npy_image("<U3", (), fmt), False),
            ("shape.npy", npy_image("<i8", (2,), i8([2, 2])), True),
            ("indptr.npy", npy_image("<i8", (3,), i8([0, 2, 3])), False),
            ("indices.npy", npy_image("<i8", (3,), i8([1, 1, 0])), True),
            ("data.npy", npy_image("<f8", (3,), f8([1.5, 2.0, 4.0])), False)])
        with open(self.path("csr_py3.npz"), "wb") as f:
            f.write(npz)
        r = run("convert", self.path("csr_py3.npz"), self.path("d.npy"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read_npy(self.path("d.npy"))[2], [0.0, 3.5, 4.0, 0.0])

    def test_lying_deflate_size_costs_no_memory(self):
        noise = os.urandom(4 << 20)
        data = npy_image("|u1", (len(noise),), noise)
        with open(self.path("lie.npz"), "wb") as f:
            f.write(zip_archive([("arr_0.npy", data, True, 1000 * len(data))]))
        self.assertLess(os.path.getsize(self.path("lie.npz")), 5 << 20)
        code, err, kib = peak_kib(["convert", self.path("lie.npz"), self.path("lie.npy")])
        self.assertEqual(code, 1, err)
        self.assertIn("deflate data is corrupt", err)
        if not sanitized():
            self.assertLess(kib, 100 * 1024, "peak %d KiB for a 4 MiB file" % kib)

    def test_deflated_member_inflates_into_the_tensor(self):
        size = 128 << 20
        data = npy_image("|u1", (size,), bytes(size))
        with open(self.path("big.npz"), "wb") as f:
            f.write(zip_archive([("arr_0.npy", data, True)]))
        del data
        code, err, kib = peak_kib(["validate", self.path("big.npz")])
        self.assertEqual(code, 0, err)
        if not sanitized():
            self.assertLess(kib, (size + size // 4) // 1024, "peak %d KiB for %d bytes" % (kib, size))

    def stall(self, args, env=None):
        """Starts the tool with writes that stall, and returns it once one has."""
        p = subprocess.Popen([TOOL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=tool_env(dict(env or {}, TENSORKIT_IO_STALL_AFTER_BYTES="100")))
        line = p.stderr.readline().decode()
        self.assertIn("stalled", line)
        return p

    def test_signals_leave_no_temporaries_and_resume_finishes(self):
        src = self.write("big.tns", "".join(f"{i} {i % 7 + 1} {i * 0.5}\n" for i in range(1, 3000)))
        for mode in [{}, {"TENSORKIT_IO_NO_TMPFILE": "1"}]:
            for sig in [signal.SIGINT, signal.SIGTERM]:
                out = self.path(f"out_{sig}_{len(mode)}")
                p = self.stall(["convert", "--to", "mtx", "-o", out, src], mode)
                if mode:  # the named temporary exists while the write stalls
                    self.assertTrue(any(".tmp." in n for n in os.listdir(out)), os.listdir(out))
                p.send_signal(sig)
                self.assertEqual(p.wait(timeout=20), -sig)
                p.stdout.close()
                p.stderr.close()
                self.assertEqual(os.listdir(out), [], f"{sig} {mode}")
        # SIGKILL: nothing at all with an unnamed temporary; the named one is swept by --resume.
        out = self.path("killed")
        p = self.stall(["convert", "--to", "mtx", "-o", out, src])
        p.kill()
        p.wait(timeout=20)
        for f in (p.stdout, p.stderr):
            f.close()
        self.assertEqual(os.listdir(out), [])
        p = self.stall(["convert", "--to", "mtx", "-o", out, src], {"TENSORKIT_IO_NO_TMPFILE": "1"})
        p.kill()
        p.wait(timeout=20)
        for f in (p.stdout, p.stderr):
            f.close()
        self.assertEqual(len([n for n in os.listdir(out) if n.startswith(".big.mtx.tmp.")]), 1)
        r = run("convert", "--resume", "--to", "mtx", "-o", out, src)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(out), ["big.mtx"])
        self.assertEqual(self.info(os.path.join(out, "big.mtx"))["nnz"], 2999)

    def test_replaced_output_keeps_its_mode(self):
        src = self.write("m.mtx", GENERAL)
        for mode in [{}, {"TENSORKIT_IO_NO_TMPFILE": "1"}]:
            out = self.write("o.npy", "old")
            os.chmod(out, 0o600)
            self.assertEqual(run("convert", src, out, env=mode).returncode, 0)
            self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)
            self.assertEqual(self.info(out)["shape"], [2, 3])

    def test_every_written_format_reads_back_with_shape_and_dtype(self):
        f8 = lambda n: struct.pack("<%dd" % n, *([0.0] * n))
        inputs = {
            "zeros.npy": npy_image("<f8", (3, 4), f8(12)),
            "empty.npy": npy_image("<f8", (0, 5), b""),
            "nnz0.mtx": b"%%MatrixMarket matrix coordinate real general\n4 6 0\n",
            "wide.mtx": b"%%MatrixMarket matrix coordinate real general\n9 8 1\n2 3 1.5\n",
        }
        expect = {"zeros": [3, 4], "empty": [0, 5], "nnz0": [4, 6], "wide": [9, 8]}
        for name, data in inputs.items():
            with open(self.path(name), "wb") as f:
                f.write(data)
        for ext in ["npy", "npz", "mtx", "tns"]:
            out = self.path("to_" + ext)
            r = run("convert", "--to", ext, "-o", out, *[self.path(n) for n in inputs])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for stem, shape in expect.items():
                d = self.info(os.path.join(out, stem + "." + ext))
                self.assertEqual((d["shape"], d["dtype"]), (shape, "float64"), (stem, ext))

    def test_messages_quote_short_escaped_excerpts(self):
        head = "%%MatrixMarket matrix coordinate real general\n1 1 1\n"
        huge = self.write("huge.mtx", head + "1 1 " + "7" * 2000000 + "x\n")
        ctrl = self.write("ctrl.mtx", head + "1\v1 1 1\n")
        r = run("convert", "--to", "npy", "-o", self.path("out"), huge, ctrl)
        self.assertEqual(r.returncode, 1)
        self.assertLess(len(r.stderr), 1000, r.stderr[:2000])
        self.assertIn("2000001 bytes", r.stderr)
        self.assertIn("'1\\x0b1' is not an integer", r.stderr)
        self.assertNotIn("\v", r.stderr)

    def test_info_json_is_valid_utf8_for_any_file_name(self):
        name = os.fsencode(self.dir) + b"/caf\xe9\xff.mtx"
        with open(name, "w") as f:
            f.write(GENERAL)
        r = subprocess.run([os.fsencode(TOOL), b"info", b"--json", name], capture_output=True,
                           env=tool_env(None))
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout.decode("utf-8"))  # strict UTF-8
        self.assertEqual(os.fsencode(d["file"]), name)
        self.assertEqual(d["shape"], [2, 3])

    def test_numbers_out_of_range_read_as_strtod_does(self):
        m = self.write("r.mtx", "%%MatrixMarket matrix coordinate real general\n1 3 3\n"
                                "1 1 1e-400\n1 2 1e400\n1 3 -1e400\n")
        self.assertEqual(run("convert", m, self.path("r.npy")).returncode, 0)
        self.assertEqual(read_npy(self.path("r.npy"))[2], [0.0, float("inf"), float("-inf")])
        t = self.write("r.tns", "1 2 1e-400\n2 2 5e999\n")
        d = self.info(t)
        self.assertEqual((d["shape"], d["nnz"]), ([2, 2], 2))

    def test_byte_and_unicode_string_arrays_read_as_strings(self):
        with open(self.path("s.npy"), "wb") as f:
            f.write(npy_image("|S3", (2,), b"ab\x00cde"))
        with open(self.path("u.npy"), "wb") as f:
            f.write(npy_image("<U2", (1, 2), "h\u00e9y\x00".encode("utf-32-le")))
        for name, shape in [("s.npy", [2]), ("u.npy", [1, 2])]:
            d = self.info(self.path(name))
            self.assertEqual((d["shape"], d["dtype"]), (shape, "string"), name)
            r = run("convert", self.path(name), self.path("back_" + name))
            self.assertEqual(r.returncode, 0, r.stderr)
            d = self.info(self.path("back_" + name))
            self.assertEqual((d["shape"], d["dtype"]), (shape, "string"), name)
        r = run("convert", self.path("u.npy"), self.path("u.mtx"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("string", r.stderr)

    def test_command_line_messages(self):
        r = run("--threads", "0", "info", "x.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("at least 1, got '0'", r.stderr)
        self.assertLess(len(r.stderr), 400)
        r = run("frobnicate", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown subcommand 'frobnicate'", r.stderr)
        r = run("convert", "-o", self.path("out"), self.write("a.mtx", GENERAL))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--to", r.stderr)
        self.assertNotIn("''", r.stderr)
        r = run("info", self.write("bad.tns", "1 x 1\n"))
        self.assertIn("is not an integer", r.stderr)
        # Mixed dtypes join as NumPy would (float32 and float64 give float64).
        with open(self.path("f4.npy"), "wb") as f:
            f.write(npy_image("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)))
        r = run("concat", "--axis", "0", "-o", self.path("mix.npy"), self.path("f4.npy"), self.path("a.mtx"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Copy", r.stderr)
        descr, shape, values = read_npy(self.path("mix.npy"))
        self.assertEqual((descr, shape), ("<f8", [4, 3]))
        self.assertEqual(values[:7], [1, 2, 3, 4, 5, 6, 1.5])

    def test_info_of_a_tfrecord_file(self):
        recs = [example({"ids": ("int64", [1, 2, 3]), "score": ("float", [0.5]),
                         "tag": ("bytes", [b"a"])}),
                example({"ids": ("int64", [7]), "tag": ("bytes", [])}),
                example({"score": ("float", [1.0, 2.0]), "ids": ("int64", [-1, 5])})]
        plain = self.write("d.tfrecord", tfrecord(recs))
        import gzip
        import zlib as zl
        gz = self.write("g.tfrecord", gzip.compress(tfrecord(recs)))
        zz = self.write("z.tfrecords", zl.compress(tfrecord(recs)))
        for path, comp in [(plain, "NONE"), (gz, "GZIP"), (zz, "ZLIB")]:
            d = self.info(path)
            self.assertEqual((d["format"], d["compression"], d["records"]),
                             ("tfrecord", comp, 3), path)
            f = {x["key"]: x for x in d["features"]}
            self.assertEqual(sorted(f), ["ids", "score", "tag"])
            self.assertEqual((f["ids"]["type"], f["ids"]["records"], f["ids"]["values"],
                              f["ids"]["min_values"], f["ids"]["max_values"]),
                             ("int64", 3, 6, 1, 3))
            self.assertEqual((f["score"]["type"], f["score"]["records"], f["score"]["values"]),
                             ("float", 2, 3))
            self.assertEqual((f["tag"]["type"], f["tag"]["records"], f["tag"]["values"],
                              f["tag"]["min_values"]), ("bytes", 2, 1, 0))
        r = run("info", plain)
        self.assertIn("records:  3", r.stdout)
        self.assertIn("ids: int64, in 3 records, 6 values (1 to 3 a record)", r.stdout)
        # A flipped byte fails the CRC: an error naming the record, exit 1.
        data = bytearray(tfrecord(recs))
        data[20] ^= 1
        bad = self.write("bad.tfrecord", bytes(data))
        r = run("info", bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("record 0", r.stderr)
        self.assertEqual(run("info", "--distinct", plain).returncode, 2)
        r = run("validate", gz)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("tfrecord (GZIP), 3 tf.Example records, 3 feature keys", r.stdout)
        r = run("validate", bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid", r.stdout)
        # Records that are not tf.Examples: the framing holds, the parse names the record.
        junk = self.write("junk.tfrecord", tfrecord([recs[0], b"\x0a\xff"]))
        r = run("validate", junk)
        self.assertEqual(r.returncode, 1)
        self.assertIn("record 1", r.stdout)

    def test_convert_a_tfrecord_file_to_ragged_npz_members(self):
        recs = [example({"ids": ("int64", [1, 2, 3]), "score": ("float", [0.5]),
                         "tag": ("bytes", [b"a\x00b", b""])}),
                example({"ids": ("int64", [7]), "tag": ("bytes", [])}),
                example({"score": ("float", [1.0, 2.0]), "ids": ("int64", [-1, 5])})]
        import gzip
        for name, data in [("d.tfrecord", tfrecord(recs)),
                           ("g.tfrecord", gzip.compress(tfrecord(recs)))]:
            src = self.write(name, data)
            out = self.path(name + ".npz")
            r = run("convert", src, out)
            self.assertEqual(r.returncode, 0, r.stderr)
            z = npz_arrays(out)
            self.assertEqual(sorted(z), ["ids.row_splits", "ids.values", "score.row_splits",
                                         "score.values", "tag.row_splits", "tag.value_splits",
                                         "tag.values"])
            self.assertEqual(z["ids.row_splits"], ("<i8", [0, 3, 4, 6]))
            self.assertEqual(z["ids.values"], ("<i8", [1, 2, 3, 7, -1, 5]))
            self.assertEqual(z["score.row_splits"], ("<i8", [0, 1, 1, 3]))
            self.assertEqual(z["score.values"], ("<f4", [0.5, 1.0, 2.0]))
            self.assertEqual(z["tag.row_splits"], ("<i8", [0, 2, 2, 2]))
            self.assertEqual(z["tag.value_splits"], ("<i8", [0, 3, 3]))
            self.assertEqual(z["tag.values"], ("|u1", list(b"a\x00b")))
        # Forced to a wrong compression: an error, exit 1, no output; .npz only.
        r = run("convert", "--compression", "GZIP", self.path("d.tfrecord"), self.path("x.npz"))
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists(self.path("x.npz")))
        r = run("convert", self.path("d.tfrecord"), self.path("x.mtx"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not an .npz", r.stderr)

    def test_libsvm_conversion_streams_in_bounded_memory(self):
        # 150k lines of 20 features (about 25 MB, 3M entries): the streamed conversion holds a
        # few chunks, not the file nor the 72 MB tensor read from it.
        lines = []
        for i in range(150_000):
            lines.append("%d " % (i % 3) + " ".join("%d:%d" % (7 * k + i % 5 + 1, k)
                                                    for k in range(20)))
        src = self.write("big.svm", "\n".join(lines) + "\n")
        code, err, kib = peak_kib(["convert", src, self.path("big.npz")])
        self.assertEqual(code, 0, err)
        if not sanitized():
            self.assertLess(kib, 40 * 1024, "peak %d KiB" % kib)
        z = npz_arrays(self.path("big.npz"))
        self.assertEqual(z["format"][1], "csr")
        self.assertEqual(z["shape"], ("<i8", [150_000, 138]))
        self.assertEqual(len(z["indices"][1]), 3_000_000)
        self.assertEqual(z["indptr"][1][:3], [0, 20, 40])
        self.assertEqual(z["labels"][1][:4], [0.0, 1.0, 2.0, 0.0])
        # The same file read whole and written gives the same bytes.
        whole = self.path("whole.npz")
        r = run("convert", "--compress", src, whole)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(npz_arrays(whole), z)

    def test_more_entries_than_cells_and_density(self):
        m = self.write("rep.mtx", "%%MatrixMarket matrix coordinate real general\n1 2 3\n"
                                  "1 1 1\n1 1 2\n1 1 3\n")
        d = self.info(m)
        self.assertEqual(d["nnz"], 3)
        self.assertAlmostEqual(d["density"], 0.5)
        self.assertEqual(d["density_method"], "distinct")  # sorted: counted in one pass
        # Unsorted with a repeat: the cheap density counts stored entries and says so; --distinct
        # counts positions.
        u = self.write("unsorted.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                                       "2 1 1\n1 1 2\n2 1 3\n")
        d = self.info(u)
        self.assertEqual((d["density_method"], d["density"]), ("stored", 0.75))
        r = run("info", "--json", "--distinct", u)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual((d["density_method"], d["density"]), ("distinct", 0.5))
        self.assertIn("--distinct counts positions", run("info", u).stdout)
        self.assertEqual(run("convert", m, self.path("rep.npy")).returncode, 0)
        self.assertEqual(read_npy(self.path("rep.npy"))[2], [6.0, 0.0])


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tool":
        TOOL = os.path.abspath(args[1])
        args = args[2:]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=1)
