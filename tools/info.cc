// tensorkit info [--json] [--rows] FILE: format, kind, shape, dtype, nnz, order and density, and
// with --rows the statistics of the row lengths (row_stats.h); of a TFRecord file, its features,
// and with --rows each feature's values per record.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "tensorkit/common/file_util.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"
#include "tensorkit/tools/json.h"
#include "tensorkit/tools/row_stats.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

struct Args {
  std::string file;
  bool json = false;
  bool rows = false;
  bool distinct = false;
  std::string compression = "auto";  // TFRecord files
};

struct Summary {
  std::string format;
  bool sparse = false;
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t nnz = 0;
  std::vector<int> order;  // sparse: the known order; empty when unknown
  std::string layout;      // dense: "C" or "Fortran" or "strided"
  double density = 0;      // positions / cells (see density_method)
  // "distinct": distinct positions holding an entry (never above 1); "stored": stored entries
  // (at most 1), an upper bound that equals it unless entries repeat (unsorted files without
  // --distinct).
  std::string density_method = "distinct";
  std::optional<RowStats> rows;  // with --rows
};

std::string DenseLayout(const Tensor& t) {
  if (t.IsContiguous()) return "C";
  std::vector<int64_t> dims = t.Dims(), strides = t.Strides();
  int64_t s = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1 && strides[i] != s) return "strided";
    s *= dims[i];
  }
  return "Fortran";
}

// Nonzero elements of a dense tensor.
int64_t CountNonzeros(const Tensor& t) {
  if (t.dtype() == DType::kString) {  // "" is the zero of strings, as FromDense has it
    int64_t n = 0;
    for (const std::string& v : t.ToVector<std::string>()) n += !v.empty();
    return n;
  }
  return Dispatch<kNumericDTypes>(t.dtype(), "info", [&]<typename T>() {
    // In place when the elements are contiguous (as read): a copy would double the memory.
    const Tensor c = DenseLayout(t) != "strided" ? t : t.Clone();
    const T* v = c.data<T>();
    int64_t n = 0;
    for (int64_t i = 0; i < c.NumElements(); ++i) {
      n += static_cast<ComputeType<T>>(v[i]) != ComputeType<T>(0);
    }
    return n;
  });
}

// The row statistics of what `path` holds; the one place that knows which files have rows (a .svm
// file reads as a matrix, so its lines are rows already). A format whose rows are not axis 0 of
// a sparse tensor (a feature of TFRecord examples: FeatureLengths) has its own LengthTable.
RowStats RowsOf(const io::TensorData& d, const std::string& path) {
  TK_CHECK(d.is_sparse(), kInvalidArgument, "info --rows: '", path,
           "' holds a dense array of dims ", ShapeString(d.dense.Dims()),
           "; row statistics count the entries of a sparse file (.mtx coordinate, .tns, .svm, a "
           "scipy.sparse .npz)");
  return RowStatsOf(RowLengths(d.sparse, path));
}

Summary Summarize(const std::string& path, bool rows, bool distinct) {
  io::TensorData d = io::Read(path);
  Summary s;
  if (rows) s.rows = RowsOf(d, path);  // first: a file without rows fails before the costly part
  s.format = io::FormatName(io::FormatFromPath(path));
  s.sparse = d.is_sparse();
  double cells = 1;
  int64_t positions = 0;  // distinct positions holding an entry or a nonzero
  if (s.sparse) {
    s.shape = d.sparse.shape();
    s.dtype = DTypeName(d.sparse.dtype());
    s.nnz = d.sparse.nnz();
    if (d.sparse.OrderKnown()) s.order = d.sparse.order();
    positions = DistinctIfSorted(d.sparse);
    if (positions < 0 && distinct) {
      positions = DistinctPositions(d.sparse);  // a sorted copy of the indices
    } else if (positions < 0) {
      positions = s.nnz;
      s.density_method = "stored";
    }
  } else {
    s.shape = d.dense.Dims();
    s.dtype = DTypeName(d.dense.dtype());
    s.nnz = CountNonzeros(d.dense);
    positions = s.nnz;
    s.layout = DenseLayout(d.dense);
  }
  for (int64_t x : s.shape) cells *= static_cast<double>(x);
  // Stored entries can outnumber the cells; distinct positions never do, so neither does the
  // upper bound.
  s.density = cells > 0 ? std::min(1.0, static_cast<double>(positions) / cells) : 0.0;
  return s;
}

template <typename Int>
std::string JsonArray(const std::vector<Int>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// info of a TFRecord file of tf.Example records: records, bytes, and each feature's type and
// how many values the records hold (io::SummarizeExamples).
// With --rows, each feature's values per record as a LengthTable: every record is a row (as
// tf.io.parse_example's VarLenFeature makes it), a record without the feature an empty one.
LengthTable FeatureLengths(const io::ExampleFeatureSummary& f, int64_t records) {
  LengthTable t;
  t.rows = records;
  t.entries = f.values;
  const int64_t absent = records - f.records;
  if (absent > 0) t.count.emplace_back(0, absent);
  for (const auto& [length, n] : f.lengths) {
    if (length == 0 && absent > 0) {
      t.count[0].second += n;
    } else {
      t.count.emplace_back(length, n);
    }
  }
  return t;
}

// RowStatsText of a feature, its first line naming records (not axis 0), indented under it.
std::string FeatureRowsText(const RowStats& s, int64_t absent) {
  return RowStatsText(s,
                      "records: " + std::to_string(s.rows) + ", " + std::to_string(s.empty) +
                          " with no values (" + std::to_string(absent) + " without the feature)",
                      "    ");
}

int RunTfrecord(const Args& a) {
  io::TFRecordOptions o;
  io::ExampleFileSummary file;  // read a batch at a time: memory does not grow with the file
  WithTfrecordCompression(a.file, a.compression, [&](const io::TFRecordOptions& with) {
    o = with;
    file = io::SummarizeExampleFile(a.file, with, a.rows);
  });
  const std::vector<io::ExampleFeatureSummary>& fs = file.features;
  auto stats = [&](const io::ExampleFeatureSummary& f) {
    return RowStatsOf(FeatureLengths(f, file.records));
  };
  const char* comp = io::TFRecordCompressionName(o.compression);
  auto type = [](const io::ExampleFeatureSummary& f) {
    return std::string(f.dtype == DType::kInt64     ? "int64"
                       : f.dtype == DType::kFloat32 ? "float"
                                                    : "bytes") +
           (f.mixed_types ? " (mixed)" : "");
  };
  if (a.json) {
    std::cout << "{\"file\": " << JsonQuote(a.file) << ", \"format\": \"tfrecord\""
              << ", \"compression\": " << JsonQuote(comp) << ", \"records\": " << file.records
              << ", \"bytes\": " << file.bytes << ", \"features\": [";
    for (size_t i = 0; i < fs.size(); ++i) {
      const io::ExampleFeatureSummary& f = fs[i];
      std::cout << (i ? ", " : "") << "{\"key\": " << JsonQuote(f.key)
                << ", \"type\": " << JsonQuote(type(f)) << ", \"records\": " << f.records
                << ", \"values\": " << f.values << ", \"min_values\": " << f.min_values
                << ", \"max_values\": " << f.max_values;
      if (a.rows) {
        std::cout << ", \"absent\": " << file.records - f.records
                  << ", \"rows\": " << RowStatsJson(stats(f));
      }
      std::cout << "}";
    }
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout << "file:     " << a.file << "\n"
            << "format:   tfrecord (" << comp << ")\n"
            << "records:  " << file.records << " (" << file.bytes << " bytes)\n"
            << "features: " << fs.size() << "\n";
  for (const io::ExampleFeatureSummary& f : fs) {
    std::cout << "  " << f.key << ": " << type(f) << ", in " << f.records << " records, "
              << f.values << " values (" << f.min_values << " to " << f.max_values
              << " a record)\n";
    if (a.rows) std::cout << FeatureRowsText(stats(f), file.records - f.records);
  }
  return kExitOk;
}

int Run(const Args& a) {
  if (IsTfrecordPath(a.file)) {
    if (a.distinct) {
      throw UsageError("info: --distinct is for sparse tensor files, not '" + a.file + "'");
    }
    return RunTfrecord(a);
  }
  Summary s = Summarize(a.file, a.rows, a.distinct);
  std::ostringstream density;
  density.precision(6);
  density << s.density;
  if (a.json) {
    std::cout << "{\"file\": " << JsonQuote(a.file) << ", \"format\": " << JsonQuote(s.format)
              << ", \"sparse\": " << (s.sparse ? "true" : "false")
              << ", \"shape\": " << JsonArray(s.shape) << ", \"dtype\": " << JsonQuote(s.dtype)
              << ", \"nnz\": " << s.nnz << ", \"order\": "
              << (s.sparse ? (s.order.empty() ? "null" : JsonArray(s.order)) : JsonQuote(s.layout))
              << ", \"density\": " << density.str()
              << ", \"density_method\": " << JsonQuote(s.density_method);
    if (s.rows) std::cout << ", \"rows\": " << RowStatsJson(*s.rows);
    std::cout << "}\n";
    return kExitOk;
  }
  std::cout << "file:    " << a.file << "\n"
            << "format:  " << s.format << (s.sparse ? " (sparse)" : " (dense)") << "\n"
            << "shape:   " << ShapeString(s.shape) << "\n"
            << "dtype:   " << s.dtype << "\n"
            << "nnz:     " << s.nnz << "\n"
            << "order:   "
            << (s.sparse ? (s.order.empty() ? "unknown" : ShapeString(s.order)) : s.layout) << "\n"
            << "density: " << density.str()
            << (s.density_method == "stored"
                    ? " (stored entries / cells, unsorted file: --distinct counts positions)"
                    : "")
            << "\n";
  if (s.rows) std::cout << RowStatsText(*s.rows);
  return kExitOk;
}

}  // namespace

Subcommand AddInfo(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("info",
                                     "Show a file's format, shape, dtype, nnz, order "
                                     "and density");
  sub->add_option("file", args->file, "The file")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  sub->add_option("--compression", args->compression,
                  "TFRecord files: auto (default: by the first bytes), NONE, GZIP or ZLIB")
      ->check(CLI::IsMember({"auto", "NONE", "GZIP", "ZLIB"}));
  sub->add_flag("--distinct", args->distinct,
                "Count the distinct positions of an unsorted sparse file for the density (a sort "
                "of a copy); sorted files always get them, in one pass");
  sub->add_flag("--rows", args->rows,
                "Also the entries per row of a 2-D sparse file (or the values per record of "
                "each feature of a TFRecord file): min, max, mean, p50/p90/p99, empty rows and "
                "a histogram (JSON key \"rows\")");
  sub->footer(
      "order: the sorted axes of a sparse tensor (or unknown/null); C, Fortran or "
      "strided for a dense one.\nExit codes: 0 ok, 1 unreadable file, 2 usage error.");
  return {sub, [args]() { return Run(*args); }};
}

}  // namespace tensorkit::tools
