#!/usr/bin/python3
"""Batch conversion beyond one process: shards, --inputs-from, manifests and --resume, refused
plans, the Slurm script, and (with --dask-python) the Dask driver on a real LocalCluster.

Usage: batch_test.py --tool build/bin/tensorkit [unittest args]
       batch_test.py --tool build/bin/tensorkit --dask-python .venvs/dask/bin/python
The second form exits 77 (ctest: skipped) with the reason when dask cannot be imported.
"""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import unittest

TOOL = None
DASK_PYTHON = None
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCHEDULER_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                  "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_STEP", "SLURM_JOB_ID",
                  "JOB_COMPLETION_INDEX")


def clean_env(extra=None):
    e = {k: v for k, v in os.environ.items()
         if k not in SCHEDULER_VARS and not k.startswith("TENSORKIT_")}
    e.update(extra or {})
    return e


def run(*args, env=None, stdin=None, cwd=None):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, env=clean_env(env),
                          input=stdin, cwd=cwd, errors="surrogateescape")


def shard_of(path, count):
    """The documented partition: SplitMix64's finalizer of FNV-1a-64 of the path's bytes."""
    m = (1 << 64) - 1
    h = 14695981039346656037
    for c in os.fsencode(path):
        h = ((h ^ c) * 1099511628211) & m
    h ^= h >> 30
    h = (h * 0xbf58476d1ce4e5b9) & m
    h ^= h >> 27
    h = (h * 0x94d049bb133111eb) & m
    h ^= h >> 31
    return h % count


def mtx(k):
    """A small Matrix Market file whose content depends on k."""
    rows, cols = 3 + k % 5, 2 + k % 7
    entries = [(1 + (k * 7 + j) % rows, 1 + (k + j * 3) % cols, k + j * 0.25) for j in range(4)]
    entries = sorted(set((r, c) for r, c, _ in entries))
    body = "".join(f"{r} {c} {k + 0.5 * i}\n" for i, (r, c) in enumerate(entries))
    return (f"%%MatrixMarket matrix coordinate real general\n{rows} {cols} {len(entries)}\n"
            + body)


def read_manifest(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f.read().decode("utf-8").splitlines() if line]


class Batch(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tk_batch_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def inputs(self, n, sub="in"):
        """n inputs in a few folders and two formats, and a list file of them."""
        paths = []
        for k in range(n):
            folder = self.path(sub, f"d{k % 3}")
            os.makedirs(folder, exist_ok=True)
            if k % 4 == 3:  # FROSTT
                p = os.path.join(folder, f"t{k:03d}.tns")
                text = f"1 1 {k + 1} 2.5\n2 {k % 3 + 1} 1 -1\n"
            else:
                p = os.path.join(folder, f"m{k:03d}.mtx")
                text = mtx(k)
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        return paths

    def write_list(self, name, paths):
        with open(self.path(name), "w") as f:
            f.write("".join(p + "\n" for p in paths))
        return self.path(name)

    def tree(self, folder):
        """{name: bytes} of the visible files of a folder."""
        out = {}
        for name in os.listdir(folder):
            p = os.path.join(folder, name)
            if not name.startswith(".") and os.path.isfile(p):
                with open(p, "rb") as f:
                    out[name] = f.read()
        return out

    def single_batch(self, listfile, ext="npz"):
        ref = self.path("single")
        r = run("convert", "--to", ext, "-o", ref, "--inputs-from", listfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.tree(ref)


class ShardTest(Batch):
    def test_shards_equal_the_single_batch_byte_for_byte(self):
        paths = self.inputs(60)
        listfile = self.write_list("list.txt", paths)
        ref = self.single_batch(listfile)
        self.assertEqual(len(ref), 60)
        out = self.path("sharded")
        seen = []
        for k in range(3):
            m = self.path(f"m{k}.jsonl")
            r = run("--threads", "1", "convert", "--to", "npz", "-o", out, "--inputs-from",
                    listfile, "--shard", f"{k}/3", "--manifest", m)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"(shard {k}/3 of 60 inputs)", r.stdout)
            records = read_manifest(m)
            self.assertGreater(len(records), 0)
            for rec in records:
                self.assertEqual((rec["status"], rec["shard"], rec["error"]),
                                 ("converted", f"{k}/3", None))
                self.assertEqual(shard_of(rec["input"], 3), k)
                self.assertEqual(rec["bytes_read"], os.path.getsize(rec["input"]))
                self.assertEqual(rec["bytes_written"], os.path.getsize(rec["output"]))
            seen += [rec["input"] for rec in records]
        self.assertEqual(sorted(seen), sorted(paths))  # every input once, none twice
        self.assertEqual(self.tree(out), ref)
        # A shard's share depends on the paths only, not on the order of the list.
        rev = self.write_list("reversed.txt", paths[::-1])
        r = run("convert", "--to", "npz", "-o", self.path("rev"), "--inputs-from", rev,
                "--shard", "1/3", "--manifest", self.path("rev.jsonl"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(x["input"] for x in read_manifest(self.path("rev.jsonl"))),
                         sorted(x["input"] for x in read_manifest(self.path("m1.jsonl"))))
        r = run("manifest", "summary", *[self.path(f"m{k}.jsonl") for k in range(3)])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("3 manifest(s), 60 record(s) of 60 input(s)", r.stdout)
        self.assertIn("converted 60, failed 0", r.stdout)

    def test_inputs_from_stdin_with_100000_paths(self):
        n, shards, k = 100_000, 100, 7
        src = self.path("one.mtx")
        with open(src, "w") as f:
            f.write(mtx(1))
        # Relative paths (the tool runs in self.dir) keep the Python hash quick.
        names = [f"in/{i // 1000:03d}/f{i:06d}.mtx" for i in range(n)]
        shard = [shard_of(p, shards) for p in names]
        mine = [p for p, s in zip(names, shard) if s == k]
        per_shard = [shard.count(s) for s in range(shards)]
        self.assertLess(max(per_shard) - min(per_shard), n // shards // 2)  # balanced
        for p in mine:  # only this shard's inputs need to exist
            os.makedirs(self.path(os.path.dirname(p)), exist_ok=True)
            os.symlink(src, self.path(p))
        m = self.path("m.jsonl")
        out = self.path("out")
        r = run("convert", "--to", "npz", "-o", out, "--inputs-from", "-", "--shard",
                f"{k}/{shards}", "--manifest", m, stdin="".join(p + "\n" for p in names),
                cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn(f"converted {len(mine)}, skipped 0, failed 0 of {len(mine)} file(s) "
                      f"(shard {k}/{shards} of {n} inputs)", r.stdout)
        self.assertEqual(sorted(x["input"] for x in read_manifest(m)), sorted(mine))
        self.assertEqual(len(os.listdir(out)), len(mine))
        # A clash on the very last line is found before anything is converted.
        clash = names + [names[0].replace(".mtx", ".tns")]
        r = run("convert", "--to", "npz", "-o", self.path("out2"), "--inputs-from", "-",
                "--shard", f"{k}/{shards}", stdin="".join(p + "\n" for p in clash), cwd=self.dir)
        self.assertEqual(r.returncode, 2, r.stderr[-2000:])
        self.assertIn("f000000.npz: written by both", r.stderr)
        self.assertFalse(os.path.exists(self.path("out2")))

    def test_colliding_outputs_are_refused_before_any_work(self):
        paths = self.inputs(8)
        a = self.path("in", "x", "m001.tns")  # m001.mtx and this both become m001.npz
        os.makedirs(os.path.dirname(a))
        with open(a, "w") as f:
            f.write("1 1 1 1.0\n")
        listfile = self.write_list("list.txt", paths + [a, paths[5]])  # and paths[5] twice
        out, m = self.path("out"), self.path("m.jsonl")
        for k in range(2):  # every shard refuses, whichever shard holds the clashing inputs
            r = run("convert", "--to", "npz", "-o", out, "--inputs-from", listfile,
                    "--shard", f"{k}/2", "--manifest", m)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("refusing the batch before converting anything: 2 output(s)", r.stderr)
            self.assertIn(f"m001.npz: written by both {paths[1]} and {a}", r.stderr)
            self.assertIn(f"listed twice: entries 6 and 10", r.stderr)
            self.assertFalse(os.path.exists(out))
            self.assertFalse(os.path.exists(m))
        # Without the clashes the same batch runs.
        r = run("convert", "--to", "npz", "-o", out, "--inputs-from",
                self.write_list("ok.txt", paths))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_killed_shard_resumes_without_redoing_completed_inputs(self):
        paths = self.inputs(40)
        listfile = self.write_list("list.txt", paths)
        ref = self.single_batch(listfile)
        out, m = self.path("out"), self.path("m.jsonl")
        args = ["--threads", "2", "convert", "--to", "npz", "-o", out, "--inputs-from", listfile,
                "--shard", "0/1", "--resume", "--manifest", m]
        # The stop hook freezes the shard after its 15th record; then it is killed, as a node
        # that dies: no chance to clean up.
        p = subprocess.Popen([TOOL, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=clean_env({"TENSORKIT_BATCH_STOP_AFTER": "15"}))
        _, status = os.waitpid(p.pid, os.WUNTRACED)
        self.assertTrue(os.WIFSTOPPED(status), status)
        os.kill(p.pid, signal.SIGKILL)
        _, status = os.waitpid(p.pid, 0)
        p.returncode = -9
        self.assertTrue(os.WIFSIGNALED(status))
        done = read_manifest(m)
        self.assertGreaterEqual(len(done), 15)
        self.assertLess(len(done), 40)
        before = {rec["output"]: os.stat(rec["output"]) for rec in done}
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"converted {40 - len(done)}, skipped {len(done)}, failed 0", r.stdout)
        records = read_manifest(m)
        self.assertEqual(sorted(x["input"] for x in records), sorted(paths))  # none twice
        for output, st in before.items():  # not rewritten: same inode, same time
            now = os.stat(output)
            self.assertEqual((now.st_ino, now.st_mtime_ns), (st.st_ino, st.st_mtime_ns))
        self.assertEqual(self.tree(out), ref)

    def test_resume_trusts_the_manifest_not_only_existing_outputs(self):
        paths = self.inputs(4)
        out, m = self.path("out"), self.path("m.jsonl")
        r = run("convert", "--to", "npz", "-o", out, "--manifest", m, *paths[:3])
        self.assertEqual(r.returncode, 0, r.stderr)
        outs = [rec["output"] for rec in read_manifest(m)]
        os.remove(outs[0])  # recorded, but gone
        with open(outs[1], "ab") as f:
            f.write(b"x")  # recorded, but not the file written
        stale = os.path.join(out, os.path.basename(paths[3]).rsplit(".", 1)[0] + ".npz")
        with open(stale, "w") as f:
            f.write("from some other run")  # exists, but no record
        r = run("convert", "--to", "npz", "-o", out, "--manifest", m, "--resume", *paths)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("converted 3, skipped 1, failed 0", r.stdout)
        ref = self.single_batch(self.write_list("list.txt", paths))
        self.assertEqual(self.tree(out), ref)
        # Without a manifest, --resume goes by the outputs' existence.
        with open(outs[2], "ab") as f:
            f.write(b"x")
        r = run("convert", "--to", "npz", "-o", out, "--resume", *paths)
        self.assertIn("converted 0, skipped 4", r.stdout)

    def test_manifest_summary_merges_and_the_latest_record_wins(self):
        paths = self.inputs(6)
        bad = self.path("in", "bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
        listfile = self.write_list("list.txt", paths + [bad])
        out = self.path("out")
        ms = [self.path(f"m{k}.jsonl") for k in range(2)]
        codes = [run("convert", "--to", "npz", "-o", out, "--inputs-from", listfile, "--shard",
                     f"{k}/2", "--manifest", ms[k]).returncode for k in range(2)]
        self.assertEqual(sorted(codes), [0, 1])
        r = run("manifest", "summary", *ms)
        self.assertEqual(r.returncode, 1)
        self.assertIn("inputs: converted 6, failed 1", r.stdout)
        self.assertIn(f"  {bad}: ", r.stdout)
        self.assertIn("line 3", r.stdout)  # the reason, as the reader gave it
        j = json.loads(run("manifest", "summary", "--json", *ms).stdout)
        self.assertEqual((j["inputs"], j["converted"], j["failed"], j["records"]), (7, 6, 1, 7))
        self.assertEqual(j["failures"][0]["input"], bad)
        self.assertEqual(j["bytes_read"], sum(os.path.getsize(p) for p in paths + [bad]))
        self.assertEqual(j["bytes_written"], sum(len(v) for v in self.tree(out).values()))
        self.assertGreater(j["busy_seconds"], 0)
        self.assertLessEqual(j["busy_seconds"], j["span_seconds"] + 1e-6)
        # Fix the file and resume its shard: only it is converted, and the summary is clean.
        with open(bad, "w") as f:
            f.write(mtx(3))
        k = shard_of(bad, 2)
        r = run("convert", "--to", "npz", "-o", out, "--inputs-from", listfile, "--shard",
                f"{k}/2", "--manifest", ms[k], "--resume")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("converted 1,", r.stdout)
        # A line cut short (a writer that died) is skipped, and does not swallow the next one.
        with open(ms[0], "a") as f:
            f.write('{"input": "/half')
        r = run("convert", "--to", "npz", "-o", out, "--manifest", ms[0], "--resume",
                self.extra_input())
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("manifest", "summary", "--json", *ms)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("line", r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual((j["inputs"], j["converted"], j["failed"]), (8, 8, 0))
        self.assertEqual((j["records"], j["skipped_lines"]), (9, 1))
        r = run("manifest", "summary", self.path("missing.jsonl"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing.jsonl", r.stderr)
        self.assertEqual(run("manifest").returncode, 2)

    def test_summary_skips_lines_that_are_not_records(self):
        lines = [
            b'{"input": "a.mtx", "output": "o/a.npz", "status": "converted", "bytes_read": 10, '
            b'"bytes_written": 20, "start": 100.5, "seconds": 2, "error": null}',
            b'{"input": "b", "output": "c", "status": "converted", "bytes_read": 1e300}',
            b'{"input": ["nested"], "output": "c", "status": "failed"}',
            b'{"input": "x\\ud800", "output": "c", "status": "failed"}',
            b'{"input": "y", "output": "c", "status": 3}',
            b'{"output": "c", "status": "failed"}',
            b'\xff\xfe{ garbage',
            b'',
            b'{"input": "d.tns", "output": "o/d.npz", "status": "failed", "error": "boom", '
            b'"start": 101, "seconds": 0.5, "bytes_read": 5} ',
            b'{"input": "a.mtx", "output": "o/a.npz", "status": "failed", "start": 99}',
            b'{"input": "e.tns", "output": "o/e.npz", "status": "converted", "start": 104',
        ]
        m = self.path("m.jsonl")
        with open(m, "wb") as f:
            f.write(b"\n".join(lines))
        r = run("manifest", "summary", "--json", m)
        self.assertEqual(r.returncode, 1, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual((j["records"], j["skipped_lines"], j["inputs"]), (3, 7, 2))
        self.assertEqual((j["converted"], j["failed"]), (1, 1))  # a.mtx: the later start wins
        self.assertEqual(j["failures"], [{"input": "d.tns", "error": "boom"}])
        self.assertEqual((j["bytes_read"], j["bytes_written"]), (15, 20))
        self.assertAlmostEqual(j["span_seconds"], 3.5)
        self.assertAlmostEqual(j["busy_seconds"], 2.0)  # [99, 99] is empty; [101, 101.5] is in [100.5, 102.5]
        self.assertAlmostEqual(j["summed_seconds"], 2.5)
        self.assertIn("line 2: a record needs", r.stderr)
        self.assertIn("line 7: not a record", r.stderr)

    def extra_input(self):
        p = self.path("extra.mtx")
        with open(p, "w") as f:
            f.write(mtx(9))
        return p

    def test_manifest_keeps_any_path_bytes(self):
        names = [b"caf\xe9 \"q\" \\b.mtx", "naïve\tx.mtx".encode()]  # Latin-1, UTF-8, escapes
        paths = []
        for k, n in enumerate(names):
            p = os.path.join(os.fsencode(self.dir), n)
            with open(p, "w") as f:
                f.write(mtx(k))
            paths.append(os.fsdecode(p))
        out, m = self.path("out"), self.path("m.jsonl")
        r = run("convert", "--to", "npz", "-o", out, "--manifest", m, *paths)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(m, "rb") as f:
            raw = f.read()
        raw.decode("utf-8")  # strictly valid UTF-8
        self.assertEqual(sorted(os.fsencode(x["input"]) for x in read_manifest(m)),
                         sorted(os.fsencode(p) for p in paths))
        r = run("convert", "--to", "npz", "-o", out, "--manifest", m, "--resume", *paths)
        self.assertIn("converted 0, skipped 2", r.stdout)

    def test_shard_auto_reads_the_schedulers(self):
        paths = self.inputs(12)
        listfile = self.write_list("list.txt", paths)

        def shard(env, spec="auto"):
            m = self.path("auto.jsonl")
            if os.path.exists(m):
                os.remove(m)
            r = run("convert", "--to", "npz", "-o", self.path("out"), "--inputs-from", listfile,
                    f"--shard={spec}", "--manifest", m, env=env)
            recs = read_manifest(m) if r.returncode == 0 else []
            return r, {x["shard"] for x in recs}, sorted(x["input"] for x in recs)

        slurm = {"SLURM_JOB_ID": "77", "SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4",
                 "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_COUNT": "3"}
        r, shards, got = shard(slurm)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(shards, {"1/3"} if got else set())
        self.assertEqual(got, sorted(p for p in paths if shard_of(p, 3) == 1))
        self.assertEqual(shard(slurm, "auto/3")[0].returncode, 0)
        r = shard(slurm, "auto/4")[0]
        self.assertEqual(r.returncode, 2)
        self.assertIn("has 3 tasks", r.stderr)
        r = shard(dict(slurm, SLURM_ARRAY_TASK_STEP="2"))[0]
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a contiguous range", r.stderr)
        r = shard(dict(slurm, SLURM_ARRAY_TASK_COUNT="x"))[0]
        self.assertEqual(r.returncode, 2)
        self.assertIn("SLURM_ARRAY_TASK_COUNT='x' is not a whole number", r.stderr)
        r, shards, got = shard({"JOB_COMPLETION_INDEX": "2"}, "auto/3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(got, sorted(p for p in paths if shard_of(p, 3) == 2))
        r = shard({"JOB_COMPLETION_INDEX": "2"})[0]
        self.assertEqual(r.returncode, 2)
        self.assertIn("--shard auto/N", r.stderr)
        self.assertIn("not below", shard({"JOB_COMPLETION_INDEX": "3"}, "auto/3")[0].stderr)
        r = shard({})[0]
        self.assertEqual(r.returncode, 2)
        self.assertIn("neither SLURM_ARRAY_TASK_ID", r.stderr)
        self.assertIn("JOB_COMPLETION_INDEX", r.stderr)
        self.assertIn("not an array", shard({"SLURM_JOB_ID": "9"})[0].stderr)
        shutil.rmtree(self.path("out"))
        for bad in ["3/3", "1/0", "-1/2", "a/b", "1", "1/2/3", "auto/0"]:
            r = shard({}, bad)[0]
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn(f"--shard {bad}", r.stderr)
        self.assertFalse(os.path.exists(self.path("out")))

    def test_input_list_errors(self):
        r = run("convert", "--to", "npz", "-o", self.path("out"), "--inputs-from",
                self.path("nope.txt"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open the input list", r.stderr)
        with open(self.path("nul.txt"), "wb") as f:
            f.write(b"a.mtx\nb\0.mtx\n")
        r = run("convert", "--to", "npz", "-o", self.path("out"), "--inputs-from",
                self.path("nul.txt"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("line 2 holds a NUL byte", r.stderr)
        r = run("convert", "--to", "npz", "-o", self.path("out"), "--inputs-from", "-", stdin="\n\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("at least one input", r.stderr)
        # CRLF lines and blank lines are fine; positional inputs come first.
        paths = self.inputs(3)
        with open(self.path("crlf.txt"), "w", newline="") as f:
            f.write(f"{paths[1]}\r\n\r\n{paths[2]}\r\n")
        r = run("convert", "--to", "npz", "-o", self.path("out"), "--inputs-from",
                self.path("crlf.txt"), paths[0])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("converted 3", r.stdout)
        self.assertFalse(os.path.exists(self.path("m.jsonl")))
        r = run("convert", "--to", "npz", "-o", self.path("out"), "--manifest",
                self.path("no", "such", "m.jsonl"), paths[0])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open the manifest", r.stderr)

    def test_slurm_script_as_a_job_array(self):
        paths = self.inputs(20)
        listfile = self.write_list("list.txt", paths)
        ref = self.single_batch(listfile)
        out = self.path("out")
        script = os.path.join(ROOT, "examples", "distributed", "slurm_convert.sbatch")
        for task in range(10, 13):  # --array=10-12: SLURM_ARRAY_TASK_MIN is 10
            env = clean_env({"TENSORKIT": TOOL, "SLURM_JOB_ID": "1", "SLURM_ARRAY_TASK_ID": str(task),
                             "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_MAX": "12",
                             "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_CPUS_PER_TASK": "1"})
            r = subprocess.run(["bash", script, listfile, out, "npz"], capture_output=True,
                               text=True, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.tree(out), ref)
        manifests = sorted(os.listdir(os.path.join(out, "manifests")))
        self.assertEqual(manifests, [f"shard-{t}-of-3.jsonl" for t in range(10, 13)])
        r = run("manifest", "summary", *[os.path.join(out, "manifests", x) for x in manifests])
        self.assertIn("converted 20, failed 0", r.stdout)


FLAKY = """#!/usr/bin/python3
# The tool as a shard whose node dies once: the first run of each shard is frozen after its
# second record (TENSORKIT_BATCH_STOP_AFTER) and killed; later runs are the tool itself.
import os, signal, subprocess, sys
if "--shard" not in sys.argv:  # not a shard (the driver's summary)
    os.execv({tool!r}, [{tool!r}] + sys.argv[1:])
shard = sys.argv[sys.argv.index("--shard") + 1].replace("/", "-of-")
marker = os.path.join({attempts!r}, shard)
first = not os.path.exists(marker)
with open(marker, "a") as f:
    f.write("attempt\\n")
if not first:
    os.execv({tool!r}, [{tool!r}] + sys.argv[1:])
p = subprocess.Popen([{tool!r}] + sys.argv[1:], env=dict(os.environ, TENSORKIT_BATCH_STOP_AFTER="2"))
_, status = os.waitpid(p.pid, os.WUNTRACED)
if os.WIFSTOPPED(status):
    os.kill(p.pid, signal.SIGKILL)
    os.waitpid(p.pid, 0)
    sys.exit(137)
sys.exit(os.waitstatus_to_exitcode(status))
"""


class DaskDriverTest(Batch):
    def test_dask_driver_on_a_local_cluster_retries_and_merges(self):
        paths = self.inputs(40)
        listfile = self.write_list("list.txt", paths)
        ref = self.single_batch(listfile)
        attempts = self.path("attempts")
        os.mkdir(attempts)
        flaky = self.path("flaky_tool.py")
        with open(flaky, "w") as f:
            f.write(FLAKY.format(attempts=attempts, tool=TOOL))
        os.chmod(flaky, os.stat(flaky).st_mode | stat.S_IXUSR)
        out = self.path("out")
        driver = os.path.join(ROOT, "examples", "distributed", "dask_convert.py")
        r = subprocess.run([DASK_PYTHON, driver, "--tool", flaky, "--to", "npz", "-o", out,
                            "--inputs-from", listfile, "--workers", "2", "--shards", "4",
                            "--retries", "2"],
                           capture_output=True, text=True, env=clean_env(), timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.tree(out), ref)
        merged = read_manifest(os.path.join(out, "manifests", "merged.jsonl"))
        self.assertEqual(sorted(x["input"] for x in merged), sorted(paths))  # none redone
        self.assertTrue(all(x["status"] == "converted" for x in merged))
        for k in range(4):
            size = sum(1 for p in paths if shard_of(p, 4) == k)
            with open(os.path.join(attempts, f"{k}-of-4")) as f:
                tries = len(f.readlines())
            self.assertEqual(tries, 2 if size >= 2 else 1, f"shard {k}/4 of {size} inputs")
        self.assertIn("inputs: converted 40, failed 0", r.stdout)
        # A usage error is not retried and fails the run.
        r = subprocess.run([DASK_PYTHON, driver, "--tool", TOOL, "--to", "xyz", "-o", out,
                            "--inputs-from", listfile, "--workers", "1", "--shards", "2"],
                           capture_output=True, text=True, env=clean_env(), timeout=300)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown output format", r.stdout + r.stderr)


if __name__ == "__main__":
    args = sys.argv[1:]
    while len(args) >= 2 and args[0] in ("--tool", "--dask-python"):
        if args[0] == "--tool":
            TOOL = os.path.abspath(args[1])
        else:
            DASK_PYTHON = args[1]
        args = args[2:]
    if DASK_PYTHON is not None:
        probe = subprocess.run([DASK_PYTHON, "-c", "import dask, distributed"],
                               capture_output=True, text=True) if os.path.exists(DASK_PYTHON) else None
        if probe is None or probe.returncode != 0:
            why = "it does not exist" if probe is None else probe.stderr.strip().splitlines()[-1]
            print(f"SKIPPED: the Dask driver test needs dask and distributed in {DASK_PYTHON} "
                  f"({why}); `make test` creates that venv with pip when PyPI is reachable")
            sys.exit(77)
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(DaskDriverTest)
    else:
        suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(c)
                                   for c in (ShardTest,))
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
