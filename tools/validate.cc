// tensorkit validate FILE: reads the whole file and checks sparse indices (bounds, duplicates,
// claimed order), or a TFRecord file's CRCs and tf.Example records. Exit 1 with the reason when
// invalid.
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "tensorkit/io/tf_example.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

// A TFRecord file is valid when every record's CRCs hold and every record is a tf.Example.
int RunTfrecord(const std::string& file) {
  io::TFRecordCompression used = io::TFRecordCompression::kNone;
  int64_t records = 0;
  size_t features = 0;
  try {
    WithTfrecordCompression(file, "auto", [&](const io::TFRecordOptions& o) {
      used = o.compression;
      const io::ExampleFileSummary s = io::SummarizeExampleFile(file, o);  // a batch at a time
      records = s.records;
      features = s.features.size();
    });
  } catch (const Error& e) {
    std::cout << "invalid: " << file << ": " << e.what() << "\n";
    return kExitFailed;
  }
  std::cout << "valid: " << file << ": tfrecord (" << io::TFRecordCompressionName(used) << "), "
            << records << " tf.Example records, " << features << " feature keys\n";
  return kExitOk;
}

int Run(const std::string& file) {
  if (IsTfrecordPath(file)) return RunTfrecord(file);
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
