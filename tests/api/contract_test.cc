// The public API contract of DESIGN.md section 6, called exactly as written there, with the
// results checked: if a name or a signature drifts, this stops compiling or fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

using ::testing::ElementsAre;

TEST(ContractTest, CreationAndAccess) {
  Tensor z = Tensor::Zeros({2, 3}, DType::kFloat32);
  Tensor e = Tensor::Empty(std::vector<int64_t>{4}, DType::kInt64, Device::Cpu());
  Tensor v = Tensor::FromVector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(z.NumAxes(), 2);
  EXPECT_EQ(v.Dim(1), 3);
  EXPECT_EQ(v.Dim(-1), 3);
  EXPECT_EQ(v.Stride(0), 3);
  EXPECT_EQ(v.NumElements(), 6);
  EXPECT_THAT(v.Dims(), ElementsAre(2, 3));
  EXPECT_THAT(v.Strides(), ElementsAre(3, 1));
  EXPECT_EQ(v.dtype(), DType::kInt32);
  EXPECT_EQ(v.device(), Device::Cpu());
  EXPECT_EQ(v.pattern().num_axes, 2);
  EXPECT_EQ(e.NumElements(), 4);
  EXPECT_THAT(z.ToVector<float>(), ElementsAre(0, 0, 0, 0, 0, 0));
  Tensor copy = v.To(Device::Cpu());
  EXPECT_FALSE(SharesStorage(copy, v));
  EXPECT_EQ(copy.ToVector<int32_t>(), v.ToVector<int32_t>());
  Tensor scalar = Tensor::Zeros({}, DType::kFloat64);  // rank 0
  EXPECT_EQ(scalar.NumElements(), 1);
}

TEST(ContractTest, Views) {
  Tensor t = Tensor::FromVector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  EXPECT_THAT(Slice(t, 1, 0, 4, 2).ToVector<float>(), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(Slice(t, 0, 2, -1, -1).ToVector<float>(),
              ElementsAre(8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  EXPECT_EQ(Slice(t, 0, 1, 1).NumElements(), 0);  // start == end: empty
  EXPECT_THAT(Select(t, 1, 2).ToVector<float>(), ElementsAre(2, 6, 10));
  EXPECT_THAT(Transpose(t, 0, 1).Dims(), ElementsAre(4, 3));
  Tensor p = Permute(SplitAxis(t, 1, {2, 2}), {2, 0, 1});  // output axis i = input axis axes[i]
  EXPECT_THAT(p.Dims(), ElementsAre(2, 3, 2));
  std::optional<Tensor> view = View(t, {2, 6});
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(SharesStorage(*view, t));
  EXPECT_FALSE(View(Transpose(t, 0, 1), {12}).has_value());  // no view of a transpose
  std::optional<Tensor> merged = MergeAxes(t, 0);
  ASSERT_TRUE(merged.has_value());
  EXPECT_THAT(merged->Dims(), ElementsAre(12));
  EXPECT_THAT(Unsqueeze(t, 0).Dims(), ElementsAre(1, 3, 4));
  EXPECT_THAT(Squeeze(Unsqueeze(t, 2), 2).Dims(), ElementsAre(3, 4));
  Tensor rows = SliceRows(t, 1, 3);
  EXPECT_TRUE(SharesStorage(rows, t));
  EXPECT_THAT(rows.ToVector<float>(), ElementsAre(4, 5, 6, 7, 8, 9, 10, 11));
}

TEST(ContractTest, Copies) {
  Tensor t = Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_THAT(CopyRows(t, 1, 2).ToVector<int64_t>(), ElementsAre(3, 4, 5));
  EXPECT_THAT(CopyColumns(t, 1, 3).ToVector<int64_t>(), ElementsAre(1, 2, 4, 5));
  EXPECT_THAT(ConcatenateRows({t, t}).Dims(), ElementsAre(4, 3));
  EXPECT_THAT(ConcatenateColumns({t, t}).Dims(), ElementsAre(2, 6));
  EXPECT_THAT(Concatenate({t, t, t}, 1).Dims(), ElementsAre(2, 9));
  std::vector<Tensor> parts = Split(t, 1, {1, 2});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_THAT(parts[1].ToVector<int64_t>(), ElementsAre(1, 2, 4, 5));
}

TEST(ContractTest, Compute) {
  Tensor a = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::FromVector(std::vector<float>{10, 20, 30}, {3});
  Tensor c = Tensor::Empty({2, 3}, DType::kFloat32);
  Add(a, b, &c);  // broadcasting
  EXPECT_THAT(c.ToVector<float>(), ElementsAre(11, 22, 33, 14, 25, 36));
  Tensor col = Tensor::Zeros({1, 3}, DType::kFloat32);
  Copy(a, &col);  // summation into the dim-1 output
  EXPECT_THAT(col.ToVector<float>(), ElementsAre(5, 7, 9));
  Tensor d = Tensor::Zeros({2, 3}, DType::kFloat64);
  Copy(a, &d);  // converts dtype
  EXPECT_DOUBLE_EQ(d.ToVector<double>()[5], 6.0);
  SetZero(&c);
  Set(2, &c);
  Scale(1.5, &c);
  EXPECT_FLOAT_EQ(c.ToVector<float>()[0], 3.0f);
  CopyScaled(2, a, &c);
  AddTo(a, &c);
  AddTo(1, 0, a, &c);
  EXPECT_THAT(c.ToVector<float>(), ElementsAre(1, 2, 3, 4, 5, 6));
  Exp(a, &c);
  EXPECT_FLOAT_EQ(c.ToVector<float>()[0], std::exp(1.0f));
  using Unary = void (*)(const Tensor&, Tensor*);
  for (Unary op : {Unary{Log}, Unary{Relu}, Unary{Sigmoid}, Unary{Tanh}, Unary{Abs}, Unary{Sqrt},
                   Unary{Neg}}) {
    op(a, &c);
  }
  EXPECT_FLOAT_EQ(c.ToVector<float>()[3], -4.0f);  // Neg ran last
  using Binary = void (*)(const Tensor&, const Tensor&, Tensor*);
  for (Binary op : {Binary{Add}, Binary{Sub}, Binary{Mul}, Binary{Div}, Binary{Pow}, Binary{Max},
                    Binary{Min}}) {
    op(a, a, &c);
  }
  EXPECT_FLOAT_EQ(c.ToVector<float>()[5], 6.0f);  // Min ran last
  // Matrix product: a [2 3 1] * m [1 3 2] summed into out [2 1 2].
  Tensor m = Tensor::FromVector(std::vector<float>{1, 0, 0, 1, 1, 1}, {1, 3, 2});
  Tensor out = Tensor::Zeros({2, 1, 2}, DType::kFloat32);
  AddProduct(1, 0, Unsqueeze(a, 2), m, &out);
  EXPECT_THAT(out.ToVector<float>(), ElementsAre(4, 5, 10, 11));
}

TEST(ContractTest, Sparse) {
  Tensor indices = Tensor::FromVector(std::vector<int64_t>{1, 2, 0, 0, 1, 0}, {3, 2});
  Tensor values = Tensor::FromVector(std::vector<float>{3, 1, 2});
  SparseTensor st = SparseTensor::Create(indices, values, {2, 3});
  EXPECT_EQ(st.nnz(), 3);
  EXPECT_EQ(st.rank(), 2);
  EXPECT_THAT(st.shape(), ElementsAre(2, 3));
  EXPECT_THAT(st.order(), ElementsAre(-1, -1));
  EXPECT_TRUE(st.IndicesValid());
  st.ValidateIndices();
  st.Reorder({0, 1});
  EXPECT_THAT(st.order(), ElementsAre(0, 1));
  EXPECT_THAT(st.values().ToVector<float>(), ElementsAre(1, 2, 3));
  int groups = 0;
  for (const auto& g : st.group({0})) {
    EXPECT_EQ(g.indices().Dim(0), g.values().Dim(0));
    EXPECT_EQ(g.group().size(), 1u);
    ++groups;
  }
  EXPECT_EQ(groups, 2);
  Tensor dense = Tensor::Empty({2, 3}, DType::kFloat32);
  st.ToDense(&dense, true);
  EXPECT_THAT(st.ToDense().ToVector<float>(), ElementsAre(1, 0, 0, 2, 0, 3));
  EXPECT_EQ(dense.ToVector<float>(), st.ToDense().ToVector<float>());
  SparseTensor back = SparseTensor::FromDense(dense);
  EXPECT_THAT(back.order(), ElementsAre(0, 1));
  EXPECT_EQ(back.nnz(), 3);
  SparseTensor cat = SparseTensor::Concat({st, back});  // along order[0] = 0
  EXPECT_THAT(cat.shape(), ElementsAre(4, 3));
  SparseTensor cat1 = SparseTensor::Concat({st, back}, 1);
  EXPECT_THAT(cat1.shape(), ElementsAre(2, 6));
  SparseTensor dup = SparseTensor::Concat({st, st}, 0);
  dup = SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 0, 0, 0}, {2, 2}),
                             Tensor::FromVector(std::vector<float>{1, 2}), {1, 1});
  dup.Coalesce();
  EXPECT_EQ(dup.nnz(), 1);
  EXPECT_THAT(dup.values().ToVector<float>(), ElementsAre(3));
}

TEST(ContractTest, SparseCompute) {
  SparseTensor st =
      SparseTensor::FromDense(Tensor::FromVector(std::vector<float>{1, 0, 2, 0, 3, 0}, {2, 3}));
  CsrMatrix csr = CsrMatrix::FromSparse(st);
  EXPECT_THAT(csr.row_ptr().ToVector<int64_t>(), ElementsAre(0, 2, 3));
  EXPECT_THAT(csr.col_indices().ToVector<int64_t>(), ElementsAre(0, 2, 1));
  EXPECT_THAT(csr.values().ToVector<float>(), ElementsAre(1, 2, 3));
  EXPECT_THAT(csr.shape(), ElementsAre(2, 3));
  EXPECT_EQ(csr.ToSparse().ToDense().ToVector<float>(), st.ToDense().ToVector<float>());
  CscMatrix csc = CscMatrix::FromSparse(st);
  EXPECT_EQ(csc.ToSparse().ToDense().ToVector<float>(), st.ToDense().ToVector<float>());
  Tensor b = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor c = Tensor::Zeros({2, 2}, DType::kFloat32);
  SparseDenseProduct(1, 0, st, b, &c);
  EXPECT_THAT(c.ToVector<float>(), ElementsAre(11, 14, 9, 12));
  SparseDenseProduct(1, 1, csr, b, &c);
  EXPECT_THAT(c.ToVector<float>(), ElementsAre(22, 28, 18, 24));
  SparseTensor sq = SparseSparseProduct(st, SparseTensor::FromDense(b));
  EXPECT_THAT(sq.ToDense().ToVector<float>(), ElementsAre(11, 14, 9, 12));
  EXPECT_THAT(ReduceSum(st, {1}).ToVector<float>(), ElementsAre(3, 3));
  EXPECT_THAT(ReduceSum(st, {0}).ToVector<float>(), ElementsAre(1, 3, 2));
}

}  // namespace
}  // namespace tensorkit
