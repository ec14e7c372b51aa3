// Every checked-in fuzz seed and crash regression (tests/fuzz/corpus/<format>/*) must read
// cleanly or fail with tensorkit::Error: never a crash, never another exception. The files that
// NumPy/SciPy read are also compared, element by element, with what they read
// (tests/io/data/corpus_expected.txt, written by make_fixtures.py); those they refuse must fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/tf_example_spec.h"
#include "io/io_test_util.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"

namespace tensorkit::io {
namespace {

// One line of corpus_expected.txt: "error", or the kind, dtype, dims and C-order values.
struct Expected {
  bool error = false;
  bool sparse = false;
  std::string dtype;
  std::vector<int64_t> dims;
  std::vector<std::string> values;  // as written, parsed per dtype
};

std::map<std::string, Expected> ReadExpectations() {
  std::map<std::string, Expected> out;
  std::ifstream f(std::string(TENSORKIT_SOURCE_DIR) + "/tests/io/data/corpus_expected.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, kind;
    in >> name >> kind;
    Expected e;
    if (kind == "error") {
      e.error = true;
    } else {
      e.sparse = kind == "sparse";
      int rank = 0;
      in >> e.dtype >> rank;
      e.dims.resize(rank);
      for (int64_t& d : e.dims) in >> d;
      std::string colon, v;
      in >> colon;
      while (in >> v) e.values.push_back(v);
    }
    out[name] = e;
  }
  return out;
}

// The elements of `t` in C order as float64 or, for integer and bool dtypes, int64 (exact).
void ExpectValues(const Tensor& t, const Expected& e, const std::string& what) {
  EXPECT_EQ(DTypeName(t.dtype()), e.dtype) << what;
  ASSERT_EQ(t.Dims(), e.dims) << what;
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(e.values.size())) << what;
  if (IsFloat(t.dtype())) {
    Tensor f = Tensor::Empty(t.Dims(), DType::kFloat64);
    Copy(t, &f);
    const std::vector<double> v = f.ToVector<double>();
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i], std::strtod(e.values[i].c_str(), nullptr)) << what << " at " << i;
    }
  } else {
    Tensor n = Tensor::Empty(t.Dims(), DType::kInt64);
    Copy(t, &n);
    const std::vector<int64_t> v = n.ToVector<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i], std::strtoll(e.values[i].c_str(), nullptr, 10)) << what << " at " << i;
    }
  }
}

TEST(FuzzCorpusTest, EveryFileReadsOrThrowsErrorAndValidFilesMatchNumPy) {
  const std::filesystem::path root =
      std::filesystem::path(TENSORKIT_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  const std::map<std::string, Expected> expected = ReadExpectations();
  int files = 0, compared = 0, refused = 0;
  for (const char* fmt : {"npy", "npz", "mtx", "tns", "svm"}) {
    const std::filesystem::path dir = root / fmt;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = std::string(fmt) + "/" + entry.path().filename().string();
      std::vector<uint8_t> bytes = ReadWholeFile(entry.path().string());
      ++files;
      auto it = expected.find(name);
      try {
        TensorData d = ReadFromMemory(bytes.data(), bytes.size(),
                                      FormatFromPath(std::string("x.") + fmt), name);
        if (it == expected.end()) continue;  // a crash regression: reading is enough
        EXPECT_FALSE(it->second.error) << name << " reads, but NumPy/SciPy refuse it";
        if (it->second.error) continue;
        ASSERT_EQ(d.is_sparse(), it->second.sparse) << name;
        ExpectValues(d.is_sparse() ? d.sparse.ToDense() : d.dense, it->second, name);
        ++compared;
      } catch (const Error& e) {
        EXPECT_TRUE(it == expected.end() || it->second.error)
            << name << " is valid for NumPy/SciPy but fails: " << e.what();
        refused += it != expected.end() && it->second.error;
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " threw a non-tensorkit exception: " << e.what();
      }
    }
  }
  for (const auto& [name, e] : expected) {
    EXPECT_TRUE(std::filesystem::exists(root / name)) << name << " is expected but missing";
  }
  EXPECT_GT(files, 8);      // the corpus is checked in
  EXPECT_GT(compared, 20);  // and holds valid seeds, compared by value
  EXPECT_GE(refused, 3);    // and invalid ones, refused
}

// The tf.Example and TFRecord seeds, through the fuzz targets' specs: each parses or throws
// tensorkit::Error; the valid seeds parse by every spec they were written for.
TEST(FuzzCorpusTest, TfExampleAndTfRecordSeedsParseOrThrowError) {
  const std::filesystem::path root =
      std::filesystem::path(TENSORKIT_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  const std::vector<ExampleSpec> specs = fuzz::FuzzExampleSpecs();
  std::map<std::string, int> parsed;  // file -> specs that parsed it
  const SequenceExampleSpec sequence = fuzz::FuzzSequenceExampleSpec();
  std::map<std::string, int> sequence_parsed;
  auto parse_all = [&](const std::string& name, const std::vector<std::string_view>& records) {
    auto attempt = [&](const auto& parse, int* count) {
      try {
        parse();
        ++*count;
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " threw a non-tensorkit exception: " << e.what();
      }
    };
    for (const ExampleSpec& spec : specs) {
      attempt([&] { ParseExamples(records, spec); }, &parsed[name]);
    }
    attempt([&] { ParseSequenceExamples(records, sequence); }, &sequence_parsed[name]);
  };
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root / "tf_example")) {
    const std::vector<uint8_t> bytes = ReadWholeFile(entry.path().string());
    const std::string_view record(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    parse_all(entry.path().filename().string(), {record, record});
    ++files;
  }
  for (const auto& entry : std::filesystem::directory_iterator(root / "tfrecord")) {
    const std::vector<uint8_t> bytes = ReadWholeFile(entry.path().string());
    try {
      const TFRecordBatch b =
          ReadTFRecordBatchFromMemory(bytes.data(), bytes.size(), entry.path().filename().string());
      std::vector<std::string_view> records;
      for (int64_t i = 0; i < b.size(); ++i) records.push_back(b[i]);
      parse_all(entry.path().filename().string(), records);
    } catch (const Error&) {
    }
    ++files;
  }
  EXPECT_GE(files, 5);
  EXPECT_EQ(parsed["empty.pb"], static_cast<int>(specs.size()));  // nothing is required
  // composite.pb: the base spec, RowLengths('q') over ValueRowIds('p') and over
  // UniformRowLength(2).
  EXPECT_EQ(parsed["composite.pb"], 3);
  EXPECT_EQ(sequence_parsed["sequence.pb"], 1);  // a SequenceExample of every feature list
  EXPECT_EQ(sequence_parsed["empty.pb"], 1);
}

}  // namespace
}  // namespace tensorkit::io
