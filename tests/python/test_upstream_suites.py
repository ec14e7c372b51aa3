"""The reference libraries' own tests, run against the drop-ins: scikit-learn's
test_svmlight_format.py and SciPy's test_mmio.py from the installed wheels, with the functions
under test swapped for tensorkit.io's. Every case passes except those listed with the reason, and
the cases tensorkit.io gives to SciPy (values no tensorkit dtype holds) are listed too."""

import importlib.util
import json
import pathlib
import re
import subprocess
import sys

import pytest

# test name (without parameters) -> why it fails against tensorkit.io
KNOWN_FAILURES = {
    "test_svmlight_format.py": {},
    "test_mmio.py": {},
}

# test_mmio.py cases where tensorkit.io gives the file or the matrix to SciPy (recorded by the
# conftest below, which watches tensorkit.io's calls of scipy.io.mmread / mmwrite) -> why.
# Everything else, symmetric and skew-symmetric files, comments, fields and precision
# included, tensorkit reads and writes itself.
_UNSIGNED = "uint64 values: SciPy's 'unsigned-integer' field, which no tensorkit dtype holds"
_COMPLEX = "complex values: no tensorkit dtype holds them"
HANDED_TO_SCIPY = {
    "TestMMIOArray::test_32bit_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOArray::test_64bit_unsigned_integer":
        _UNSIGNED,
    "TestMMIOArray::test_simple_complex":
        _COMPLEX,
    "TestMMIOArray::test_simple_hermitian_complex":
        _COMPLEX,
    "TestMMIOArray::test_simple_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOArray::test_simple_lower_triangle_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOArray::test_simple_rectangular_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOArray::test_simple_symmetric_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOArray::test_simple_upper_triangle_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOCoordinate::test_complex_write_read":
        _COMPLEX,
    "TestMMIOCoordinate::test_read_hermitian":
        _COMPLEX,
    "TestMMIOCoordinate::test_sparse_formats":
        _COMPLEX + " (its second matrix)",
    "TestMMIOSparseCSR::test_32bit_unsigned_integer":
        "uint32 values: SciPy's 'unsigned-integer' field",
    "TestMMIOSparseCSR::test_64bit_unsigned_integer":
        _UNSIGNED,
    "TestMMIOSparseCSR::test_simple_complex":
        _COMPLEX,
    "TestMMIOSparseCSR::test_simple_hermitian_complex":
        _COMPLEX,
    "TestMMIOSparseCSR::test_simple_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOSparseCSR::test_simple_lower_triangle_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOSparseCSR::test_simple_rectangular_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOSparseCSR::test_simple_symmetric_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "TestMMIOSparseCSR::test_simple_upper_triangle_integer[unsigned-integer-uint]":
        _UNSIGNED,
    "test_gh11389":
        _COMPLEX,
    "test_mtx_append":
        _COMPLEX,
}

# Records, per test, whether tensorkit.io called scipy.io's mmread or mmwrite.
CONFTEST = """
import inspect, json, os
import scipy.io

handed = set()


def watch(fn):
    def call(*args, **kwargs):
        if inspect.currentframe().f_back.f_globals.get("__name__") == "tensorkit.io":
            handed.add(os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0])
        return fn(*args, **kwargs)
    return call


scipy.io.mmread = watch(scipy.io.mmread)
scipy.io.mmwrite = watch(scipy.io.mmwrite)


def pytest_sessionfinish(session):
    with open("handed.json", "w") as f:
        json.dump(sorted(handed), f)
"""


def suite_file(package, name):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed")
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / name
    if not path.exists():
        pytest.skip(f"{path} is not shipped")
    return path.read_text()


def run_suite(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider",
                           "-W", "ignore", name], cwd=tmp_path, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    failed = {re.sub(r"\[.*", "", m.split("::")[-1])
              for m in re.findall(r"^FAILED (\S+)", out, flags=re.M)}
    passed = re.search(r"(\d+) passed", out)
    return failed, int(passed.group(1)) if passed else 0, out


def test_scikit_learn_svmlight_suite(tmp_path):
    text = suite_file("sklearn.datasets.tests", "test_svmlight_format.py")
    swapped = re.sub(r"^from sklearn\.datasets import (dump_svmlight_file, load_svmlight_file, "
                     r"load_svmlight_files)$", r"from tensorkit.io import \1", text, flags=re.M)
    assert swapped != text, "the suite's import line changed; update the swap"
    failed, passed, out = run_suite(tmp_path, "test_svmlight_format.py", swapped)
    assert failed == set(KNOWN_FAILURES["test_svmlight_format.py"]), out[-3000:]
    assert passed > 80, out[-3000:]


def test_scipy_mmio_suite(tmp_path):
    text = suite_file("scipy.io.tests", "test_mmio.py")
    fixture = "@pytest.fixture(scope='module', params=(scipy.io._mmio, fmm), autouse=True)"
    assert fixture in text, "the suite's implementation fixture changed; update the swap"
    swapped = text.replace(fixture, "import tensorkit.io\n" + fixture.replace(
        "(scipy.io._mmio, fmm)", "(tensorkit.io,)"))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    failed, passed, out = run_suite(tmp_path, "test_mmio.py", swapped)
    assert failed == set(KNOWN_FAILURES["test_mmio.py"]), out[-3000:]
    assert passed > 50, out[-3000:]
    handed = {t.split("::", 1)[1].replace("[tensorkit.io]", "").replace("[tensorkit.io-", "[")
              for t in json.loads((tmp_path / "handed.json").read_text())}
    assert handed == set(HANDED_TO_SCIPY), sorted(handed)
