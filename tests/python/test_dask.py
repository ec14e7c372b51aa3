"""examples/distributed/dask_inprocess.py: Dask maps tensorkit over a set of files in-process, and
what it gathers equals scikit-learn's reading of each file."""

import importlib.util
import pathlib

import numpy as np
import pytest

dask = pytest.importorskip("dask")
import scipy.sparse as sp  # noqa: E402
import sklearn.datasets  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_example():
    path = ROOT / "examples" / "distributed" / "dask_inprocess.py"
    spec = importlib.util.spec_from_file_location("dask_inprocess", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_dask_maps_tensorkit_over_files(tmp_path, scheduler):
    ex = load_example()
    paths = ex.make_demo_files(str(tmp_path), count=5, rows=700, seed=3)
    out = tmp_path / "npz"
    per_file, sums = ex.run(paths, str(out), scheduler=scheduler)
    assert [s["path"] for s in per_file] == paths
    want_sums = np.zeros(0)
    for s, path in zip(per_file, paths):
        X, y = sklearn.datasets.load_svmlight_file(path)
        assert (s["rows"], s["nnz"]) == (X.shape[0], X.nnz)
        labels, counts = np.unique(y, return_counts=True)
        assert s["labels"] == dict(zip(labels.tolist(), counts.tolist()))
        np.testing.assert_allclose(s["column_sums"], np.asarray(X.sum(axis=0)).ravel())
        want_sums = ex.add_columns(want_sums, np.asarray(X.sum(axis=0)).ravel())
        stored = sp.load_npz(out / (pathlib.Path(path).stem + ".npz"))
        assert stored.shape == X.shape and (stored != X).nnz == 0
    np.testing.assert_allclose(sums, want_sums)


def test_main_demo(capsys):
    assert load_example().main(["--demo"]) == 0
    text = capsys.readouterr().out
    assert "part-007.svm: 5000 rows" in text and "column sums over 8 files" in text
