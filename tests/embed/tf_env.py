"""What every TensorFlow op test module needs: TensorFlow itself (the module is skipped without
it) and the op library, loaded once (skipped, saying how to build it, when it is missing)."""

import os
import sys

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "embed", "tensorflow"))
import tensorkit_tf  # noqa: E402

LIB = tensorkit_tf.library_path()
if not os.path.exists(LIB):
    pytest.skip(f"{LIB} is not built (make tf-ops)", allow_module_level=True)
ops = tensorkit_tf.load(LIB)


def cpu_kernels(op):
    """The dtype constraints of every CPU kernel registered for `op`: a set of tuples of
    (attr, dtype name) pairs, e.g. {(("T", "float32"), ("Tindices", "int64")), ...}."""
    from tensorflow.python.framework import kernels
    found = set()
    for k in kernels.get_registered_kernels_for_op(op).kernel:
        if k.device_type == "CPU":
            found.add(tuple(sorted((c.name, tf.as_dtype(t).name) for c in k.constraint
                                   for t in c.allowed_values.list.type)))
    return found
