// PlanCpu (dense/engine.h): how the CPU driver walks a nest, checked without running a loop.
#include <gtest/gtest.h>

#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/views.h"

namespace tensorkit::engine {
namespace {

using Path = CpuPlan::Path;

LoopNest Nest(const std::vector<const Tensor*>& ts) {
  std::vector<const Pattern*> pats;
  for (const Tensor* t : ts) pats.push_back(&t->pattern());
  return MakeLoopNest(pats.data(), static_cast<int>(pats.size()));
}

void NoLoop(char* const*, const int64_t*, int64_t, const void*) {}
void NoRows(char* const*, const int64_t*, int64_t, const int64_t*, int64_t, const void*) {}

// The plan of the copy-shaped tuple (out, in).
CpuPlan Plan(const Tensor& out, const Tensor& in, const Kernel& k, int threads) {
  return PlanCpu(Nest({&out, &in}), k, threads);
}

// A kernel over `operands` operands of `elem_size` bytes each.
Kernel KernelOf(int operands, int64_t elem_size) {
  Kernel k;
  k.loop = &NoLoop;
  for (int o = 0; o < operands; ++o) k.elem_sizes[o] = elem_size;
  return k;
}

TEST(CpuPlanTest, EmptyNestRunsNothing) {
  Tensor out = Tensor::Zeros({0, 5}, DType::kFloat32), in = Tensor::Zeros({0, 5}, DType::kFloat32);
  EXPECT_EQ(Plan(out, in, KernelOf(2, 4), 8).path, Path::kNothing);
}

TEST(CpuPlanTest, OneElementGetsOneAxisOfDimOne) {
  Tensor out = Tensor::Zeros({}, DType::kFloat32), in = Tensor::Zeros({}, DType::kFloat32);
  const CpuPlan plan = Plan(out, in, KernelOf(2, 4), 8);
  ASSERT_EQ(plan.path, Path::kLoop);
  ASSERT_EQ(plan.nest.num_axes, 1);
  EXPECT_EQ(plan.nest.dims[0], 1);
  EXPECT_EQ(plan.nest.strides[0][0], 1);
  EXPECT_EQ(plan.nest.strides[1][0], 1);
  EXPECT_EQ(plan.num_chunks, 1);
  EXPECT_EQ(plan.chunk, 1);
}

// A long contiguous axis is cut into fixed chunks of whole cache lines when the threads need
// work; one thread takes it whole.
TEST(CpuPlanTest, LongInnerAxisIsChunkedForThreads) {
  const int64_t n = int64_t{1} << 22;
  Tensor out = Tensor::Zeros({n}, DType::kFloat32), in = Tensor::Zeros({n}, DType::kFloat32);
  const LoopNest nest = Nest({&out, &in});
  const CpuPlan one = PlanCpu(nest, KernelOf(2, 4), 1);
  ASSERT_EQ(one.path, Path::kLoop);
  EXPECT_EQ(one.num_split, 0);
  EXPECT_EQ(one.num_summed, 0);
  EXPECT_EQ(one.chunk, n);
  EXPECT_EQ(one.num_chunks, 1);
  const CpuPlan many = PlanCpu(nest, KernelOf(2, 4), 8);
  ASSERT_EQ(many.path, Path::kLoop);
  EXPECT_LT(many.chunk, n);
  EXPECT_EQ(many.chunk % 64, 0);
  EXPECT_EQ(many.num_chunks, (n + many.chunk - 1) / many.chunk);
  EXPECT_GE(many.num_chunks, 8);
  EXPECT_EQ(many.grain_bytes, many.chunk * 8);
}

// Outer positions enough for the threads: no chunks.
TEST(CpuPlanTest, ManyRowsAreSplitNotChunked) {
  Tensor out = Tensor::Zeros({4096, 1000}, DType::kFloat64);
  Tensor row = Tensor::Zeros({1000}, DType::kFloat64);
  const CpuPlan plan = PlanCpu(Nest({&out, &row}), KernelOf(2, 8), 8);
  ASSERT_EQ(plan.path, Path::kLoop);
  ASSERT_EQ(plan.num_split, 1);
  EXPECT_EQ(plan.split_axes[0], 1);
  EXPECT_EQ(plan.split_count, 4096);
  EXPECT_EQ(plan.num_summed, 0);
  EXPECT_EQ(plan.chunk, 1000);
  EXPECT_EQ(plan.num_chunks, 1);
}

// A sum along the inner axis is never chunked by the driver (the typed loop cuts it in fixed
// chunks itself), whatever the thread count.
TEST(CpuPlanTest, InnerSumIsNeverChunked) {
  const int64_t n = int64_t{1} << 22;
  Tensor out = Tensor::Zeros({1}, DType::kFloat32), in = Tensor::Zeros({n}, DType::kFloat32);
  const LoopNest nest = Nest({&out, &in});
  for (int threads : {1, 2, 64}) {
    const CpuPlan plan = PlanCpu(nest, KernelOf(2, 4), threads);
    ASSERT_EQ(plan.path, Path::kLoop);
    EXPECT_EQ(plan.chunk, n) << threads;
    EXPECT_EQ(plan.num_chunks, 1) << threads;
  }
}

// A sum over rows: the summed axis is walked in each task, never split; with a SumRowsLoop and
// at least kSumRowGroup rows it goes to that loop whole.
TEST(CpuPlanTest, SummedRowsGoToSumRowsLoop) {
  Tensor out = Tensor::Zeros({1, 512}, DType::kFloat32);
  Tensor in = Tensor::Zeros({300, 512}, DType::kFloat32);
  const LoopNest nest = Nest({&out, &in});
  Kernel k = KernelOf(2, 4);
  const CpuPlan plain = PlanCpu(nest, k, 8);
  ASSERT_EQ(plain.path, Path::kLoop);
  EXPECT_EQ(plain.num_split, 0);
  ASSERT_EQ(plain.num_summed, 1);
  EXPECT_EQ(plain.summed_count, 300);
  EXPECT_FALSE(plain.sum_rows);
  k.sum_rows = &NoRows;
  for (int threads : {1, 8}) {
    const CpuPlan rows = PlanCpu(nest, k, threads);
    EXPECT_TRUE(rows.sum_rows);
    EXPECT_EQ(rows.summed_axes[0], plain.summed_axes[0]);
    EXPECT_EQ(rows.nest.dims[rows.summed_axes[0]], 300);
  }
  Tensor few = Tensor::Zeros({kSumRowGroup - 1, 512}, DType::kFloat32);
  EXPECT_FALSE(Plan(out, few, k, 8).sum_rows);
}

// A transposing copy runs in tiles: register block transposes for a plain copy, the inner loop
// over tiles otherwise; a summation never does.
TEST(CpuPlanTest, TransposesAreTiled) {
  Tensor out = Tensor::Zeros({256, 384}, DType::kFloat32);
  Tensor in = Transpose(Tensor::Zeros({384, 256}, DType::kFloat32), 0, 1);
  Kernel k = KernelOf(2, 4);
  EXPECT_EQ(Plan(out, in, k, 8).path, Path::kTiled);
  EXPECT_EQ(Plan(out, in, k, 8).tile_operand, 1);
  EXPECT_EQ(Plan(out, in, k, 8).tile_axis, 1);
  k.copy_elem_size = 4;
  EXPECT_EQ(Plan(out, in, k, 8).path, Path::kBlockCopy);
  EXPECT_EQ(Plan(out, in, k, 8).tile_axis, 1);
  k.allow_tiles = false;
  EXPECT_EQ(Plan(out, in, k, 8).path, Path::kLoop);
  Tensor col = Tensor::Zeros({256, 1}, DType::kFloat32);
  EXPECT_EQ(Plan(col, in, KernelOf(2, 4), 8).path, Path::kLoop);
}

// What the threads change is only how axis 0 is cut, never which axes are split or summed.
TEST(CpuPlanTest, ThreadsChangeOnlyTheChunks) {
  Tensor out = Tensor::Zeros({3, 1, 70000}, DType::kFloat32);
  Tensor in = Tensor::Zeros({3, 20, 70000}, DType::kFloat32);
  const LoopNest nest = Nest({&out, &in});
  const CpuPlan one = PlanCpu(nest, KernelOf(2, 4), 1);
  for (int threads : {2, 7, 64}) {
    const CpuPlan plan = PlanCpu(nest, KernelOf(2, 4), threads);
    EXPECT_EQ(plan.path, one.path);
    EXPECT_EQ(plan.num_split, one.num_split);
    EXPECT_EQ(plan.split_count, one.split_count);
    EXPECT_EQ(plan.num_summed, one.num_summed);
    EXPECT_EQ(plan.summed_count, one.summed_count);
    EXPECT_EQ(plan.sum_rows, one.sum_rows);
    EXPECT_LT(plan.chunk * (plan.num_chunks - 1), 70000);
    EXPECT_GE(plan.chunk * plan.num_chunks, 70000);
  }
}

}  // namespace
}  // namespace tensorkit::engine
