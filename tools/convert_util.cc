// The conversions between what a file holds and what an output format needs.
#include <algorithm>
#include <cctype>
#include <numeric>

#include "tensorkit/dense/pattern.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {

io::TensorData ForOutput(io::TensorData data, io::Format out, const ConvertOptions& options,
                         const std::string& source) {
  // .mtx is written as coordinate entries and .tns holds only entries; .npz keeps either form.
  const bool needs_sparse =
      out == io::Format::kTns || out == io::Format::kMtx || out == io::Format::kLibsvm;
  if (!data.is_sparse() && needs_sparse) {
    data.sparse = SparseTensor::FromDense(data.dense);
    data.dense = Tensor();
  }
  if (data.is_sparse()) {
    if (options.coalesce) {
      data.sparse.Coalesce();
    } else if (options.reorder) {
      std::vector<int> order(data.sparse.rank());
      std::iota(order.begin(), order.end(), 0);
      data.sparse.Reorder(order);
    }
    if (out == io::Format::kNpy) {
      data.dense = SummedDense(data.sparse, source);
      data.sparse = SparseTensor();
    }
  }
  return data;
}

Tensor SummedDense(SparseTensor sparse, const std::string& source) {
  // Before Coalesce sorts anything: sparse shapes may hold more cells than int64 counts.
  int64_t elements = 0, bytes = 0;
  if (!ElementCount(sparse.shape(), &elements) ||
      __builtin_mul_overflow(elements, DTypeSize(sparse.dtype()), &bytes)) {
    double cells = 1;
    for (int64_t d : sparse.shape()) cells *= static_cast<double>(d);
    Throw(ErrorCode::kUnsupported, source.empty() ? std::string("a") : "'" + source + "' holds a",
          " sparse tensor of shape ", ShapeString(sparse.shape()),
          "; a dense array of it would have ", cells, " elements of ", DTypeName(sparse.dtype()),
          ", more than int64 counts (elements or bytes): keep it sparse, write .npz, .mtx or .tns");
  }
  // ToDense keeps the last of repeated entries; files mean their sum (SciPy's toarray, MATLAB,
  // the Matrix Market convention), which Coalesce computes.
  sparse.Coalesce();
  return sparse.ToDense();
}

namespace {

// A libsvm file's labels (and qids) travel with its features: to .npz as a scipy CSR matrix plus
// members `labels` (and `label_offsets` for multilabel files, `qids`), from an .npz that has a
// `labels` member back into the libsvm lines; other formats hold the features only.
void ConvertLibsvm(const std::string& in, io::Format in_format, const std::string& out,
                   io::Format out_format, const ConvertOptions& options) {
  io::LibsvmData d;
  if (in_format == io::Format::kLibsvm) {
    io::LibsvmReadOptions ro;
    ro.base = options.index_base;
    ro.multilabel = options.multilabel;
    // Streamed, in bounded memory, to the outputs it can lay out before parsing (the entries of
    // a libsvm file are already sorted and unique, so --reorder and --coalesce change nothing).
    if (out_format == io::Format::kMtx || (out_format == io::Format::kNpz && !options.compress)) {
      io::ConvertLibsvm(in, out, ro);
      return;
    }
    d = io::ReadLibsvm(in, ro);
  } else {
    io::ReadOptions ro;
    ro.index_base = options.index_base;
    io::TensorData data = ForOutput(io::Read(in, ro), io::Format::kLibsvm, options, in);
    d.features = data.sparse;
    if (in_format == io::Format::kNpz) {
      for (auto& [name, array] : io::ReadNpzMembers(in)) {
        if (name == "labels") d.labels = array;
        if (name == "label_offsets") d.label_offsets = array;
        if (name == "qids") d.qids = array;
      }
    }
  }
  if (out_format == io::Format::kLibsvm) {
    io::WriteLibsvm(out, d);
    return;
  }
  io::TensorData data;
  data.sparse = d.features;
  data = ForOutput(data, out_format, options);
  io::WriteOptions wo;
  wo.compress = options.compress;
  if (out_format == io::Format::kNpz && in_format == io::Format::kLibsvm) {
    wo.csr = true;
    wo.extra_members.emplace_back("labels", d.labels);
    if (d.label_offsets.defined()) wo.extra_members.emplace_back("label_offsets", d.label_offsets);
    if (d.qids.defined()) wo.extra_members.emplace_back("qids", d.qids);
  }
  io::Write(out, data, wo);
}

}  // namespace

void ConvertFile(const std::string& in, const std::string& out, const ConvertOptions& options) {
  if (IsTfrecordPath(in)) {  // tf.Example features, streamed into .npz members
    WithTfrecordCompression(in, options.compression, [&](const io::TFRecordOptions& o) {
      io::ConvertExamplesToNpz(in, out, o);
    });
    return;
  }
  const io::Format in_format = io::FormatFromPath(in);
  const io::Format out_format = io::FormatFromPath(out);
  if (in_format == io::Format::kLibsvm || out_format == io::Format::kLibsvm) {
    ConvertLibsvm(in, in_format, out, out_format, options);
    return;
  }
  io::TensorData data = ForOutput(io::Read(in), out_format, options, in);
  io::WriteOptions wo;
  wo.compress = options.compress;
  io::Write(out, data, wo);
}

std::string NormalizeExtension(const std::string& ext) {
  if (ext.empty()) {
    throw UsageError("a batch (-o OUTDIR) needs the output format: --to " +
                     io::FormatList("", ", ", " or "));
  }
  const std::optional<io::Format> f = io::FormatFromExtension(ext[0] == '.' ? ext.substr(1) : ext);
  if (!f) {
    throw UsageError("unknown output format '" + ext + "'; use " +
                     io::FormatList("", ", ", " or "));
  }
  return io::FormatName(*f);
}

}  // namespace tensorkit::tools
