// The extension module's shared pieces: how Python objects become tensorkit tensors and back.
//
// Glossary
//   zero-copy import  an object speaking DLPack (__dlpack__, versioned 1.x or the older capsule)
//                     or the buffer protocol becomes a Tensor over its memory; the Tensor's
//                     Storage keeps the producer alive and lets it go (under the GIL) when the
//                     last Tensor referring to it is gone.
//   read-only         memory a producer marked read-only (a NumPy array with writeable=False, a
//                     bytes object, a DLPack 1.x capsule with the flag) or Arrow buffers: the
//                     Storage's read_only flag (common/storage.h), set at import, which the
//                     exports read (a read-only buffer, DLPack 1.x's flag, no old capsule).
//   GIL               every call into the library runs with the GIL released; deleters of
//                     Python-owned memory take it back before touching Python objects.
#ifndef TENSORKIT_PYTHON_SRC_PYTHON_H_
#define TENSORKIT_PYTHON_SRC_PYTHON_H_

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::python {

namespace nb = nanobind;

void BindErrors(nb::module_& m);
void BindTensor(nb::module_& m);
void BindSparse(nb::module_& m);
void BindIo(nb::module_& m);
void BindTFRecord(nb::module_& m);  // into the _io submodule: TFRecord files, tf.Examples
void BindFeatures(nb::module_& m);
void BindArrow(nb::module_& m);  // after BindTensor and BindFeatures: adds to their classes

// `obj` without a copy when it is a tk.Tensor or speaks DLPack or the buffer protocol; nullopt
// for anything else. Throws Error for such objects that tensorkit cannot represent (a dtype it
// lacks, strides that are not whole elements).
std::optional<Tensor> ImportZeroCopy(nb::handle obj);
// `obj` as a Tensor: ImportZeroCopy, else NumPy's asarray of it (lists, scalars; NumPy's str,
// bytes and object arrays become string tensors, copied). `what` names the argument in errors.
Tensor AsTensor(nb::handle obj, const char* what);
// AsTensor converted to `dtype` (a copy when the dtype differs).
Tensor AsTensorOf(nb::handle obj, DType dtype, const char* what);
// A tk.SparseTensor, or a scipy.sparse matrix or array (converted by tensorkit._sparse);
// TypeError naming `what` for anything else.
SparseTensor SparseArg(nb::handle obj, const char* what);
// A dtype from a name ("float32", NumPy spellings), a NumPy dtype or scalar type, a torch or
// TensorFlow dtype.
DType DTypeArg(nb::handle dtype);
// "cpu", "cuda", "cuda:1".
Device DeviceArg(const std::string& device);

// Whether the memory of `t` is read-only (its Storage's flag).
bool IsReadOnly(const Tensor& t);

// A string tensor from a NumPy array of kind U, S or O (a copy).
Tensor StringTensorFromNumpy(nb::handle array);
// A NumPy object array of Python str (bytes where an element is not UTF-8) from a string tensor.
nb::object StringTensorToNumpy(const Tensor& t);

// Runs `f` holding the GIL, unless the interpreter is gone (at exit the memory is left alone):
// for deleters of Python-owned memory, which may run in any thread.
template <typename F>
void WithGil(F&& f) {
  if (!Py_IsInitialized() || !nb::is_alive()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  f();
  PyGILState_Release(state);
}

// The tuple (a, b, ...) of a vector.
template <typename T>
nb::tuple ToTuple(const std::vector<T>& v) {
  nb::list l;
  for (const T& x : v) l.append(x);
  return nb::tuple(l);
}

}  // namespace tensorkit::python

#endif  // TENSORKIT_PYTHON_SRC_PYTHON_H_
