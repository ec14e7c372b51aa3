// libsvm / svmlight files: the grammar scikit-learn's load_svmlight_file reads (labels,
// multilabel, qid, comments, index bases), errors naming line and column, round trips, and the
// same result at any thread count on a file of many chunks.
#include "tensorkit/io/libsvm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using tensorkit::testing::AtThreadCounts;
using tensorkit::testing::ExpectError;

LibsvmData Parse(const std::string& text, LibsvmReadOptions o = {}) {
  return ReadLibsvmFromMemory(text.data(), text.size(), "t.svm", o);
}
std::vector<int64_t> I64(const Tensor& t) {
  const Tensor c = t.HostContiguous();
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.NumElements());
}
std::vector<double> F64(const Tensor& t) {
  const Tensor c = t.HostContiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.NumElements());
}

TEST(Libsvm, ReadsWhatScikitLearnReads) {
  const LibsvmData d = Parse(
      "# a comment line\n"
      "1 1:0.5 3:2 # trailing comment\n"
      "\n"
      "-1\t2:1e-400  4:+3\r\n"
      "  0.25\n"
      "2 1:inf 2:0\n");
  EXPECT_TRUE(d.one_based);  // no index 0 anywhere: scikit-learn's auto rule
  EXPECT_EQ(d.features.shape(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(I64(d.features.indices()), (std::vector<int64_t>{0, 0, 0, 2, 1, 1, 1, 3, 3, 0, 3, 1}));
  const std::vector<double> v = F64(d.features.values());
  EXPECT_EQ(v[0], 0.5);
  EXPECT_EQ(v[2], 0.0);  // 1e-400 rounds to 0, as strtod does; the entry stays (explicit zero)
  EXPECT_EQ(v[3], 3.0);
  EXPECT_TRUE(std::isinf(v[4]));
  EXPECT_EQ(v[5], 0.0);
  EXPECT_EQ(F64(d.labels), (std::vector<double>{1, -1, 0.25, 2}));
  EXPECT_FALSE(d.qids.defined());
  EXPECT_EQ(d.features.order(), (std::vector<int>{0, 1}));
}

TEST(Libsvm, IndexBases) {
  const std::string text = "1 0:1 2:2\n0 1:3\n";
  const LibsvmData a = Parse(text);
  EXPECT_FALSE(a.one_based);  // an index 0 occurs
  EXPECT_EQ(a.features.shape()[1], 3);
  LibsvmReadOptions one;
  one.base = IndexBase::kOne;
  ExpectError([&] { Parse(text, one); }, ErrorCode::kCorrupt,
              {"libsvm", "'t.svm' line 1", "column 3", "index 0 is 0", "zero-based"});
  LibsvmReadOptions zero;
  zero.base = IndexBase::kZero;
  const LibsvmData z = Parse("1 1:1 2:2\n", zero);
  EXPECT_EQ(z.features.shape()[1], 3);
  EXPECT_EQ(I64(z.features.indices()), (std::vector<int64_t>{0, 1, 0, 2}));
  LibsvmReadOptions wide = zero;
  wide.num_features = 10;
  EXPECT_EQ(Parse("1 1:1\n", wide).features.shape()[1], 10);
  wide.num_features = 2;
  ExpectError([&] { Parse("1 1:1 2:2\n", wide); }, ErrorCode::kCorrupt,
              {"feature index 2", "num_features is 2"});
}

TEST(Libsvm, MultilabelAndQid) {
  LibsvmReadOptions o;
  o.multilabel = true;
  const LibsvmData d = Parse("3,1 qid:7 1:1\nqid:4 1:2\n2 qid:-3 2:1\n", o);
  EXPECT_EQ(I64(d.qids), (std::vector<int64_t>{7, 4, -3}));
  EXPECT_EQ(F64(d.labels), (std::vector<double>{1, 3, 2}));  // sorted within a sample
  EXPECT_EQ(I64(d.label_offsets), (std::vector<int64_t>{0, 2, 2, 3}));
  ExpectError([&] { Parse("3,1 qid:7 1:1\n1:2\n2 qid:-3 2:1\n"); }, ErrorCode::kCorrupt,
              {"line 1", "label '3,1' is not a number"});
  const LibsvmData q = Parse("1 qid:7 1:1\n0 qid:7 2:1\n1 qid:8\n");
  EXPECT_EQ(I64(q.qids), (std::vector<int64_t>{7, 7, 8}));
  ExpectError([&] { Parse("1 qid:7 1:1\n0 2:1\n"); }, ErrorCode::kCorrupt,
              {"sample 1", "has no qid", "1 samples have one"});
}

TEST(Libsvm, BadLinesNameLineAndColumn) {
  ExpectError([] { Parse("1 1:1\n2 3:x\n"); }, ErrorCode::kCorrupt,
              {"'t.svm' line 2", "column 5", "value 'x' is not a number"});
  ExpectError([] { Parse("1 2:1 1:1\n"); }, ErrorCode::kCorrupt,
              {"line 1", "column 7", "index 1 follows index 2", "sorted and unique"});
  ExpectError([] { Parse("1 2:1 2:1\n"); }, ErrorCode::kCorrupt, {"index 2 follows index 2"});
  ExpectError([] { Parse("1 -2:1\n"); }, ErrorCode::kCorrupt, {"index -2 is negative"});
  ExpectError([] { Parse("1 a:1\n"); }, ErrorCode::kCorrupt, {"index 'a' is not an integer"});
  ExpectError([] { Parse("1 5\n"); }, ErrorCode::kCorrupt, {"'5' is not index:value"});
  ExpectError([] { Parse("x 1:1\n"); }, ErrorCode::kCorrupt, {"label 'x' is not a number"});
  ExpectError([] { Parse("1 qid:z 1:1\n"); }, ErrorCode::kCorrupt, {"qid 'z' is not an integer"});
  ExpectError([] { Parse("1 99999999999999999999:1\n"); }, ErrorCode::kCorrupt,
              {"is not an integer"});
}

// The shape is [samples, largest index + 1 - base], never a product: feature indices up to the
// largest int64 read; only a column count past int64 (a zero-based index 2^63 - 1) is refused.
TEST(Libsvm, FeatureIndicesPastTwoToThe32NeedNoVolume) {
  constexpr int64_t kBig = int64_t{1} << 40;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const LibsvmData d = Parse("1 7:1 1099511627776:2.5\n-1 1099511627775:3\n");
  EXPECT_TRUE(d.one_based);
  EXPECT_EQ(d.features.shape(), (std::vector<int64_t>{2, kBig}));
  EXPECT_EQ(I64(d.features.indices()), (std::vector<int64_t>{0, 6, 0, kBig - 1, 1, kBig - 2}));
  d.features.ValidateIndices();
  const LibsvmData most = Parse("1 9223372036854775807:1\n");
  EXPECT_EQ(most.features.shape(), (std::vector<int64_t>{1, kMax}));
  ExpectError([] { Parse("1 0:1 9223372036854775807:1\n"); }, ErrorCode::kCorrupt,
              {"'t.svm'", "feature index 9223372036854775807", "does not fit in int64"});
  testing::TempDir dir;
  {
    std::ofstream f(dir / "h.svm");
    f << "1 7:1 1099511627776:2.5\n-1 1099511627775:3\n";
  }
  std::vector<int64_t> seen;
  std::mutex mu;
  const std::vector<int64_t> shape =
      VisitLibsvmPositions(dir / "h.svm", [&](const int64_t* rc, int64_t n) {
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(seen.end(), rc, rc + 2 * n);
      });
  EXPECT_EQ(shape, (std::vector<int64_t>{2, kBig}));
  EXPECT_EQ(seen, I64(d.features.indices()));
  WriteLibsvm(dir / "back.svm", d);
  EXPECT_EQ(I64(ReadLibsvm(dir / "back.svm").features.indices()), I64(d.features.indices()));
}

TEST(Libsvm, EmptyFile) {
  const LibsvmData d = Parse("# nothing\n\n");
  EXPECT_EQ(d.features.shape(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(d.labels.NumElements(), 0);
}

std::string RandomFile(std::mt19937_64& rng, int64_t lines, bool qid) {
  std::string s;
  for (int64_t i = 0; i < lines; ++i) {
    s += std::to_string(static_cast<int>(rng() % 5) - 2);
    if (qid) s += " qid:" + std::to_string(i / 7);
    int64_t idx = 0;
    const int n = static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) {
      idx += 1 + static_cast<int64_t>(rng() % 50);
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %lld:%.17g", static_cast<long long>(idx),
                    static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000) / 7.0);
      s += buf;
    }
    if (rng() % 10 == 0) s += " # comment";
    s += "\n";
  }
  return s;
}

TEST(Libsvm, ManyChunksSameAtEveryThreadCount) {
  std::mt19937_64 rng(9);
  const std::string text = RandomFile(rng, 60000, true);  // several 1 MiB chunks
  ASSERT_GT(text.size(), size_t{3} << 20);
  const auto runs = AtThreadCounts({1, 2}, [&] {
    const LibsvmData d = Parse(text);
    return std::make_pair(I64(d.features.indices()), F64(d.features.values()));
  });
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(Parse(text).labels.NumElements(), 60000);
}

TEST(Libsvm, WriteReadRoundTrip) {
  std::mt19937_64 rng(10);
  const LibsvmData d = Parse(RandomFile(rng, 500, true));
  const std::string path = ::testing::TempDir() + "/round.svm";
  for (bool one : {true, false}) {
    LibsvmWriteOptions wo;
    wo.one_based = one;
    WriteLibsvm(path, d, wo);
    LibsvmReadOptions ro;
    ro.base = one ? IndexBase::kOne : IndexBase::kZero;
    ro.num_features = d.features.shape()[1];
    const LibsvmData back = ReadLibsvm(path, ro);
    EXPECT_EQ(I64(back.features.indices()), I64(d.features.indices()));
    EXPECT_EQ(F64(back.features.values()), F64(d.features.values()));  // shortest round trip
    EXPECT_EQ(F64(back.labels), F64(d.labels));
    EXPECT_EQ(I64(back.qids), I64(d.qids));
  }
  // Through io::Read / io::Write: the features.
  const TensorData t = Read(path);
  EXPECT_EQ(t.sparse.nnz(), d.features.nnz());
  std::remove(path.c_str());
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A [rows, cols] matrix of the given row-major values, zeros left out as a dense input's are.
template <typename T>
SparseTensor SparseOf(const std::vector<T>& v, int64_t rows, int64_t cols) {
  std::vector<int64_t> idx;
  std::vector<T> vals;
  for (int64_t k = 0; k < rows * cols; ++k) {
    if (v[k] == T{0}) continue;
    idx.push_back(k / cols);
    idx.push_back(k % cols);
    vals.push_back(v[k]);
  }
  const int64_t n = static_cast<int64_t>(vals.size());
  return SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {n, 2}),
                              Tensor::FromVector<T>(vals, {n}), {rows, cols});
}

// scikit-learn's own expectations (test_dump_concise, test_dump_multilabel) and its forms of a
// qid, integer dtypes, float32 values and the comment header.
TEST(Libsvm, ScikitLearnStyleIsScikitLearnsBytes) {
  const std::string path = ::testing::TempDir() + "/sk.svm";
  LibsvmWriteOptions sk;
  sk.one_based = false;
  sk.style = LibsvmStyle::kScikitLearn;
  LibsvmData d;
  d.features = SparseOf<double>({1,
                                 2.1,
                                 3.01,
                                 1.000000000000001,
                                 1.0000000000000001,  //
                                 1e9,
                                 2e18,
                                 3e27,
                                 0,
                                 0,  //
                                 0,
                                 0,
                                 0,
                                 0,
                                 0,  //
                                 0,
                                 0,
                                 0,
                                 0,
                                 0,  //
                                 0,
                                 0,
                                 0,
                                 0,
                                 0},
                                5, 5);
  d.labels = Tensor::FromVector<double>({1, 2.1, 3.01, 1.000000000000001, 1.0000000000000001});
  WriteLibsvm(path, d, sk);
  EXPECT_EQ(ReadAll(path),
            "1 0:1 1:2.1 2:3.01 3:1.000000000000001 4:1\n"
            "2.1 0:1000000000 1:2e+18 2:3e+27\n"
            "3.01 \n"
            "1.000000000000001 \n"
            "1 \n");
  // The shortest form of the same data: no space after a row's labels, 1e+09.
  LibsvmWriteOptions shortest;
  shortest.one_based = false;
  WriteLibsvm(path, d, shortest);
  EXPECT_EQ(ReadAll(path),
            "1 0:1 1:2.1 2:3.01 3:1.000000000000001 4:1\n2.1 0:1e+09 1:2e+18 2:3e+27\n3.01\n"
            "1.000000000000001\n1\n");

  // Multilabel with an integer dtype, one row without features; integer labels and qids.
  LibsvmData m;
  m.features = SparseOf<int64_t>({1, 0, 3, 0, 5, 0, 0, 0, 0, 0, 0, 5, 0, 1, 0}, 3, 5);
  m.labels = Tensor::FromVector<int64_t>({1, 0, 2, 0, 1});
  m.label_offsets = Tensor::FromVector<int64_t>({0, 1, 3, 5});
  WriteLibsvm(path, m, sk);
  EXPECT_EQ(ReadAll(path), "1 0:1 2:3 4:5\n0,2 \n0,1 1:5 3:1\n");
  LibsvmData q;
  q.features = SparseOf<float>({0.1f, 0, 0, 0, 0, -2.5f}, 3, 2);
  q.labels = Tensor::FromVector<int32_t>({-1, 20000000, 3});
  q.qids = Tensor::FromVector<int64_t>({std::numeric_limits<int64_t>::min(), 7, 9});
  sk.one_based = true;
  sk.header = "# Generated by a test\n#\n# two lines\n";
  WriteLibsvm(path, q, sk);
  EXPECT_EQ(ReadAll(path),
            "# Generated by a test\n#\n# two lines\n"
            "-1 qid:-9223372036854775808 1:0.1000000014901161\n"
            "20000000 qid:7 \n"
            "3 qid:9 2:-2.5\n");
  std::remove(path.c_str());
}

// "%.16g" as printf writes it, over doubles of every exponent (subnormals included), integers
// near 1e16 where the form changes, powers of ten, signed zeros, infinities and NaNs.
TEST(Libsvm, ScikitLearnStyleNumbersArePrintfs) {
  std::mt19937_64 rng(47);
  std::vector<double> v;
  for (int k = 0; k < 200000; ++k) {
    const uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, sizeof(x));
    if (std::isfinite(x) && x != 0) v.push_back(x);
  }
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int k = 0; k < 50000; ++k) {
    v.push_back(unit(rng));
    v.push_back(unit(rng) * 1e-310);  // subnormal
    v.push_back(std::round(unit(rng) * 2e16));
    v.push_back(static_cast<double>(static_cast<int64_t>(rng() >> (rng() % 64))));
    v.push_back(std::ldexp(unit(rng), static_cast<int>(rng() % 2100) - 1075));
  }
  for (int e = -330; e <= 310; ++e) {
    const double p = std::pow(10.0, e);
    for (double x : {p, std::nextafter(p, 0.0), std::nextafter(p, 1e308), 9.9999999999999995 * p,
                     0.5 * p, 1.5 * p}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  for (double x :
       {1e16, 1e16 - 2, 9999999999999998.0, 1e15 + 0.5, 4503599627370496.5, 0.5,
        std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
        std::numeric_limits<double>::min(), -0.0, 1.0, std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
        -std::numeric_limits<double>::quiet_NaN()}) {
    v.push_back(x);
  }
  // One feature per row, every row a value (zeros included: a sparse input keeps them).
  const int64_t n = static_cast<int64_t>(v.size());
  std::vector<int64_t> idx(2 * n, 0);
  for (int64_t r = 0; r < n; ++r) idx[2 * r] = r;
  LibsvmData d;
  d.features = SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {n, 2}),
                                    Tensor::FromVector<double>(v, {n}), {n, 1});
  d.labels = Tensor::FromVector<double>(v, {n});
  LibsvmWriteOptions sk;
  sk.one_based = false;
  sk.style = LibsvmStyle::kScikitLearn;
  const std::string path = ::testing::TempDir() + "/g16.svm";
  WriteLibsvm(path, d, sk);
  std::ifstream f(path);
  std::string line;
  int64_t r = 0, bad = 0;
  char want[64];
  while (std::getline(f, line) && r < n) {
    std::snprintf(want, sizeof(want), "%.16g", v[r]);
    // Python's '%' spells every NaN "nan"; glibc's printf writes "-nan" for a negative one.
    const std::string w = std::isnan(v[r]) ? "nan" : want;
    if (line != w + " 0:" + w && ++bad <= 5) {
      ADD_FAILURE() << "row " << r << ": got '" << line << "', printf gives '" << w << "'";
    }
    ++r;
  }
  EXPECT_EQ(r, n);
  EXPECT_EQ(bad, 0);
  std::remove(path.c_str());
}

// What the in-memory path writes: ReadLibsvm, then Write with the CSR members and labels.
void WriteWhole(const std::string& in, const std::string& out, const LibsvmReadOptions& ro) {
  const LibsvmData d = ReadLibsvm(in, ro);
  TensorData t;
  t.sparse = d.features;
  WriteOptions wo;
  if (FormatFromPath(out) == Format::kNpz) {
    wo.csr = true;
    wo.extra_members.emplace_back("labels", d.labels);
    if (d.label_offsets.defined()) wo.extra_members.emplace_back("label_offsets", d.label_offsets);
    if (d.qids.defined()) wo.extra_members.emplace_back("qids", d.qids);
  }
  Write(out, t, wo);
}

std::string FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(Libsvm, ConvertStreamsTheFilesTheWholeReadWrites) {
  testing::TempDir dir;
  std::mt19937_64 rng(11);
  struct Case {
    std::string text;
    LibsvmReadOptions ro;
  };
  std::vector<Case> cases;
  cases.push_back({RandomFile(rng, 60000, true), {}});  // several chunks, qids, 1-based
  cases.push_back({RandomFile(rng, 3000, false), {}});
  cases.back().ro.dtype = DType::kFloat32;
  cases.push_back({"1 0:1 2:2\n\n# c\n0 1:3\n-1\n", {}});  // 0-based by the auto rule
  cases.push_back({"1,3 1:1\n2:5\n\n4 3:1\n", {}});        // multilabel, a sample without labels
  cases[3].ro.multilabel = true;
  cases[3].ro.num_features = 10;
  cases.push_back({"# nothing\n\n", {}});
  cases.push_back({"", {}});
  cases.push_back({"1 2:1\n", {}});
  cases.back().ro.base = IndexBase::kZero;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case& c = cases[i];
    const std::string in = dir / "in.svm";
    testing::WriteText(in, c.text);
    for (const std::string ext : {".npz", ".mtx"}) {
      WriteWhole(in, dir / ("whole" + ext), c.ro);
      const std::string whole = FileBytes(dir / ("whole" + ext));
      const auto streamed = AtThreadCounts({1, 2}, [&] {
        ConvertLibsvm(in, dir / ("streamed" + ext), c.ro);
        return FileBytes(dir / ("streamed" + ext));
      });
      EXPECT_EQ(streamed[0], whole) << ext;
      EXPECT_EQ(streamed[1], whole) << ext;
    }
  }
}

TEST(Libsvm, ConvertErrorsAreTheReadersAndLeaveNoOutput) {
  testing::TempDir dir;
  const std::string in = dir / "bad.svm";
  testing::WriteText(in, "1 1:1\n2 3:x\n");
  for (const char* out : {"o.npz", "o.mtx"}) {
    ExpectError([&] { ConvertLibsvm(in, dir / out); }, ErrorCode::kCorrupt,
                {"'" + in + "' line 2", "column 5", "value 'x' is not a number"});
  }
  testing::WriteText(in, "1 qid:1 1:1\n2 3:1\n");
  ExpectError([&] { ConvertLibsvm(in, dir / "o.npz"); }, ErrorCode::kCorrupt,
              {"1 of 2 samples have a qid"});
  testing::WriteText(in, "1 1:1\n");
  ExpectError([&] { ConvertLibsvm(in, dir / "o.tns"); }, ErrorCode::kUnsupported,
              {"must be .npz or .mtx"});
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"bad.svm"}));
}

}  // namespace
}  // namespace tensorkit::io
