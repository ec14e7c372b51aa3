#!/usr/bin/python3
"""`tensorkit spy`: the PNG (decoded here with zlib and struct: a small PNG reader, so the test
does not trust the encoder's own library) holds the documented shade of the expected count of
every cell; the text picture's lines; errors. Debian's /usr/bin/python3 with python3-numpy.

Usage: spy_test.py --tool build/bin/tensorkit [unittest args]   (exit 77 = skipped: no numpy)
"""
import math
import os
import pty
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

try:
    import numpy as np
except ImportError:
    print("skipped: needs numpy")
    sys.exit(77)

TOOL = None


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)


def read_png(path):
    """(pixels as a uint8 array [height, width], {tEXt keyword: text}) of an 8-bit gray PNG;
    fails on anything else, and checks every chunk's CRC."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, text, ihdr, seen_end = 8, b"", {}, None, False
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, "bad CRC in %r" % kind
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"tEXt":
            key, value = body.split(b"\0", 1)
            text[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"IEND":
            seen_end = True
            break
    assert seen_end and pos == len(data), "no IEND at the end"
    width, height, depth, color, _, _, interlace = ihdr
    assert (depth, color, interlace) == (8, 0, 0), "not 8-bit gray, non-interlaced: %r" % (ihdr,)
    raw = zlib.decompress(idat)
    assert len(raw) == height * (width + 1)
    out = np.zeros((height, width), dtype=np.int64)
    prev = np.zeros(width, dtype=np.int64)
    for y in range(height):
        kind = raw[y * (width + 1)]
        line = np.frombuffer(raw, np.uint8, width, y * (width + 1) + 1).astype(np.int64)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 255
        else:
            cur = np.zeros(width, dtype=np.int64)
            for x in range(width):  # the other filters of PNG, one byte a pixel
                a = cur[x - 1] if x else 0
                b, c = prev[x], (prev[x - 1] if x else 0)
                if kind == 1:
                    pred = a
                elif kind == 3:
                    pred = (a + b) // 2
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                else:
                    raise AssertionError("bad filter type %d" % kind)
                cur[x] = (line[x] + pred) & 255
        out[y], prev = cur, cur
    return out, text


def expected_counts(coords, shape, axes=(0, 1), n=512):
    """The documented grid: square cells of side s = max(1, ceil(R/N), ceil(C/N))."""
    rows, cols = shape[axes[0]], shape[axes[1]]
    s = max(1, -(-rows // n), -(-cols // n))
    h, w = max(1, -(-rows // s)), max(1, -(-cols // s))
    counts = np.zeros((h, w), dtype=np.int64)
    if len(coords):
        c = np.asarray(coords, dtype=np.int64)
        np.add.at(counts, (c[:, axes[0]] // s, c[:, axes[1]] // s), 1)
    return counts, s


def shade(counts):
    """gray = 255 if count == 0 else round(224 * (1 - log(1 + count) / log(1 + max)))."""
    mx = int(counts.max())
    g = {int(c): 255 if c == 0 else math.floor(224 * (1 - math.log1p(c) / math.log1p(mx)) + 0.5)
         for c in np.unique(counts)}
    return np.vectorize(lambda c: g[int(c)])(counts)


def write_mtx(path, shape, coords):
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n"
                % (shape[0], shape[1], len(coords)))
        f.writelines("%d %d\n" % (i + 1, j + 1) for i, j in coords)
    return path


def write_tns(path, shape, coords):
    with open(path, "w") as f:
        f.write("# shape: %s\n" % " ".join(map(str, shape)))
        f.writelines(" ".join(str(i + 1) for i in c) + " 1.5\n" for c in coords)
    return path


class SpyTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tk_spy_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def spy_png(self, src, *args):
        out = self.path(os.path.basename(src) + ".png")
        r = run("spy", "-o", out, *args, src)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        return read_png(out)

    def expect_refused(self, name, text, needle):
        """A file holding `text` is an error naming `needle`, exit 1, no picture written."""
        bad = self.path(name)
        with open(bad, "w") as f:
            f.write(text)
        out = self.path(name + ".png")
        r = run("spy", "-o", out, bad)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(needle, r.stderr)
        self.assertFalse(os.path.exists(out))

    def check_png(self, src, coords, shape, axes=(0, 1), n=512, args=()):
        pixels, text = self.spy_png(src, *args)
        counts, s = expected_counts(coords, shape, axes, n)
        self.assertEqual(pixels.shape, counts.shape, src)
        np.testing.assert_array_equal(pixels, shade(counts), src)
        self.assertEqual(text["tensorkit:max"], str(counts.max()))
        self.assertEqual(text["tensorkit:cell"], "%d x %d" % (s, s))
        self.assertEqual(text["tensorkit:axes"], "%d,%d" % axes)
        self.assertEqual(text["tensorkit:entries"], str(len(coords)))
        return pixels

    def text_lines(self, src, *args):
        r = run("spy", "--text", *args, src)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        for l in lines[:-1]:
            self.assertLessEqual(len(l), 80)
        # The framed rows, without the frame.
        self.assertEqual(lines[0][0] + lines[0][-1], "\u250c\u2510")
        self.assertEqual(lines[-2][0] + lines[-2][-1], "\u2514\u2518")
        for l in lines[1:-2]:
            self.assertEqual(l[0] + l[-1], "\u2502\u2502")
        return [l[1:-1] for l in lines[1:-2]], lines[-1]

    def test_diagonal(self):
        d = write_mtx(self.path("eye.mtx"), (10, 10), [(i, i) for i in range(10)])
        pixels = self.check_png(d, [(i, i) for i in range(10)], (10, 10))
        np.testing.assert_array_equal(pixels, np.where(np.eye(10) > 0, 0, 255))
        # 1000 x 1000 in 100 x 100 pixels: every diagonal pixel holds 10 entries.
        big = [(i, i) for i in range(1000)]
        d = write_mtx(self.path("eye1000.mtx"), (1000, 1000), big)
        pixels = self.check_png(d, big, (1000, 1000), n=100, args=("--size", "100"))
        np.testing.assert_array_equal(pixels, np.where(np.eye(100) > 0, 0, 255))
        body, caption = self.text_lines(d, "--size", "8")
        # 8 columns: a character is 250 x 125 positions, so the diagonal is two per line.
        self.assertEqual(body, ["\u2588\u2588      ", "  \u2588\u2588    ",
                                "    \u2588\u2588  ", "      \u2588\u2588"])
        self.assertIn("1000 entries; a character is 250 x 125 cells", caption)

    def test_dense_block_has_partial_cells(self):
        block = [(i, j) for i in range(10, 30) for j in range(21, 45)]
        b = write_mtx(self.path("block.mtx"), (50, 60), block)
        pixels = self.check_png(b, block, (50, 60), n=16, args=("--size", "16"))
        self.assertEqual(pixels.shape, (13, 15))  # cells of 4 x 4
        self.assertGreater(len(set(pixels.flatten())), 3)  # full, partial and empty cells
        body, _ = self.text_lines(b, "--size", "20")
        # 20 columns, 10 lines: a character covers 6 x 3 positions; rows 10..29, cols 21..44.
        full, edge = "\u2588", "\u2593"  # 18 entries (the most); 6 in the top row of the block
        self.assertEqual(len(body), 9)
        self.assertEqual(body[0], " " * 20)
        self.assertEqual(body[1], " " * 7 + edge * 8 + " " * 5)  # rows 6..11: 2 of 6 rows
        for line in body[2:4]:
            self.assertEqual(line[7:15], full * 8)
        self.assertEqual(body[8], " " * 20)

    def test_no_entries(self):
        e = write_mtx(self.path("empty.mtx"), (5, 7), [])
        pixels, text = self.spy_png(e)
        np.testing.assert_array_equal(pixels, np.full((5, 7), 255))
        self.assertEqual(text["tensorkit:max"], "0")
        body, _ = self.text_lines(e)
        self.assertEqual(body, [" " * 7] * 3)
        z = write_mtx(self.path("none.mtx"), (0, 3), [])
        pixels, _ = self.spy_png(z)
        np.testing.assert_array_equal(pixels, [[255, 255, 255]])

    def test_one_by_a_trillion(self):
        coords = [(0, 0), (0, 499999999999), (0, 10**12 - 1), (0, 10**12 - 2)]
        t = write_mtx(self.path("wide.mtx"), (1, 10**12), coords)
        pixels = self.check_png(t, coords, (1, 10**12))
        self.assertEqual(pixels.shape, (1, 512))
        self.assertEqual([x for x in range(512) if pixels[0, x] != 255], [0, 255, 511])
        self.assertEqual(pixels[0, 511], 0)  # two entries: the darkest
        body, caption = self.text_lines(t)
        self.assertEqual(len(body), 1)
        self.assertEqual(len(body[0]), 78)
        self.assertEqual([x for x, ch in enumerate(body[0]) if ch != " "], [0, 38, 77])
        self.assertEqual(body[0][77], "\u2588")

    def test_random_files_and_axes_of_nd(self):
        rng = np.random.default_rng(30)
        shape = (300, 70, 9000)
        coords = [tuple(int(rng.integers(0, d)) for d in shape) for _ in range(4000)]
        coords += coords[:300]  # repeats count
        t = write_tns(self.path("cube.tns"), shape, coords)
        self.check_png(t, coords, shape, n=64, args=("--size", "64"))
        self.check_png(t, coords, shape, axes=(2, 0), n=40, args=("--size", "40", "--axes", "2,0"))
        pixels, text = self.spy_png(t, "--axes", "-1,1")
        self.assertEqual(text["tensorkit:axes"], "2,1")
        np.testing.assert_array_equal(pixels, shade(expected_counts(coords, shape, (2, 1))[0]))
        # The same bytes whatever the thread count.
        outs = []
        for threads in ["1", "2", "3"]:
            out = self.path("t%s.png" % threads)
            r = run("--threads", threads, "spy", "-o", out, "--size", "50", t)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                outs.append(f.read())
        self.assertEqual(outs[0], outs[1])
        self.assertEqual(outs[0], outs[2])

    def test_parallel_paths_agree(self):
        # Enough entries for several parts: private histograms (--size 64: fewer cells than
        # entries) and the shared one with atomic adds (--size 1024: more cells than entries).
        rng = np.random.default_rng(5)
        coords = np.stack([rng.integers(0, 1000, 150000), rng.integers(0, 1000, 150000)], axis=1)
        coords = coords[np.argsort(coords[:, 0], kind="stable")]  # sorted rows: runs in a cell
        m = write_mtx(self.path("many.mtx"), (1000, 1000), coords.tolist())  # streamed
        t = write_tns(self.path("many.tns"), (1000, 1000), coords.tolist())  # streamed too
        for src in [m, t]:
            for size in ["64", "1024"]:
                counts = expected_counts(coords, (1000, 1000), n=int(size))[0]
                outs = []
                for threads in ["1", "2", "3"]:
                    out = self.path("p%s_%s.png" % (size, threads))
                    r = run("--threads", threads, "spy", "-o", out, "--size", size, src)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    np.testing.assert_array_equal(
                        read_png(out)[0], shade(counts),
                        "%s --size %s --threads %s" % (src, size, threads))
                    with open(out, "rb") as f:
                        outs.append(f.read())
                self.assertEqual(outs[1:], outs[:1] * 2, size)

    def test_streamed_symmetric_mtx_mirrors_and_swaps_axes(self):
        # A symmetric coordinate file streams its stored triangle and the mirrored entries.
        rng = np.random.default_rng(6)
        lower = {(int(i), int(j)) for i, j in rng.integers(0, 300, (2000, 2)) if i >= j}
        lines = ["%%MatrixMarket matrix coordinate real symmetric", "300 300 %d" % len(lower)]
        lines += ["%d %d 1.5" % (i + 1, j + 1) for i, j in sorted(lower)]
        src = self.path("sym.mtx")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        full = sorted(lower | {(j, i) for i, j in lower})
        self.check_png(src, full, (300, 300), n=100, args=("--size", "100"))
        r = run("spy", "--timings", "-o", self.path("t.png"), src)
        self.assertIn("streamed", r.stderr)
        # --axes 1,0 transposes the picture.
        pixels, _ = self.spy_png(src, "--axes", "1,0", "--size", "100")
        np.testing.assert_array_equal(
            pixels, shade(expected_counts(np.array(full)[:, ::-1], (300, 300), n=100)[0]))

    def test_streamed_scipy_npz_of_every_format(self):
        # coo, csr and csc .npz stream their index members block by block (more entries than a
        # block, compressed and not); the pictures equal the expected counts, repeats included.
        import scipy.sparse as sp
        rng = np.random.default_rng(8)
        shape = (700, 300)
        n = 150000
        rows, cols = rng.integers(0, shape[0], n), rng.integers(0, shape[1], n)
        rows[:40] = 0  # the first row long, many rows empty
        rows[rows % 7 == 3] = 5
        coords = np.stack([rows, cols], axis=1)
        coo = sp.coo_matrix((np.ones(n), (rows, cols)), shape=shape)
        for fmt, m in [("coo", coo), ("csr", coo.tocsr()), ("csc", coo.tocsc())]:
            for compressed in [False, True]:
                src = self.path("m_%s_%d.npz" % (fmt, compressed))
                sp.save_npz(src, m, compressed=compressed)
                r = run("spy", "--timings", "-o", self.path("x.png"), src)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("streamed", r.stderr, src)
                stored = coords if fmt == "coo" else np.stack([m.tocoo().row, m.tocoo().col], axis=1)
                self.check_png(src, stored.tolist(), shape, n=100, args=("--size", "100"))
        # --axes 1,0 transposes a streamed csr; an n-D coo array (SciPy's coords member [rank,
        # nnz]) streams on any two axes, compressed or not.
        csr = coo.tocsr().tocoo()
        self.check_png(self.path("m_csr_1.npz"), np.stack([csr.row, csr.col], axis=1).tolist(),
                       shape, axes=(1, 0), n=100, args=("--size", "100", "--axes", "1,0"))
        shape3 = (30, 400, 900)
        c3 = np.stack([rng.integers(0, d, 70000) for d in shape3])  # more than one block
        for save in [np.savez, np.savez_compressed]:
            src3 = self.path("nd_%s.npz" % save.__name__)
            save(src3, format=np.array(b"coo"), shape=np.array(shape3), data=np.ones(70000),
                 coords=c3)
            r = run("spy", "--timings", "-o", self.path("n.png"), "--axes", "2,0", src3)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("streamed", r.stderr)
            self.check_png(src3, c3.T.tolist(), shape3, axes=(2, 0), n=64,
                           args=("--size", "64", "--axes", "2,0"))
        # A csr whose indptr lies about the indices: an error naming the file, exit 1.
        bad = self.path("bad.npz")
        m = coo.tocsr()
        np.savez(bad, format=np.array(b"csr"), shape=np.array(shape), data=m.data,
                 indices=m.indices, indptr=np.concatenate([m.indptr[:-1], [m.indptr[-1] + 5]]))
        r = run("spy", "-o", self.path("y.png"), bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("indptr", r.stderr)

    def test_streamed_libsvm(self):
        # A .svm streams in two passes (index base and shape first); several chunks of lines,
        # comment lines that are no sample, 1-based indices (auto) and 0-based ones.
        rng = np.random.default_rng(9)
        for zero in [False, True]:
            coords, lines = [], ["# a comment line"]
            for r in range(30000):
                cols = sorted(set(rng.integers(0, 500, int(rng.integers(0, 12))).tolist()))
                if zero and r == 7:
                    cols = sorted(set(cols) | {0})  # a 0 index: 0-based under auto
                coords += [(r, c) for c in cols]
                base = 0 if zero else 1
                lines.append(" ".join(["%d" % (r % 3)] + ["%d:0.5" % (c + base) for c in cols]) +
                             (" # tail" if r % 5 == 0 else ""))
            src = self.path("m%d.svm" % zero)
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            self.assertGreater(os.path.getsize(src), 1 << 20)
            shape = (30000, max(c for _, c in coords) + 1)
            r = run("spy", "--timings", "-o", self.path("s.png"), src)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("streamed", r.stderr)
            self.check_png(src, coords, shape, n=100, args=("--size", "100"))
        self.expect_refused("qid.svm", "1 qid:3 1:1\n0 2:1\n", "qid")

    def test_streamed_tns_with_and_without_a_shape_comment(self):
        # Without "# shape:" the .tns is parsed twice (the largest index on each axis first);
        # several chunks of lines; any two axes of a 4-D tensor.
        rng = np.random.default_rng(12)
        shape = (50, 40, 30, 2000)
        coords = [tuple(int(rng.integers(0, d)) for d in shape) for _ in range(80000)]
        coords.append(tuple(d - 1 for d in shape))  # the largest index on every axis
        with_comment = write_tns(self.path("c.tns"), shape, coords)
        bare = self.path("b.tns")
        with open(bare, "w") as f:
            f.writelines(" ".join(str(i + 1) for i in c) + " 2\n" for c in coords)
        self.assertGreater(os.path.getsize(bare), 1 << 20)
        for src in [with_comment, bare]:
            r = run("spy", "--timings", "-o", self.path("x.png"), "--axes", "3,1", src)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("streamed", r.stderr)
            self.check_png(src, coords, shape, axes=(3, 1), n=64,
                           args=("--size", "64", "--axes", "3,1"))
        self.expect_refused("zero.tns", "1 1 2\n0 3 1\n", "1-based")

    def test_the_readme_picture_is_current(self):
        # tools/README.md shows `tensorkit spy examples/data/rmat_graph.mtx --size 256 -o
        # tools/spy_rmat_graph.png`; pixels, not bytes, since zlib versions may differ.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        src = os.path.join(root, "examples", "data", "rmat_graph.mtx")
        committed, _ = read_png(os.path.join(root, "tools", "spy_rmat_graph.png"))
        pixels, text = self.spy_png(src, "--size", "256")
        np.testing.assert_array_equal(pixels, committed)
        self.assertEqual(text["tensorkit:cell"], "2 x 2")

    def test_terminal_or_output_file(self):
        e = write_mtx(self.path("eye.mtx"), (4, 4), [(i, i) for i in range(4)])
        r = run("spy", e)
        self.assertEqual(r.returncode, 2)
        self.assertIn("spy: standard output is not a terminal; pass -o OUT.png", r.stderr)
        self.assertIn("--text", r.stderr)
        # On a terminal the picture is printed without asking.
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(TOOL, [TOOL, "spy", e])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        lines = out.decode().splitlines()
        self.assertEqual(lines[1:3], ["\u2502\u2588\u2588  \u2502", "\u2502  \u2588\u2588\u2502"])
        # -o with --text does both.
        r = run("spy", "--text", "-o", self.path("both.png"), e)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("\u250c"))
        self.assertEqual(read_png(self.path("both.png"))[0].shape, (4, 4))

    def test_errors(self):
        m = write_mtx(self.path("m.mtx"), (3, 3), [(0, 0)])
        np.save(self.path("d.npy"), np.eye(3))
        with open(self.path("line.tns"), "w") as f:
            f.write("# shape: 10\n3 1.0\n")
        with open(self.path("junk.mtx"), "w") as f:
            f.write("hello\n")
        out = self.path("o.png")
        cases = [
            (["-o", out, self.path("d.npy")], 1, "spy: '%s' holds a dense array of dims [3 3]"
             % self.path("d.npy")),
            (["-o", out, self.path("line.tns")], 1, "holds a rank-1 sparse tensor of shape [10]"),
            (["-o", out, "--size", "0", m], 2, "--size must be a whole number of pixels from 1 to 8192, got '0'"),
            (["-o", out, "--size", "8193", m], 2, "got '8193'"),
            (["-o", out, "--size", "12x", m], 2, "got '12x'"),
            (["-o", out, "--axes", "0", m], 2, "--axes needs two axes I,J"),
            (["-o", out, "--axes", "0,1,2", m], 2, "got '0,1,2'"),
            (["-o", out, "--axes", "0,2", m], 1, "axis 2 is out of range for the rank-2 tensor of shape [3 3]"),
            (["-o", out, "--axes", "-3,0", m], 1, "axis -3 is out of range"),
            (["-o", out, "--axes", "1,-1", m], 1, "names axis 1 twice"),
            (["-o", self.path("o.jpg"), m], 2, "-o names the PNG to write, got"),
            (["-o", out, self.path("missing.mtx")], 1, "cannot open"),
            (["-o", out, self.path("junk.mtx")], 1, "junk.mtx' line 1"),
            (["-o", self.path("no/such/dir.png"), m], 1, "dir.png"),
        ]
        for args, code, needle in cases:
            r = run("spy", *args)
            self.assertEqual(r.returncode, code, (args, r.stderr))
            self.assertIn(needle, r.stderr, args)
            self.assertTrue(r.stderr.startswith("tensorkit: "), r.stderr)
            self.assertFalse(os.path.exists(out), args)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tool":
        TOOL = os.path.abspath(args[1])
        args = args[2:]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=1)
