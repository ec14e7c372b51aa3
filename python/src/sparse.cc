// tk.SparseTensor and the sparse products and reductions. The SciPy conversions are in the
// package (tensorkit/_sparse.py) over the compressed arrays given here.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <numeric>

#include "python.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/reduce.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::python {
namespace {

std::vector<int> AxesArg(nb::handle axes, int rank) {
  std::vector<int> out;
  if (axes.is_none()) {
    out.resize(rank);
    std::iota(out.begin(), out.end(), 0);
  } else if (PyLong_Check(axes.ptr())) {
    out.push_back(nb::cast<int>(axes));
  } else {
    out = nb::cast<std::vector<int>>(axes);
  }
  for (int& a : out) {
    // Negative axes count from the end, as NumPy's do.
    if (a < 0) a += rank;
  }
  return out;
}

// Indices as int64 (a copy for other integer dtypes, e.g. SciPy's int32).
Tensor IndicesArg(nb::handle indices) {
  Tensor t = AsTensor(indices, "SparseTensor: indices");
  TK_CHECK(IsInteger(t.dtype()), kDTypeMismatch, "SparseTensor: indices have dtype ",
           DTypeName(t.dtype()), "; they must be integers (int64 [nnz, rank])");
  return AsTensorOf(indices, DType::kInt64, "SparseTensor: indices");
}

std::string Repr(const SparseTensor& st) {
  std::string shape = "(";
  for (size_t i = 0; i < st.shape().size(); ++i) {
    shape += std::to_string(st.shape()[i]);
    if (st.shape().size() == 1 || i + 1 < st.shape().size()) shape += ",";
    if (i + 1 < st.shape().size()) shape += " ";
  }
  shape += ")";
  const bool defined = st.values().defined();
  return "tensorkit.SparseTensor(shape=" + shape + ", nnz=" + std::to_string(st.nnz()) +
         ", dtype=" + (defined ? DTypeName(st.dtype()) : "none") +
         ", device=" + (defined ? st.device().ToString() : "cpu") + ")";
}

}  // namespace

SparseTensor SparseArg(nb::handle obj, const char* what) {
  if (nb::isinstance<SparseTensor>(obj)) return nb::cast<SparseTensor>(obj);
  // scipy.sparse matrices and arrays, through the package's converter.
  if (nb::hasattr(obj, "tocoo") && nb::hasattr(obj, "format")) {
    return nb::cast<SparseTensor>(
        nb::module_::import_("tensorkit._sparse").attr("from_scipy")(obj));
  }
  throw nb::type_error((std::string(what) + ": expected a tensorkit.SparseTensor or a "
                                            "scipy.sparse matrix or array")
                           .c_str());
}

void BindSparse(nb::module_& m) {
  nb::class_<SparseTensor>(
      m, "SparseTensor",
      "A sparse tensor in coordinate form: indices int64 [nnz, rank], values [nnz] of any dtype, "
      "the dense shape, and the order the entries are known to be sorted in.")
      .def(
          "__init__",
          [](SparseTensor* self, nb::handle indices, nb::handle values, std::vector<int64_t> shape,
             std::optional<std::vector<int>> order) {
            Tensor i = IndicesArg(indices);
            Tensor v = AsTensor(values, "SparseTensor: values");
            nb::gil_scoped_release release;
            new (self) SparseTensor(
                SparseTensor::Create(i, v, std::move(shape), order.value_or(std::vector<int>{})));
          },
          nb::arg("indices"), nb::arg("values"), nb::arg("shape"), nb::arg("order") = nb::none(),
          "Shares the memory of indices (int64) and values. order: the axes the entries are "
          "sorted by, or None when unknown. Checks shapes and dtypes, not index contents "
          "(validate() does).")
      .def_prop_ro("indices", &SparseTensor::indices)
      .def_prop_ro("values", &SparseTensor::values)
      .def_prop_ro("shape", [](const SparseTensor& st) { return ToTuple(st.shape()); })
      .def_prop_ro("order",
                   [](const SparseTensor& st) -> nb::object {
                     if (!st.OrderKnown()) return nb::none();
                     return ToTuple(st.order());
                   })
      .def_prop_ro("nnz", &SparseTensor::nnz)
      .def_prop_ro("rank", &SparseTensor::rank)
      .def_prop_ro("ndim", &SparseTensor::rank)
      .def_prop_ro("dtype",
                   [](const SparseTensor& st) { return std::string(DTypeName(st.dtype())); })
      .def_prop_ro("device", [](const SparseTensor& st) { return st.device().ToString(); })
      .def("validate", &SparseTensor::ValidateIndices, nb::call_guard<nb::gil_scoped_release>(),
           "Raises tensorkit.Error naming the first entry out of bounds, out of order or repeated.")
      .def("indices_valid", &SparseTensor::IndicesValid, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "reorder",
          [](nb::handle self, std::vector<int> order) {
            SparseTensor& st = nb::cast<SparseTensor&>(self);
            {
              nb::gil_scoped_release release;
              st.Reorder(order);
            }
            return nb::borrow(self);
          },
          nb::arg("order"),
          "Sorts the entries (stable) by the axes in `order`, a permutation of all axes; in place, "
          "returns self.")
      .def(
          "coalesce",
          [](nb::handle self) {
            SparseTensor& st = nb::cast<SparseTensor&>(self);
            {
              nb::gil_scoped_release release;
              st.Coalesce();
            }
            return nb::borrow(self);
          },
          "Sorts in C order and sums repeated indices; in place, returns self.")
      .def("to_dense", nb::overload_cast<>(&SparseTensor::ToDense, nb::const_),
           nb::call_guard<nb::gil_scoped_release>())
      .def(
          "to",
          [](const SparseTensor& st, const std::string& device) {
            const Device d = DeviceArg(device);
            nb::gil_scoped_release release;
            return st.To(d);
          },
          nb::arg("device"))
      .def_static(
          "from_dense",
          [](nb::handle dense) {
            Tensor t = AsTensor(dense, "SparseTensor.from_dense");
            nb::gil_scoped_release release;
            return SparseTensor::FromDense(t);
          },
          nb::arg("a"), "The nonzero elements of a dense array, in C order.")
      .def_static(
          "concat",
          [](std::vector<SparseTensor> inputs, std::optional<int> axis) {
            nb::gil_scoped_release release;
            return axis ? SparseTensor::Concat(inputs, *axis) : SparseTensor::Concat(inputs);
          },
          nb::arg("sparse_tensors"), nb::arg("axis") = nb::none(),
          "Concatenates along `axis`, or along the inputs' common order[0] when None "
          "(TensorFlow's rule).")
      .def(
          "_compressed",
          [](const SparseTensor& st, int major) {
            nb::gil_scoped_release release;
            if (major == 0) {
              CsrMatrix csr = CsrMatrix::FromSparse(st);
              return std::make_tuple(csr.row_ptr(), csr.col_indices(), csr.values());
            }
            CscMatrix csc = CscMatrix::FromSparse(st);
            return std::make_tuple(csc.col_ptr(), csc.row_indices(), csc.values());
          },
          nb::arg("major"), "(ptr, minor indices, values) of CSR (major 0) or CSC (major 1).")
      .def_static(
          "_from_compressed",
          [](nb::handle ptr, nb::handle minor, nb::handle values, std::vector<int64_t> shape,
             int major) {
            Tensor p = AsTensorOf(ptr, DType::kInt64, "from_scipy: indptr");
            Tensor i = AsTensorOf(minor, DType::kInt64, "from_scipy: indices");
            Tensor v = AsTensor(values, "from_scipy: data");
            nb::gil_scoped_release release;
            if (major == 0) return CsrMatrix::Create(p, i, v, shape).ToSparse();
            return CscMatrix::Create(p, i, v, shape).ToSparse();
          },
          nb::arg("ptr"), nb::arg("minor"), nb::arg("values"), nb::arg("shape"), nb::arg("major"))
      .def(
          "to_scipy",
          [](nb::handle self, nb::handle format) {
            return nb::module_::import_("tensorkit._sparse").attr("to_scipy")(self, format);
          },
          nb::arg("format") = "coo",
          "This tensor as a scipy.sparse array: \"coo\" (any rank SciPy takes), \"csr\" or "
          "\"csc\" (2-D, through the library's CsrMatrix / CscMatrix). The values are shared "
          "where SciPy keeps them as given.")
      .def_static(
          "from_scipy",
          [](nb::handle m) {
            return nb::cast<SparseTensor>(
                nb::module_::import_("tensorkit._sparse").attr("from_scipy")(m));
          },
          nb::arg("m"),
          "A SparseTensor from any scipy.sparse matrix or array, every format; the values are "
          "shared when SciPy's data array can be.")
      .def("__repr__", &Repr);

  m.def(
      "sparse_dense_matmul",
      [](nb::handle a_obj, nb::handle b_obj) {
        SparseTensor a = SparseArg(a_obj, "sparse_dense_matmul: a");
        Tensor b = AsTensor(b_obj, "sparse_dense_matmul: b");
        std::vector<int64_t> dims;
        const auto& s = a.shape();
        if (a.rank() == 2 && b.NumAxes() == 1) {
          dims = {s[0]};
        } else if (a.rank() == 2 && b.NumAxes() == 2) {
          dims = {s[0], b.Dim(1)};
        } else if (a.rank() == 3 && b.NumAxes() >= 2) {
          dims = {s[0], s[1], b.Dim(-1)};
        } else {
          Throw(ErrorCode::kShapeMismatch, "sparse_dense_matmul: a has rank ", a.rank(),
                " and b has rank ", b.NumAxes(),
                "; a [M, K] takes b [K, N] or [K], a [B, M, K] takes b [B, K, N] or [K, N]");
        }
        nb::gil_scoped_release release;
        Tensor c = Tensor::Empty(dims, a.dtype(), a.device());
        SparseDenseProduct(1, 0, a, b, &c);
        return c;
      },
      nb::arg("a"), nb::arg("b"),
      "a @ b for a sparse a [M, K] (or a batch [B, M, K]) and a dense b: a dense result.");
  m.def(
      "sparse_sparse_matmul",
      [](nb::handle a_obj, nb::handle b_obj) {
        SparseTensor a = SparseArg(a_obj, "sparse_sparse_matmul: a");
        SparseTensor b = SparseArg(b_obj, "sparse_sparse_matmul: b");
        nb::gil_scoped_release release;
        return SparseSparseProduct(a, b);
      },
      nb::arg("a"), nb::arg("b"),
      "a @ b for sparse a [M, K] and b [K, N]: a sparse result in C order without duplicates.");
  m.def(
      "sparse_reduce_sum",
      [](nb::handle st_obj, nb::handle axes) {
        SparseTensor st = SparseArg(st_obj, "sparse_reduce_sum: st");
        std::vector<int> ax = AxesArg(axes, st.rank());
        nb::gil_scoped_release release;
        return ReduceSum(st, ax);
      },
      nb::arg("st"), nb::arg("axes") = nb::none(),
      "The sum over `axes` (an int, a sequence, or None for all) as a dense tensor.");
}

}  // namespace tensorkit::python
