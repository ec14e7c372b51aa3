"""Shared helpers for bench/peers: time peers, run tensorkit's Google Benchmark programs, and
print one table of medians with ratios (peer time / tensorkit time: > 1 means tensorkit is
faster). Run with Debian's /usr/bin/python3 (python3-numpy, python3-scipy, python3-torch)."""
import json
import os
import statistics
import subprocess
import time

REPEAT = int(os.environ.get("PEERS_REPEAT", "5"))

# The bin/ folder of the tensorkit build the tables measure (set by run_tensorkit); the machine
# header of print_table asks its bench_gemm which GEMM kernels tensorkit chose.
_tensorkit_bin = None
_machine_printed = False

# The ISA extensions whose presence changes which kernels the libraries pick.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
             "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


def _cpuinfo():
    """{field: value} of the first processor in /proc/cpuinfo."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                info[key.strip()] = value.strip()
    except OSError:
        pass
    return info


def _tensorkit_gemm_kernels():
    """BackendName() of the build: the label of one small bench_gemm run."""
    if not _tensorkit_bin:
        return "unknown (no tensorkit benchmark ran yet)"
    cmd = [os.path.join(_tensorkit_bin, "bench_gemm"), "--benchmark_filter=^Gemm/float32/256/",
           "--benchmark_min_time=0.01", "--benchmark_format=json"]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return json.loads(out)["benchmarks"][0].get("label", "?")
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError, IndexError):
        return "unknown (bench_gemm did not run)"


def _python_peer_kernels():
    """One line per Python peer: version and the kernels it uses on this CPU."""
    lines = []
    try:
        import numpy as np
        line = f"NumPy {np.__version__}"
        try:
            from threadpoolctl import threadpool_info
            for lib in threadpool_info():
                if lib.get("user_api") == "blas":
                    line += (f"; BLAS {lib.get('internal_api')} {lib.get('version')}"
                             f" kernels {lib.get('architecture', '?')}")
        except ImportError:
            line += "; BLAS kernels unknown (threadpoolctl missing)"
        core = os.environ.get("OPENBLAS_CORETYPE")
        if core:
            line += f"; OPENBLAS_CORETYPE={core} in the environment"
        lines.append(line)
    except ImportError:
        pass
    try:
        import scipy
        lines.append(f"SciPy {scipy.__version__}")
    except ImportError:
        pass
    try:
        import torch
        cap = None
        if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability"):
            cap = torch.backends.cpu.get_cpu_capability()
        else:
            for cfg in torch.__config__.show().splitlines():
                if "CPU capability usage" in cfg:
                    cap = cfg.split(":", 1)[1].strip()
        lines.append(f"PyTorch {torch.__version__}; CPU capability {cap or '?'}")
    except ImportError:
        pass
    return lines


def describe_machine():
    """Lines saying where a table was measured: the CPU, its ISA extensions, and the kernel set
    each library chose on it."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    isa = [f for f in ISA_FLAGS if f in flags]
    lines = [f"CPU: {info.get('vendor_id', '?')} {info.get('model name', '?')} (family "
             f"{info.get('cpu family', '?')}, model {info.get('model', '?')}), "
             f"{os.cpu_count()} logical CPUs",
             f"ISA: {' '.join(isa) if isa else 'none of ' + ' '.join(ISA_FLAGS)}",
             f"tensorkit GEMM: {_tensorkit_gemm_kernels()}"]
    lines += _python_peer_kernels()
    return lines


def median_time(fn, repeat=REPEAT, warmup=1, setup=None):
    """Median wall time of fn() in seconds over `repeat` runs after `warmup` runs. `setup`, when
    given, runs before each call and is not timed (e.g. to hand fn a fresh unsorted copy)."""
    times = []
    for i in range(warmup + repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        fn(arg) if setup else fn()
        t1 = time.perf_counter()
        if i >= warmup:
            times.append(t1 - t0)
    return statistics.median(times)


def median_times_interleaved(fns, repeat=REPEAT, warmup=1):
    """{name: median wall time in seconds} of each fn of the dict `fns`, run in turn (a, b, a, b,
    ...) rather than one after the other, so that a burst of load on a shared machine falls on
    both sides of a comparison of short calls."""
    times = {name: [] for name in fns}
    for i in range(warmup + repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            if i >= warmup:
                times[name].append(t1 - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def run_tensorkit(binary, bench_filter, threads=2, repeat=REPEAT, extra_env=None):
    """Runs a Google Benchmark program and returns {benchmark name: median real time in s}."""
    global _tensorkit_bin
    _tensorkit_bin = _tensorkit_bin or os.path.dirname(os.path.abspath(binary))
    env = dict(os.environ)
    env["TENSORKIT_NUM_THREADS"] = str(threads)
    if extra_env:
        env.update(extra_env)
    cmd = [binary, f"--benchmark_filter={bench_filter}", f"--benchmark_repetitions={repeat}",
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    result = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            result[b["run_name"]] = b["real_time"] * scale[b["time_unit"]]
    return result


def set_threads(n):
    """Thread count for the Python peers (call before importing numpy/torch for BLAS)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        import torch
        torch.set_num_threads(n)
    except ImportError:
        pass


def print_table(title, rows):
    """rows: list of (operation, {implementation: seconds}); 'tensorkit' must be a key. Prints
    medians in ms and, per peer, peer/tensorkit (speedup of tensorkit)."""
    global _machine_printed
    if not _machine_printed:
        _machine_printed = True
        print("\n## Machine\n" + "\n".join("- " + line for line in describe_machine()))
    peers = []
    for _, times in rows:
        for k in times:
            if k != "tensorkit" and k not in peers:
                peers.append(k)
    print(f"\n## {title}")
    head = f"| {'operation':44s} | {'tensorkit ms':>12s} |"
    for p in peers:
        head += f" {p + ' ms':>14s} | {'x vs ' + p:>12s} |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for op, times in rows:
        tk = times.get("tensorkit")
        line = f"| {op:44s} | {tk * 1e3 if tk else float('nan'):12.2f} |"
        for p in peers:
            t = times.get(p)
            if t is None:
                line += f" {'-':>14s} | {'-':>12s} |"
            else:
                ratio = t / tk if tk else float("nan")
                line += f" {t * 1e3:14.2f} | {ratio:11.2f}x |"
        print(line, flush=True)
