"""Behaviour a Python user counts on: the GIL is released while the library works, repeated
calls do not leak, the shipped stubs match the module."""

import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorkit as tk

ROOT = pathlib.Path(__file__).resolve().parents[2]


def spin(until):
    """How many steps a pure-Python loop makes until until() is true."""
    steps = 0
    while not until():
        steps += 1
    return steps


def test_gil_released_during_library_work():
    """While another thread is inside one long library call, this thread runs at about its
    usual speed. Holding the GIL would let it run only in the moments around the call."""
    rng = np.random.default_rng(0)
    threads = tk.get_num_threads()
    tk.set_num_threads(1)  # the library on one core, the loop below on the other
    try:
        # A call long enough to measure on this CPU: the entries double until one single-thread
        # reorder (warm: its memory faulted in) takes 0.2 s (a fast core sorts 4M entries in 70 ms).
        n = 4_000_000
        while True:
            st = tk.SparseTensor(rng.integers(0, 1 << 20, size=(n, 2)), rng.random(n),
                                 (1 << 20, 1 << 20))
            st.reorder((0, 1))  # the first call also faults in its memory: time the second
            t0 = time.perf_counter()
            st.reorder((1, 0))
            if time.perf_counter() - t0 > 0.2 or n >= 32_000_000:
                break
            n *= 2
    finally:
        tk.set_num_threads(threads)
    idle = threading.Event()
    t0 = time.perf_counter()
    alone = spin(lambda: idle.is_set() or time.perf_counter() - t0 > 0.05) / 0.05  # per second
    started, done = threading.Event(), threading.Event()
    call = {}

    def work():
        started.set()
        t0 = time.perf_counter()
        st.reorder((1, 0))
        call["seconds"] = time.perf_counter() - t0
        done.set()

    threads = tk.get_num_threads()
    tk.set_num_threads(1)  # the library on one core, this loop on the other
    try:
        worker = threading.Thread(target=work)
        worker.start()
        started.wait()
        steps = spin(done.is_set)
        worker.join()
    finally:
        tk.set_num_threads(threads)
    assert call["seconds"] > 0.1, "the call is too short to tell"
    # Steps per second of the call: about `alone` (or more: the 50 ms sample is a slower loop)
    # when the GIL is free; a GIL-holding C call of the same length measures 0.1-0.3 here.
    beside = steps / call["seconds"]
    assert beside > 0.6 * alone, (beside, alone, call["seconds"])


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_small_calls_do_not_leak():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)[:, ::-1]

    def calls(k):
        for _ in range(k):
            t = tk.asarray(a)
            np.asarray(t)
            np.from_dlpack(t)
            t.__dlpack__(max_version=(1, 0))  # dropped unconsumed
            tk.SparseTensor(np.zeros((1, 2), dtype=np.int64), np.ones(1), (2, 2)).to_dense()

    calls(20_000)  # warm up allocator pools and caches
    before = rss_bytes()
    calls(100_000)
    grown = rss_bytes() - before
    assert grown < 8 << 20, f"resident memory grew by {grown} bytes over 100,000 calls"


def test_stubs_are_current(tmp_path):
    pytest.importorskip("nanobind")
    out = tmp_path / "_tensorkit.pyi"
    env = dict(os.environ)
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "tensorkit._tensorkit",
                    "-o", str(out)], check=True, env=env)
    shipped = ROOT / "python" / "tensorkit" / "_tensorkit.pyi"
    assert out.read_text() == shipped.read_text(), (
        "python/tensorkit/_tensorkit.pyi is stale; regenerate it with "
        "python -m nanobind.stubgen -m tensorkit._tensorkit -o python/tensorkit/_tensorkit.pyi")
