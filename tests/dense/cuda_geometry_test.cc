// The device-neutral parts of the CUDA executor, run on the host: the launch plans and offset
// arithmetic of dense/cuda/geometry.h must visit exactly the element tuples the CPU engine
// visits, and the OpDesc seam (dense/executor.h) must give what the public ops give.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "reference/reference.h"
#include "tensorkit/dense/cuda/geometry.h"
#include "tensorkit/dense/executor.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit::dense_cuda {
namespace {

using Tuple = std::array<int64_t, kMaxOperands>;
using ref::Rng;

LoopNest NestOf(const std::vector<Tensor>& ts) {
  std::vector<const Pattern*> pats;
  for (const Tensor& t : ts) pats.push_back(&t.pattern());
  return engine::MakeLoopNest(pats.data(), static_cast<int>(pats.size()));
}

// Every element tuple (memory indexes of each operand) the CPU engine visits over the uint8
// tensors `ts`, sorted.
std::vector<Tuple> CpuTuples(const LoopNest& nest, const std::vector<Tensor>& ts) {
  struct Sink {
    std::mutex mutex;
    std::vector<Tuple> tuples;
    int num_operands = 0;
    std::array<char*, kMaxOperands> base{};
  } sink;
  sink.num_operands = nest.num_operands;
  // One byte per element, so a pointer's distance from its storage is its memory index.
  for (int o = 0; o < nest.num_operands; ++o) {
    sink.base[o] = static_cast<char*>(ts[o].storage()->data());
  }
  engine::Kernel k;
  k.elem_sizes = {1, 1, 1};
  k.ctx = &sink;
  k.loop = [](char* const* p, const int64_t* s, int64_t n, const void* ctx) {
    auto* out = static_cast<Sink*>(const_cast<void*>(ctx));
    std::lock_guard<std::mutex> lock(out->mutex);
    for (int64_t i = 0; i < n; ++i) {
      Tuple t{};
      for (int o = 0; o < out->num_operands; ++o) t[o] = (p[o] - out->base[o]) + i * s[o];
      out->tuples.push_back(t);
    }
  };
  engine::RunCpu(nest, sink.base.data(), k);
  std::sort(sink.tuples.begin(), sink.tuples.end());
  return sink.tuples;
}

// The tuples a plan's kernel visits, by the same index functions the kernels call, sorted.
std::vector<Tuple> PlanTuples(const ElementwisePlan& p, const LoopNest& nest) {
  std::vector<Tuple> out;
  auto push = [&](const int64_t* off) {
    Tuple t{};
    for (int o = 0; o < p.num_operands; ++o) t[o] = nest.offsets[o] + off[o];
    out.push_back(t);
  };
  int64_t off[kMaxOperands];
  switch (p.path) {
    case Path::kVector:
      for (int64_t i = 0; i < p.total; ++i) {
        for (int o = 0; o < kMaxOperands; ++o) off[o] = i;
        push(off);
      }
      break;
    case Path::kRows:
      for (int64_t y = 0; y < p.outer_count; ++y) {
        for (int64_t i = 0; i < p.n0; ++i) {
          RowsTuple(p, y, i, off);
          push(off);
        }
      }
      break;
    case Path::kFlat:
      for (int64_t i = 0; i < p.total; ++i) {
        FlatTuple(p, i, off);
        push(off);
      }
      break;
    case Path::kTiled:
      for (int64_t z = 0; z < p.outer_count; ++z) {
        for (int64_t j = 0; j < p.nt; ++j) {
          for (int64_t i = 0; i < p.n0; ++i) {
            TiledTuple(p, z, i, j, off);
            push(off);
          }
        }
      }
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Random (out, a[, b]) tuples without summation: strided views with broadcasting.
std::vector<Tensor> RandomTuple(Rng& rng, int num_inputs) {
  const std::vector<int64_t> dims = ref::RandomDims(rng, 0, 5, 7, /*zero_ok=*/false);
  std::vector<Tensor> ts = {ref::RandomStridedTensor<uint8_t>(rng, dims)};
  for (int i = 0; i < num_inputs; ++i) {
    std::vector<int64_t> d = dims;
    for (int64_t& x : d) {
      if (ref::internal::Uniform(rng, 0, 3) == 0) x = 1;  // broadcast this axis
    }
    ts.push_back(ref::RandomStridedTensor<uint8_t>(rng, d));
  }
  return ts;
}

TEST(CudaGeometryTest, ElementwisePlansVisitTheEngineTuples) {
  Rng rng(1201);
  int paths[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<Tensor> ts = RandomTuple(rng, 1 + trial % 2);
    const LoopNest nest = NestOf(ts);
    const int64_t sizes[kMaxOperands] = {1, 1, 1};
    const char* ptrs[kMaxOperands] = {nullptr, nullptr, nullptr};  // aligned to anything
    const ElementwisePlan p = PlanElementwise(nest, sizes, ptrs, trial % 3 == 0);
    ++paths[static_cast<int>(p.path)];
    ASSERT_EQ(PlanTuples(p, nest), CpuTuples(nest, ts)) << nest.ToString();
  }
  EXPECT_GT(paths[static_cast<int>(Path::kFlat)], 0);
}

TEST(CudaGeometryTest, PathsForContiguousLongRowsAndTransposes) {
  const int64_t f4[kMaxOperands] = {4, 4, 4};
  const int64_t u1[kMaxOperands] = {1, 1, 1};
  alignas(16) static char buffer[64];
  const char* aligned[kMaxOperands] = {buffer, buffer, buffer};
  Tensor a = Tensor::Zeros({64, 300}, DType::kFloat32),
         b = Tensor::Zeros({64, 300}, DType::kFloat32);
  ElementwisePlan p = PlanElementwise(NestOf({a, b}), f4, aligned, false);
  EXPECT_EQ(p.path, Path::kVector);
  EXPECT_EQ(p.vec, 4);  // 16 bytes of float32
  const char* misaligned[kMaxOperands] = {buffer + 4, buffer, buffer};
  EXPECT_EQ(PlanElementwise(NestOf({a, b}), f4, misaligned, false).path, Path::kRows);
  // A broadcast row over a long inner axis: rows along axis 0, the other axis over the grid.
  Tensor row = Tensor::Zeros({300}, DType::kFloat32);
  p = PlanElementwise(NestOf({a, row}), f4, aligned, false);
  EXPECT_EQ(p.path, Path::kRows);
  EXPECT_EQ(p.n0, 300);
  EXPECT_EQ(p.outer_count, 64);
  EXPECT_EQ(p.grid_y, 64);
  EXPECT_EQ(p.vec, 4);  // every row starts 16-byte aligned: packs of 4 floats
  Tensor odd = Tensor::Zeros({64, 301}, DType::kFloat32),
         odd_row = Tensor::Zeros({301}, DType::kFloat32);
  EXPECT_EQ(PlanElementwise(NestOf({odd, odd_row}), f4, aligned, false).vec, 1);
  // A transposed copy tiles; the same tuple as an arithmetic op does not.
  Tensor t = Tensor::Zeros({300, 64}, DType::kFloat32);
  Tensor tt = Transpose(t, 0, 1);
  p = PlanElementwise(NestOf({a, tt}), f4, aligned, /*copy=*/true);
  ASSERT_EQ(p.path, Path::kTiled);
  EXPECT_EQ(p.grid_x * kTile >= p.n0 && p.grid_y * kTile >= p.nt, true);
  Tensor a8 = Tensor::Zeros({64, 300}, DType::kUInt8);
  Tensor t8 = Transpose(Tensor::Zeros({300, 64}, DType::kUInt8), 0, 1);
  const ElementwisePlan p8 = PlanElementwise(NestOf({a8, t8}), u1, aligned, /*copy=*/true);
  ASSERT_EQ(p8.path, Path::kTiled);
  EXPECT_EQ(PlanTuples(p8, NestOf({a8, t8})), CpuTuples(NestOf({a8, t8}), {a8, t8}));
  EXPECT_NE(PlanElementwise(NestOf({a, tt}), f4, aligned, false).path, Path::kTiled);
  // Grids stay within CUDA's limits; kernels loop over the rest.
  Tensor tall = Tensor::Zeros({200000, 256}, DType::kUInt8);
  Tensor bcast = Tensor::Zeros({256}, DType::kUInt8);
  p = PlanElementwise(NestOf({tall, bcast}), u1, aligned, false);
  EXPECT_EQ(p.outer_count, 200000);
  EXPECT_EQ(p.grid_y, kMaxGridY);
}

TEST(CudaGeometryTest, ReducePlansSumExactlyTheEngineTuples) {
  Rng rng(1202);
  bool saw_rows = false, saw_cols = false;
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int64_t> dims = ref::RandomDims(rng, 1, 5, 6, /*zero_ok=*/false);
    std::vector<int64_t> out_dims = dims;
    for (int64_t& x : out_dims) {
      if (ref::internal::Uniform(rng, 0, 1) == 0) x = 1;  // summed into
    }
    const std::vector<Tensor> ts = {ref::RandomStridedTensor<uint8_t>(rng, out_dims),
                                    ref::RandomStridedTensor<uint8_t>(rng, dims)};
    const LoopNest nest = NestOf(ts);
    if (!nest.Sums()) continue;
    const ReducePlan p = PlanReduce(nest);
    (p.rows ? saw_rows : saw_cols) = true;
    ASSERT_GE(p.splits * p.chunk, p.r);
    std::vector<Tuple> got;
    std::vector<int64_t> outs;
    for (int64_t ki = 0; ki < p.k; ++ki) {
      int64_t first[kMaxOperands];
      ReduceTuple(p, ki, 0, first);
      outs.push_back(first[0]);
      for (int64_t ri = 0; ri < p.r; ++ri) {
        int64_t off[kMaxOperands];
        ReduceTuple(p, ki, ri, off);
        ASSERT_EQ(off[0], first[0]);  // one output element per kept position
        got.push_back({nest.offsets[0] + off[0], nest.offsets[1] + off[1], 0});
      }
    }
    std::sort(outs.begin(), outs.end());
    ASSERT_EQ(std::adjacent_find(outs.begin(), outs.end()), outs.end());  // distinct outputs
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, CpuTuples(nest, ts)) << nest.ToString();
  }
  EXPECT_TRUE(saw_rows);
  EXPECT_TRUE(saw_cols);
}

TEST(CudaGeometryTest, LargeSumsSplitIntoFixedChunks) {
  Tensor all = Tensor::Zeros({1}, DType::kFloat32), big = Tensor::Zeros({1 << 20}, DType::kFloat32);
  ReducePlan p = PlanReduce(NestOf({all, big}));
  EXPECT_TRUE(p.rows);
  EXPECT_EQ(p.splits, (1 << 20) / kRowChunk);
  Tensor cols = Tensor::Zeros({1, 100}, DType::kFloat32);
  Tensor tall = Tensor::Zeros({5000, 100}, DType::kFloat32);
  p = PlanReduce(NestOf({cols, tall}));
  EXPECT_FALSE(p.rows);
  EXPECT_EQ(p.k, 100);
  EXPECT_EQ(p.splits, (5000 + kColChunk - 1) / kColChunk);
}

// Short rows get few threads each (about kRowElementsPerLane elements per thread), so a block
// sums many rows; rows of 1024 elements and more keep a whole block.
TEST(CudaGeometryTest, ShortRowsShareABlock) {
  // (A one-element row is not a reduction: its axis coalesces away and it runs as columns.)
  const std::vector<std::pair<int64_t, int>> cases = {
      {2, 1},    {4, 1},      {5, 2},      {8, 2},           {100, 32},        {128, 32},
      {129, 64}, {1000, 256}, {1024, 256}, {5000, kThreads}, {70001, kThreads}};
  for (const auto& [r, lanes] : cases) {
    const Tensor out = Tensor::Zeros({7, 1}, DType::kFloat32);
    const Tensor in = Tensor::Zeros({7, r}, DType::kFloat32);
    const ReducePlan p = PlanReduce(NestOf({out, in}));
    ASSERT_TRUE(p.rows) << r;
    EXPECT_EQ(p.lanes, lanes) << r;
    EXPECT_EQ(kThreads % p.lanes, 0) << r;
    EXPECT_TRUE(p.lanes == kThreads || p.lanes * kRowElementsPerLane >= r) << r;
  }
  // Column sums and long rows keep their layouts.
  const ReducePlan cols = PlanReduce(
      NestOf({Tensor::Zeros({1, 9}, DType::kFloat32), Tensor::Zeros({500, 9}, DType::kFloat32)}));
  EXPECT_FALSE(cols.rows);
  EXPECT_EQ(cols.lanes, kThreads);
}

// The 32-bit offset arithmetic (positions below 2^31) gives the 64-bit one's offsets, and wide
// positions keep the 64-bit one.
TEST(CudaGeometryTest, NarrowOffsetsMatchTheWideOnes) {
  Rng rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    dense_cuda::OffsetCalc c;
    c.num_axes = static_cast<int>(ref::internal::Uniform(rng, 1, 8));
    c.num_operands = static_cast<int>(ref::internal::Uniform(rng, 1, 3));
    for (int a = 0; a < c.num_axes; ++a) {
      c.dims[a] = ref::internal::Uniform(rng, 1, trial % 3 == 0 ? 40 : 9);
      for (int o = 0; o < c.num_operands; ++o) {
        c.strides[o][a] = ref::internal::Uniform(rng, -1000000, 1000000);
      }
    }
    c.Prepare();
    ASSERT_EQ(c.narrow, c.Count() < (int64_t{1} << 31));
    dense_cuda::OffsetCalc wide = c;
    wide.narrow = false;
    const int64_t count = c.Count();
    for (int k = 0; k < 200; ++k) {
      const int64_t linear =
          k < 2 ? (k == 0 ? 0 : count - 1) : ref::internal::Uniform(rng, 0, count - 1);
      int64_t got[kMaxOperands] = {}, want[kMaxOperands] = {};
      c.Add(linear, got);
      wide.Add(linear, want);
      for (int o = 0; o < c.num_operands; ++o) ASSERT_EQ(got[o], want[o]) << trial << " " << linear;
    }
  }
  dense_cuda::OffsetCalc big;
  big.num_axes = 2;
  big.num_operands = 1;
  big.dims[0] = int64_t{1} << 16;
  big.dims[1] = int64_t{1} << 15;  // 2^31 positions: one too many for 32 bits
  big.Prepare();
  EXPECT_FALSE(big.narrow);
}

// The seam itself on the CPU: an OpDesc through Execute gives the public op's result.
TEST(DeviceSeamTest, DescriptorsRunOnTheCpuExecutor) {
  Rng rng(1203);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<int64_t> dims = ref::RandomDims(rng, 0, 4, 5);
    Tensor a = ref::RandomStridedTensor<float>(rng, dims);
    Tensor b = ref::RandomStridedTensor<float>(rng, dims);
    Tensor want = Tensor::Empty(dims, DType::kFloat32), got = Tensor::Empty(dims, DType::kFloat32);
    Mul(a, b, &want);
    engine::OpDesc d;
    d.kind = engine::OpKind::kBinary;
    d.binary = engine::BinaryFn::kMul;
    d.coeffs = ops_internal::MakeCoeffs(DType::kFloat32, 1, 0, "test");
    d.op = "test";
    EXPECT_EQ(d.NumOperands(), 3);
    const LoopNest nest = NestOf({got, a, b});
    char* bases[3] = {static_cast<char*>(got.storage()->data()),
                      static_cast<char*>(a.storage()->data()),
                      static_cast<char*>(b.storage()->data())};
    engine::Execute(d, nest, bases, Device::Cpu());
    EXPECT_EQ(got.ToVector<float>(), want.ToVector<float>());
    // A fill descriptor carries its value as one element of the output's dtype.
    engine::OpDesc fill;
    fill.kind = engine::OpKind::kFill;
    *reinterpret_cast<float*>(fill.coeffs.bytes) = 2.5f;
    const LoopNest one = NestOf({got});
    engine::Execute(fill, one, bases, Device::Cpu());
    EXPECT_EQ(got.ToVector<float>(), std::vector<float>(got.NumElements(), 2.5f));
  }
}

}  // namespace
}  // namespace tensorkit::dense_cuda
