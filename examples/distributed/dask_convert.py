#!/usr/bin/env python3
"""Converts a batch of tensor files on a dask.distributed cluster, one task per shard.

Each task runs `tensorkit convert --shard K/N --resume --manifest ...` on a worker: the tool does
the work, Dask places the shards, retries the ones that fail (a rerun resumes from the shard's
manifest, so completed inputs are not redone) and this driver merges the manifests. Inputs,
outputs and manifests must be on storage that every worker sees under the same paths; relative
paths are taken from the folder the driver runs in.

  python3 dask_convert.py --to npz -o OUT --inputs-from LIST        # a LocalCluster here
  python3 dask_convert.py --scheduler tcp://host:8786 --shards 512 --to npz -o OUT --inputs-from LIST

Writes OUT/<stem>.EXT, OUT/manifests/shard-K-of-N.jsonl (and .log: the tool's output) and their
merge OUT/manifests/merged.jsonl, then prints `tensorkit manifest summary` of the merge.
Rerunning the same command after a crash finishes the work. Exit code 0 when every shard and
every input succeeded, 1 otherwise, 2 for a usage error.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import uuid


def run_shard(cmd, cwd, log, shard):
    """Runs one shard; raises when it fails so that Dask retries it (the retry resumes)."""
    t0 = time.time()
    with open(log, "a") as err:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=err, text=True)
    lines = p.stdout.strip().splitlines()
    result = {"shard": shard, "rc": p.returncode, "seconds": time.time() - t0,
              "summary": lines[-1] if lines else "", "log": log}
    if p.returncode == 2:  # a usage error: the same command would fail again
        return result
    if p.returncode != 0:
        with open(log) as f:
            tail = "".join(f.readlines()[-5:])
        raise RuntimeError(f"shard {shard} exited with {p.returncode}; the end of {log}:\n{tail}")
    return result


def default_tool():
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "bin", "tensorkit")
    return shutil.which("tensorkit") or os.path.normpath(built)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="*", help="input files (or use --inputs-from)")
    ap.add_argument("--inputs-from", help="a file with one input path a line")
    ap.add_argument("--to", required=True, help="output format: npy, npz, mtx or tns")
    ap.add_argument("-o", "--output-dir", required=True, help="output folder")
    ap.add_argument("--tool", default=default_tool(), help="the tensorkit binary (on every worker)")
    ap.add_argument("--scheduler", help="address of a running scheduler (default: a LocalCluster)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(),
                    help="LocalCluster workers (default: one per core)")
    ap.add_argument("--shards", type=int, help="number of shards (default: 2 per worker thread)")
    ap.add_argument("--threads", type=int,
                    help="the tool's threads per shard (default: cores / workers for a "
                         "LocalCluster, the tool's default otherwise)")
    ap.add_argument("--retries", type=int, default=2, help="reruns of a failed shard (default 2)")
    ap.add_argument("--manifest-dir", help="where shard manifests go (default: OUT/manifests)")
    ap.add_argument("--tool-args", default="",
                    help="more convert options, e.g. '--coalesce --compress'")
    a = ap.parse_args(argv)
    if not a.inputs and not a.inputs_from:
        ap.error("give input files or --inputs-from FILE")
    if a.workers < 1 or (a.shards is not None and a.shards < 1) or a.retries < 0:
        ap.error("--workers and --shards must be >= 1, --retries >= 0")
    return a


def main(argv):
    a = parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        print(f"dask_convert: needs dask and distributed ({e}); pip install dask distributed",
              file=sys.stderr)
        return 2
    tool = os.path.abspath(a.tool)
    out = os.path.abspath(a.output_dir)
    mdir = os.path.abspath(a.manifest_dir or os.path.join(out, "manifests"))
    os.makedirs(mdir, exist_ok=True)
    if a.inputs_from and a.inputs_from != "-" and not a.inputs:
        listfile = os.path.abspath(a.inputs_from)
    else:  # the workers need the list as a file on shared storage
        paths = list(a.inputs)
        if a.inputs_from:
            with (sys.stdin if a.inputs_from == "-" else open(a.inputs_from)) as f:
                paths += [line.rstrip("\r\n") for line in f if line.strip()]
        listfile = os.path.join(mdir, "inputs.txt")
        with open(listfile + ".tmp", "w") as f:
            f.write("".join(p + "\n" for p in paths))
        os.replace(listfile + ".tmp", listfile)

    if a.scheduler:
        client = Client(a.scheduler)
        threads = a.threads
    else:
        cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        threads = a.threads or max(1, (os.cpu_count() or 1) // a.workers)
    with client:
        n = a.shards or max(1, 2 * sum(client.nthreads().values()))
        run_id = uuid.uuid4().hex[:8]
        futures = []
        for k in range(n):
            cmd = [tool] + (["--threads", str(threads)] if threads else [])
            cmd += ["convert", "--to", a.to, "-o", out, "--inputs-from", listfile,
                    "--shard", f"{k}/{n}", "--resume",
                    "--manifest", os.path.join(mdir, f"shard-{k}-of-{n}.jsonl")]
            cmd += a.tool_args.split()
            log = os.path.join(mdir, f"shard-{k}-of-{n}.log")
            futures.append(client.submit(run_shard, cmd, os.getcwd(), log, f"{k}/{n}",
                                         key=f"tensorkit-convert-{k}-of-{n}-{run_id}",
                                         retries=a.retries, pure=False))
        print(f"dask_convert: {n} shards on {client.scheduler.address} "
              f"({len(client.nthreads())} workers)", flush=True)
        ok = True
        for f in as_completed(futures):
            try:
                r = f.result()
            except Exception as e:  # retries used up
                ok = False
                print(f"FAILED {e}", flush=True)
                continue
            ok = ok and r["rc"] == 0
            print(f"shard {r['shard']}: {'ok' if r['rc'] == 0 else 'exit %d' % r['rc']} in "
                  f"{r['seconds']:.1f} s: {r['summary']}", flush=True)
            if r["rc"] != 0:
                with open(r["log"]) as log:
                    print("".join(log.readlines()[-3:]), end="", flush=True)

    manifests = [os.path.join(mdir, f"shard-{k}-of-{n}.jsonl") for k in range(n)]
    manifests = [m for m in manifests if os.path.exists(m)]
    if not manifests:
        return 1
    merged = os.path.join(mdir, "merged.jsonl")
    with open(merged + ".tmp", "wb") as dst:
        for m in manifests:
            last = b"\n"
            with open(m, "rb") as src:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
                    last = chunk[-1:]
            if last != b"\n":  # a line cut short must not swallow the next file's first
                dst.write(b"\n")
    os.replace(merged + ".tmp", merged)
    summary = subprocess.run([tool, "manifest", "summary", merged])
    return 0 if ok and summary.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
