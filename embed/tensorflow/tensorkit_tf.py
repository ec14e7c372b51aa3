"""Python side of libtensorkit_tf_ops.so: loading the ops and the sparse DLPack exchange.

    import tensorkit_tf
    ops = tensorkit_tf.load()                 # tf.load_op_library of the built library
    ops.tensorkit_sparse_reorder(input_indices=..., input_values=..., input_shape=...)

    features = tensorkit_tf.parse_example(serialized, spec)   # tf.io.parse_example's twin

    st = tensorkit_tf.SparseTensor.from_dlpack(indices, values, shape)   # no copy
    st.reorder([1, 0])
    idx, vals, shape, order = st.to_dlpack()  # objects with __dlpack__, for np.from_dlpack
"""

import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIBRARY = os.path.join(_HERE, "..", "..", "build", "lib", "libtensorkit_tf_ops.so")


def library_path():
    """The op library: $TENSORKIT_TF_OPS, else the release build's."""
    return os.path.abspath(os.environ.get("TENSORKIT_TF_OPS") or DEFAULT_LIBRARY)


def load(path=None):
    """tf.load_op_library of the op library (imports TensorFlow)."""
    import tensorflow as tf

    return tf.load_op_library(path or library_path())


# --- DLPack structs (dlpack/dlpack.h, the unversioned DLManagedTensor) -----------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

# Capsule names must stay alive: CPython keeps the pointer.
_NAME = b"dltensor"
_USED = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
# The same function taking a raw object pointer, for the destructor (a separate function object).
_get_pointer_raw = _api["PyCapsule_GetPointer"]
_get_pointer_raw.restype = ctypes.c_void_p
_get_pointer_raw.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_CAPSULE_DESTRUCTOR
def _release_unconsumed(capsule):
    # A capsule nobody consumed still owns its tensor (the DLPack protocol's rule).
    if _api.PyCapsule_IsValid(capsule, _NAME):
        ptr = _get_pointer_raw(capsule, _NAME)
        managed = ctypes.cast(ptr, ctypes.POINTER(_DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


def _take(obj):
    """The DLManagedTensor* of obj (an array with __dlpack__, or a capsule), marked consumed."""
    capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
    ptr = _api.PyCapsule_GetPointer(capsule, _NAME)
    _api.PyCapsule_SetName(capsule, _USED)
    return ctypes.c_void_p(ptr), capsule


class DLPackTensor:
    """One exported DLManagedTensor; np.from_dlpack / tf.experimental.dlpack take it once."""

    def __init__(self, managed):
        self._managed = managed
        self.data_ptr = ctypes.cast(managed, ctypes.POINTER(_DLManagedTensor)).contents.dl_tensor.data

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self._managed is None:
            raise BufferError("this DLPack tensor was already consumed")
        capsule = _api.PyCapsule_New(self._managed, _NAME, _release_unconsumed)
        self._managed = None
        return capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __del__(self):
        if self._managed is not None:  # never handed out: release it here
            m = ctypes.cast(self._managed, ctypes.POINTER(_DLManagedTensor))
            if m.contents.deleter:
                m.contents.deleter(m)


_lib = None


def _capi():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        vp, i64p, ip = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int)
        err = [ctypes.c_char_p, ctypes.c_int64]
        lib.tensorkit_sparse_from_dlpack.argtypes = [vp, vp, i64p, ctypes.c_int, ip,
                                                     ctypes.POINTER(vp)] + err
        lib.tensorkit_sparse_to_dlpack.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(vp),
                                                   i64p, ip] + err
        lib.tensorkit_sparse_reorder.argtypes = [vp, ip] + err
        lib.tensorkit_sparse_rank.argtypes = [vp]
        lib.tensorkit_sparse_nnz.argtypes = [vp]
        lib.tensorkit_sparse_nnz.restype = ctypes.c_int64
        lib.tensorkit_sparse_free.argtypes = [vp]
        _lib = lib
    return _lib


class TensorkitError(RuntimeError):
    """A tensorkit::Error raised through the C interface (its message unchanged)."""


def _call(fn, *args):
    err = ctypes.create_string_buffer(1024)
    if fn(*args, err, len(err)) != 0:
        raise TensorkitError(err.value.decode())


class SparseTensor:
    """A tensorkit SparseTensor held by the op library, exchanged through DLPack."""

    def __init__(self, handle):
        self._handle = handle

    @classmethod
    def from_dlpack(cls, indices, values, shape, order=None):
        """Wraps indices (int64 [nnz, rank]) and values ([nnz]) without copying."""
        lib = _capi()
        idx, _ = _take(indices)
        val, _ = _take(values)
        rank = len(shape)
        dims = (ctypes.c_int64 * max(rank, 1))(*shape)
        ords = (ctypes.c_int * max(rank, 1))(*order) if order is not None else None
        handle = ctypes.c_void_p()
        _call(lib.tensorkit_sparse_from_dlpack, idx, val, dims, rank, ords, ctypes.byref(handle))
        return cls(handle)

    @property
    def rank(self):
        return _capi().tensorkit_sparse_rank(self._handle)

    @property
    def nnz(self):
        return _capi().tensorkit_sparse_nnz(self._handle)

    def reorder(self, order):
        _call(_capi().tensorkit_sparse_reorder, self._handle,
              (ctypes.c_int * max(self.rank, 1))(*order))

    def to_dlpack(self):
        """(indices, values, shape, order): DLPack tensors sharing this tensor's memory."""
        rank = self.rank
        idx, val = ctypes.c_void_p(), ctypes.c_void_p()
        dims = (ctypes.c_int64 * max(rank, 1))()
        ords = (ctypes.c_int * max(rank, 1))()
        _call(_capi().tensorkit_sparse_to_dlpack, self._handle, ctypes.byref(idx),
              ctypes.byref(val), dims, ords)
        return DLPackTensor(idx), DLPackTensor(val), list(dims[:rank]), list(ords[:rank])

    def __del__(self):
        if getattr(self, "_handle", None) is not None and _lib is not None:
            _lib.tensorkit_sparse_free(self._handle)
            self._handle = None


# --- tf.io.parse_example on TensorkitParseExampleV2 ----------------------------------------

_ops = None


def _parse_ops():
    global _ops
    if _ops is None:
        _ops = load()
    return _ops


def _validated(features):
    """`features` with every RaggedFeature built with validate=True."""
    import tensorflow as tf

    return {k: f._replace(validate=True) if isinstance(f, tf.io.RaggedFeature) else f
            for k, f in (features or {}).items()}


def _sparse_tensors(indices, values, shapes):
    """The SparseTensors of a parse op's sparse outputs."""
    import tensorflow as tf

    return [tf.sparse.SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)]


def parse_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_example, parsed by TensorkitParseExampleV2: the same feature configs
    (FixedLen, VarLen, Sparse, Ragged and FixedLenSequence features) and the same outputs.

    The spec is turned into the op's arguments, and SparseFeature and RaggedFeature results are
    assembled from its outputs, by TensorFlow's own parsing_config (a private module of the
    TensorFlow this library is built against), so the two cannot drift apart. A scalar
    `serialized` parses one record, as tf.io.parse_single_example does.

    Unlike tf.io.parse_example, malformed composites are refused rather than assembled into
    wrong tensors: every RaggedFeature is built with validate=True, and a SparseFeature's index
    keys must hold one index per value in every record, each in [0, size).
    """
    import tensorflow as tf
    from tensorflow.python.ops import parsing_config, parsing_ops

    if not features:
        raise ValueError("parse_example: features is empty; give at least one feature config")
    features = _validated(features)
    features = parsing_ops._prepend_none_dimension(features)
    params = parsing_config._ParseOpParams.from_features(features, [
        tf.io.VarLenFeature, tf.io.SparseFeature, tf.io.FixedLenFeature,
        tf.io.FixedLenSequenceFeature, tf.io.RaggedFeature])
    with tf.name_scope(name or "TensorkitParseExample"):
        serialized = tf.convert_to_tensor(serialized, dtype=tf.string, name="serialized")
        if params.ragged_keys and serialized.shape.ndims is None:
            raise ValueError("parse_example: serialized needs a known rank (scalar or vector) "
                             "to parse RaggedFeatures")
        out = _parse_ops().tensorkit_parse_example_v2(
            serialized=serialized, names=[] if example_names is None else example_names,
            sparse_keys=params.sparse_keys, dense_keys=params.dense_keys,
            ragged_keys=params.ragged_keys, dense_defaults=params.dense_defaults_vec,
            num_sparse=len(params.sparse_keys), sparse_types=params.sparse_types,
            ragged_value_types=params.ragged_value_types,
            ragged_split_types=params.ragged_split_types,
            dense_shapes=params.dense_shapes_as_proto)
        sparse_indices, sparse_values, sparse_shapes, dense, ragged_values, ragged_splits = out
        ragged = parsing_config._build_ragged_tensors(serialized.shape, ragged_values,
                                                      ragged_splits)
        sparse = _sparse_tensors(sparse_indices, sparse_values, sparse_shapes)
        outputs = dict(zip(params.sparse_keys + params.dense_keys + params.ragged_keys,
                           sparse + list(dense) + list(ragged)))
        outputs = _checked_sparse_features(features, outputs)
        return parsing_config._construct_tensors_for_composite_features(features, outputs)


def _checked_sparse_features(features, outputs):
    """`outputs` with every SparseFeature's value tensor made to depend on its checks: each
    index key holds the value key's entries (same rows, same counts) and lies in [0, size)."""
    import tensorflow as tf

    checked = dict(outputs)
    for key, f in sorted(features.items()):
        if not isinstance(f, tf.io.SparseFeature):
            continue
        single = isinstance(f.index_key, str)
        index_keys = [f.index_key] if single else list(f.index_key)
        sizes = [f.size] if single else list(f.size)
        values = outputs[f.value_key]
        checks = []
        for k, size in zip(index_keys, sizes):
            ids = outputs[k]
            where = f"parse_example: SparseFeature '{key}': index key '{k}'"
            checks.append(tf.debugging.assert_equal(
                tf.shape(ids.indices), tf.shape(values.indices),
                message=f"{where} holds another number of values than value key "
                        f"'{f.value_key}'; each value needs one index per index key"))
            with tf.control_dependencies(checks[-1:]):
                checks.append(tf.debugging.assert_equal(
                    ids.indices, values.indices,
                    message=f"{where} and value key '{f.value_key}' hold different numbers of "
                            "values in some record; each value needs one index per index key"))
            checks.append(tf.debugging.assert_non_negative(
                ids.values, message=f"{where} holds a negative index"))
            checks.append(tf.debugging.assert_less(
                ids.values, tf.constant(size, tf.int64),
                message=f"{where} holds an index outside [0, {size})"))
        with tf.control_dependencies(checks):
            checked[f.value_key] = tf.sparse.SparseTensor(
                values.indices, tf.identity(values.values), values.dense_shape)
    return checked


def parse_single_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_single_example on TensorkitParseExampleV2: `serialized` is one record."""
    import tensorflow as tf

    serialized = tf.convert_to_tensor(serialized, dtype=tf.string, name="serialized")
    if serialized.shape.ndims != 0:
        raise ValueError("parse_single_example: serialized must be a scalar string (one record), "
                         "got shape %s; use parse_example for a batch" % serialized.shape)
    return parse_example(serialized, features, example_names, name)


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """tf.io.parse_sequence_example, parsed by TensorkitParseSequenceExampleV2: returns
    (context, feature_lists, feature_list_lengths) as TensorFlow does, RaggedFeatures validated
    as in parse_example. A scalar `serialized` parses one record."""
    import tensorflow as tf
    from tensorflow.python.ops import parsing_config

    if not (context_features or sequence_features):
        raise ValueError("parse_sequence_example: give context_features, sequence_features or "
                         "both")
    context_features, sequence_features = _validated(context_features), _validated(sequence_features)
    context = parsing_config._ParseOpParams.from_features(
        context_features, [tf.io.VarLenFeature, tf.io.FixedLenFeature, tf.io.RaggedFeature])
    lists = parsing_config._ParseOpParams.from_features(
        sequence_features,
        [tf.io.VarLenFeature, tf.io.FixedLenSequenceFeature, tf.io.RaggedFeature])
    missing_ok = []
    for k, v in lists.dense_defaults.items():
        if v is not None:
            raise ValueError(f"parse_sequence_example: FixedLenSequenceFeature '{k}' has a "
                             "default_value; feature lists take none (set allow_missing)")
        missing_ok.append(k)
    with tf.name_scope(name or "TensorkitParseSequenceExample"):
        serialized = tf.convert_to_tensor(serialized, dtype=tf.string, name="serialized")
        if (context.ragged_keys or lists.ragged_keys) and serialized.shape.ndims is None:
            raise ValueError("parse_sequence_example: serialized needs a known rank (scalar or "
                             "vector) to parse RaggedFeatures")
        out = _parse_ops().tensorkit_parse_sequence_example_v2(
            serialized=serialized, debug_name=[] if example_names is None else example_names,
            context_sparse_keys=context.sparse_keys, context_dense_keys=context.dense_keys,
            context_ragged_keys=context.ragged_keys,
            feature_list_sparse_keys=lists.sparse_keys, feature_list_dense_keys=lists.dense_keys,
            feature_list_ragged_keys=lists.ragged_keys,
            feature_list_dense_missing_assumed_empty=[k in missing_ok for k in lists.dense_keys],
            context_dense_defaults=context.dense_defaults_vec,
            Ncontext_sparse=len(context.sparse_keys),
            Nfeature_list_sparse=len(lists.sparse_keys),
            Nfeature_list_dense=len(lists.dense_keys), context_sparse_types=context.sparse_types,
            context_ragged_value_types=context.ragged_value_types,
            context_ragged_split_types=context.ragged_split_types,
            feature_list_dense_types=lists.dense_types,
            feature_list_sparse_types=lists.sparse_types,
            feature_list_ragged_value_types=lists.ragged_value_types,
            feature_list_ragged_split_types=lists.ragged_split_types,
            context_dense_shapes=context.dense_shapes_as_proto,
            feature_list_dense_shapes=lists.dense_shapes)
        (c_si, c_sv, c_ss, c_dense, c_rv, c_rs, f_si, f_sv, f_ss, f_dense, f_lengths, f_rv,
         f_outer, f_inner) = out
        c_ragged = parsing_config._build_ragged_tensors(serialized.shape, c_rv, c_rs)
        f_ragged = parsing_config._build_ragged_tensors(serialized.shape, f_rv, f_outer, f_inner)
        context_out = dict(zip(context.sparse_keys + context.dense_keys + context.ragged_keys,
                               _sparse_tensors(c_si, c_sv, c_ss) + list(c_dense) + list(c_ragged)))
        lists_out = dict(zip(lists.sparse_keys + lists.dense_keys + lists.ragged_keys,
                             _sparse_tensors(f_si, f_sv, f_ss) + list(f_dense) + list(f_ragged)))
        lengths = dict(zip(lists.dense_keys, f_lengths))
        if context.ragged_keys:
            context_out = parsing_config._construct_tensors_for_composite_features(
                context_features, context_out)
        if lists.ragged_keys:
            lists_out = parsing_config._construct_tensors_for_composite_features(
                sequence_features, lists_out)
        return context_out, lists_out, lengths


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """tf.io.parse_single_sequence_example on TensorkitParseSequenceExampleV2: returns
    (context, feature_lists) of one record."""
    import tensorflow as tf

    serialized = tf.convert_to_tensor(serialized, dtype=tf.string, name="serialized")
    if serialized.shape.ndims != 0:
        raise ValueError("parse_single_sequence_example: serialized must be a scalar string (one "
                         "record), got shape %s" % serialized.shape)
    context, lists, _ = parse_sequence_example(serialized, context_features, sequence_features,
                                               example_name, name)
    return context, lists
