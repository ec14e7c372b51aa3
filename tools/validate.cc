// tensorkit validate [--strict] FILE: reads the whole file and checks sparse indices (bounds;
// repeated coordinates counted, or with --strict refused with the claimed order), or a TFRecord
// file's CRCs and tf.Example records. Exit 1 with the reason when invalid.
//
// Every sparse format the tool reads lets a coordinate appear more than once, meaning the sum of
// its entries: Matrix Market and FROSTT files, and scipy.sparse coo, csr and csc arrays
// (has_canonical_format False). So repeats are valid and reported; --strict asks for canonical
// data (SparseTensor::ValidateIndices: no repeat, and a claimed order strictly increasing).
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "tensorkit/io/tf_example.h"
#include "tensorkit/sparse/host_outputs.h"
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

// ", N repeated coordinates (...)" of a valid sparse file's line.
std::string RepeatsText(int64_t repeats) {
  if (repeats == 0) return ", no repeated coordinates";
  // The entries beyond the first at each position: nnz - distinct positions.
  return ", " + std::to_string(repeats) + " repeated coordinate" + (repeats == 1 ? "" : "s") +
         " (they count as their sum; --strict refuses them)";
}

int Run(const std::string& file, bool strict) {
  if (IsTfrecordPath(file)) return RunTfrecord(file);
  io::TensorData d;
  int64_t repeats = 0;
  try {
    d = io::Read(file);
    if (d.is_sparse() && strict) {
      d.sparse.ValidateIndices();
    } else if (d.is_sparse()) {
      CheckIndexBounds(d.sparse, "validate");  // first, so that its message names the entry
      repeats = d.sparse.nnz() - DistinctPositions(d.sparse);
    }
  } catch (const Error& e) {
    std::cout << "invalid: " << file << ": " << e.what() << "\n";
    return kExitFailed;
  }
  if (d.is_sparse()) {
    std::cout << "valid: " << file << ": sparse " << ShapeString(d.sparse.shape()) << " "
              << DTypeName(d.sparse.dtype()) << ", " << d.sparse.nnz() << " entries"
              << RepeatsText(repeats) << "\n";
  } else {
    std::cout << "valid: " << file << ": dense " << ShapeString(d.dense.Dims()) << " "
              << DTypeName(d.dense.dtype()) << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand AddValidate(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto strict = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "validate",
      "Check that a file reads cleanly and that sparse indices are in bounds; repeated "
      "coordinates are counted (they mean the sum of their entries)");
  sub->add_option("file", *file, "The file")->required();
  sub->add_flag("--strict", *strict,
                "Also refuse repeated coordinates of a sparse file (canonical data: each position "
                "stored once)");
  sub->footer(
      "Repeated coordinates are valid in every sparse format read (.mtx, .tns, scipy coo/csr/csc "
      ".npz) and counted on the valid: line.\nExit codes: 0 valid, 1 invalid (the reason is "
      "printed), 2 usage error.");
  return {sub, [file, strict]() { return Run(*file, *strict); }};
}

}  // namespace tensorkit::tools
