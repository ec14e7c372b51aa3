// tensorkit._tensorkit._io: the library's readers and writers (io/io.h, io/libsvm.h). The
// package's tensorkit.io adds the drop-ins (file objects, compressed files, SciPy and
// scikit-learn return types) in Python over these.
#include "tensorkit/io/io.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "python.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/libsvm.h"

namespace tensorkit::python {
namespace {

nb::object ToPython(io::TensorData data) {
  if (data.is_sparse()) return nb::cast(std::move(data.sparse));
  return nb::cast(std::move(data.dense));
}

io::IndexBase IndexBaseArg(nb::handle zero_based) {
  if (nb::isinstance<nb::str>(zero_based)) {
    TK_CHECK(nb::cast<std::string>(zero_based) == "auto", kInvalidArgument,
             "zero_based: expected True, False or 'auto', got '", nb::cast<std::string>(zero_based),
             "'");
    return io::IndexBase::kAuto;
  }
  return nb::cast<bool>(zero_based) ? io::IndexBase::kZero : io::IndexBase::kOne;
}

io::ReadOptions ReadOptionsArg(const std::string& member, bool expand_symmetry) {
  io::ReadOptions options;
  options.member = member;
  options.expand_symmetry = expand_symmetry;
  return options;
}

io::Format FormatArg(const std::string& format) {
  auto f = io::FormatFromExtension(format);
  TK_CHECK(f.has_value(), kInvalidArgument, "format: '", format, "' is not one of ",
           io::FormatList("", ", ", " or "));
  return *f;
}

io::MtxField MtxFieldArg(const std::string& field) {
  if (field.empty()) return io::MtxField::kAuto;
  if (field == "real") return io::MtxField::kReal;
  if (field == "integer") return io::MtxField::kInteger;
  if (field == "pattern") return io::MtxField::kPattern;
  Throw(ErrorCode::kInvalidArgument, "write_mtx: field '", field,
        "' is not one of 'real', 'integer', 'pattern' (or '' for the dtype's)");
}

io::MtxSymmetry MtxSymmetryArg(const std::string& symmetry) {
  if (symmetry == "general") return io::MtxSymmetry::kGeneral;
  if (symmetry == "symmetric") return io::MtxSymmetry::kSymmetric;
  if (symmetry == "skew-symmetric") return io::MtxSymmetry::kSkewSymmetric;
  if (symmetry == "hermitian") return io::MtxSymmetry::kHermitian;
  if (symmetry == "detect") return io::MtxSymmetry::kDetect;
  Throw(ErrorCode::kInvalidArgument, "write_mtx: symmetry '", symmetry,
        "' is not one of 'general', 'symmetric', 'skew-symmetric', 'hermitian', 'detect'");
}

nb::tuple LibsvmResult(io::LibsvmData d) {
  auto opt = [](Tensor t) -> nb::object { return t.defined() ? nb::cast(t) : nb::none(); };
  nb::object features;
  if (d.csr.indptr.defined()) {
    const io::LibsvmCsr& c = d.csr;
    features = nb::make_tuple(c.indptr, c.indices, c.values, ToTuple(c.shape));
  } else {
    features = nb::cast(std::move(d.features));
  }
  return nb::make_tuple(features, d.labels, opt(d.label_offsets), opt(d.qids), d.one_based);
}

// write_mtx's and write_mtx_coo's keyword arguments as io::MtxWriteOptions.
io::MtxWriteOptions MtxOptions(const std::string& comment, const std::string& field, int precision,
                               const std::string& symmetry, bool scipy_text) {
  io::MtxWriteOptions options;
  options.comment = comment;
  options.precision = precision;
  options.scipy_text = scipy_text;
  options.field = MtxFieldArg(field);
  options.symmetry = MtxSymmetryArg(symmetry);
  return options;
}

}  // namespace

void BindIo(nb::module_& m) {
  m.def(
      "read",
      [](const std::string& path, const std::string& member, bool expand_symmetry) {
        const io::ReadOptions options = ReadOptionsArg(member, expand_symmetry);
        return ToPython(Interruptible([&] { return io::Read(path, options); }));
      },
      nb::arg("path"), nb::arg("member") = "", nb::arg("expand_symmetry") = true);
  m.def(
      "read_bytes",
      [](nb::bytes data, const std::string& format, const std::string& name,
         const std::string& member, bool expand_symmetry) {
        const io::ReadOptions options = ReadOptionsArg(member, expand_symmetry);
        const io::Format f = FormatArg(format);
        // `data` stays referenced by the caller
        return ToPython(Interruptible(
            [&] { return io::ReadFromMemory(data.c_str(), data.size(), f, name, options); }));
      },
      nb::arg("data"), nb::arg("format"), nb::arg("name"), nb::arg("member") = "",
      nb::arg("expand_symmetry") = true);
  m.def(
      "write",
      [](const std::string& path, nb::handle x, bool compress, bool csr) {
        io::TensorData d;
        if (nb::isinstance<SparseTensor>(x)) {
          d.sparse = nb::cast<SparseTensor>(x);
        } else {
          d.dense = AsTensor(x, "write: x");
        }
        io::WriteOptions options;
        options.compress = compress;
        options.csr = csr;
        Interruptible([&] { io::Write(path, d, options); });
      },
      nb::arg("path"), nb::arg("x"), nb::arg("compress") = false, nb::arg("csr") = false);
  m.def(
      "write_mtx",
      [](const std::string& path, nb::handle x, const std::string& comment,
         const std::string& field, int precision, const std::string& symmetry, bool scipy_text) {
        io::TensorData d;
        if (nb::isinstance<SparseTensor>(x)) {
          d.sparse = nb::cast<SparseTensor>(x);
        } else {
          d.dense = AsTensor(x, "write_mtx: x");
        }
        const io::MtxWriteOptions options =
            MtxOptions(comment, field, precision, symmetry, scipy_text);
        Interruptible([&] { io::WriteMtx(path, d, options); });
      },
      nb::arg("path"), nb::arg("x"), nb::arg("comment") = "", nb::arg("field") = "",
      nb::arg("precision") = -1, nb::arg("symmetry") = "general", nb::arg("scipy_text") = false,
      "Writes a Matrix Market file with io::MtxWriteOptions: field '' (from the dtype), 'real', "
      "'integer' or 'pattern'; symmetry 'general', 'symmetric', 'skew-symmetric', 'hermitian' "
      "or 'detect'; scipy_text: scipy.io.mmwrite's text.");
  m.def(
      "write_mtx_coo",
      [](const std::string& path, nb::handle rows, nb::handle cols, nb::handle values,
         std::vector<int64_t> shape, const std::string& comment, const std::string& field,
         int precision, const std::string& symmetry, bool scipy_text) {
        TK_CHECK(shape.size() == 2, kInvalidArgument, "write_mtx_coo: shape must have 2 dims, got ",
                 shape.size());
        io::MtxCoordinates matrix;
        matrix.rows = AsTensor(rows, "write_mtx_coo: rows");
        matrix.cols = AsTensor(cols, "write_mtx_coo: cols");
        matrix.values = AsTensor(values, "write_mtx_coo: values");
        matrix.num_rows = shape[0];
        matrix.num_cols = shape[1];
        const io::MtxWriteOptions options =
            MtxOptions(comment, field, precision, symmetry, scipy_text);
        Interruptible([&] { io::WriteMtx(path, matrix, options); });
      },
      nb::arg("path"), nb::arg("rows"), nb::arg("cols"), nb::arg("values"), nb::arg("shape"),
      nb::arg("comment") = "", nb::arg("field") = "", nb::arg("precision") = -1,
      nb::arg("symmetry") = "general", nb::arg("scipy_text") = false,
      "write_mtx of SciPy's COO arrays (row, col, data) as they are, shared, not copied into "
      "a SparseTensor's [nnz, 2] indices.");
  m.def(
      "detect_mtx_symmetry",
      [](nb::handle x) {
        io::TensorData d;
        if (nb::isinstance<SparseTensor>(x)) {
          d.sparse = nb::cast<SparseTensor>(x);
        } else {
          d.dense = AsTensor(x, "detect_mtx_symmetry: x");
        }
        io::MtxSymmetry s;
        {
          nb::gil_scoped_release release;
          s = io::DetectMtxSymmetry(d);
        }
        return std::string(s == io::MtxSymmetry::kSymmetric       ? "symmetric"
                           : s == io::MtxSymmetry::kSkewSymmetric ? "skew-symmetric"
                                                                  : "general");
      },
      nb::arg("x"),
      "The symmetry scipy.io.mmwrite's test finds: 'general', 'symmetric' or "
      "'skew-symmetric'.");
  m.def(
      "coo_coordinates",
      [](const SparseTensor& x) {
        TK_CHECK(x.rank() == 2, kInvalidArgument, "coo_coordinates: expected a matrix, got a rank-",
                 x.rank(), " tensor");
        // int32 when the shape allows it, the index dtype SciPy's COO then keeps without
        // scanning or copying the arrays; else int64.
        const bool narrow = std::max(x.shape()[0], x.shape()[1]) <= INT32_MAX;
        const DType dtype = narrow ? DType::kInt32 : DType::kInt64;
        nb::gil_scoped_release release;
        const Tensor indices = x.indices().HostContiguous();
        const int64_t n = x.nnz();
        Tensor rows = Tensor::Empty({n}, dtype), cols = Tensor::Empty({n}, dtype);
        Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(
            dtype, "coo_coordinates", [&]<typename I>() {
              const int64_t* idx = indices.data<int64_t>();
              I* r = rows.data<I>();
              I* c = cols.data<I>();
              ParallelFor(0, n, int64_t{1} << 16, [&](int64_t b, int64_t e) {
                for (int64_t k = b; k < e; ++k) {
                  r[k] = static_cast<I>(idx[2 * k]);
                  c[k] = static_cast<I>(idx[2 * k + 1]);
                }
              });
            });
        return std::make_tuple(rows, cols);
      },
      nb::arg("x"),
      "(rows, cols) of a matrix's entries as separate arrays in the library's memory, int32 "
      "when its shape fits (SciPy's COO keeps them as they are), else int64.");
  m.def("formats", [] {
    nb::list out;
    for (const auto& f : io::kFileFormats)
      out.append(nb::make_tuple(f.extension, f.dense, f.sparse));
    return out;
  });
  m.def(
      "read_libsvm",
      [](nb::handle source, const std::string& name, nb::handle zero_based, bool multilabel,
         int64_t num_features, nb::handle dtype, bool csr) {
        io::LibsvmReadOptions options;
        options.csr = csr;
        options.base = IndexBaseArg(zero_based);
        options.multilabel = multilabel;
        options.num_features = num_features;
        options.dtype = DTypeArg(dtype);
        if (nb::isinstance<nb::bytes>(source)) {
          nb::bytes b = nb::borrow<nb::bytes>(source);
          return LibsvmResult(Interruptible(
              [&] { return io::ReadLibsvmFromMemory(b.c_str(), b.size(), name, options); }));
        }
        const std::string path = nb::cast<std::string>(source);
        return LibsvmResult(Interruptible([&] { return io::ReadLibsvm(path, options); }));
      },
      nb::arg("source"), nb::arg("name"), nb::arg("zero_based") = "auto",
      nb::arg("multilabel") = false, nb::arg("num_features") = -1, nb::arg("dtype") = "float64",
      nb::arg("csr") = false,
      "(features, labels, label_offsets or None, qids or None, one_based) of a libsvm file "
      "(a path) or of its bytes. features: a SparseTensor, or with csr=True SciPy's CSR arrays "
      "(indptr, indices, data, shape), int64 indices (each row's ascending).");
  m.def(
      "write_libsvm",
      [](const std::string& path, const SparseTensor& features, nb::handle labels,
         nb::handle label_offsets, nb::handle qids, bool one_based, bool sklearn,
         nb::bytes header) {
        io::LibsvmData d;
        d.features = features;
        if (!labels.is_none()) d.labels = AsTensor(labels, "labels");
        if (!label_offsets.is_none()) {
          d.label_offsets = AsTensorOf(label_offsets, DType::kInt64, "label_offsets");
        }
        if (!qids.is_none()) d.qids = AsTensorOf(qids, DType::kInt64, "qids");
        io::LibsvmWriteOptions options;
        options.one_based = one_based;
        options.style = sklearn ? io::LibsvmStyle::kScikitLearn : io::LibsvmStyle::kShortest;
        options.header.assign(header.c_str(), header.size());
        Interruptible([&] { io::WriteLibsvm(path, d, options); });
      },
      nb::arg("path"), nb::arg("features"), nb::arg("labels") = nb::none(),
      nb::arg("label_offsets") = nb::none(), nb::arg("qids") = nb::none(),
      nb::arg("one_based") = true, nb::arg("sklearn") = false, nb::arg("header") = nb::bytes(""),
      "Writes a libsvm file; sklearn=True: scikit-learn's dump_svmlight_file form, byte for "
      "byte. `header` is written first, as is.");
}

}  // namespace tensorkit::python
