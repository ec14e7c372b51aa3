// String tensors to and from NumPy: str (U), bytes (S) and object arrays, copied element by
// element (tensorkit holds std::string elements, NumPy fixed-width code points or objects).
#include <Python.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "python.h"

namespace tensorkit::python {
namespace {

// Appends the UTF-8 form of code point `c` (NumPy's U arrays hold UTF-32).
void AppendUtf8(std::string* out, uint32_t c) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace

Tensor StringTensorFromNumpy(nb::handle array) {
  nb::object np = nb::module_::import_("numpy");
  nb::object a = np.attr("ascontiguousarray")(array);
  const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
  const auto dims = nb::cast<std::vector<int64_t>>(a.attr("shape"));
  Tensor t = Tensor::Empty(dims, DType::kString);
  std::string* out = t.data<std::string>();
  const int64_t n = t.NumElements();
  if (kind == "O") {
    nb::object flat = a.attr("ravel")();
    for (int64_t i = 0; i < n; ++i) {
      nb::object item = flat[nb::int_(i)];
      if (PyUnicode_Check(item.ptr())) {
        Py_ssize_t size = 0;
        const char* s = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
        if (s == nullptr) throw nb::python_error();
        out[i].assign(s, size);
      } else if (PyBytes_Check(item.ptr())) {
        out[i].assign(PyBytes_AS_STRING(item.ptr()), PyBytes_GET_SIZE(item.ptr()));
      } else {
        throw nb::type_error(("asarray: element " + std::to_string(i) + " of an object array is " +
                              nb::cast<std::string>(nb::str(
                                  nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(item.ptr()))))) +
                              ", not str or bytes")
                                 .c_str());
      }
    }
    return t;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(a.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  const auto* base = static_cast<const char*>(view.buf);
  const int64_t width = nb::cast<int64_t>(a.attr("itemsize"));
  for (int64_t i = 0; i < n; ++i) {
    const char* e = base + i * width;
    if (kind == "S") {
      // Fixed-width bytes: trailing NULs are padding.
      int64_t len = width;
      while (len > 0 && e[len - 1] == '\0') --len;
      out[i].assign(e, len);
    } else {
      int64_t len = width / 4;
      uint32_t c = 0;
      while (len > 0 && (std::memcpy(&c, e + (len - 1) * 4, 4), c == 0)) --len;
      std::string s;
      for (int64_t k = 0; k < len; ++k) {
        std::memcpy(&c, e + k * 4, 4);
        AppendUtf8(&s, c);
      }
      out[i] = std::move(s);
    }
  }
  PyBuffer_Release(&view);
  return t;
}

nb::object ObjectArray(std::vector<PyObject*>* objects, const std::vector<int64_t>& dims) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(objects->size());
  nb::object np = nb::module_::import_("numpy");
  nb::object a = np.attr("empty")(n, nb::arg("dtype") = "object");
  // A fresh 1-D object array is contiguous and holds n references to None: each slot's None is
  // released and the object put in its place, with no list between (NumPy's assignment from a
  // sequence inspects every element, a third of the time of making them).
  PyObject** slots = reinterpret_cast<PyObject**>(
      nb::cast<uintptr_t>(a.attr("__array_interface__")["data"][nb::int_(0)]));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject*& o = (*objects)[static_cast<size_t>(i)];
    if (o == nullptr) continue;  // stays None
    Py_XDECREF(slots[i]);
    slots[i] = o;
    o = nullptr;
  }
  return a.attr("reshape")(ToTuple(dims));
}

nb::object StringTensorToNumpy(const Tensor& t) {
  Tensor c = t.HostContiguous();
  const std::string* s = c.data<std::string>();
  const int64_t n = c.NumElements();
  std::vector<PyObject*> items(static_cast<size_t>(n), nullptr);
  // Released on any exit: those not yet handed to the array.
  struct Release {
    std::vector<PyObject*>& items;
    ~Release() {
      for (PyObject* o : items) Py_XDECREF(o);
    }
  } release{items};
  for (int64_t i = 0; i < n; ++i) {
    PyObject* u = PyUnicode_DecodeUTF8(s[i].data(), static_cast<Py_ssize_t>(s[i].size()), nullptr);
    if (u == nullptr) {
      PyErr_Clear();
      u = PyBytes_FromStringAndSize(s[i].data(), static_cast<Py_ssize_t>(s[i].size()));
      if (u == nullptr) throw nb::python_error();
    }
    items[static_cast<size_t>(i)] = u;
  }
  return ObjectArray(&items, t.Dims());
}

}  // namespace tensorkit::python
