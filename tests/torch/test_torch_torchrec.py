"""TorchRec: tensorkit.torch.to_torchrec / from_torchrec share memory (data_ptr equality both
ways), and use_for_torchrec lets TorchRec's own KeyedJaggedTensor.permute and
JaggedTensor.to_padded_dense run on tensorkit's kernels, with FBGEMM's operators absent (a child
process that never loads them) and, on request, in place of FBGEMM's."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import tensorkit as tk
import tensorkit.torch as tkt

torchrec = pytest.importorskip("torchrec")
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor  # noqa: E402


def _tk_kjt():
    values = np.array([10, 11, 20, 30, 31, 32, 40], dtype=np.int64)
    lengths = np.array([[2, 0, 1], [3, 0, 1]], dtype=np.int64)
    weights = np.linspace(0.5, 3.5, 7).astype(np.float32)
    return tk.KeyedJaggedTensor(["a", "b"], values, lengths, weights)


def test_to_torchrec_shares_memory():
    kjt = _tk_kjt()
    trk = tkt.to_torchrec(kjt)
    assert trk.keys() == ["a", "b"] and trk.stride() == 3
    assert trk.values().data_ptr() == torch.from_dlpack(kjt.values).data_ptr()
    assert trk.weights().data_ptr() == torch.from_dlpack(kjt.weights).data_ptr()
    assert trk.lengths().data_ptr() == torch.from_dlpack(kjt.lengths).data_ptr()
    assert trk.lengths().tolist() == [2, 0, 1, 3, 0, 1]
    assert trk["b"].values().tolist() == [30, 31, 32, 40]
    assert trk.offsets().tolist() == [0, 2, 2, 3, 6, 6, 7]


def test_from_torchrec_shares_memory():
    trk = KeyedJaggedTensor(keys=["x", "y", "z"], values=torch.arange(9),
                            lengths=torch.tensor([1, 2, 0, 3, 1, 2]),
                            weights=torch.rand(9))
    kjt = tkt.from_torchrec(trk)
    assert list(kjt.keys) == ["x", "y", "z"] and kjt.batch_size == 2
    assert torch.from_dlpack(kjt.values).data_ptr() == trk.values().data_ptr()
    assert torch.from_dlpack(kjt.weights).data_ptr() == trk.weights().data_ptr()
    assert torch.from_dlpack(kjt.lengths).data_ptr() == trk.lengths().data_ptr()
    assert np.asarray(kjt["y"].values).tolist() == [3, 4, 5]
    # and back: the same memory again
    again = tkt.to_torchrec(kjt)
    assert again.values().data_ptr() == trk.values().data_ptr()


def test_from_torchrec_refuses_variable_batch():
    trk = KeyedJaggedTensor(keys=["x", "y"], values=torch.arange(3),
                            lengths=torch.tensor([1, 1, 1]),
                            stride_per_key_per_rank=[[1], [2]])
    with pytest.raises(ValueError, match="variable stride"):
        tkt.from_torchrec(trk)


CHILD = r"""
import importlib.util, sys, types
mode = sys.argv[1]
if mode == "absent":
    # FBGEMM absent: its package cannot be imported, and torchrec's sparse module is loaded
    # without torchrec's package __init__ (which imports fbgemm_gpu's modules).
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name == "fbgemm_gpu" or name.startswith("fbgemm_gpu."):
                raise ImportError("fbgemm_gpu is absent here")
    sys.meta_path.insert(0, Block())
    spec = importlib.util.find_spec("torchrec")
    pkg = types.ModuleType("torchrec")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["torchrec"] = pkg
import torch
import tensorkit.torch as tkt
if mode == "override":
    import fbgemm_gpu  # noqa: F401
done = tkt.use_for_torchrec(override=(mode == "override"))
from torchrec.sparse.jagged_tensor import JaggedTensor, KeyedJaggedTensor
print(sorted(set(done.values())))
kjt = KeyedJaggedTensor(keys=["a", "b", "c"], values=torch.arange(10, 19),
                        lengths=torch.tensor([1, 0, 2, 3, 1, 0, 0, 2, 0]),
                        weights=torch.arange(9, dtype=torch.float32))
p = kjt.permute([2, 0, 1])
print(p.keys(), p.lengths().tolist(), p.values().tolist(), p.weights().tolist())
jt = JaggedTensor(values=torch.tensor([1.0, 2.0, 3.0, 4.0]), lengths=torch.tensor([2, 0, 1, 1]))
print(jt.to_padded_dense(desired_length=3, padding_value=-1.0).tolist())
try:
    torch.ops.fbgemm.jagged_to_padded_dense(torch.ones(3), [torch.tensor([0, 5, 1])], [2])
except RuntimeError as e:
    print("tensorkit::" in str(e))
"""

EXPECTED = [
    "['c', 'a', 'b'] [0, 2, 0, 1, 0, 2, 3, 1, 0] [17, 18, 10, 11, 12, 13, 14, 15, 16] "
    "[7.0, 8.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
    "[[1.0, 2.0, -1.0], [-1.0, -1.0, -1.0], [3.0, -1.0, -1.0], [4.0, -1.0, -1.0]]",
    "True",
]


@pytest.mark.parametrize("mode,registered", [("absent", "['defined']"),
                                             ("override", "['overridden']")])
def test_torchrec_runs_on_tensorkit(mode, registered):
    proc = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                          env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == registered
    assert lines[1:] == EXPECTED, proc.stdout


def test_concat_of_other_keys_is_torchrecs_concat():
    gen = torch.Generator().manual_seed(5)
    parts = []
    for p, keys in enumerate([["a", "b"], ["c"], ["d", "e", "f"]]):
        lengths = torch.randint(0, 4, (len(keys) * 3,), generator=gen)
        n = int(lengths.sum())
        parts.append(KeyedJaggedTensor(keys=keys, values=torch.arange(n) + 100 * p,
                                       lengths=lengths, weights=torch.rand(n, generator=gen)))
    want = KeyedJaggedTensor.concat(parts)
    got = tk.KeyedJaggedTensor.concat([tkt.from_torchrec(k) for k in parts])
    assert list(got.keys) == want.keys()
    assert got.batch_size == want.stride()
    np.testing.assert_array_equal(np.asarray(got.lengths).ravel(), want.lengths().numpy())
    np.testing.assert_array_equal(np.asarray(got.values), want.values().numpy())
    np.testing.assert_array_equal(np.asarray(got.weights), want.weights().numpy())
