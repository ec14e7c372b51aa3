// tensorkit::Error as Python exceptions: tk.Error, and one subclass per code that also derives
// from the built-in exception a Python user catches for that kind of failure.
#include <Python.h>

#include "python.h"
#include "tensorkit/common/error.h"

namespace tensorkit::python {
namespace {

constexpr int kNumCodes = static_cast<int>(ErrorCode::kInternal) + 1;
PyObject* g_classes[kNumCodes] = {};

PyObject* BuiltinFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kShapeMismatch:
    case ErrorCode::kDTypeMismatch:
    case ErrorCode::kDeviceMismatch:
    case ErrorCode::kCorrupt:
      return PyExc_ValueError;
    case ErrorCode::kOutOfRange:
      return PyExc_IndexError;
    case ErrorCode::kUnsupported:
      return PyExc_NotImplementedError;
    case ErrorCode::kIo:
      return PyExc_OSError;
    case ErrorCode::kResourceExhausted:
      return PyExc_MemoryError;
    case ErrorCode::kCancelled:
      return PyExc_KeyboardInterrupt;  // stopped by Ctrl-C (common/cancel.h)
    case ErrorCode::kInternal:
      return nullptr;  // a bug in tensorkit: tk.Error itself
  }
  return nullptr;
}

}  // namespace

void BindErrors(nb::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "tensorkit.Error",
      "Raised by every failing tensorkit call; its subclass names the error code and also "
      "derives from the matching built-in exception. The message is the library's.",
      nullptr, nullptr);
  if (base == nullptr) throw nb::python_error();
  m.attr("Error") = nb::handle(base);
  for (int i = 0; i < kNumCodes; ++i) {
    const auto code = static_cast<ErrorCode>(i);
    PyObject* builtin = BuiltinFor(code);
    if (builtin == nullptr) {
      g_classes[i] = base;
      continue;
    }
    const std::string name = std::string("tensorkit.") + ErrorCodeName(code);
    nb::object bases = nb::steal(PyTuple_Pack(2, base, builtin));
    PyObject* cls = PyErr_NewException(name.c_str(), bases.ptr(), nullptr);
    if (cls == nullptr) throw nb::python_error();
    g_classes[i] = cls;  // one reference kept for the translator, for the process's life
    m.attr(ErrorCodeName(code)) = nb::handle(cls);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      const int i = static_cast<int>(e.code());
      PyObject* cls = i >= 0 && i < kNumCodes && g_classes[i] ? g_classes[i] : g_classes[0];
      PyErr_SetString(cls, e.what());
    }
  });
}

}  // namespace tensorkit::python
