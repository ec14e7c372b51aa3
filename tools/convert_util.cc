// The conversions between what a file holds and what an output format needs.
#include <algorithm>
#include <cctype>
#include <numeric>

#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {

io::TensorData ForOutput(io::TensorData data, io::Format out, const ConvertOptions& options) {
  // .mtx is written as coordinate entries and .tns holds only entries; .npz keeps either form.
  const bool needs_sparse = out == io::Format::kTns || out == io::Format::kMtx;
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
      data.dense = SummedDense(data.sparse);
      data.sparse = SparseTensor();
    }
  }
  return data;
}

Tensor SummedDense(SparseTensor sparse) {
  // ToDense keeps the last of repeated entries; files mean their sum (SciPy's toarray, MATLAB,
  // the Matrix Market convention), which Coalesce computes.
  sparse.Coalesce();
  return sparse.ToDense();
}

void ConvertFile(const std::string& in, const std::string& out, const ConvertOptions& options) {
  const io::Format out_format = io::FormatFromPath(out);
  io::TensorData data = ForOutput(io::Read(in), out_format, options);
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
