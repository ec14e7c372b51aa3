// tensorkit concat --axis A -o OUT IN...: concatenates dense or sparse inputs along one axis.
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

int Run(const Args& a) {
  const io::Format out_format = io::FormatFromPath(a.out);
  std::vector<io::TensorData> inputs;
  bool any_sparse = false;
  for (const std::string& f : a.files) {
    inputs.push_back(io::Read(f));
    any_sparse |= inputs.back().is_sparse();
  }
  // Dense work when the output is dense-only or nothing is sparse; sparse work otherwise.
  const bool dense = out_format == io::Format::kNpy || !any_sparse;
  io::TensorData result;
  if (dense) {
    std::vector<Tensor> parts;
    for (io::TensorData& d : inputs) parts.push_back(d.is_sparse() ? d.sparse.ToDense() : d.dense);
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
