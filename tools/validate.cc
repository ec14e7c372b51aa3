// tensorkit validate FILE: reads the whole file and checks sparse indices (bounds, duplicates,
// claimed order). Exit 1 with the reason when invalid.
#include <iostream>
#include <memory>

#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

int Run(const std::string& file) {
  io::TensorData d;
  try {
    d = io::Read(file);
    if (d.is_sparse()) d.sparse.ValidateIndices();
  } catch (const Error& e) {
    std::cout << "invalid: " << file << ": " << e.what() << "\n";
    return kExitFailed;
  }
  if (d.is_sparse()) {
    std::cout << "valid: " << file << ": sparse " << ShapeString(d.sparse.shape()) << " "
              << DTypeName(d.sparse.dtype()) << ", " << d.sparse.nnz() << " entries\n";
  } else {
    std::cout << "valid: " << file << ": dense " << ShapeString(d.dense.Dims()) << " "
              << DTypeName(d.dense.dtype()) << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand AddValidate(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "validate",
      "Check that a file reads cleanly and that sparse indices are in bounds and "
      "unique");
  sub->add_option("file", *file, "The file")->required();
  sub->footer("Exit codes: 0 valid, 1 invalid (the reason is printed), 2 usage error.");
  return {sub, [file]() { return Run(*file); }};
}

}  // namespace tensorkit::tools
