#include <gtest/gtest.h>

#include <mutex>
#include <utility>

#include "io/io_test_util.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::TempDir;

TensorData Tns(const std::string& text, const ReadOptions& options = {}) {
  return ReadFromMemory(text.data(), text.size(), Format::kTns, "t.tns", options);
}

TEST(TnsTest, ThreeAxesWithCommentsAndInferredShape) {
  TensorData d = Tns("# comment\n1 2 3 1.5\n\n  4\t1 1 -2\n# end\n2 2 2 1e3");
  ASSERT_TRUE(d.is_sparse());
  EXPECT_EQ(d.sparse.shape(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(d.sparse.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1, 2, 3, 0, 0, 1, 1, 1}));
  EXPECT_EQ(d.sparse.values().ToVector<double>(), (std::vector<double>{1.5, -2, 1000}));
}

TEST(TnsTest, GivenShape) {
  ReadOptions o;
  o.shape = {5, 5};
  EXPECT_EQ(Tns("1 1 2\n", o).sparse.shape(), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(Tns("", o).sparse.nnz(), 0);
  Error e = CatchError([&] { Tns("1 1 2\n6 1 1\n", o); });
  EXPECT_HAS(e.what(), "line 2: index 6 on axis 0 is out of range [1, 5]");
  o.shape = {5, 5, 5};
  EXPECT_EQ(CatchError([&] { Tns("1 1 2\n", o); }).code(), ErrorCode::kInvalidArgument);
}

TEST(TnsTest, MalformedInputNamesTheLine) {
  struct Case {
    std::string text;
    const char* part;
  };
  std::vector<Case> cases = {
      {"", "no entries"},
      {"# shape: 2 2\n1 1 1 1\n", "the shape comment's shape [2 2] has 2 axes"},
      {"# shape: 2 2\n3 1 1\n", "index 3 on axis 0 is out of range [1, 2] of the shape [2 2]"},
      {"# only a comment\n", "no entries"},
      {"5\n", "line 1: an entry needs at least one index"},
      {"1 1 1.0\n0 1 2.0\n", "line 2: index 0 on axis 0 is out of range"},
      {"1 1 1.0\n1 -1 2.0\n", "line 2: index -1"},
      {"1 1 1.0\n1 1\n", "line 2: missing value"},
      {"1 1 1.0\n1 1 1 1\n", "line 2: unexpected text"},
      {"1 1 1.0\n1 x 1\n", "line 2: index 'x' is not an integer"},
      {"1 1 1.0\n1 1 nope\n", "line 2: value 'nope' is not a number"},
      {"1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n1\n",
       "cannot fit"},
  };
  for (const Case& c : cases) {
    Error e = CatchError([&] { Tns(c.text); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_HAS(e.what(), c.part);
    EXPECT_HAS(e.what(), "t.tns");
  }
}

TEST(TnsTest, ShapeComment) {
  EXPECT_EQ(Tns("# shape: 3 4\n").sparse.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Tns("# shape: 3 4\n").sparse.nnz(), 0);
  EXPECT_EQ(Tns("# made by hand\n#shape: 7 8 9\n1 1 1 2\n").sparse.shape(),
            (std::vector<int64_t>{7, 8, 9}));
  // Another comment that starts with "shape:" is only a comment.
  EXPECT_EQ(Tns("# shape: of ratings\n2 3 1\n").sparse.shape(), (std::vector<int64_t>{2, 3}));
  ReadOptions o;  // the caller's shape wins
  o.shape = {5, 6};
  EXPECT_EQ(Tns("# shape: 3 4\n1 1 1\n", o).sparse.shape(), (std::vector<int64_t>{5, 6}));
}

TEST(TnsTest, EveryShapeSurvivesWriteAndRead) {
  TempDir dir;
  const Tensor no_idx = Tensor::Empty({0, 2}, DType::kInt64);
  const Tensor no_val = Tensor::Empty({0}, DType::kFloat64);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{3, 4}, std::vector<int64_t>{0, 5}, std::vector<int64_t>{1, 1}}) {
    Write(dir / "e.tns", SparseTensor::Create(no_idx, no_val, shape));
    EXPECT_EQ(Read(dir / "e.tns").sparse.shape(), shape);
  }
  // Entries short of the last rows: the shape is kept, not inferred.
  SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 1}, {1, 2}),
                                         Tensor::FromVector<double>({2.5}), {10, 20});
  Write(dir / "s.tns", st);
  EXPECT_EQ(Read(dir / "s.tns").sparse.shape(), (std::vector<int64_t>{10, 20}));
}

TEST(TnsTest, WriteAndReadBack) {
  TempDir dir;
  Tensor idx = Tensor::FromVector<int64_t>({0, 1, 2, 3, 3, 0, 4, 0, 1, 2, 1, 3}, {3, 4});
  SparseTensor st =
      SparseTensor::Create(idx, Tensor::FromVector<double>({0.5, 1e-300, -7}), {4, 3, 5, 4});
  Write(dir / "t.tns", st);
  TensorData r = Read(dir / "t.tns");
  EXPECT_EQ(r.sparse.shape(), st.shape());
  EXPECT_EQ(r.sparse.indices().ToVector<int64_t>(), idx.ToVector<int64_t>());
  EXPECT_EQ(r.sparse.values().ToVector<double>(), st.values().ToVector<double>());
  EXPECT_EQ(CatchError([&] { Write(dir / "d.tns", Tensor::Zeros({2}, DType::kFloat32)); }).code(),
            ErrorCode::kInvalidArgument);
}

// No volume anywhere: 2^40 dims from a shape comment or from the largest indices, and shapes
// whose product overflows int64 (each dim fits), read, validated, sorted, written and read back,
// also by the streamed positions of `spy`.
TEST(TnsTest, HypersparseShapesNeedNoVolume) {
  constexpr int64_t kBig = int64_t{1} << 40;
  const TensorData c =
      Tns("# shape: 1099511627776 1099511627776 1099511627776\n1099511627776 1 7 2\n"
          "3 1099511627776 1099511627776 -1\n");
  EXPECT_EQ(c.sparse.shape(), (std::vector<int64_t>{kBig, kBig, kBig}));
  EXPECT_EQ(c.sparse.indices().ToVector<int64_t>(),
            (std::vector<int64_t>{kBig - 1, 0, 6, 2, kBig - 1, kBig - 1}));
  c.sparse.ValidateIndices();  // 120 key bits: still no volume needed
  // Largest indices give the shape: 2^62 x 2^40 x 3, a product far past int64.
  const TensorData l = Tns("4611686018427387904 1 3 1.5\n1 1099511627776 1 2\n");
  EXPECT_EQ(l.sparse.shape(), (std::vector<int64_t>{int64_t{1} << 62, kBig, 3}));
  SparseTensor sorted = l.sparse;
  sorted.Coalesce();
  EXPECT_EQ(sorted.values().ToVector<double>(), (std::vector<double>{2, 1.5}));
  Error past = CatchError([&] { Tns("# shape: 1099511627776 2\n1099511627777 1 1\n"); });
  EXPECT_HAS(past.what(), "index 1099511627777 on axis 0 is out of range [1, 1099511627776]");
  TempDir dir;
  for (const TensorData* in : {&c, &l}) {
    Write(dir / "h.tns", in->sparse);
    const TensorData back = Read(dir / "h.tns");
    EXPECT_EQ(back.sparse.shape(), in->sparse.shape());
    EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), in->sparse.indices().ToVector<int64_t>());
    EXPECT_EQ(back.sparse.values().ToVector<double>(), in->sparse.values().ToVector<double>());
    std::mutex mu;
    std::vector<int64_t> seen;
    const std::vector<int64_t> shape = VisitTnsPositions(
        dir / "h.tns", [](const std::vector<int64_t>&) { return std::make_pair(2, 0); },
        [&](const int64_t* rc, int64_t n) {
          std::lock_guard<std::mutex> lock(mu);
          seen.insert(seen.end(), rc, rc + 2 * n);
        });
    EXPECT_EQ(shape, in->sparse.shape());
    const std::vector<int64_t> idx = in->sparse.indices().ToVector<int64_t>();
    EXPECT_EQ(seen, (std::vector<int64_t>{idx[2], idx[0], idx[5], idx[3]}));
  }
}

}  // namespace
}  // namespace tensorkit::io
