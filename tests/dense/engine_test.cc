// The kernel engine's pattern-tuple reduction (MakeLoopNest) and its CPU driver.
#include "tensorkit/dense/engine.h"

#include <gtest/gtest.h>

#include <vector>

#include "reference/reference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit::engine {
namespace {

LoopNest Nest(const std::vector<const Tensor*>& ts) {
  std::vector<const Pattern*> pats;
  for (const Tensor* t : ts) pats.push_back(&t->pattern());
  return MakeLoopNest(pats.data(), static_cast<int>(pats.size()));
}

TEST(EngineTest, ContiguousMergesIntoOneAxis) {
  Tensor a = Tensor::Zeros({4, 5, 6}, DType::kFloat32),
         b = Tensor::Zeros({4, 5, 6}, DType::kFloat32);
  LoopNest n = Nest({&a, &b});
  ASSERT_EQ(n.num_axes, 1) << n.ToString();
  EXPECT_EQ(n.dims[0], 120);
  EXPECT_EQ(n.strides[0][0], 1);
  EXPECT_EQ(n.strides[1][0], 1);
  EXPECT_FALSE(n.Sums());
}

TEST(EngineTest, BroadcastAndSummedAxes) {
  Tensor out = Tensor::Zeros({4, 5}, DType::kFloat32), row = Tensor::Zeros({5}, DType::kFloat32);
  LoopNest n = Nest({&out, &row});
  ASSERT_EQ(n.num_axes, 2) << n.ToString();
  EXPECT_EQ(n.dims[0], 5);
  EXPECT_EQ(n.strides[1][1], 0);  // the row is broadcast along axis 0
  EXPECT_FALSE(n.Sums());
  // Summation over the last axis: the summed axis becomes the inner one (contiguous input).
  Tensor col = Tensor::Zeros({4, 1}, DType::kFloat32), in = Tensor::Zeros({4, 5}, DType::kFloat32);
  LoopNest s = Nest({&col, &in});
  ASSERT_EQ(s.num_axes, 2) << s.ToString();
  EXPECT_TRUE(s.Sums());
  EXPECT_EQ(s.dims[0], 5);
  EXPECT_EQ(s.strides[0][0], 0);
  EXPECT_EQ(s.strides[1][0], 1);
}

TEST(EngineTest, OrdersByOutputStridesAndFlipsNegativeOnes) {
  Tensor base = Tensor::Zeros({6, 7}, DType::kFloat32);
  Tensor t = Transpose(base, 0, 1);  // out strides (1, 7) as [7 6]
  Tensor out = Tensor::Zeros({7, 6}, DType::kFloat32);
  LoopNest n = Nest({&out, &t});
  ASSERT_EQ(n.num_axes, 2);
  EXPECT_EQ(n.strides[0][0], 1);  // the output's contiguous axis is inner
  EXPECT_EQ(n.strides[1][0], 7);
  Tensor rev = Slice(base, 1, 6, -1, -1);  // reversed columns of the output
  Tensor src = Tensor::Zeros({6, 7}, DType::kFloat32);
  LoopNest f = Nest({&rev, &src});
  EXPECT_EQ(f.strides[0][0], 1) << f.ToString();
  EXPECT_EQ(f.strides[1][0], -1) << f.ToString();
  EXPECT_EQ(f.offsets[0], 0);
  EXPECT_EQ(f.offsets[1], 6);
}

TEST(EngineTest, EmptyAndScalarTuples) {
  Tensor e = Tensor::Zeros({3, 0}, DType::kFloat32), s = Tensor::Zeros({}, DType::kFloat32);
  EXPECT_TRUE(Nest({&e}).empty);
  EXPECT_EQ(Nest({&e}).NumTuples(), 0);
  LoopNest n = Nest({&s, &s});
  EXPECT_FALSE(n.empty);
  EXPECT_EQ(n.NumTuples(), 1);
}

// GatherToHost (ToVector) of strided views runs through the engine.
TEST(EngineTest, GatherStridedMatchesReference) {
  ref::Rng rng(5);
  for (int round = 0; round < 40; ++round) {
    const std::vector<int64_t> dims = ref::RandomDims(rng, 0, 5, 9);
    Tensor t = ref::RandomStridedTensor<int16_t>(rng, dims);
    EXPECT_EQ(t.ToVector<int16_t>(), ref::Elements<int16_t>(t)) << t.pattern();
    Tensor v = ref::RandomView(rng, t);
    EXPECT_EQ(v.ToVector<int16_t>(), ref::Elements<int16_t>(v)) << v.pattern();
  }
  Tensor big = ref::RandomTensor<double>(rng, {130, 70});
  Tensor bt = Transpose(big, 0, 1);
  EXPECT_EQ(bt.ToVector<double>(), ref::Elements<double>(bt));
}

// The 4-D permute and 2-D transpose copies (tiled path) against the reference.
TEST(EngineTest, TiledPermuteCopies) {
  ref::Rng rng(6);
  Tensor a = ref::RandomTensor<float>(rng, {9, 20, 17, 33});
  for (const std::vector<int>& perm :
       std::vector<std::vector<int>>{{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 0, 3, 2}, {0, 1, 3, 2}}) {
    Tensor p = Permute(a, perm);
    Tensor out = Tensor::Empty(p.Dims(), DType::kFloat32);
    Copy(p, &out);
    EXPECT_EQ(out.ToVector<float>(), ref::Elements<float>(p));
  }
}

}  // namespace
}  // namespace tensorkit::engine
