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
//   interruptible     a long call (the readers, writers, parsers) run by Interruptible: Ctrl-C
//                     stops it at the library's next poll point (common/cancel.h) and it raises
//                     KeyboardInterrupt; nothing it was writing is committed.
#ifndef TENSORKIT_PYTHON_SRC_PYTHON_H_
#define TENSORKIT_PYTHON_SRC_PYTHON_H_

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "tensorkit/common/cancel.h"
#include "tensorkit/common/error.h"
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
// A NumPy object array of `dims` holding *objects (new references, taken: each entry is set to
// null as the array takes it; a null entry stays None). GIL held.
nb::object ObjectArray(std::vector<PyObject*>* objects, const std::vector<int64_t>& dims);

// Runs `f` holding the GIL, unless the interpreter is gone (at exit the memory is left alone):
// for deleters of Python-owned memory, which may run in any thread.
template <typename F>
void WithGil(F&& f) {
  if (!Py_IsInitialized() || !nb::is_alive()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  f();
  PyGILState_Release(state);
}

// Remembers Python's main thread; called once, at import.
void InitInterrupt();

// For the length of a call made from Python's main thread while Python handles SIGINT: a SIGINT
// handler that requests cancellation (common/cancel.h) and then calls Python's, so that the
// signal is also pending in Python. End (or the destructor) puts Python's back and clears the
// request. Elsewhere (other threads, SIGINT ignored or default) it does nothing. Hold the GIL.
class SigintScope {
 public:
  SigintScope();
  ~SigintScope() { End(); }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;
  void End();

 private:
  bool installed_ = false;
};

// f() with the GIL released, stoppable by Ctrl-C: a cancelled call raises the KeyboardInterrupt
// of Python's handler (or tk.Cancelled, a KeyboardInterrupt, when that handler raised nothing).
// Call holding the GIL.
template <typename F>
auto Interruptible(F&& f) -> decltype(f()) {
  SigintScope scope;
  try {
    nb::gil_scoped_release release;
    return f();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kCancelled) throw;
    scope.End();
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    throw;
  }
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
