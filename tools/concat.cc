// tensorkit concat --axis A -o OUT IN...: concatenates dense or sparse inputs along one axis.
#include <algorithm>
#include <iostream>
#include <memory>

#include "tensorkit/dense/ops.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

struct Args {
  int axis = 0;
  std::string out;
  std::vector<std::string> files;
  ConvertOptions options;
};

DType ValueDType(const io::TensorData& d) {
  return d.is_sparse() ? d.sparse.dtype() : d.dense.dtype();
}

// The dtype NumPy's concatenate gives inputs of these dtypes: the widest float, wide enough
// for the integers (int8 -> float16, int16 -> float32, wider -> float64), else the widest
// integer (int16 for uint8 with int8), else bool. Strings join strings only.
DType CommonDType(const std::vector<io::TensorData>& inputs,
                  const std::vector<std::string>& files) {
  int64_t float_bytes = 0, int_bytes = 0;
  bool any_signed = false, any_uint8 = false, any_f16 = false, any_bf16 = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType d = ValueDType(inputs[i]);
    if ((d == DType::kString) != (ValueDType(inputs[0]) == DType::kString)) {
      Throw(ErrorCode::kDTypeMismatch, "concat: '", files[i], "' holds ", DTypeName(d), " but '",
            files[0], "' holds ", DTypeName(ValueDType(inputs[0])), "; strings join only strings");
    }
    if (IsFloat(d)) float_bytes = std::max(float_bytes, DTypeSize(d));
    if (IsInteger(d)) int_bytes = std::max(int_bytes, DTypeSize(d));
    any_signed |= IsInteger(d) && d != DType::kUInt8;
    any_uint8 |= d == DType::kUInt8;
    any_f16 |= d == DType::kFloat16;
    any_bf16 |= d == DType::kBFloat16;
  }
  const DType first = ValueDType(inputs[0]);
  if (first == DType::kString) return first;
  if (any_uint8 && any_signed && int_bytes == 1) int_bytes = 2;
  if (float_bytes > 0) {
    const int64_t need = std::max(float_bytes, std::min<int64_t>(8, 2 * int_bytes));
    if (need == 2 && !any_f16) return DType::kBFloat16;
    if (need == 2 && !any_bf16) return DType::kFloat16;
    return need <= 4 ? DType::kFloat32 : DType::kFloat64;
  }
  if (int_bytes == 0) return DType::kBool;
  if (!any_signed) return DType::kUInt8;
  return int_bytes == 1   ? DType::kInt8
         : int_bytes == 2 ? DType::kInt16
         : int_bytes == 4 ? DType::kInt32
                          : DType::kInt64;
}

int Run(const Args& a) {
  const io::Format out_format = io::FormatFromPath(a.out);
  std::vector<io::TensorData> inputs;
  bool any_sparse = false;
  for (const std::string& f : a.files) {
    inputs.push_back(io::Read(f));
    any_sparse |= inputs.back().is_sparse();
  }
  const DType dtype = CommonDType(inputs, a.files);
  for (io::TensorData& d : inputs) {  // NumPy's promotion, so that mixed files still join
    if (d.is_sparse()) {
      d.sparse = SparseTensor::Create(d.sparse.indices(), Converted(d.sparse.values(), dtype),
                                      d.sparse.shape(), d.sparse.order());
    } else {
      d.dense = Converted(d.dense, dtype);
    }
  }
  // Dense work when the output is dense-only or nothing is sparse; sparse work otherwise.
  const bool dense = out_format == io::Format::kNpy || !any_sparse;
  io::TensorData result;
  if (dense) {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < inputs.size(); ++i) {
      io::TensorData& d = inputs[i];
      parts.push_back(d.is_sparse() ? SummedDense(d.sparse, a.files[i]) : d.dense);
    }
    result.dense = Concatenate(parts, a.axis);
  } else {
    std::vector<SparseTensor> parts;
    for (io::TensorData& d : inputs) {
      parts.push_back(d.is_sparse() ? d.sparse : SparseTensor::FromDense(d.dense));
    }
    result.sparse = SparseTensor::Concat(parts, a.axis);
  }
  result = ForOutput(std::move(result), out_format, a.options);
  io::WriteOptions wo;
  wo.compress = a.options.compress;
  io::Write(a.out, result, wo);
  return kExitOk;
}

}  // namespace

Subcommand AddConcat(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("concat", "Concatenate dense or sparse files along an axis");
  sub->add_option("--axis", args->axis, "The axis (negative counts from the end)")->required();
  sub->add_option("-o,--output", args->out, "The output file")->required();
  sub->add_option("files", args->files, "The inputs")->required();
  sub->add_flag("--coalesce", args->options.coalesce, "Sort and sum duplicates in the result");
  sub->add_flag("--compress", args->options.compress, "Deflate .npz members");
  sub->footer(
      "Sparse when any input is sparse and the output format holds sparse tensors; "
      "dense otherwise.\nExit codes: 0 ok, 1 failed, 2 usage error.");
  return {sub, [args]() { return Run(*args); }};
}

}  // namespace tensorkit::tools
