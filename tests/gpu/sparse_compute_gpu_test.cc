// Sparse compute on the device against the CPU result: SpMV/SpMM from CSR and COO, batched,
// alpha/beta, strided operands, dense @ sparse, SpGEMM, the elementwise and mixed operations, the
// reductions and the compressed conversions; bad inputs give the CPU's Error codes. Values
// are small integers, so every float sum is exact in any order and results compare bit-equal.
// Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "reference/reference.h"
#include "sparse/spcompute_test_util.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/mixed.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/reduce.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using gpu_testing::ExpectSame;
using gpu_testing::SamePatternOn;
using spcompute_testing::RandomCoo;
using testing::ExpectError;

const Device kGpu = Device::Cuda(0);

// A [rows, cols] operand with random small integer values: C order, a transposed view, a
// sliced (wider ld) view or a negatively stepped view, by `layout`.
template <typename T>
Tensor DenseOperand(ref::Rng& rng, int64_t rows, int64_t cols, int layout) {
  switch (layout) {
    case 1:
      return Transpose(ref::RandomTensor<T>(rng, {cols, rows}), 0, 1);
    case 2:
      return Slice(ref::RandomTensor<T>(rng, {rows, cols + 3}), 1, 1, cols + 1);
    case 3:
      return Slice(ref::RandomTensor<T>(rng, {rows, cols}), 0, rows - 1, -1, -1);
    default:
      return ref::RandomTensor<T>(rng, {rows, cols});
  }
}

// c on the CPU and the same c (same pattern) on the device, holding NaN when `poison` so that a
// beta == 0 product that read c would show it.
template <typename T>
std::pair<Tensor, Tensor> Outputs(ref::Rng& rng, const std::vector<int64_t>& dims, int layout,
                                  bool poison) {
  Tensor c = dims.size() == 2 ? DenseOperand<T>(rng, dims[0], dims[1], layout)
                              : ref::RandomTensor<T>(rng, dims);
  if (poison) Set(std::numeric_limits<double>::quiet_NaN(), &c);
  return {c, SamePatternOn(c, kGpu)};
}

Tensor AsFloat(const Tensor& t) {
  Tensor out = Tensor::Empty(t.Dims(), DType::kFloat32, t.device());
  Copy(t, &out);
  return out;
}

template <typename T>
void CheckSpmm(uint32_t seed) {
  std::mt19937 rng(seed);
  ref::Rng vr(seed);
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t m = 1 + rng() % 40, k = 1 + rng() % 30, n = trial % 4 == 0 ? 1 : 1 + rng() % 9;
    const bool vector = trial % 4 == 0, poison = trial % 3 == 0;
    const int bl = vector ? (trial / 4) % 3 : trial % 4, cl = (trial / 4) % 4;
    const SparseTensor a = RandomCoo<T>(rng, {m, k}, rng() % (m * k + 1));
    const Tensor b = !vector   ? DenseOperand<T>(vr, k, n, bl)
                     : bl == 2 ? Slice(ref::RandomTensor<T>(vr, {2 * k}), 0, 0, 2 * k, 2)
                               : ref::RandomTensor<T>(vr, {k});
    auto [c, c_dev] =
        Outputs<T>(vr, vector ? std::vector<int64_t>{m} : std::vector<int64_t>{m, n}, cl, poison);
    const double alpha = 2, beta = poison ? 0 : 0.5;
    const std::string what = "trial " + std::to_string(trial);
    const SparseTensor a_dev = a.To(kGpu);
    const Tensor b_dev = SamePatternOn(b, kGpu);
    SparseDenseProduct(alpha, beta, a, b, &c);  // the CPU result
    Tensor c_coo = c_dev;
    SparseDenseProduct(alpha, beta, a_dev, b_dev, &c_coo);
    ExpectSame<T>(c_coo, c, "COO " + what);
    // From CSR, into a fresh copy of the original output.
    auto [c2, c2_dev] = Outputs<T>(vr, c.Dims(), cl, true);
    const CsrMatrix csr = CsrMatrix::FromSparse(a);
    SparseDenseProduct(alpha, 0, csr, b, &c2);
    SparseDenseProduct(alpha, 0, csr.To(kGpu), b_dev, &c2_dev);
    ExpectSame<T>(c2_dev, c2, "CSR " + what);
    EXPECT_EQ(c2_dev.device(), kGpu);
  }
}

TEST(SparseComputeGpu, SpmvAndSpmmMatchTheCpu) {
  TK_REQUIRE_GPU();
  CheckSpmm<float>(1);
  CheckSpmm<double>(2);
}

TEST(SparseComputeGpu, HalfPrecisionComputesInFloat) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(3);
  ref::Rng vr(3);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const SparseTensor a32 = RandomCoo<float>(rng, {30, 20}, 150);
    const Tensor b32 = ref::RandomTensor<float>(vr, {20, 6});
    Tensor a_vals = Tensor::Empty({a32.nnz()}, dtype), b = Tensor::Empty({20, 6}, dtype);
    Copy(a32.values(), &a_vals);
    Copy(b32, &b);
    const SparseTensor a = SparseTensor::Create(a32.indices(), a_vals, a32.shape());
    Tensor c = Tensor::Zeros({30, 6}, dtype), c_dev = Tensor::Zeros({30, 6}, dtype, kGpu);
    SparseDenseProduct(1, 0, a, b, &c);
    SparseDenseProduct(1, 0, a.To(kGpu), b.To(kGpu), &c_dev);
    ExpectSame<float>(AsFloat(c_dev), AsFloat(c), DTypeName(dtype));  // small integer sums
  }
}

TEST(SparseComputeGpu, BatchedProductsMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(4);
  ref::Rng vr(4);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t batches = 1 + rng() % 4, m = 1 + rng() % 9, k = 1 + rng() % 7, n = 1 + rng() % 5;
    const SparseTensor a = RandomCoo<float>(rng, {batches, m, k}, rng() % (batches * m * k + 1));
    const bool shared = trial % 2 == 0;
    Tensor b = shared ? ref::RandomTensor<float>(vr, {k, n})
                      : ref::RandomTensor<float>(vr, {batches, k, n});
    if (trial % 3 == 1 && !shared)
      b = Permute(ref::RandomTensor<float>(vr, {k, batches, n}), {1, 0, 2});
    Tensor c = ref::RandomTensor<float>(vr, {batches, m, n});
    if (trial % 3 == 2) c = Permute(ref::RandomTensor<float>(vr, {m, batches, n}), {1, 0, 2});
    Tensor c_dev = SamePatternOn(c, kGpu);
    SparseDenseProduct(-1, 1.5, a, b, &c);
    SparseDenseProduct(-1, 1.5, a.To(kGpu), SamePatternOn(b, kGpu), &c_dev);
    ExpectSame<float>(c_dev, c, "batched trial " + std::to_string(trial));
  }
}

TEST(SparseComputeGpu, DenseSparseProductMatchesTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(5);
  ref::Rng vr(5);
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t m = 1 + rng() % 12, k = 1 + rng() % 20, n = 1 + rng() % 15;
    const SparseTensor b = RandomCoo<double>(rng, {k, n}, rng() % (k * n + 1));
    const bool vec = trial % 4 == 0;
    const Tensor a =
        vec ? ref::RandomTensor<double>(vr, {k}) : DenseOperand<double>(vr, m, k, trial % 4);
    auto [c, c_dev] =
        Outputs<double>(vr, vec ? std::vector<int64_t>{n} : std::vector<int64_t>{m, n},
                        (trial / 4) % 4, trial % 2 == 0);
    const double beta = trial % 2 == 0 ? 0 : -1;
    const Tensor c_host = c;
    DenseSparseProduct(3, beta, a, b, &c);
    DenseSparseProduct(3, beta, SamePatternOn(a, kGpu), b.To(kGpu), &c_dev);
    ExpectSame<double>(c_dev, c, "COO trial " + std::to_string(trial));
    Tensor c_csr_host = Tensor::Empty(c.Dims(), DType::kFloat64);
    Copy(c_host, &c_csr_host);
    Tensor c_csr_dev = c_csr_host.To(kGpu);
    DenseSparseProduct(3, beta, a, CsrMatrix::FromSparse(b), &c_csr_host);
    DenseSparseProduct(3, beta, a.To(kGpu), CsrMatrix::FromSparse(b).To(kGpu), &c_csr_dev);
    ExpectSame<double>(c_csr_dev, c_csr_host, "CSR trial " + std::to_string(trial));
  }
}

TEST(SparseComputeGpu, BadInputsGiveTheCpuErrorCodes) {
  TK_REQUIRE_GPU();
  const SparseTensor a = testing::MakeSparse<float>({0, 1, 2, 3}, {1, 2}, {3, 4});
  const SparseTensor a_dev = a.To(kGpu);
  const Tensor x = Tensor::Zeros({4}, DType::kFloat32), y = Tensor::Zeros({3}, DType::kFloat32);
  Tensor y_dev = y.To(kGpu), x_dev = x.To(kGpu);
  // Mismatched devices: each operand named, the fix given.
  ExpectError([&] { SparseDenseProduct(1, 0, a_dev, x, &y_dev); }, ErrorCode::kDeviceMismatch,
              {"SparseDenseProduct", "cuda:0", "cpu", "To("});
  ExpectError([&] { SparseDenseProduct(1, 0, CsrMatrix::FromSparse(a).To(kGpu), x, &y_dev); },
              ErrorCode::kDeviceMismatch, {"SparseDenseProduct", "cuda:0", "cpu"});
  Tensor y_cpu = y;
  ExpectError([&] { SparseDenseProduct(1, 0, a, x_dev, &y_cpu); }, ErrorCode::kDeviceMismatch,
              {"SparseDenseProduct", "cuda:0"});
  // Mismatched shapes, as on the CPU.
  Tensor wrong = Tensor::Zeros({5}, DType::kFloat32, kGpu);
  ExpectError([&] { SparseDenseProduct(1, 0, a_dev, wrong, &y_dev); }, ErrorCode::kShapeMismatch,
              {"SparseDenseProduct"});
  ExpectError([&] { DenseSparseProduct(1, 0, wrong, a_dev, &y_dev); }, ErrorCode::kShapeMismatch,
              {"DenseSparseProduct"});
  // An index outside the shape.
  const SparseTensor bad = testing::MakeSparse<float>({0, 1, 7, 3}, {1, 2}, {3, 4});
  Tensor y2 = y;
  ExpectError([&] { SparseDenseProduct(1, 0, bad, x, &y2); }, ErrorCode::kOutOfRange, {"entry 1"});
  ExpectError([&] { SparseDenseProduct(1, 0, bad.To(kGpu), x_dev, &y_dev); },
              ErrorCode::kOutOfRange, {"entry 1"});
  // Unsorted CSR columns: refused when the device matrix is made, as on the CPU.
  const Tensor ptr = Tensor::FromVector<int64_t>({0, 2, 2, 2}, {4});
  const Tensor cols = Tensor::FromVector<int64_t>({3, 1}, {2});
  const Tensor vals = Tensor::FromVector<float>({1, 2}, {2});
  ExpectError(
      [&] {
        CsrMatrix::Create(ptr, cols, vals, {3, 4});
      },
      ErrorCode::kInvalidArgument, {"not sorted"});
  ExpectError(
      [&] {
        CsrMatrix::Create(ptr.To(kGpu), cols.To(kGpu), vals.To(kGpu), {3, 4});
      },
      ErrorCode::kInvalidArgument, {"not sorted"});
  // A dtype cuSPARSE does not multiply: a clear Error naming the dtype and the fix.
  const SparseTensor ai = testing::MakeSparse<int32_t>({0, 1}, {5}, {3, 4}).To(kGpu);
  Tensor xi = Tensor::Zeros({4}, DType::kInt32, kGpu), yi = Tensor::Zeros({3}, DType::kInt32, kGpu);
  ExpectError([&] { SparseDenseProduct(1, 0, ai, xi, &yi); }, ErrorCode::kUnsupported,
              {"SparseDenseProduct", "int32", "To(Device::Cpu())"});
}

// A random dim in [1, n].
int64_t Dim(std::mt19937& rng, int64_t n) { return 1 + static_cast<int64_t>(rng() % n); }

// Sums of small integers are exact in any order, so the device's sums equal the CPU's bits.
TEST(SparseComputeGpu, ReductionsMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(6);
  const std::vector<std::vector<int>> axes_sets = {{}, {0}, {1}, {2}, {0, 2}, {-1, 0}, {0, 1, 2}};
  for (int trial = 0; trial < 14; ++trial) {
    const std::vector<int64_t> shape = {Dim(rng, 6), Dim(rng, 5), Dim(rng, 7)};
    const SparseTensor a = trial % 2 == 0 ? RandomCoo<int64_t>(rng, shape, rng() % 60)
                                          : RandomCoo<float>(rng, shape, rng() % 60);
    const SparseTensor a_dev = a.To(kGpu);
    const std::vector<int>& axes = axes_sets[trial % axes_sets.size()];
    const std::string what = "trial " + std::to_string(trial);
    const Tensor dense = ReduceSum(a_dev, axes);
    EXPECT_EQ(dense.device(), kGpu);
    const SparseTensor sparse = ReduceSumSparse(a_dev, axes), want = ReduceSumSparse(a, axes);
    EXPECT_EQ(sparse.values().device(), kGpu);
    EXPECT_EQ(testing::Rows(sparse), testing::Rows(want)) << what;
    EXPECT_EQ(sparse.order(), want.order()) << what;
    if (trial % 2 == 0) {
      ExpectSame<int64_t>(dense, ReduceSum(a, axes), what);
      ExpectSame<int64_t>(sparse.values(), want.values(), what);
    } else {
      ExpectSame<float>(dense, ReduceSum(a, axes), what);
      ExpectSame<float>(sparse.values(), want.values(), what);
    }
    const int axis = static_cast<int>(trial % 3);
    ExpectSame<int64_t>(RowNnz(a_dev, axis), RowNnz(a, axis), what);
  }
}

TEST(SparseComputeGpu, SparseAddAndMixedAddMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(8);
  ref::Rng vr(8);
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<int64_t> shape = {Dim(rng, 7), Dim(rng, 6)};
    const SparseTensor a = RandomCoo<int32_t>(rng, shape, rng() % 30);
    const SparseTensor b = RandomCoo<int32_t>(rng, shape, rng() % 30);
    const SparseTensor sum = SparseAdd(a.To(kGpu), b.To(kGpu)), want = SparseAdd(a, b);
    EXPECT_EQ(sum.indices().device(), kGpu);
    EXPECT_EQ(testing::Rows(sum), testing::Rows(want)) << trial;  // cancelled sums kept alike
    ExpectSame<int32_t>(sum.values(), want.values(), "SparseAdd " + std::to_string(trial));
    const SparseTensor u = Add(a.To(kGpu), b.To(kGpu));
    EXPECT_EQ(testing::Rows(u), testing::Rows(want)) << trial;
    const Tensor d = trial % 2 == 0 ? ref::RandomTensor<int32_t>(vr, {shape[1]})
                                    : ref::RandomTensor<int32_t>(vr, shape);
    const Tensor mixed = Add(a.To(kGpu), d.To(kGpu));
    EXPECT_EQ(mixed.device(), kGpu);
    ExpectSame<int32_t>(mixed, Add(a, d), "Add(sparse, dense) " + std::to_string(trial));
  }
}

// Max and min of small integers (and NaN in the float trials) are exact, so the device's
// results equal the CPU's bits, the implicit zeros of partly stored slices included.
TEST(SparseComputeGpu, ExtremesMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(12);
  const std::vector<std::vector<int>> axes_sets = {{0}, {1}, {2}, {0, 2}, {-1, 0}, {0, 1, 2}, {}};
  for (int trial = 0; trial < 14; ++trial) {
    const std::vector<int64_t> shape = {Dim(rng, 5), Dim(rng, 4), Dim(rng, 6)};
    SparseTensor a = trial % 2 == 0 ? RandomCoo<int32_t>(rng, shape, rng() % 80)
                                    : RandomCoo<double>(rng, shape, rng() % 80);
    if (trial % 4 == 1 && a.nnz() > 2) {  // NaN at a few entries
      std::vector<double> v = a.values().ToVector<double>();
      v[0] = v[v.size() / 2] = std::numeric_limits<double>::quiet_NaN();
      a = SparseTensor::Create(a.indices(), Tensor::FromVector(v), a.shape());
    }
    const SparseTensor a_dev = a.To(kGpu);
    const std::vector<int>& axes = axes_sets[trial % axes_sets.size()];
    const std::string what = "trial " + std::to_string(trial);
    for (bool is_max : {true, false}) {
      const auto dense = is_max ? ReduceMax : ReduceMin;
      const auto sparse = is_max ? ReduceMaxSparse : ReduceMinSparse;
      const Tensor got = dense(a_dev, axes);
      EXPECT_EQ(got.device(), kGpu);
      const SparseTensor sgot = sparse(a_dev, axes), swant = sparse(a, axes);
      EXPECT_EQ(sgot.values().device(), kGpu);
      EXPECT_EQ(testing::Rows(sgot), testing::Rows(swant)) << what;
      if (trial % 2 == 0) {
        ExpectSame<int32_t>(got, dense(a, axes), what);
        ExpectSame<int32_t>(sgot.values(), swant.values(), what);
      } else {
        ExpectSame<double>(got, dense(a, axes), what);  // NaN where the CPU has NaN
        ExpectSame<double>(sgot.values(), swant.values(), what);
      }
    }
  }
}

// Runs longer than one thread's share (2048 entries: a reduction of every axis, a heavily
// repeated index) are combined by a block: integer sums and extremes still equal the CPU's,
// and sums of small integers in floats too.
TEST(SparseComputeGpu, LongRunsMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(16);
  for (int64_t nnz : {2049, 5000, 70000}) {
    const std::vector<int64_t> shape = {50, 60, 7};  // mostly distinct positions
    const SparseTensor a = RandomCoo<int64_t>(rng, shape, nnz);
    const SparseTensor f = RandomCoo<float>(rng, shape, nnz);
    const std::string what = "nnz " + std::to_string(nnz);
    ExpectSame<int64_t>(ReduceSum(a.To(kGpu), {0, 1, 2}), ReduceSum(a, {0, 1, 2}), what);
    ExpectSame<float>(ReduceSum(f.To(kGpu), {0, 1, 2}), ReduceSum(f, {0, 1, 2}), what);
    ExpectSame<int64_t>(ReduceMax(a.To(kGpu), {0, 1, 2}), ReduceMax(a, {0, 1, 2}), what);
    ExpectSame<float>(ReduceMin(f.To(kGpu), {0, 1}), ReduceMin(f, {0, 1}), what);  // 7 runs
    // One index repeated nnz times among a few others.
    std::vector<int64_t> rows(static_cast<size_t>(2 * nnz), 1);
    for (int64_t e = 0; e < nnz; e += 97) rows[2 * e] = e % 3;
    const SparseTensor dup =
        SparseTensor::Create(Tensor::FromVector(rows, {nnz, 2}), a.values(), {3, 2});
    SparseTensor c = dup, d = dup.To(kGpu);
    c.Coalesce();
    d.Coalesce();
    EXPECT_EQ(testing::Rows(d), testing::Rows(c)) << what;
    ExpectSame<int64_t>(d.values(), c.values(), what);
  }
}

// The intersection's products and the mixed product are exact for small integers.
TEST(SparseComputeGpu, SparseMultiplyAndMixedMulMatchTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(13);
  ref::Rng vr(13);
  for (int trial = 0; trial < 12; ++trial) {
    const std::vector<int64_t> shape = {Dim(rng, 6), Dim(rng, 7)};
    const SparseTensor a = RandomCoo<float>(rng, shape, rng() % 30);
    const SparseTensor b = RandomCoo<float>(rng, shape, rng() % 30);
    const std::string what = "trial " + std::to_string(trial);
    const SparseTensor got = SparseMultiply(a.To(kGpu), b.To(kGpu)), want = SparseMultiply(a, b);
    EXPECT_EQ(got.indices().device(), kGpu);
    EXPECT_EQ(testing::Rows(got), testing::Rows(want)) << what;
    EXPECT_EQ(got.order(), want.order()) << what;
    ExpectSame<float>(got.values(), want.values(), what);
    const Tensor d = trial % 3 == 0 ? ref::RandomTensor<float>(vr, {shape[1]})
                     : trial % 3 == 1
                         ? ref::RandomTensor<float>(vr, {shape[0], 1})
                         : Transpose(ref::RandomTensor<float>(vr, {shape[1], shape[0]}), 0, 1);
    const SparseTensor m = Mul(a.To(kGpu), SamePatternOn(d, kGpu)), mw = Mul(a, d);
    EXPECT_EQ(m.values().device(), kGpu);
    EXPECT_EQ(testing::Rows(m), testing::Rows(mw)) << what;
    ExpectSame<float>(m.values(), mw.values(), "Mul " + what);
  }
  const SparseTensor bad = testing::MakeSparse<float>({0, 1, 2, 9}, {1, 2}, {3, 4}).To(kGpu);
  ExpectError([&] { Mul(bad, Tensor::Zeros({4}, DType::kFloat32, kGpu)); }, ErrorCode::kOutOfRange,
              {"Mul", "entry 1"});
  ExpectError([&] { SparseMultiply(bad, bad); }, ErrorCode::kOutOfRange,
              {"SparseMultiply", "entry 1"});
}

// cuSPARSE's SpGEMM of small integer values: every sum exact, so the CSR arrays equal the CPU's.
TEST(SparseComputeGpu, SparseSparseProductMatchesTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(14);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t m = Dim(rng, 30), k = Dim(rng, 20), n = Dim(rng, 25);
    const SparseTensor a = RandomCoo<double>(rng, {m, k}, rng() % (m * k / 2 + 1));
    const SparseTensor b = RandomCoo<double>(rng, {k, n}, rng() % (k * n / 2 + 1));
    const std::string what = "trial " + std::to_string(trial);
    const CsrMatrix want = SparseSparseProduct(CsrMatrix::FromSparse(a), CsrMatrix::FromSparse(b));
    const CsrMatrix got =
        SparseSparseProduct(CsrMatrix::FromSparse(a.To(kGpu)), CsrMatrix::FromSparse(b.To(kGpu)));
    EXPECT_EQ(got.device(), kGpu);
    ExpectSame<int64_t>(got.row_ptr(), want.row_ptr(), what);
    ExpectSame<int64_t>(got.col_indices(), want.col_indices(), what);
    ExpectSame<double>(got.values(), want.values(), what);
    got.Validate();  // on the device
    const SparseTensor coo = SparseSparseProduct(a.To(kGpu), b.To(kGpu));
    EXPECT_EQ(coo.indices().device(), kGpu);
    EXPECT_EQ(testing::Rows(coo), testing::Rows(SparseSparseProduct(a, b))) << what;
  }
  const SparseTensor ai = testing::MakeSparse<int32_t>({0, 1}, {5}, {3, 3}).To(kGpu);
  ExpectError([&] { SparseSparseProduct(ai, ai); }, ErrorCode::kUnsupported,
              {"SparseSparseProduct", "int32", "To(Device::Cpu())"});
  // The 16-bit floats are refused as on the CPU (tests/sparse/spgemm_test.cc), not sent to
  // cuSPARSE.
  const SparseTensor ah =
      SparseTensor::Create(ai.indices(), Converted(ai.values(), DType::kFloat16), ai.shape());
  ExpectError([&] { SparseSparseProduct(ah, ah); }, ErrorCode::kUnsupported,
              {"SparseSparseProduct", "float16"});
}

// A CSR or CSC matrix on the device stays there through conversions, and its validation names
// the first violation as on the CPU.
TEST(SparseComputeGpu, CompressedMatricesStayOnTheDevice) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(15);
  const SparseTensor a = RandomCoo<float>(rng, {9, 7}, 30);
  const CsrMatrix csr = CsrMatrix::FromSparse(a), csr_dev = CsrMatrix::FromSparse(a.To(kGpu));
  EXPECT_EQ(testing::Rows(csr_dev.ToSparse()), testing::Rows(csr.ToSparse()));
  EXPECT_EQ(csr_dev.ToSparse().indices().device(), kGpu);
  const CscMatrix csc_dev = csr_dev.ToCsc();
  EXPECT_EQ(csc_dev.device(), kGpu);
  ExpectSame<int64_t>(csc_dev.col_ptr(), csr.ToCsc().col_ptr(), "ToCsc");
  ExpectSame<int64_t>(csr_dev.RowNnz(), csr.RowNnz(), "RowNnz");
  ExpectSame<int64_t>(csc_dev.ToCsr().col_indices(), csr.col_indices(), "ToCsr");
  // The first violation: an index out of range before an unsorted pair, and the reverse.
  const Tensor ptr = Tensor::FromVector<int64_t>({0, 3, 5}, {3});
  for (const std::vector<int64_t>& cols :
       {std::vector<int64_t>{0, 9, 1, 2, 1}, std::vector<int64_t>{2, 1, 9, 0, 1}}) {
    const Tensor c = Tensor::FromVector(cols), v = Tensor::Zeros({5}, DType::kFloat32);
    std::string cpu_message;
    ErrorCode cpu_code = ErrorCode::kInternal;
    try {
      CsrMatrix::Create(ptr, c, v, {2, 4});
    } catch (const Error& e) {
      cpu_message = e.what();
      cpu_code = e.code();
    }
    ExpectError(
        [&] {
          CsrMatrix::Create(ptr.To(kGpu), c.To(kGpu), v.To(kGpu), {2, 4});
        },
        cpu_code, {cpu_message});
  }
  ExpectError(
      [&] {
        CsrMatrix::Create(ptr.To(kGpu), ptr, ptr, {2, 4});
      },
      ErrorCode::kDeviceMismatch, {"CsrMatrix::Create", "cuda:0", "cpu"});
}

// Mixed devices: each operand named, the fix given.
TEST(SparseComputeGpu, MixedDevicesSaySo) {
  TK_REQUIRE_GPU();
  const SparseTensor a = testing::MakeSparse<float>({0, 1, 2, 3}, {1, 2}, {3, 4}).To(kGpu);
  const SparseTensor sq = testing::MakeSparse<float>({0, 1, 2, 0}, {1, 2}, {3, 3});
  ExpectError([&] { SparseMultiply(a, a.To(Device::Cpu())); }, ErrorCode::kDeviceMismatch,
              {"SparseMultiply", "cuda:0", "cpu"});
  ExpectError([&] { SparseSparseProduct(sq.To(kGpu), sq); }, ErrorCode::kDeviceMismatch,
              {"SparseSparseProduct", "cuda:0", "cpu"});
  ExpectError([&] { Mul(a, Tensor::Zeros({4}, DType::kFloat32)); }, ErrorCode::kDeviceMismatch,
              {"Mul", "cuda:0", "cpu"});
  ExpectError([&] { SparseAdd(a, a.To(Device::Cpu())); }, ErrorCode::kDeviceMismatch,
              {"SparseAdd", "cuda:0", "cpu"});
  ExpectError([&] { Add(a, Tensor::Zeros({4}, DType::kFloat32)); }, ErrorCode::kDeviceMismatch,
              {"Add", "cuda:0", "cpu"});
}

}  // namespace
}  // namespace tensorkit
