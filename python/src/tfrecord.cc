// tensorkit._tensorkit._io's TFRecord and tf.Example functions (io/tfrecord.h, io/tf_example.h):
// a streaming record iterator, the atomic writer, and ParseExamples / ParseSequenceExamples
// writing through PythonOutputs, an OutputAllocator whose string outputs are Python bytes
// objects. tensorkit.io (tensorkit/io.py) turns tf.io's feature configs into the plain tuples
// taken here and assembles the results (SparseTensor, JaggedTensor) from the outputs.
//
// Strings: each element's bytes go from the record straight into a new bytes object. Creating
// Python objects needs the GIL, which ParseExamples' worker threads do not hold: a string write
// covers a range of elements, so it takes the GIL once for the range, sizes and creates the
// objects there, and (Build) writes their bytes after letting the GIL go again.
#include "tensorkit/io/tfrecord.h"

#include <Python.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/outputs.h"
#include "tensorkit/io/tf_example.h"

namespace tensorkit::python {
namespace {

using namespace nb::literals;

// A new bytes object of `size` bytes, uninitialised (GIL held); Error when Python has no memory.
PyObject* NewBytes(const char* data, int64_t size) {
  PyObject* b = PyBytes_FromStringAndSize(data, static_cast<Py_ssize_t>(size));
  if (b == nullptr) {
    PyErr_Clear();
    Throw(ErrorCode::kResourceExhausted, "parse_example: no memory for a bytes object of ", size,
          " bytes");
  }
  return b;
}

// One string output: a bytes object per element, owned here until Take() hands them to NumPy.
class BytesOutput : public StringOutput {
 public:
  explicit BytesOutput(std::vector<int64_t> dims) : dims_(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    objects_.assign(static_cast<size_t>(n), nullptr);
  }
  // Destroyed with the GIL held (PythonOutputs lives in the binding's frame).
  ~BytesOutput() override {
    for (PyObject* o : objects_) Py_XDECREF(o);
  }

  void Set(int64_t begin, int64_t end, CallRef<std::string_view(int64_t)> bytes) override {
    nb::gil_scoped_acquire gil;  // from any thread, a pool worker included
    for (int64_t i = begin; i < end; ++i) {
      const std::string_view s = bytes(i);
      Put(i, NewBytes(s.data(), static_cast<int64_t>(s.size())));
    }
  }
  void SetSpans(int64_t begin, int64_t end, const ByteSpan* spans) override {
    nb::gil_scoped_acquire gil;  // from any thread, a pool worker included
    for (int64_t i = begin; i < end; ++i) {
      const ByteSpan& s = spans[i - begin];
      Put(i, NewBytes(s.data, s.size));
    }
  }
  void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
             CallRef<void(int64_t, char*)> write) override {
    std::vector<int64_t> sizes(static_cast<size_t>(end - begin));
    for (int64_t i = begin; i < end; ++i) sizes[static_cast<size_t>(i - begin)] = size(i);
    {
      nb::gil_scoped_acquire gil;  // from any thread, a pool worker included
      for (int64_t i = begin; i < end; ++i) {
        Put(i, NewBytes(nullptr, sizes[static_cast<size_t>(i - begin)]));
      }
    }
    // The objects are new and reachable from here only: their bytes are written without the GIL.
    for (int64_t i = begin; i < end; ++i) {
      if (sizes[static_cast<size_t>(i - begin)] > 0) {
        write(i, PyBytes_AS_STRING(objects_[static_cast<size_t>(i)]));
      }
    }
  }

  // A NumPy object array of dims_ holding the objects (GIL held); they are the array's now.
  nb::object Take() {
    for (PyObject*& o : objects_) {
      if (o == nullptr) o = NewBytes("", 0);  // never left unset by a successful parse
    }
    return ObjectArray(&objects_, dims_);
  }

 private:
  void Put(int64_t i, PyObject* o) {
    PyObject*& slot = objects_[static_cast<size_t>(i)];
    Py_XDECREF(slot);  // an element set twice keeps the last
    slot = o;
  }

  std::vector<int64_t> dims_;
  std::vector<PyObject*> objects_;
};

// Numbers in tensorkit Tensors (NumPy views them without a copy), strings in bytes objects.
class PythonOutputs : public OutputAllocator {
 public:
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override {
    TK_CHECK(device.is_cpu(), kUnsupported, "parse_example: output ", k, " asked on ",
             device.ToString(), "; Python outputs live on the CPU");
    Tensor t = Tensor::Empty(dims, dtype);
    std::lock_guard<std::mutex> lock(mu_);
    numbers_[k] = t;
    return t;
  }
  // String outputs that become the values of a SparseTensor or JaggedTensor, which hold
  // tensorkit string tensors: written as such, with no Python object in between.
  explicit PythonOutputs(std::vector<int> tensor_strings = {})
      : tensor_strings_(std::move(tensor_strings)) {}

  StringOutput* AllocateStrings(int k, const std::vector<int64_t>& dims) override {
    if (std::find(tensor_strings_.begin(), tensor_strings_.end(), k) != tensor_strings_.end()) {
      return OutputAllocator::AllocateStrings(k, dims);  // a kString Tensor through Allocate
    }
    auto s = std::make_unique<BytesOutput>(dims);
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = strings_[k];
    slot = std::move(s);
    return slot.get();
  }
  void Commit() override { committed_ = true; }

  // Output k as a tk.Tensor or a NumPy object array of bytes (GIL held).
  nb::object Take(int k) {
    TK_INTERNAL_CHECK(committed_);
    if (auto it = strings_.find(k); it != strings_.end()) return it->second->Take();
    auto it = numbers_.find(k);
    TK_INTERNAL_CHECK(it != numbers_.end());
    return nb::cast(it->second);
  }

 private:
  std::vector<int> tensor_strings_;
  std::mutex mu_;
  std::map<int, Tensor> numbers_;
  std::map<int, std::unique_ptr<BytesOutput>> strings_;
  bool committed_ = false;
};

// --- Arguments ------------------------------------------------------------------------------

DType ExampleDType(const std::string& name, const std::string& key) {
  if (name == "int64") return DType::kInt64;
  if (name == "float32") return DType::kFloat32;
  if (name == "string") return DType::kString;
  if (name == "int32") return DType::kInt32;  // row_splits_dtype
  Throw(ErrorCode::kInvalidArgument, "parse_example: feature '", key, "': dtype '", name,
        "' is not one of int64, float32, string");
}

// The records: a list of bytes objects, which the caller keeps alive during the parse.
std::vector<std::string_view> Records(nb::handle serialized) {
  TK_CHECK(PyList_Check(serialized.ptr()), kInvalidArgument,
           "parse_example: serialized must be a list of bytes");
  const Py_ssize_t n = PyList_GET_SIZE(serialized.ptr());
  std::vector<std::string_view> records(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* r = PyList_GET_ITEM(serialized.ptr(), i);
    if (!PyBytes_Check(r)) {
      throw nb::type_error(("parse_example: serialized[" + std::to_string(i) + "] is " +
                            Py_TYPE(r)->tp_name + ", not bytes")
                               .c_str());
    }
    records[static_cast<size_t>(i)] =
        std::string_view(PyBytes_AS_STRING(r), static_cast<size_t>(PyBytes_GET_SIZE(r)));
  }
  return records;
}

Tensor DefaultArg(nb::handle value, DType dtype, const std::string& key) {
  if (value.is_none()) return Tensor();
  const std::string what = "parse_example: default_value of '" + key + "'";
  return AsTensorOf(value, dtype, what.c_str());
}

// The spec from tensorkit.io's tuples:
//   fixed          (key, dtype, shape, default or None)
//   var_len        (key, dtype)
//   sparse         (key, index_keys, value_key, dtype, size, already_sorted)
//   ragged         (key, dtype, value_key, [(kind, key, length)], row_splits_dtype)
//   fixed_sequence (key, dtype, shape, default or None, allow_missing)
io::ExampleSpec SpecArg(nb::handle fixed, nb::handle var_len, nb::handle sparse, nb::handle ragged,
                        nb::handle fixed_sequence) {
  io::ExampleSpec spec;
  for (nb::handle h : fixed) {
    auto [key, dtype, shape, def] =
        nb::cast<std::tuple<std::string, std::string, std::vector<int64_t>, nb::object>>(h);
    io::FixedLenFeature f;
    f.key = key;
    f.dtype = ExampleDType(dtype, key);
    f.shape = std::move(shape);
    f.default_value = DefaultArg(def, f.dtype, key);
    spec.fixed.push_back(std::move(f));
  }
  for (nb::handle h : var_len) {
    auto [key, dtype] = nb::cast<std::tuple<std::string, std::string>>(h);
    spec.var_len.push_back({key, ExampleDType(dtype, key)});
  }
  for (nb::handle h : sparse) {
    auto [key, index_keys, value_key, dtype, size, sorted] =
        nb::cast<std::tuple<std::string, std::vector<std::string>, std::string, std::string,
                            std::vector<int64_t>, bool>>(h);
    io::SparseFeature f;
    f.key = key;
    f.index_keys = std::move(index_keys);
    f.value_key = value_key;
    f.dtype = ExampleDType(dtype, key);
    f.size = std::move(size);
    f.already_sorted = sorted;
    spec.sparse.push_back(std::move(f));
  }
  for (nb::handle h : ragged) {
    auto [key, dtype, value_key, parts, splits] = nb::cast<
        std::tuple<std::string, std::string, std::string,
                   std::vector<std::tuple<std::string, std::string, int64_t>>, std::string>>(h);
    io::RaggedFeature f;
    f.key = key;
    f.dtype = ExampleDType(dtype, key);
    f.value_key = value_key;
    f.row_splits_dtype = ExampleDType(splits, key);
    for (const auto& [kind, pkey, length] : parts) {
      using P = io::RaggedPartition;
      if (kind == "RowSplits") {
        f.partitions.push_back(P::RowSplits(pkey));
      } else if (kind == "RowLengths") {
        f.partitions.push_back(P::RowLengths(pkey));
      } else if (kind == "RowStarts") {
        f.partitions.push_back(P::RowStarts(pkey));
      } else if (kind == "RowLimits") {
        f.partitions.push_back(P::RowLimits(pkey));
      } else if (kind == "ValueRowIds") {
        f.partitions.push_back(P::ValueRowIds(pkey));
      } else if (kind == "UniformRowLength") {
        f.partitions.push_back(P::UniformRowLength(length));
      } else {
        Throw(ErrorCode::kInvalidArgument, "parse_example: feature '", key, "': partition '", kind,
              "' is not one of RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, "
              "UniformRowLength");
      }
    }
    spec.ragged.push_back(std::move(f));
  }
  for (nb::handle h : fixed_sequence) {
    auto [key, dtype, shape, def, allow_missing] =
        nb::cast<std::tuple<std::string, std::string, std::vector<int64_t>, nb::object, bool>>(h);
    io::FixedLenSequenceFeature f;
    f.key = key;
    f.dtype = ExampleDType(dtype, key);
    f.shape = std::move(shape);
    f.default_value = DefaultArg(def, f.dtype, key);
    f.allow_missing = allow_missing;
    spec.fixed_sequence.push_back(std::move(f));
  }
  return spec;
}

// How many levels of row splits a ragged feature's output has: the batch's (when there is one)
// and one per partition but trailing UniformRowLengths.
int RaggedLevels(const io::RaggedFeature& f, bool batch) {
  size_t end = f.partitions.size();
  while (end > 0 && f.partitions[end - 1].kind == io::RaggedPartition::Kind::kUniform) --end;
  return static_cast<int>(end) + (batch ? 1 : 0);
}

// The string outputs of `spec` that are values of a SparseTensor or JaggedTensor (a ragged
// feature of one level; other ragged features give their flat values as NumPy arrays).
std::vector<int> ValueOutputs(const io::ExampleSpec& spec, const io::ExampleOutputIndex& index,
                              bool batch, std::vector<int> into = {}) {
  for (size_t i = 0; i < spec.var_len.size(); ++i) {
    if (spec.var_len[i].dtype == DType::kString) {
      into.push_back(index.VarLen(static_cast<int>(i)) + 1);
    }
  }
  for (size_t i = 0; i < spec.sparse.size(); ++i) {
    if (spec.sparse[i].dtype == DType::kString) {
      into.push_back(index.Sparse(static_cast<int>(i)) + 1);
    }
  }
  for (size_t i = 0; i < spec.ragged.size(); ++i) {
    if (spec.ragged[i].dtype == DType::kString && RaggedLevels(spec.ragged[i], batch) == 1) {
      into.push_back(index.Ragged(static_cast<int>(i)));
    }
  }
  return into;
}

// Outputs [first, first + n) as a list.
nb::list TakeRange(PythonOutputs& out, int first, int n) {
  nb::list l;
  for (int k = first; k < first + n; ++k) l.append(out.Take(k));
  return l;
}

// An ExampleSpec's outputs, grouped: (fixed, var_len, sparse, fixed_sequence, ragged), the
// sparse ones as [indices, values, dense_shape], the ragged ones as [flat_values, splits...].
nb::tuple ExampleResult(PythonOutputs& out, const io::ExampleSpec& spec,
                        const io::ExampleOutputIndex& index) {
  nb::list fixed, var_len, sparse, sequence, ragged;
  for (size_t i = 0; i < spec.fixed.size(); ++i) {
    fixed.append(out.Take(index.Fixed(static_cast<int>(i))));
  }
  for (size_t i = 0; i < spec.var_len.size(); ++i) {
    var_len.append(TakeRange(out, index.VarLen(static_cast<int>(i)), 3));
  }
  for (size_t i = 0; i < spec.sparse.size(); ++i) {
    sparse.append(TakeRange(out, index.Sparse(static_cast<int>(i)), 3));
  }
  for (size_t i = 0; i < spec.fixed_sequence.size(); ++i) {
    sequence.append(out.Take(index.FixedSequence(static_cast<int>(i))));
  }
  for (size_t i = 0; i < spec.ragged.size(); ++i) {
    const int first = index.Ragged(static_cast<int>(i));
    const int next =
        i + 1 < spec.ragged.size() ? index.Ragged(static_cast<int>(i) + 1) : index.end();
    ragged.append(TakeRange(out, first, next - first));
  }
  return nb::make_tuple(fixed, var_len, sparse, sequence, ragged);
}

// --- TFRecord files -------------------------------------------------------------------------

io::TFRecordOptions RecordOptions(const std::string& compression, int level) {
  io::TFRecordOptions options;
  options.compression = io::TFRecordCompressionFromName(compression);
  options.compression_level = level;
  return options;
}

// Records one at a time. Uncompressed files are memory-mapped: the pages read are given back
// every kRelease bytes, so resident memory stays bounded whatever the file's size.
class RecordIterator {
 public:
  RecordIterator(const std::string& path, const std::string& compression)
      : reader_(io::TFRecordReader::Open(path, RecordOptions(compression, -1))) {}

  nb::object Next() {
    nb::object result;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      if (reader_.has_value()) {
        if (since_release_ > kRelease) {
          reader_->ReleaseRead();
          since_release_ = 0;
        }
        std::string_view record;
        if (reader_->Next(&record)) {
          since_release_ += static_cast<int64_t>(record.size()) + 16;
          // Copied while the lock keeps another thread's call from moving the reader on.
          nb::gil_scoped_acquire acquire;
          result = nb::steal(NewBytes(record.data(), static_cast<int64_t>(record.size())));
        } else {
          reader_.reset();  // unmaps the file
        }
      }
    }
    if (!result.is_valid()) throw nb::stop_iteration();
    return result;
  }

 private:
  static constexpr int64_t kRelease = int64_t{16} << 20;
  std::mutex mu_;
  std::optional<io::TFRecordReader> reader_;
  int64_t since_release_ = 0;
};

class RecordWriter {
 public:
  RecordWriter(const std::string& path, const std::string& compression, int level)
      : writer_(std::in_place, path, RecordOptions(compression, level)) {}

  void Write(nb::bytes record) {
    nb::gil_scoped_release release;  // `record` stays referenced by the caller
    std::lock_guard<std::mutex> lock(mu_);
    TK_CHECK(writer_.has_value(), kInvalidArgument,
             "TFRecordWriter.write: the writer is closed; open a new one");
    writer_->Write(std::string_view(record.c_str(), record.size()));
  }
  void Close() {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    if (!writer_.has_value()) return;
    std::optional<io::TFRecordWriter> w = std::move(writer_);
    writer_.reset();
    w->Close();
    written_at_close_ = w->records_written();
  }
  // Drops the output: the file is neither created nor replaced.
  void Abandon() {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    writer_.reset();
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !writer_.has_value();
  }
  int64_t records_written() {
    std::lock_guard<std::mutex> lock(mu_);
    return writer_.has_value() ? writer_->records_written() : written_at_close_;
  }

 private:
  std::mutex mu_;
  std::optional<io::TFRecordWriter> writer_;
  int64_t written_at_close_ = 0;
};

// Examples' features for SerializeExamples from tensorkit.io's lists of (key, Tensor) and
// (key, JaggedTensor).
nb::list SerializeResult(const std::vector<std::string>& examples) {
  nb::list out;
  for (const std::string& e : examples) {
    out.append(nb::steal(NewBytes(e.data(), static_cast<int64_t>(e.size()))));
  }
  return out;
}

}  // namespace

void BindTFRecord(nb::module_& m) {
  nb::class_<RecordIterator>(m, "TFRecordIterator",
                             "The records of a TFRecord file, one bytes object at a time.")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"),
           nb::arg("compression") = "", nb::call_guard<nb::gil_scoped_release>())
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &RecordIterator::Next);
  nb::class_<RecordWriter>(m, "TFRecordWriter",
                           "Writes a TFRecord file atomically: it appears on close().")
      .def(nb::init<const std::string&, const std::string&, int>(), nb::arg("path"),
           nb::arg("compression") = "", nb::arg("level") = -1,
           nb::call_guard<nb::gil_scoped_release>())
      .def("write", &RecordWriter::Write, nb::arg("record"))
      .def("close", &RecordWriter::Close)
      .def("abandon", &RecordWriter::Abandon)
      .def_prop_ro("closed", &RecordWriter::closed);
  m.def(
      "parse_example",
      [](nb::handle serialized, nb::handle fixed, nb::handle var_len, nb::handle sparse,
         nb::handle ragged, nb::handle fixed_sequence, bool batch) {
        const io::ExampleSpec spec = SpecArg(fixed, var_len, sparse, ragged, fixed_sequence);
        const std::vector<std::string_view> records = Records(serialized);
        const io::ExampleOutputIndex index(spec);
        PythonOutputs out(ValueOutputs(spec, index, batch));
        {
          // `serialized` stays referenced by the caller
          Interruptible([&] { io::ParseExamples(records, spec, out, batch); });
        }
        return ExampleResult(out, spec, index);
      },
      nb::arg("serialized"), nb::arg("fixed"), nb::arg("var_len"), nb::arg("sparse"),
      nb::arg("ragged"), nb::arg("fixed_sequence"), nb::arg("batch") = true,
      "io::ParseExamples into NumPy object arrays of bytes (strings) and tk.Tensors (numbers): "
      "(fixed, var_len, sparse, fixed_sequence, ragged) outputs in spec order.");
  m.def(
      "parse_sequence_example",
      [](nb::handle serialized, nb::handle fixed, nb::handle var_len, nb::handle sparse,
         nb::handle ragged, nb::handle fixed_sequence, nb::handle list_dense,
         nb::handle list_sparse, nb::handle list_ragged, bool batch) {
        io::SequenceExampleSpec spec;
        spec.context = SpecArg(fixed, var_len, sparse, ragged, fixed_sequence);
        const io::ExampleSpec lists =
            SpecArg(nb::list(), list_sparse, nb::list(), list_ragged, list_dense);
        spec.feature_list_dense = lists.fixed_sequence;
        spec.feature_list_sparse = lists.var_len;
        spec.feature_list_ragged = lists.ragged;
        const std::vector<std::string_view> records = Records(serialized);
        const io::SequenceOutputIndex index(spec);
        std::vector<int> values = ValueOutputs(spec.context, index.context(), batch);
        for (size_t i = 0; i < spec.feature_list_sparse.size(); ++i) {
          if (spec.feature_list_sparse[i].dtype == DType::kString) {
            values.push_back(index.FeatureListSparse(static_cast<int>(i)) + 1);
          }
        }
        for (size_t i = 0; i < spec.feature_list_ragged.size(); ++i) {
          // A feature list's ragged output has a level of steps over the ragged feature's.
          if (spec.feature_list_ragged[i].dtype == DType::kString &&
              RaggedLevels(spec.feature_list_ragged[i], batch) == 0) {
            values.push_back(index.FeatureListRagged(static_cast<int>(i)));
          }
        }
        PythonOutputs out(std::move(values));
        {
          Interruptible([&] { io::ParseSequenceExamples(records, spec, out, batch); });
        }
        nb::list dense, sparse_out, ragged_out;
        for (size_t i = 0; i < spec.feature_list_dense.size(); ++i) {
          dense.append(TakeRange(out, index.FeatureListDense(static_cast<int>(i)), 2));
        }
        for (size_t i = 0; i < spec.feature_list_sparse.size(); ++i) {
          sparse_out.append(TakeRange(out, index.FeatureListSparse(static_cast<int>(i)), 3));
        }
        for (size_t i = 0; i < spec.feature_list_ragged.size(); ++i) {
          const int first = index.FeatureListRagged(static_cast<int>(i));
          const int next = i + 1 < spec.feature_list_ragged.size()
                               ? index.FeatureListRagged(static_cast<int>(i) + 1)
                               : index.end();
          ragged_out.append(TakeRange(out, first, next - first));
        }
        return nb::make_tuple(ExampleResult(out, spec.context, index.context()), dense, sparse_out,
                              ragged_out);
      },
      nb::arg("serialized"), nb::arg("fixed"), nb::arg("var_len"), nb::arg("sparse"),
      nb::arg("ragged"), nb::arg("fixed_sequence"), nb::arg("list_dense"), nb::arg("list_sparse"),
      nb::arg("list_ragged"), nb::arg("batch") = true,
      "io::ParseSequenceExamples: (context as parse_example gives it, feature_list_dense "
      "[values, lengths], feature_list_sparse [indices, values, dense_shape], "
      "feature_list_ragged [flat_values, splits...]).");
  m.def(
      "serialize_examples",
      [](const std::vector<std::pair<std::string, Tensor>>& fixed,
         const std::vector<std::pair<std::string, JaggedTensor>>& var_len) {
        std::vector<std::string> examples;
        {
          nb::gil_scoped_release release;
          examples = io::SerializeExamples(fixed, var_len);
        }
        return SerializeResult(examples);
      },
      nb::arg("fixed"), nb::arg("var_len"),
      "io::SerializeExamples: one serialized tf.Example (bytes) per row.");
}

}  // namespace tensorkit::python
