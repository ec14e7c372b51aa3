// tk.Tensor, tk.asarray and tk.from_dlpack: arrays in and out without a copy (DLPack, both
// capsule versions, and the buffer protocol), through the library's dense/external.h.
#include <Python.h>
#include <dlpack/dlpack.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>

#include "python.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit::python {
namespace {

// ---------------------------------------------------------------------------------------------
// DLPack 1.x's versioned capsule. The system's dlpack.h may predate it; the layout below is the
// standard's (the DLTensor inside is the same struct in every version).
// ---------------------------------------------------------------------------------------------
struct DLPackVersion1 {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned1 {
  DLPackVersion1 version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned1* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1ull << 0;
constexpr uint64_t kDLFlagIsCopied = 1ull << 1;
constexpr int kDLDeviceCpu = 1, kDLDeviceCuda = 2;

// What an imported DLPack tensor's Storage owns: the producer's managed tensor (either version),
// seen by the library's FromDLPack as a legacy DLManagedTensor.
struct DLPackImport {
  DLManagedTensor legacy{};
  DLManagedTensor* producer_legacy = nullptr;
  DLManagedTensorVersioned1* producer_versioned = nullptr;

  static void Delete(DLManagedTensor* m) {
    auto* self = static_cast<DLPackImport*>(m->manager_ctx);
    // Producers' deleters may touch Python objects; the standard lets them be called from any
    // thread, but not every producer takes the GIL itself.
    WithGil([&] {
      if (self->producer_versioned && self->producer_versioned->deleter) {
        self->producer_versioned->deleter(self->producer_versioned);
      } else if (self->producer_legacy && self->producer_legacy->deleter) {
        self->producer_legacy->deleter(self->producer_legacy);
      }
    });
    delete self;
  }
};

DType DTypeFromBufferFormat(const char* format, Py_ssize_t itemsize) {
  std::string f = format ? format : "B";
  char order = '@';
  if (!f.empty() && std::strchr("@=<>!", f[0])) {
    order = f[0];
    f = f.substr(1);
  }
  const bool big = order == '>' || order == '!';
  TK_CHECK(!(big && itemsize > 1), kUnsupported, "asarray: buffer format '", format,
           "' is big-endian; convert it to native byte order first (e.g. a.astype('=", f, "'))");
  if (f.size() == 1) {
    switch (f[0]) {
      case '?':
        return DType::kBool;
      case 'b':
        return DType::kInt8;
      case 'B':
        return DType::kUInt8;
      case 'e':
        return DType::kFloat16;
      case 'f':
        return DType::kFloat32;
      case 'd':
        return DType::kFloat64;
      case 'h':
      case 'i':
      case 'l':
      case 'q':
      case 'n':
        if (itemsize == 2) return DType::kInt16;
        if (itemsize == 4) return DType::kInt32;
        if (itemsize == 8) return DType::kInt64;
        break;
      default:
        break;
    }
  }
  Throw(ErrorCode::kUnsupported, "asarray: buffer format '", format, "' (", itemsize,
        "-byte elements) has no tensorkit dtype; tensorkit has bool, int8, uint8, int16, int32, "
        "int64, float16, bfloat16, float32, float64 and string");
}

const char* BufferFormat(DType d) {
  switch (d) {
    case DType::kBool:
      return "?";
    case DType::kInt8:
      return "b";
    case DType::kUInt8:
      return "B";
    case DType::kInt16:
      return "h";
    case DType::kInt32:
      return "i";
    case DType::kInt64:
      return "q";
    case DType::kFloat16:
      return "e";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "d";
    default:
      return nullptr;
  }
}

// What an imported buffer's Storage owns.
struct BufferImport {
  Py_buffer view{};
};

Tensor FromBuffer(nb::handle obj) {
  auto owner = std::make_unique<BufferImport>();
  if (PyObject_GetBuffer(obj.ptr(), &owner->view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  Py_buffer& v = owner->view;
  // From here on a failure must release the view.
  struct Release {
    BufferImport* b;
    ~Release() {
      if (b) PyBuffer_Release(&b->view);
    }
  } release{owner.get()};
  const DType dtype = DTypeFromBufferFormat(v.format, v.itemsize);
  TK_CHECK(v.itemsize == DTypeSize(dtype), kUnsupported, "asarray: buffer format '", v.format,
           "' has ", v.itemsize, "-byte elements, ", DTypeName(dtype), " has ", DTypeSize(dtype));
  TK_CHECK(v.suboffsets == nullptr, kUnsupported,
           "asarray: buffers with suboffsets (PIL-style arrays) are not supported");
  std::vector<int64_t> dims(v.ndim), strides(v.ndim);
  for (int i = 0; i < v.ndim; ++i) {
    dims[i] = v.shape[i];
    TK_CHECK(v.strides[i] % v.itemsize == 0, kUnsupported, "asarray: axis ", i, " has stride ",
             v.strides[i], " bytes, not a whole number of ", v.itemsize,
             "-byte elements; copy the array first (numpy.ascontiguousarray)");
    strides[i] = v.strides[i] / v.itemsize;
  }
  const bool readonly = v.readonly != 0;
  BufferImport* raw = owner.get();
  Tensor t = WrapExternal(v.buf, dims, strides, dtype, Device::Cpu(), [raw](void*) {
    WithGil([&] { PyBuffer_Release(&raw->view); });
    delete raw;
  });
  // The Storage owns the view now.
  release.b = nullptr;
  owner.release();
  if (readonly) t.storage()->MarkReadOnly();
  return t;
}

// The consumer's stream argument for a CUDA producer: tensorkit's current stream there, so the
// producer orders its pending work before tensorkit's.
nb::object ConsumerStream(nb::handle device) {
  auto dev = nb::cast<nb::tuple>(device);
  if (nb::cast<int>(dev[0]) != kDLDeviceCuda) return nb::none();
  auto stream =
      reinterpret_cast<uintptr_t>(cuda::CurrentStream(Device::Cuda(nb::cast<int>(dev[1]))));
  return nb::int_(stream == 0 ? 1 : stream);  // 1: the legacy default stream
}

// Calls obj.__dlpack__, asking for a versioned capsule first. nullopt when the producer refuses
// with BufferError (e.g. NumPy's read-only arrays under the old protocol): the caller then tries
// the buffer protocol.
std::optional<Tensor> FromDLPackObject(nb::handle obj, bool fallback) {
  nb::object stream = nb::none();
  if (nb::hasattr(obj, "__dlpack_device__"))
    stream = ConsumerStream(obj.attr("__dlpack_device__")());
  nb::object capsule;
  try {
    nb::dict kwargs;
    kwargs["max_version"] = nb::make_tuple(1, 1);
    if (!stream.is_none()) kwargs["stream"] = stream;
    capsule = obj.attr("__dlpack__")(**kwargs);
  } catch (nb::python_error& e) {
    if (e.matches(PyExc_BufferError) && fallback) return std::nullopt;
    if (!e.matches(PyExc_TypeError)) throw;
    // A producer of the older protocol has no max_version argument.
    try {
      capsule = stream.is_none() ? obj.attr("__dlpack__")()
                                 : obj.attr("__dlpack__")(nb::arg("stream") = stream);
    } catch (nb::python_error& e2) {
      if (e2.matches(PyExc_BufferError) && fallback) return std::nullopt;
      throw;
    }
  }
  auto* owner = new DLPackImport;
  owner->legacy.manager_ctx = owner;
  owner->legacy.deleter = &DLPackImport::Delete;
  bool readonly = false;
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* v =
        static_cast<DLManagedTensorVersioned1*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    PyCapsule_SetName(cap, "used_dltensor_versioned");
    owner->producer_versioned = v;
    if (v->version.major != 1) {
      const unsigned major = v->version.major;
      DLPackImport::Delete(&owner->legacy);
      Throw(ErrorCode::kUnsupported, "from_dlpack: DLPack version ", major,
            " is not supported (tensorkit reads 1.x and the unversioned capsule)");
    }
    owner->legacy.dl_tensor = v->dl_tensor;
    readonly = (v->flags & kDLFlagReadOnly) != 0;
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    PyCapsule_SetName(cap, "used_dltensor");
    owner->producer_legacy = m;
    owner->legacy.dl_tensor = m->dl_tensor;
  } else {
    delete owner;
    throw nb::type_error(
        "from_dlpack: __dlpack__ did not return a DLPack capsule (or returned "
        "one that was already consumed)");
  }
  Tensor t = FromDLPack(&owner->legacy);  // owns `owner` from here, also when it throws
  if (readonly) t.storage()->MarkReadOnly();
  return t;
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

nb::tuple DLPackDevice(const Tensor& t) {
  return nb::make_tuple(t.device().is_cpu() ? kDLDeviceCpu : kDLDeviceCuda, t.device().index);
}

void LegacyCapsuleDestructor(PyObject* cap) {
  // Still named "dltensor": nobody consumed it, so its deleter is ours to call.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m->deleter) m->deleter(m);
  }
}

void VersionedCapsuleDestructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* v =
        static_cast<DLManagedTensorVersioned1*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (v->deleter) v->deleter(v);
  }
}

nb::object ToDLPackCapsule(const Tensor& self, nb::object stream, nb::object max_version,
                           nb::object dl_device, nb::object copy) {
  TK_CHECK(self.dtype() != DType::kString, kUnsupported,
           "__dlpack__: string tensors have no DLPack form; use t.numpy()");
  Tensor t = self;
  bool copied = false;
  const bool may_copy = copy.is_none() || nb::cast<bool>(copy);
  if (!dl_device.is_none()) {
    auto dev = nb::cast<nb::tuple>(dl_device);
    const int type = nb::cast<int>(dev[0]), index = nb::cast<int>(dev[1]);
    Device want;
    if (type == kDLDeviceCpu) {
      want = Device::Cpu();
    } else if (type == kDLDeviceCuda) {
      want = Device::Cuda(index);
    } else {
      throw nb::buffer_error("__dlpack__: tensorkit exports to the cpu (1) and cuda (2) only");
    }
    if (want != t.device()) {
      if (!may_copy) throw nb::buffer_error("__dlpack__: another device needs a copy, copy=False");
      nb::gil_scoped_release release;
      t = t.To(want);
      copied = true;
    }
  }
  if (!copy.is_none() && nb::cast<bool>(copy) && !copied) {
    nb::gil_scoped_release release;
    t = t.Clone();
    copied = true;
  }
  // stream -1: the consumer asks for no synchronisation.
  const bool no_sync = !stream.is_none() && nb::cast<int64_t>(stream) == -1;
  if (t.device().is_cuda() && !no_sync) {
    // The consumer's stream sees completed data: tensorkit's own stream is waited for.
    nb::gil_scoped_release release;
    cuda::Synchronize(t.device());
  }
  const bool readonly = !copied && IsReadOnly(t);
  bool versioned = false;
  if (!max_version.is_none()) {
    auto mv = nb::cast<nb::tuple>(max_version);
    versioned = nb::len(mv) >= 1 && nb::cast<int>(mv[0]) >= 1;
  }
  if (!versioned && readonly) {
    throw nb::buffer_error(
        "__dlpack__: this tensor's memory is read-only, which the unversioned DLPack capsule "
        "cannot say; call __dlpack__(max_version=(1, 0)) or export a copy");
  }
  DLManagedTensor* managed = ToDLPack(t);
  if (!versioned) {
    PyObject* cap = PyCapsule_New(managed, "dltensor", &LegacyCapsuleDestructor);
    if (cap == nullptr) {
      managed->deleter(managed);
      throw nb::python_error();
    }
    return nb::steal(cap);
  }
  auto* v = new DLManagedTensorVersioned1{};
  v->version = {1, 0};
  v->manager_ctx = managed;
  v->deleter = [](DLManagedTensorVersioned1* self) {
    auto* m = static_cast<DLManagedTensor*>(self->manager_ctx);
    m->deleter(m);
    delete self;
  };
  v->flags = (readonly ? kDLFlagReadOnly : 0) | (copied ? kDLFlagIsCopied : 0);
  v->dl_tensor = managed->dl_tensor;
  PyObject* cap = PyCapsule_New(v, "dltensor_versioned", &VersionedCapsuleDestructor);
  if (cap == nullptr) {
    v->deleter(v);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

// The buffer protocol's export, a type slot of tk.Tensor.
struct BufferInfo {
  std::vector<Py_ssize_t> shape, strides;
};

int TensorGetBuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  if (!nb::inst_ready(self)) {
    PyErr_SetString(PyExc_BufferError, "tensorkit.Tensor: not initialised");
    return -1;
  }
  const Tensor& t = *nb::inst_ptr<Tensor>(self);
  const char* format = BufferFormat(t.dtype());
  if (!t.defined() || !t.device().is_cpu() || format == nullptr) {
    const std::string msg =
        !t.defined() ? "tensorkit.Tensor: empty handle"
        : !t.device().is_cpu()
            ? "tensorkit.Tensor: a " + t.device().ToString() +
                  " tensor has no buffer; use t.to('cpu') or DLPack"
            : std::string("tensorkit.Tensor: ") + DTypeName(t.dtype()) +
                  " has no buffer format; use t.numpy(), or DLPack (torch.from_dlpack) for "
                  "bfloat16";
    PyErr_SetString(PyExc_BufferError, msg.c_str());
    return -1;
  }
  const bool readonly = IsReadOnly(t);
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && readonly) {
    PyErr_SetString(PyExc_BufferError, "tensorkit.Tensor: the memory is read-only");
    return -1;
  }
  const int64_t esize = DTypeSize(t.dtype());
  auto info = std::make_unique<BufferInfo>();
  for (int i = 0; i < t.NumAxes(); ++i) {
    info->shape.push_back(t.Dim(i));
    info->strides.push_back(t.Stride(i) * esize);
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t.IsContiguous()) {
    PyErr_SetString(PyExc_BufferError,
                    "tensorkit.Tensor: not C-contiguous and the consumer takes no strides");
    return -1;
  }
  view->buf = t.raw_data();
  view->len = t.NumElements() * esize;
  view->readonly = readonly ? 1 : 0;
  view->itemsize = esize;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
  view->ndim = t.NumAxes();
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? info->shape.data() : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = info.release();
  view->obj = Py_NewRef(self);
  return 0;
}

void TensorReleaseBuffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferInfo*>(view->internal);
}

PyType_Slot g_tensor_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(TensorGetBuffer)},
                                {Py_bf_releasebuffer, reinterpret_cast<void*>(TensorReleaseBuffer)},
                                {0, nullptr}};

nb::object ToNumpy(nb::handle self, const Tensor& t) {
  if (t.dtype() == DType::kString) return StringTensorToNumpy(t);
  TK_CHECK(t.device().is_cpu(), kUnsupported, "Tensor.numpy: the tensor is on ",
           t.device().ToString(), "; copy it to the host first with t.to('cpu')");
  TK_CHECK(t.dtype() != DType::kBFloat16, kUnsupported,
           "Tensor.numpy: NumPy has no bfloat16; use t.astype('float32'), or "
           "torch.from_dlpack(t) to share the memory");
  return nb::module_::import_("numpy").attr("asarray")(self);
}

// t in `dtype` (the library's conversion rules), new memory; the GIL is released meanwhile.
Tensor ConvertTo(const Tensor& t, DType dtype) {
  nb::gil_scoped_release release;
  return t.dtype() == dtype ? t.Clone() : Converted(t, dtype);
}

std::string Repr(const Tensor& t) {
  if (!t.defined()) return "tensorkit.Tensor()";
  std::string shape = "(";
  for (int i = 0; i < t.NumAxes(); ++i) {
    shape += std::to_string(t.Dim(i));
    if (t.NumAxes() == 1 || i + 1 < t.NumAxes()) shape += ",";
    if (i + 1 < t.NumAxes()) shape += " ";
  }
  shape += ")";
  return "tensorkit.Tensor(shape=" + shape + ", dtype=" + DTypeName(t.dtype()) +
         ", device=" + t.device().ToString() + ")";
}

bool IsNumpyStringArray(nb::handle obj) {
  if (!nb::hasattr(obj, "dtype")) return false;
  nb::object kind = nb::getattr(obj.attr("dtype"), "kind", nb::none());
  if (!nb::isinstance<nb::str>(kind)) return false;
  const std::string k = nb::cast<std::string>(kind);
  return k == "U" || k == "S" || k == "O";
}

// numpy.ndarray itself (not a subclass), or null before NumPy is imported.
PyTypeObject* NdarrayType() {
  static PyTypeObject* type = [] {
    nb::object np = nb::module_::import_("numpy");
    nb::object ndarray = np.attr("ndarray");
    return reinterpret_cast<PyTypeObject*>(ndarray.release().ptr());  // kept for the process
  }();
  return type;
}

}  // namespace

bool IsReadOnly(const Tensor& t) { return t.defined() && t.storage()->read_only(); }

std::optional<Tensor> ImportZeroCopy(nb::handle obj) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
  // A plain NumPy array, the common argument: its buffer says all DLPack would (dtype, strides,
  // read-only) for a fraction of the cost of calling __dlpack__ (about 1 us of a tiny call).
  // Arrays the buffer cannot give (strings, objects, dtypes tensorkit lacks) take the paths below.
  if (Py_TYPE(obj.ptr()) == NdarrayType()) {
    try {
      return FromBuffer(obj);
    } catch (const Error&) {
    } catch (const nb::python_error&) {
    }
  }
  // NumPy speaks both; DLPack first (the standard), the buffer protocol where DLPack refuses.
  if (nb::hasattr(obj, "__dlpack__")) {
    const bool has_buffer = PyObject_CheckBuffer(obj.ptr()) != 0;
    if (auto t = FromDLPackObject(obj, has_buffer)) return t;
  }
  if (PyObject_CheckBuffer(obj.ptr())) {
    // NumPy's str and bytes arrays have buffers, but their elements are not tensorkit's strings.
    if (IsNumpyStringArray(obj)) return std::nullopt;
    return FromBuffer(obj);
  }
  return std::nullopt;
}

Tensor AsTensor(nb::handle obj, const char* what) {
  if (obj.is_none())
    throw nb::type_error((std::string(what) + ": expected an array, got None").c_str());
  if (auto t = ImportZeroCopy(obj)) return *t;
  if (IsNumpyStringArray(obj)) return StringTensorFromNumpy(obj);
  nb::object np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(obj);
  const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
  if (kind == "U" || kind == "S" || kind == "O") return StringTensorFromNumpy(a);
  if (auto t = ImportZeroCopy(a)) return *t;
  throw nb::type_error((std::string(what) + ": cannot be read as an array").c_str());
}

Tensor AsTensorOf(nb::handle obj, DType dtype, const char* what) {
  Tensor t = AsTensor(obj, what);
  return t.dtype() == dtype ? t : ConvertTo(t, dtype);
}

DType DTypeArg(nb::handle dtype) {
  if (nb::isinstance<nb::str>(dtype)) return DTypeFromName(nb::cast<std::string>(dtype));
  // A torch dtype prints as "torch.float32".
  const std::string type_module = nb::cast<std::string>(nb::getattr(
      nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(dtype.ptr()))), "__module__", nb::str("")));
  if (type_module == "torch") {
    std::string s = nb::cast<std::string>(nb::str(dtype));
    return DTypeFromName(s.substr(s.find('.') + 1));
  }
  nb::object np = nb::module_::import_("numpy");
  try {
    nb::object d = np.attr("dtype")(dtype);
    const std::string kind = nb::cast<std::string>(d.attr("kind"));
    if (kind == "U" || kind == "S" || kind == "O") return DType::kString;
    return DTypeFromName(nb::cast<std::string>(d.attr("name")));
  } catch (nb::python_error&) {
  }
  if (nb::hasattr(dtype, "name")) return DTypeFromName(nb::cast<std::string>(dtype.attr("name")));
  throw nb::type_error("dtype: expected a dtype name such as 'float32' or a NumPy dtype");
}

Device DeviceArg(const std::string& device) {
  if (device == "cpu") return Device::Cpu();
  if (device == "cuda") return Device::Cuda(0);
  if (device.rfind("cuda:", 0) == 0) {
    const std::string index = device.substr(5);
    if (!index.empty() && index.find_first_not_of("0123456789") == std::string::npos) {
      return Device::Cuda(std::stoi(index));
    }
  }
  Throw(ErrorCode::kInvalidArgument, "device: '", device,
        "' is not a device; use 'cpu', 'cuda' or 'cuda:N'");
}

// t[key] for NumPy's basic indexing: integers (negative from the end), slices (any step),
// Ellipsis and None, as views of the same memory (dense/views.h). Advanced indexing (arrays,
// booleans) is refused with the way to do it in NumPy.
Tensor BasicIndex(const Tensor& t, nb::handle key) {
  std::vector<nb::handle> items;
  if (nb::isinstance<nb::tuple>(key)) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  } else {
    items.push_back(key);
  }
  // Python and NumPy integers and 0-d integer arrays (not booleans, not arrays of several).
  const auto is_int = [](nb::handle h) {
    if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) return false;
    PyObject* i = PyNumber_Index(h.ptr());
    if (i == nullptr) {
      PyErr_Clear();
      return false;
    }
    Py_DECREF(i);
    return true;
  };
  int consumed = 0, ellipses = 0;
  for (nb::handle h : items) {
    if (h.ptr() == Py_Ellipsis) {
      ++ellipses;
    } else if (is_int(h) || PySlice_Check(h.ptr())) {
      ++consumed;
    } else if (!h.is_none()) {
      throw nb::type_error(
          "Tensor[...]: indices must be integers, slices, None or ... (basic indexing, which "
          "gives views); for index arrays or boolean masks use t.numpy()[...]");
    }
  }
  if (ellipses > 1) throw nb::index_error("Tensor[...]: an index can only have one ellipsis");
  if (consumed > t.NumAxes()) {
    throw nb::index_error(("Tensor[...]: too many indices: the tensor has " +
                           std::to_string(t.NumAxes()) + " axes but " + std::to_string(consumed) +
                           " were indexed")
                              .c_str());
  }
  Tensor r = t;
  int axis = 0, source_axis = 0;
  for (nb::handle h : items) {
    if (h.is_none()) {
      r = Unsqueeze(r, axis++);
    } else if (h.ptr() == Py_Ellipsis) {
      const int skipped = t.NumAxes() - consumed;
      axis += skipped;
      source_axis += skipped;
    } else if (PySlice_Check(h.ptr())) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
      PySlice_AdjustIndices(static_cast<Py_ssize_t>(r.Dim(axis)), &start, &stop, step);
      // Python's empty slices may have stop on the far side of start; the library's start == end.
      stop = step > 0 ? std::max(stop, start) : std::min(stop, start);
      r = Slice(r, axis++, start, stop, step);
      ++source_axis;
    } else {
      const Py_ssize_t i = PyNumber_AsSsize_t(h.ptr(), PyExc_IndexError);
      if (i == -1 && PyErr_Occurred()) throw nb::python_error();
      const int64_t dim = r.Dim(axis);
      if (i < -dim || i >= dim) {
        throw nb::index_error(("Tensor[...]: index " + std::to_string(i) +
                               " is out of bounds for axis " + std::to_string(source_axis) +
                               " with size " + std::to_string(dim))
                                  .c_str());
      }
      r = Select(r, axis, i < 0 ? i + dim : i);
      ++source_axis;
    }
  }
  return r;
}

// NumPy 2's __array__(dtype, copy): the numpy() array (shared memory for numbers), copied when
// asked, converted to dtype; copy=False where a copy is needed raises ValueError, as NumPy does.
nb::object ArrayProtocol(nb::handle self, nb::handle dtype, nb::handle copy) {
  const Tensor& t = nb::cast<const Tensor&>(self);
  const bool never = copy.is(Py_False), always = copy.is(Py_True);
  if (never && t.dtype() == DType::kString) {
    throw nb::value_error(
        "Tensor.__array__: copy=False, but a string tensor becomes a NumPy object array by "
        "copying; allow a copy (copy=None)");
  }
  nb::object a = ToNumpy(self, t);
  nb::object np = nb::module_::import_("numpy");
  if (!dtype.is_none()) {
    const bool same = nb::cast<bool>(a.attr("dtype").attr("__eq__")(np.attr("dtype")(dtype)));
    if (!same && never) {
      throw nb::value_error("Tensor.__array__: copy=False, but the dtype conversion needs a copy");
    }
    if (!same) return a.attr("astype")(dtype);
  }
  if (always && t.dtype() != DType::kString) return a.attr("copy")();
  return a;
}

void BindTensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor", nb::type_slots(g_tensor_slots),
                     "A dense tensor: shape, strides (in elements), dtype and device over shared "
                     "memory. Crosses to NumPy, PyTorch and others without a copy (DLPack, the "
                     "buffer protocol).")
      .def(
          "__init__",
          [](Tensor* self, nb::handle obj) { new (self) Tensor(AsTensor(obj, "Tensor")); },
          nb::arg("obj"), "The same as tensorkit.asarray(obj).")
      .def_prop_ro("shape", [](const Tensor& t) { return ToTuple(t.Dims()); })
      .def_prop_ro(
          "strides", [](const Tensor& t) { return ToTuple(t.Strides()); },
          "Strides in elements (NumPy's are in bytes).")
      .def_prop_ro("dtype", [](const Tensor& t) { return std::string(DTypeName(t.dtype())); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device().ToString(); })
      .def_prop_ro("ndim", &Tensor::NumAxes)
      .def_prop_ro("size", &Tensor::NumElements)
      .def_prop_ro("itemsize", [](const Tensor& t) { return DTypeSize(t.dtype()); })
      .def_prop_ro("readonly", &IsReadOnly, "Whether the memory was imported read-only.")
      .def_prop_ro(
          "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); },
          "The address of the element with all-zero index.")
      .def("is_contiguous", &Tensor::IsContiguous)
      .def("__len__",
           [](const Tensor& t) {
             if (t.NumAxes() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.Dim(0);
           })
      .def(
          "numpy", [](nb::handle self) { return ToNumpy(self, nb::cast<const Tensor&>(self)); },
          "A NumPy array over the same memory (string tensors: an object array, copied).")
      .def("__getitem__", &BasicIndex, nb::arg("key"),
           "t[key]: NumPy's basic indexing (integers, slices of any step, ..., None) as a view "
           "of the same memory.")
      .def("__array__", &ArrayProtocol, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
           "NumPy's array protocol: np.asarray(t) shares the memory of a numeric CPU tensor.")
      .def(
          "tolist",
          [](nb::handle self) {
            return ToNumpy(self, nb::cast<const Tensor&>(self)).attr("tolist")();
          },
          "The elements as nested Python lists (NumPy's tolist).")
      .def(
          "item",
          [](nb::handle self) {
            const Tensor& t = nb::cast<const Tensor&>(self);
            if (t.NumElements() != 1) {
              throw nb::value_error(("Tensor.item: the tensor has " +
                                     std::to_string(t.NumElements()) +
                                     " elements; only a tensor of one element converts to a "
                                     "Python scalar")
                                        .c_str());
            }
            return ToNumpy(self, t).attr("item")();
          },
          "The one element as a Python scalar.")
      .def_prop_ro(
          "nbytes",
          [](const Tensor& t) {
            return t.NumElements() * static_cast<int64_t>(DTypeSize(t.dtype()));
          },
          "Bytes of the elements (NumPy's nbytes).")
      .def(
          "astype", [](const Tensor& t, nb::handle dtype) { return ConvertTo(t, DTypeArg(dtype)); },
          nb::arg("dtype"), "A converted copy (C order).")
      .def(
          "copy",
          [](const Tensor& t) {
            nb::gil_scoped_release release;
            return t.Clone();
          },
          "A copy in new memory.")
      .def(
          "to",
          [](const Tensor& t, const std::string& device) {
            const Device d = DeviceArg(device);
            nb::gil_scoped_release release;
            return d == t.device() ? t : t.To(d);
          },
          nb::arg("device"), "This tensor on another device (a copy), or itself.")
      .def("__dlpack__", &ToDLPackCapsule, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
           nb::arg("copy") = nb::none())
      .def("__dlpack_device__", &DLPackDevice)
      .def("__repr__", &Repr);

  m.def(
      "asarray",
      [](nb::handle obj, nb::handle dtype, std::optional<bool> copy) {
        std::optional<Tensor> t = ImportZeroCopy(obj);
        const bool shared = t.has_value();
        if (!t) {
          if (copy.has_value() && !*copy) {
            throw nb::value_error(
                "asarray: copy=False, but the object is not an array that can be shared "
                "(it speaks neither DLPack nor the buffer protocol)");
          }
          t = AsTensor(obj, "asarray");
        }
        if (!dtype.is_none()) {
          const DType d = DTypeArg(dtype);
          if (d != t->dtype()) {
            if (copy.has_value() && !*copy) {
              throw nb::value_error("asarray: copy=False, but the dtype conversion needs a copy");
            }
            return ConvertTo(*t, d);
          }
        }
        if (copy.value_or(false) && shared) {
          nb::gil_scoped_release release;
          return t->Clone();
        }
        return *t;
      },
      nb::arg("obj"), nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
      "A tensorkit.Tensor over obj's memory (DLPack or the buffer protocol, any strides, "
      "read-only arrays included), or a copy where needed (lists, scalars, strings, a dtype "
      "conversion). copy=True always copies; copy=False raises ValueError where a copy is "
      "needed.");
  m.def(
      "from_dlpack",
      [](nb::handle obj) {
        if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
        if (!nb::hasattr(obj, "__dlpack__")) {
          throw nb::type_error("from_dlpack: the object has no __dlpack__ method");
        }
        return *FromDLPackObject(obj, false);
      },
      nb::arg("obj"), "A tensorkit.Tensor over the memory of an object speaking DLPack.");
}

}  // namespace tensorkit::python
