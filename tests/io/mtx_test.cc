#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>

#include "io/io_test_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::TempDir;

TensorData Mtx(const std::string& text, const ReadOptions& options = {}) {
  return ReadFromMemory(text.data(), text.size(), Format::kMtx, "m.mtx", options);
}

// Dense C-order values of a sparse read (duplicates summed by ToDense).
std::vector<double> DenseOf(const TensorData& d) {
  return d.is_sparse() ? d.sparse.ToDense().ToVector<double>() : d.dense.ToVector<double>();
}

TEST(MtxTest, CoordinateRealGeneralWithCommentsAndCrlf) {
  TensorData d =
      Mtx("%%MatrixMarket matrix coordinate real general\r\n% a comment\r\n\r\n2 3 3\r\n"
          "1 1 1.5\r\n% mid comment\r\n2 3 -2e1\r\n  1 2 +4\r\n");
  ASSERT_TRUE(d.is_sparse());
  EXPECT_EQ(d.sparse.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d.sparse.indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 0, 1}));
  EXPECT_EQ(d.sparse.values().ToVector<double>(), (std::vector<double>{1.5, -20, 4}));
}

TEST(MtxTest, IntegerAndPatternFields) {
  TensorData i = Mtx("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 7\n2 1 -3\n");
  EXPECT_EQ(i.sparse.dtype(), DType::kInt64);
  EXPECT_EQ(i.sparse.values().ToVector<int64_t>(), (std::vector<int64_t>{7, -3}));
  TensorData p = Mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n");
  EXPECT_EQ(DenseOf(p), (std::vector<double>{0, 1, 1, 0}));
}

TEST(MtxTest, SymmetricAndSkewExpansion) {
  const std::string sym =
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 2\n3 2 3\n";
  EXPECT_EQ(DenseOf(Mtx(sym)), (std::vector<double>{1, 2, 0, 2, 0, 3, 0, 3, 0}));
  ReadOptions stored;
  stored.expand_symmetry = false;
  EXPECT_EQ(Mtx(sym, stored).sparse.nnz(), 3);
  const std::string skew =
      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 2\n3 1 -1\n";
  EXPECT_EQ(DenseOf(Mtx(skew)), (std::vector<double>{0, -2, 1, 2, 0, 0, -1, 0, 0}));
}

TEST(MtxTest, ArrayFormats) {
  // Column-major values of [[1 3] [2 4] [5 6]] (3x2).
  TensorData g = Mtx("%%MatrixMarket matrix array real general\n3 2\n1\n2\n5\n3\n4\n6\n");
  ASSERT_FALSE(g.is_sparse());
  EXPECT_EQ(g.dense.ToVector<double>(), (std::vector<double>{1, 3, 2, 4, 5, 6}));
  TensorData s = Mtx("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n2\n3\n");
  EXPECT_EQ(s.dense.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 2, 3}));
  TensorData k = Mtx("%%MatrixMarket matrix array real skew-symmetric\n2 2\n5\n");
  EXPECT_EQ(k.dense.ToVector<double>(), (std::vector<double>{0, -5, 5, 0}));
}

TEST(MtxTest, MalformedInputNamesTheLine) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    std::string text;
    ErrorCode code;
    const char* part;
  };
  std::vector<Case> cases = {
      {"", ErrorCode::kCorrupt, "empty"},
      {"hello\n", ErrorCode::kCorrupt, "line 1"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 0\n", ErrorCode::kUnsupported,
       "complex"},
      {"%%MatrixMarket matrix coordinate complex hermitian\n1 1 0\n", ErrorCode::kUnsupported,
       "complex"},
      {"%%MatrixMarket matrix coordinate real anti\n1 1 0\n", ErrorCode::kUnsupported,
       "symmetry 'anti'"},
      {head, ErrorCode::kCorrupt, "size line"},
      {head + "2 2\n", ErrorCode::kCorrupt, "line 2: bad size line"},
      {head + "2 2 1\n0 1 1.0\n", ErrorCode::kCorrupt, "line 3: row index 0 is out of range"},
      {head + "2 2 2\n1 1 1\n1 3 1.0\n", ErrorCode::kCorrupt, "line 4: column index 3"},
      {head + "2 2 1\n1 1 abc\n", ErrorCode::kCorrupt, "line 3: value 'abc' is not a number"},
      {head + "2 2 1\n1 1 1 9\n", ErrorCode::kCorrupt, "unexpected text"},
      {head + "2 2 1\n1 1\n", ErrorCode::kCorrupt, "missing value"},
      {head + "2 2 3\n1 1 1\n", ErrorCode::kCorrupt, "declares 3 entries but the file has 1"},
      {head + "2 2 1\n1 1 1\n2 2 2\n", ErrorCode::kCorrupt, "declares 1 entries"},
      {head + "2 2 1\n99999999999999999999 1 1\n", ErrorCode::kCorrupt, "out of range for int64"},
      // An array file lists every cell: one of more cells than int64 counts cannot exist (a
      // coordinate file of that size is fine: HypersparseShapesNeedNoVolume).
      {"%%MatrixMarket matrix array real general\n9223372036854775807 2\n1\n", ErrorCode::kCorrupt,
       "line 2: an array (dense) file of 9223372036854775807 x 2 has more cells than int64"},
      {head + "3 3 1000000000000\n1 1 1\n", ErrorCode::kCorrupt,
       "declares 1000000000000 entries but the file has 1"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", ErrorCode::kCorrupt,
       "needs 4 value lines but has 3"},
  };
  for (const Case& c : cases) {
    Error e = CatchError([&] { Mtx(c.text); });
    EXPECT_EQ(e.code(), c.code) << c.text << " -> " << e.what();
    EXPECT_HAS(e.what(), c.part);
    EXPECT_HAS(e.what(), "m.mtx");
  }
}

TEST(MtxTest, MoreEntriesThanCellsAreRepeatsNotAnError) {
  TensorData d = Mtx("%%MatrixMarket matrix coordinate real general\n1 2 3\n1 1 1\n1 1 2\n1 2 4\n");
  EXPECT_EQ(d.sparse.nnz(), 3);
  SparseTensor merged = d.sparse;
  merged.Coalesce();
  EXPECT_EQ(merged.ToDense().ToVector<double>(), (std::vector<double>{3, 4}));
}

// A coordinate file never needs rows * cols: a 2^40 x 2^40 matrix of 3 entries (the size of
// fast_matrix_market's scipy_crashes/dim_over_32_bit.mtx, which SciPy reads), and shapes whose
// product overflows int64 while each dim fits, read, check, sort, write and read back; only a
// dense form is refused, naming the shape.
TEST(MtxTest, HypersparseShapesNeedNoVolume) {
  constexpr int64_t kBig = int64_t{1} << 40;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n% a web graph's worth of vertices\n"
      "1099511627776 1099511627776 3\n1099511627776 1 2.5\n1 1099511627776 -1\n"
      "549755813888 549755813889 4\n";
  TensorData d = Mtx(text);
  ASSERT_TRUE(d.is_sparse());
  EXPECT_EQ(d.sparse.shape(), (std::vector<int64_t>{kBig, kBig}));
  EXPECT_EQ(d.sparse.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{kBig - 1, 0, 0, kBig - 1, kBig / 2 - 1, kBig / 2}));
  EXPECT_EQ(d.sparse.values().ToVector<double>(), (std::vector<double>{2.5, -1, 4}));
  d.sparse.ValidateIndices();  // bounds and repeats: the sort keys of 80 bits need no volume
  SparseTensor sorted = d.sparse;
  sorted.Coalesce();
  EXPECT_EQ(sorted.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, kBig - 1, kBig / 2 - 1, kBig / 2, kBig - 1, 0}));
  Error dense = CatchError([&] { d.sparse.ToDense(); });
  EXPECT_HAS(dense.what(), "[1099511627776 1099511627776]");

  // Symmetric files mirror as usual; a skew-symmetric one keeps its diagonal entry unmirrored.
  TensorData sym =
      Mtx("%%MatrixMarket matrix coordinate integer symmetric\n1099511627776 1099511627776 2\n"
          "1099511627776 1 7\n5 5 1\n");
  EXPECT_EQ(sym.sparse.nnz(), 3);
  EXPECT_EQ(sym.sparse.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{kBig - 1, 0, 4, 4, 0, kBig - 1}));
  TensorData skew =
      Mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n1099511627776 1099511627776 1\n"
          "1099511627776 1099511627776 1\n");
  EXPECT_EQ(skew.sparse.indices().ToVector<int64_t>(), (std::vector<int64_t>{kBig - 1, kBig - 1}));
  EXPECT_EQ(skew.sparse.values().ToVector<double>(), (std::vector<double>{1}));

  // Each dim fits int64, their product does not: 2^62 x 4, and the largest dims at all.
  const std::string wide =
      "%%MatrixMarket matrix coordinate real general\n4611686018427387904 4 2\n"
      "4611686018427387904 4 1\n1 1 2\n";
  EXPECT_EQ(Mtx(wide).sparse.shape(), (std::vector<int64_t>{int64_t{1} << 62, 4}));
  const std::string most =
      "%%MatrixMarket matrix coordinate pattern general\n"
      "9223372036854775807 9223372036854775807 2\n9223372036854775807 9223372036854775807\n"
      "9223372036854775807 9223372036854775807\n";
  TensorData m = Mtx(most);
  EXPECT_EQ(m.sparse.shape(), (std::vector<int64_t>{kMax, kMax}));
  EXPECT_EQ(m.sparse.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{kMax - 1, kMax - 1, kMax - 1, kMax - 1}));
  EXPECT_FALSE(m.sparse.IndicesValid());  // a repeat, found without a volume
  // One past the largest index is still out of range, named as before.
  Error past = CatchError([&] {
    Mtx("%%MatrixMarket matrix coordinate real general\n1099511627776 2 1\n"
        "1099511627777 1 1\n");
  });
  EXPECT_HAS(past.what(), "row index 1099511627777 is out of range [1, 1099511627776]");

  // Written and read back, by file, with the streamed positions of `spy` agreeing.
  TempDir dir;
  for (const std::string& src : {text, wide}) {
    const TensorData in = Mtx(src);
    Write(dir / "h.mtx", in);
    const TensorData back = Read(dir / "h.mtx");
    EXPECT_EQ(back.sparse.shape(), in.sparse.shape());
    EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), in.sparse.indices().ToVector<int64_t>());
    EXPECT_EQ(back.sparse.values().ToVector<double>(), in.sparse.values().ToVector<double>());
    std::mutex mu;
    std::vector<int64_t> seen;
    const std::vector<int64_t> shape =
        VisitMtxPositions(dir / "h.mtx", [&](const int64_t* rc, int64_t n) {
          std::lock_guard<std::mutex> lock(mu);
          seen.insert(seen.end(), rc, rc + 2 * n);
        });
    EXPECT_EQ(shape, in.sparse.shape());
    EXPECT_EQ(seen, in.sparse.indices().ToVector<int64_t>());
  }
}

TEST(MtxTest, NumbersOutOfRangeReadAsStrtodDoes) {
  TensorData d =
      Mtx("%%MatrixMarket matrix coordinate real general\n1 8 8\n1 1 1e-400\n1 2 1e400\n"
          "1 3 -1e400\n1 4 -1e-400\n1 5 0.0000000001e-320\n1 6 123456789e305\n1 7 4.9e-324\n"
          "1 8 +1E+999\n");
  const std::vector<double> v = d.sparse.values().ToVector<double>();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], inf);
  EXPECT_EQ(v[2], -inf);
  EXPECT_EQ(v[3], 0.0);
  EXPECT_TRUE(std::signbit(v[3]));
  EXPECT_EQ(v[4], 0.0);
  EXPECT_EQ(v[5], inf);
  EXPECT_GT(v[6], 0.0);  // the smallest subnormal is in range
  EXPECT_EQ(v[7], inf);
  // Integers keep their range: an index past int64 is an error.
  Error e = CatchError(
      [] { Mtx("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1e400\n"); });
  EXPECT_HAS(e.what(), "is not an integer");
}

TEST(MtxTest, MessagesQuoteAShortEscapedExcerpt) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n1 1 1\n";
  Error huge = CatchError([&] { Mtx(head + "1 1 1" + std::string(5000000, '7') + "x\n"); });
  EXPECT_LT(std::string(huge.what()).size(), 300u) << std::string(huge.what()).substr(0, 400);
  EXPECT_HAS(huge.what(), "5000002 bytes");
  Error ctrl = CatchError([&] { Mtx(head + "1\v1 1 1\n"); });
  EXPECT_HAS(ctrl.what(), "'1\\x0b1' is not an integer");
  Error nul = CatchError([&] { Mtx(head + std::string("1 1 2\0\x01", 7) + "\n"); });
  EXPECT_HAS(nul.what(), "'2\\x00\\x01' is not a number");
  Error banner = CatchError(
      [&] { Mtx("%%MatrixMarket matrix coordinate " + std::string(100000, 'z') + " general\n"); });
  EXPECT_LT(std::string(banner.what()).size(), 300u);
}

// A generated file over several 1 MiB chunks: values, line numbers of errors in late chunks,
// and identical results at any thread count.
TEST(MtxTest, ManyChunksParseDeterministically) {
  const int64_t n = 120000;  // about 2.5 MB of text
  std::string text =
      "%%MatrixMarket matrix coordinate real general\n1000 1000 " + std::to_string(n) + "\n";
  for (int64_t k = 0; k < n; ++k) {
    text += std::to_string(k % 1000 + 1) + " " + std::to_string(k / 1000 % 1000 + 1) + " " +
            std::to_string(k) + ".25\n";
  }
  const int saved = GetNumThreads();
  SetNumThreads(1);
  TensorData one = Mtx(text);
  SetNumThreads(2);
  TensorData two = Mtx(text);
  SetNumThreads(saved);
  ASSERT_EQ(one.sparse.nnz(), n);
  EXPECT_EQ(one.sparse.values().ToVector<double>(), two.sparse.values().ToVector<double>());
  EXPECT_EQ(one.sparse.indices().ToVector<int64_t>(), two.sparse.indices().ToVector<int64_t>());
  std::vector<double> v = two.sparse.values().ToVector<double>();
  EXPECT_EQ(v[n - 1], static_cast<double>(n - 1) + 0.25);
  std::vector<int64_t> idx = two.sparse.indices().ToVector<int64_t>();
  EXPECT_EQ(idx[2 * 99999], 99999 % 1000);
  // Break entry 100000 (line 100003) and entry 110000: the first one is reported.
  for (int64_t bad : {100000, 110000}) {
    const std::string needle = "\n" + std::to_string(bad) + ".25\n";
    size_t at = text.find(" " + std::to_string(bad) + ".25\n");
    ASSERT_NE(at, std::string::npos) << needle;
    text[at + 1] = 'x';
  }
  Error e = CatchError([&] { Mtx(text); });
  EXPECT_HAS(e.what(), "line 100003:");
}

TEST(MtxTest, WriteAndReadBack) {
  TempDir dir;
  Tensor idx = Tensor::FromVector<int64_t>({0, 2, 1, 0}, {2, 2});
  SparseTensor st = SparseTensor::Create(idx, Tensor::FromVector<float>({0.1f, -3.5f}), {2, 3});
  Write(dir / "s.mtx", st);
  TensorData r = Read(dir / "s.mtx");
  EXPECT_EQ(r.sparse.indices().ToVector<int64_t>(), idx.ToVector<int64_t>());
  // float32 is written in its shortest form ("0.1"), which reads back as the float64 0.1.
  EXPECT_EQ(r.sparse.values().ToVector<double>(), (std::vector<double>{0.1, -3.5}));
  Tensor dense = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Write(dir / "d.mtx", dense);
  TensorData rd = Read(dir / "d.mtx");
  ASSERT_FALSE(rd.is_sparse());
  EXPECT_EQ(rd.dense.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(CatchError([&] { Write(dir / "x.mtx", Tensor::Zeros({2}, DType::kFloat32)); }).code(),
            ErrorCode::kUnsupported);
}

// SciPy 1.17's reading: a skew-symmetric file's diagonal entries stay as stored (the mirrors of
// the others follow them, negated); a real "hermitian" file is symmetric.
TEST(MtxTest, SkewDiagonalAndRealHermitianReadAsScipyReadsThem) {
  TensorData k =
      Mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n1 1 5\n2 1 2\n3 3 -1\n");
  EXPECT_EQ(k.sparse.indices().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 2, 2, 0, 1}));
  EXPECT_EQ(k.sparse.values().ToVector<double>(), (std::vector<double>{5, 2, -1, -2}));
  TensorData h = Mtx("%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 5\n2 1 2\n");
  EXPECT_EQ(DenseOf(h), (std::vector<double>{5, 2, 2, 0}));
  TensorData a = Mtx("%%MatrixMarket matrix array integer hermitian\n2 2\n1\n2\n3\n");
  EXPECT_EQ(a.dense.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 2, 3}));
}

std::string Written(const TensorData& d, const MtxWriteOptions& o) {
  TempDir dir;
  WriteMtx(dir / "w.mtx", d, o);
  return testing::ReadText(dir / "w.mtx");
}
TensorData Dense(const Tensor& t) {
  TensorData d;
  d.dense = t;
  return d;
}
TensorData Coo(std::vector<int64_t> rc, const Tensor& values, int64_t rows, int64_t cols) {
  TensorData d;
  const int64_t n = values.NumElements();
  d.sparse = SparseTensor::Create(Tensor::FromVector<int64_t>(rc, {n, 2}), values, {rows, cols});
  return d;
}

// The bytes scipy.io.mmwrite (SciPy 1.17) writes for the same inputs and options.
TEST(MtxTest, ScipyTextIsScipysBytes) {
  MtxWriteOptions sci;
  sci.scipy_text = true;
  const Tensor a = Tensor::FromVector<double>({1.0, 1e9, 0.1, -0.0}, {2, 2});
  EXPECT_EQ(Written(Dense(a), sci),
            "%%MatrixMarket matrix array real general\n%\n2 2\n1\n1E-1\n1E9\n-0\n");
  MtxWriteOptions plain;  // the library's own form is unchanged
  EXPECT_EQ(Written(Dense(a), plain),
            "%%MatrixMarket matrix array real general\n2 2\n1\n0.1\n1e+09\n-0\n");
  MtxWriteOptions p3 = sci;
  p3.precision = 3;
  EXPECT_EQ(Written(Dense(a), p3),
            "%%MatrixMarket matrix array real general\n%\n2 2\n1.00e+00\n1.00e-01\n1.00e+09\n"
            "-0.00e+00\n");
  p3.precision = 0;
  EXPECT_EQ(Written(Dense(a), p3),
            "%%MatrixMarket matrix array real general\n%\n2 2\n1e+00\n1e-01\n1e+09\n-0e+00\n");
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor special = Tensor::FromVector<double>({inf, std::nan(""), -inf, 1e-310}, {2, 2});
  EXPECT_EQ(Written(Dense(special), sci),
            "%%MatrixMarket matrix array real general\n%\n2 2\nInfinity\n-Infinity\nNaN\n1E-310\n");
  p3.precision = 4;
  EXPECT_EQ(Written(Dense(special), p3),
            "%%MatrixMarket matrix array real general\n%\n2 2\nInfinity\n-Infinity\nnan\n"
            "1.000e-310\n");
  const Tensor f32 = Tensor::FromVector<float>({123.0f, 12.5f, 1.25e-7f, 1.0f / 3}, {2, 2});
  EXPECT_EQ(Written(Dense(f32), sci),
            "%%MatrixMarket matrix array real general\n%\n2 2\n1.23E2\n1.25E-7\n1.25E1\n"
            "3.3333334E-1\n");

  // Comments, detected symmetry (symmetric, skew) and the lower triangle column by column.
  MtxWriteOptions detect = sci;
  detect.symmetry = MtxSymmetry::kDetect;
  detect.comment = "abc\n";
  EXPECT_EQ(Written(Dense(Tensor::FromVector<int64_t>({1, 2, 2, 4}, {2, 2})), detect),
            "%%MatrixMarket matrix array integer symmetric\n%abc\n%\n2 2\n1\n2\n4\n");
  detect.comment = "";
  EXPECT_EQ(Written(Dense(Tensor::FromVector<int32_t>({0, 2, -2, 0}, {2, 2})), detect),
            "%%MatrixMarket matrix array integer skew-symmetric\n%\n2 2\n-2\n");
  EXPECT_EQ(Written(Dense(Tensor::FromVector<int32_t>({1, 2, -2, 99}, {2, 2})), detect),
            "%%MatrixMarket matrix array integer general\n%\n2 2\n1\n-2\n2\n99\n");
  const Tensor m = Tensor::FromVector<double>({1.5, 2, 3, 0}, {2, 2});
  MtxWriteOptions given = sci;
  given.symmetry = MtxSymmetry::kSymmetric;
  EXPECT_EQ(Written(Dense(m), given),
            "%%MatrixMarket matrix array real symmetric\n%\n2 2\n1.5\n3\n0\n");
  given.symmetry = MtxSymmetry::kSkewSymmetric;
  EXPECT_EQ(Written(Dense(m), given),
            "%%MatrixMarket matrix array real skew-symmetric\n%\n2 2\n3\n");
  given.symmetry = MtxSymmetry::kHermitian;
  EXPECT_EQ(Written(Dense(m), given),
            "%%MatrixMarket matrix array real hermitian\n%\n2 2\n1.5\n3\n0\n");
  given.field = MtxField::kInteger;
  given.symmetry = MtxSymmetry::kGeneral;
  EXPECT_EQ(Written(Dense(m), given),
            "%%MatrixMarket matrix array integer general\n%\n2 2\n1\n3\n2\n0\n");

  // Sparse: the detected symmetric matrix's lower entries; fields.
  const TensorData s = Coo({0, 0, 0, 1, 1, 0}, Tensor::FromVector<double>({1.5, 2, 2}), 2, 2);
  EXPECT_EQ(Written(s, detect),
            "%%MatrixMarket matrix coordinate real symmetric\n%\n2 2 2\n1 1 1.5\n2 1 2\n");
  detect.field = MtxField::kInteger;
  EXPECT_EQ(Written(s, detect),
            "%%MatrixMarket matrix coordinate integer symmetric\n%\n2 2 2\n1 1 1\n2 1 2\n");
  detect.field = MtxField::kPattern;
  EXPECT_EQ(Written(s, detect),
            "%%MatrixMarket matrix coordinate pattern symmetric\n%\n2 2 2\n1 1\n2 1\n");
  detect.field = MtxField::kAuto;
  // Balanced below and above: summed and sorted, as SciPy writes it; unbalanced: as given.
  EXPECT_EQ(Written(Coo({1, 1, 0, 1, 0, 0, 1, 0}, Tensor::FromVector<double>({1, 2, 3, 4}), 2, 2),
                    detect),
            "%%MatrixMarket matrix coordinate real general\n%\n2 2 4\n1 1 3\n1 2 2\n2 1 4\n"
            "2 2 1\n");
  EXPECT_EQ(Written(Coo({1, 1, 0, 1, 0, 0}, Tensor::FromVector<double>({1, 2, 3}), 2, 2), detect),
            "%%MatrixMarket matrix coordinate real general\n%\n2 2 3\n2 2 1\n1 2 2\n1 1 3\n");
  given.field = MtxField::kAuto;
  given.symmetry = MtxSymmetry::kHermitian;
  given.precision = 2;
  EXPECT_EQ(
      Written(Coo({0, 0, 0, 1, 1, 0}, Tensor::FromVector<double>({1.5, 2, 3}), 2, 2), given),
      "%%MatrixMarket matrix coordinate real hermitian\n%\n2 2 2\n1 1 1.5e+00\n2 1 3.0e+00\n");
  EXPECT_EQ(DetectMtxSymmetry(s), MtxSymmetry::kSymmetric);
  EXPECT_EQ(DetectMtxSymmetry(Dense(m)), MtxSymmetry::kGeneral);
}

// Ryu's shortest scientific text of v as SciPy writes it, from std::to_chars: the oracle of the
// writer's shortcut for values with few decimals.
std::string RyuText(double v) {
  char buf[64];
  const std::string s(buf,
                      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr);
  const size_t e = s.find('e');
  std::string out = s.substr(0, e);
  const bool negative = s[e + 1] == '-';
  std::string exp = s.substr(e + 2);
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  if (exp != "0") out += std::string("E") + (negative ? "-" : "") + exp;
  return out;
}

TEST(MtxTest, ScipyTextOfFewDecimalsIsRyus) {
  MtxWriteOptions sci;
  sci.scipy_text = true;
  const std::vector<double> fixed = {123.456, 0.001,  -2.5,       1000,   123456789.125, 1e-9,
                                     0.3,     1.5e-9, 0x1p50 - 1, 0x1p50, 0x1p53 + 2,    -7,
                                     1e15,    1e16,   0.1 + 0.2,  5e-324};
  const Tensor f = Tensor::FromVector<double>(fixed, {static_cast<int64_t>(fixed.size()), 1});
  std::string want =
      "%%MatrixMarket matrix array real general\n%\n" + std::to_string(fixed.size()) + " 1\n";
  for (double v : fixed) want += RyuText(v) + "\n";
  EXPECT_EQ(Written(Dense(f), sci), want);
  EXPECT_HAS(want, "\n1.23456E2\n1E-3\n-2.5\n1E3\n1.23456789125E8\n1E-9\n3E-1\n1.5E-9\n");

  // Values rounded to 0 to 12 decimals at every magnitude, integers, and full-precision ones.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> values;
  for (int i = 0; i < 200000; ++i) {
    const double scale = std::pow(10.0, static_cast<int>(rng() % 30) - 12);
    const double p = std::pow(10.0, static_cast<int>(rng() % 13));
    double v = unit(rng) * scale;
    if (i % 4 != 0) v = std::round(v * p) / p;
    if (i % 3 == 0) v = -v;
    values.push_back(v);
  }
  const Tensor t = Tensor::FromVector<double>(values, {static_cast<int64_t>(values.size()), 1});
  const std::string text = Written(Dense(t), sci);
  std::string expected =
      "%%MatrixMarket matrix array real general\n%\n" + std::to_string(values.size()) + " 1\n";
  for (double v : values) expected += RyuText(v) + "\n";
  EXPECT_TRUE(text == expected) << "the shortcut's text differs from Ryu's";
}

// MtxCoordinates (SciPy's row, col, data) give the bytes of the SparseTensor of the same entries.
TEST(MtxTest, CoordinateArraysWriteAsTheSparseTensor) {
  const std::vector<int64_t> rows = {4, 0, 2, 2, 99999, 0};
  const std::vector<int64_t> cols = {1, 0, 2, 3, 7, 0};
  const Tensor values = Tensor::FromVector<double>({1.5, -2, 0.125, 3e10, 7, 1.0 / 3});
  std::vector<int64_t> rc;
  for (size_t k = 0; k < rows.size(); ++k) {
    rc.push_back(rows[k]);
    rc.push_back(cols[k]);
  }
  const TensorData st = Coo(rc, values, 100000, 100000);
  for (const MtxSymmetry symmetry :
       {MtxSymmetry::kGeneral, MtxSymmetry::kSymmetric, MtxSymmetry::kDetect}) {
    for (const bool scipy : {false, true}) {
      for (const MtxField field : {MtxField::kAuto, MtxField::kPattern, MtxField::kInteger}) {
        MtxWriteOptions o;
        o.scipy_text = scipy;
        o.symmetry = symmetry;
        o.field = field;
        const std::string want = Written(st, o);
        for (const DType index : {DType::kInt32, DType::kInt64}) {
          MtxCoordinates m;
          m.rows = Converted(Tensor::FromVector<int64_t>(rows), index);
          m.cols = Converted(Tensor::FromVector<int64_t>(cols), index);
          m.values = values;
          m.num_rows = m.num_cols = 100000;
          TempDir dir;
          WriteMtx(dir / "c.mtx", m, o);
          EXPECT_EQ(testing::ReadText(dir / "c.mtx"), want) << DTypeName(index);
        }
      }
    }
  }
  // Mixed index dtypes are read as int64; wrong lengths and non-integer indices are refused.
  MtxCoordinates m;
  m.rows = Tensor::FromVector<int32_t>({0, 1});
  m.cols = Tensor::FromVector<int64_t>({1, 0});
  m.values = Tensor::FromVector<float>({1, 2});
  m.num_rows = m.num_cols = 2;
  TempDir dir;
  WriteMtx(dir / "m.mtx", m, MtxWriteOptions{});
  EXPECT_EQ(testing::ReadText(dir / "m.mtx"),
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 2\n");
  m.values = Tensor::FromVector<float>({1});
  EXPECT_EQ(CatchError([&] { WriteMtx(dir / "x.mtx", m, MtxWriteOptions{}); }).code(),
            ErrorCode::kShapeMismatch);
  m.values = Tensor::FromVector<float>({1, 2});
  m.cols = Tensor::FromVector<double>({1, 0});
  EXPECT_EQ(CatchError([&] { WriteMtx(dir / "x.mtx", m, MtxWriteOptions{}); }).code(),
            ErrorCode::kDTypeMismatch);
}

TEST(MtxTest, WriteOptionErrorsNameTheProblem) {
  TempDir dir;
  MtxWriteOptions o;
  o.field = MtxField::kPattern;
  Error e = CatchError([&] {
    WriteMtx(dir / "p.mtx", Dense(Tensor::Zeros({2, 2}, DType::kFloat64)), o);
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_HAS(e.what(), "pattern");
  o.field = MtxField::kInteger;
  e = CatchError([&] {
    WriteMtx(dir / "i.mtx", Dense(Tensor::FromVector<double>({std::nan("")}, {1, 1})), o);
  });
  EXPECT_HAS(e.what(), "integer field cannot hold value nan");
  o.field = MtxField::kAuto;
  o.symmetry = MtxSymmetry::kSymmetric;
  e = CatchError([&] {
    WriteMtx(dir / "s.mtx", Dense(Tensor::Zeros({2, 3}, DType::kFloat64)), o);
  });
  EXPECT_HAS(e.what(), "symmetric matrix must be square, not 2 x 3");
  EXPECT_FALSE(std::filesystem::exists(dir / "s.mtx"));
}

// What is written reads back, every dtype, symmetry and form.
TEST(MtxTest, WrittenWithOptionsReadsBack) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  const int64_t n = 7;
  std::vector<double> sym(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j)
      sym[i * n + j] = sym[j * n + i] = std::ldexp(u(rng), static_cast<int>(rng() % 200) - 100);
  }
  std::vector<double> skew = sym;
  for (int64_t i = 0; i < n; ++i) {
    skew[i * n + i] = 0;
    for (int64_t j = 0; j < i; ++j) skew[j * n + i] = -skew[i * n + j];
  }
  for (bool scipy : {false, true}) {
    for (const bool is_skew : {false, true}) {
      const std::vector<double>& values = is_skew ? skew : sym;
      MtxWriteOptions o;
      o.scipy_text = scipy;
      o.symmetry = MtxSymmetry::kDetect;
      const Tensor t = Tensor::FromVector<double>(values, {n, n});
      TempDir dir;
      WriteMtx(dir / "d.mtx", Dense(t), o);
      EXPECT_EQ(Read(dir / "d.mtx").dense.ToVector<double>(), values);
      TensorData sp;
      sp.sparse = SparseTensor::FromDense(t);
      WriteMtx(dir / "s.mtx", sp, o);
      EXPECT_HAS(testing::ReadText(dir / "s.mtx"), is_skew ? " skew-symmetric\n" : " symmetric\n");
      EXPECT_EQ(DenseOf(Read(dir / "s.mtx")), values);
    }
  }
}

}  // namespace
}  // namespace tensorkit::io
