"""Ctrl-C during a long read: the read stops with KeyboardInterrupt within a second, from inside
the library call, and the library works normally afterwards in the same process."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tensorkit as tk

# Written by repeating one block: about 200 MB, so that one read on one thread takes well over
# the 0.3 s before the signal.
TARGET_BYTES = 200 << 20


def write_repeated(path, header, block):
    with open(path, "wb") as f:
        f.write(header)
        for _ in range(TARGET_BYTES // len(block)):
            f.write(block)


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("interrupt")
    line = b"1 3:0.25 17:1.5 42:-2.125 99:3.0 1000:0.5 20000:7.75\n"
    svm = d / "big.svm"
    write_repeated(svm, b"", line * 20000)
    mtx = d / "big.mtx"
    lines = b"".join(b"%d %d 0.125\n" % (1 + i % 4000, 1 + i % 997) for i in range(20000))
    write_repeated(mtx, b"%%%%MatrixMarket matrix coordinate real general\n4000 1000 %d\n"
                   % (TARGET_BYTES // len(lines) * 20000), lines)
    return {"svm": svm, "mtx": mtx}


CHILD = textwrap.dedent("""
    import sys, time, traceback
    import numpy as np
    import tensorkit as tk

    kind, path, small = sys.argv[1], sys.argv[2], sys.argv[3]
    tk.set_num_threads(1)
    read = tk.io.load_svmlight_file if kind == "svm" else tk.io.mmread
    print("ready", flush=True)
    try:
        for _ in range(20):  # a faster machine gets several reads; the signal lands in one
            read(path)
        print("finished", flush=True)
    except KeyboardInterrupt:
        at = time.time()
        frames = [f.name for f in traceback.extract_tb(sys.exc_info()[2])]
        print("interrupted", repr(at), ",".join(frames), flush=True)
    # The request is gone: the next reads work.
    X, y = tk.io.load_svmlight_file(small)
    assert X.shape == (2, 4) and list(y) == [1.0, 2.0], (X.shape, y)
    st = tk.SparseTensor(np.array([[0, 1]]), np.array([1.0]), (2, 2))
    assert st.to_dense().numpy()[0, 1] == 1.0
    print("works", flush=True)
""")


@pytest.mark.parametrize("kind", ["svm", "mtx"])
def test_ctrl_c_stops_a_long_read(big_files, tmp_path, kind):
    small = tmp_path / "small.svm"
    small.write_bytes(b"1 1:0.5 4:1\n2 2:3\n")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(big_files[kind]),
                              str(small)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        sent = time.time()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    lines = out.splitlines()
    assert lines and lines[0].startswith("interrupted"), (out, err)
    _, at, frames = lines[0].split(" ", 2)
    # Raised from inside the library's read (its binding is the innermost frame Python sees).
    assert frames.split(",")[-1] in ("_load_one", "mmread", "read"), frames
    assert float(at) - sent < 1.0, f"KeyboardInterrupt {float(at) - sent:.2f} s after SIGINT"
    assert lines[-1] == "works", (out, err)


def test_cancelled_is_a_keyboard_interrupt():
    assert issubclass(tk.Cancelled, KeyboardInterrupt) and issubclass(tk.Cancelled, tk.Error)
