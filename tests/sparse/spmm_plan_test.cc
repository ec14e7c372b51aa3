// The device-neutral half of the cuSPARSE products (sparse/cuda/spmm_plan.h), on the host: the
// layouts handed to cuSPARSE address exactly the tensor's elements, and the batched product's
// 2-D reformulation gives the CPU's batched result.
#include "tensorkit/sparse/cuda/spmm_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "reference/reference.h"
#include "sparse/spcompute_test_util.h"
#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

using sparse_cuda::BatchKeys;
using sparse_cuda::DenseLayout;
using sparse_cuda::PlanDense;

// The memory index cuSPARSE reads for element (i, j) under `layout`.
int64_t Address(const DenseLayout& layout, int64_t i, int64_t j) {
  return layout.row_major ? i * layout.ld + j : i + j * layout.ld;
}

TEST(SpmmPlan, LayoutsThatFitAddressEveryElementAsThePatternDoes) {
  ref::Rng rng(13);
  int fits = 0, copies = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<int64_t> dims = {ref::internal::Uniform(rng, 1, 6),
                                       ref::internal::Uniform(rng, 1, 6)};
    const Tensor t = trial % 2 == 0 ? ref::RandomStridedTensor<float>(rng, dims)
                                    : ref::RandomTensor<float>(rng, dims);
    const Tensor v = trial % 3 == 0 ? Transpose(t, 0, 1) : t;
    const int64_t rows = v.Dim(0), cols = v.Dim(1);
    const DenseLayout layout = PlanDense(rows, cols, v.Stride(0), v.Stride(1));
    const std::vector<int64_t> mem = ref::MemoryIndexes(v.pattern());
    if (!layout.fits) {
      ++copies;
      // A copy is needed only when no unit stride with a large enough ld exists.
      const bool rows_ok = (cols == 1 || v.Stride(1) == 1) && (rows == 1 || v.Stride(0) >= cols);
      const bool cols_ok = (rows == 1 || v.Stride(0) == 1) && (cols == 1 || v.Stride(1) >= rows);
      EXPECT_FALSE(rows_ok || cols_ok) << ShapeString(v.Dims()) << " " << ShapeString(v.Strides());
      continue;
    }
    ++fits;
    EXPECT_GE(layout.ld, layout.row_major ? cols : rows);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        ASSERT_EQ(Address(layout, i, j) + v.pattern().offset, mem[i * cols + j])
            << "dims " << ShapeString(v.Dims()) << " strides " << ShapeString(v.Strides());
      }
    }
  }
  EXPECT_GT(fits, 500);  // both outcomes are exercised
  EXPECT_GT(copies, 100);
}

TEST(SpmmPlan, ContiguousTransposedAndVectorOperands) {
  const Tensor t = Tensor::Zeros({4, 5}, DType::kFloat32);
  DenseLayout l = PlanDense(4, 5, t.Stride(0), t.Stride(1));
  EXPECT_TRUE(l.fits && l.row_major && l.ld == 5);
  const Tensor tt = Transpose(t, 0, 1);  // [5, 4] read column-major, the op-flag identity
  l = PlanDense(5, 4, tt.Stride(0), tt.Stride(1));
  EXPECT_TRUE(l.fits && !l.row_major && l.ld == 5);
  const Tensor wide = Slice(Tensor::Zeros({4, 9}, DType::kFloat32), 1, 0, 5);  // ld 9
  l = PlanDense(4, 5, wide.Stride(0), wide.Stride(1));
  EXPECT_TRUE(l.fits && l.row_major && l.ld == 9);
  const Tensor stepped = Slice(Tensor::Zeros({8}, DType::kFloat32), 0, 0, 8, 2);  // a vector
  l = PlanDense(4, 1, stepped.Stride(0), 0);
  EXPECT_TRUE(l.fits && l.row_major && l.ld == 2);
  const Tensor reversed = Slice(Tensor::Zeros({4}, DType::kFloat32), 0, 3, -1, -1);
  EXPECT_FALSE(PlanDense(4, 1, reversed.Stride(0), 0).fits);
  const Tensor cols_stepped = Slice(Tensor::Zeros({4, 10}, DType::kFloat32), 1, 0, 10, 2);
  EXPECT_FALSE(PlanDense(4, 5, cols_stepped.Stride(0), cols_stepped.Stride(1)).fits);
}

// The batched product through the 2-D matrix of BatchKeys equals the CPU's batched product,
// for a shared b [K, N] (keys b*M+m, k) and a per-batch b [B, K, N] read as [B*K, N].
TEST(SpmmPlan, BatchKeysTurnABatchedProductIntoOne2DProduct) {
  std::mt19937 rng(7);
  for (const bool block_diagonal : {false, true}) {
    const int64_t batches = 3, m = 4, k = 5, n = 2;
    const SparseTensor a =
        spcompute_testing::RandomCoo<double>(rng, {batches, m, k}, 25, /*dups=*/true);
    ref::Rng vr(block_diagonal ? 1 : 2);
    const Tensor b = block_diagonal ? ref::RandomTensor<double>(vr, {batches, k, n})
                                    : ref::RandomTensor<double>(vr, {k, n});
    Tensor want = Tensor::Zeros({batches, m, n}, DType::kFloat64);
    SparseDenseProduct(2, 0, a, b, &want);

    const std::vector<int64_t> idx = a.indices().ToVector<int64_t>();
    std::vector<int64_t> keys(static_cast<size_t>(2 * a.nnz()));
    for (int64_t e = 0; e < a.nnz(); ++e) {
      BatchKeys(idx[3 * e], idx[3 * e + 1], idx[3 * e + 2], m, k, block_diagonal, &keys[2 * e],
                &keys[2 * e + 1]);
    }
    const SparseTensor flat =
        SparseTensor::Create(Tensor::FromVector(keys, {a.nnz(), 2}), a.values(),
                             {batches * m, block_diagonal ? batches * k : k});
    const Tensor b2 = block_diagonal ? *MergeAxes(b, 0) : b;
    Tensor got = Tensor::Zeros({batches * m, n}, DType::kFloat64);
    SparseDenseProduct(2, 0, flat, b2, &got);
    EXPECT_EQ(got.ToVector<double>(), want.ToVector<double>()) << block_diagonal;
  }
}

}  // namespace
}  // namespace tensorkit
