// Launch geometry of the CUDA executor (see geometry.h); host code, built with or without CUDA.
#include "tensorkit/dense/cuda/geometry.h"

#include <algorithm>
#include <cstdint>

namespace tensorkit::dense_cuda {
namespace {

int64_t AbsI(int64_t v) { return v < 0 ? -v : v; }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The nest with a one-element tuple given one axis of dim 1, so every path sees >= 1 axis.
LoopNest WithAxis(const LoopNest& in) {
  LoopNest n = in;
  if (n.num_axes == 0) {
    n.num_axes = 1;
    n.dims[0] = 1;
    for (int o = 0; o < n.num_operands; ++o) n.strides[o][0] = 1;
  }
  return n;
}

}  // namespace

int64_t OffsetCalc::Count() const {
  int64_t c = 1;
  for (int a = 0; a < num_axes; ++a) c *= dims[a];
  return c;
}

void OffsetCalc::Prepare() {
  narrow = Count() < int64_t{FastDivider32::kLimit};
  if (!narrow) return;
  for (int a = 0; a < num_axes; ++a) div32[a] = FastDivider32(static_cast<uint32_t>(dims[a]));
}

OffsetCalc AxesOf(const LoopNest& nest, uint32_t mask) {
  OffsetCalc c;
  c.num_operands = nest.num_operands;
  for (int a = 0; a < nest.num_axes; ++a) {
    if ((mask >> a & 1u) == 0) continue;
    c.dims[c.num_axes] = nest.dims[a];
    for (int o = 0; o < nest.num_operands; ++o) c.strides[o][c.num_axes] = nest.strides[o][a];
    ++c.num_axes;
  }
  c.Prepare();
  return c;
}

ElementwisePlan PlanElementwise(const LoopNest& in_nest, const int64_t* elem_sizes,
                                const char* const* ptrs, bool copy) {
  const LoopNest nest = WithAxis(in_nest);
  const int no = nest.num_operands;
  ElementwisePlan p;
  p.num_operands = no;
  p.total = nest.NumTuples();
  p.n0 = nest.dims[0];
  for (int o = 0; o < no; ++o) p.s0[o] = nest.strides[o][0];
  const uint32_t all = (1u << nest.num_axes) - 1;
  // Packs of 16 bytes of the widest operand, when every operand is contiguous along axis 0 and
  // each row (every position of the other axes) starts aligned to its pack.
  int64_t widest = 1;
  for (int o = 0; o < no; ++o) widest = std::max(widest, elem_sizes[o]);
  const int vec = static_cast<int>(16 / widest);
  bool packs = vec > 1 && p.n0 >= vec;
  for (int o = 0; o < no && packs; ++o) {
    const auto addr = reinterpret_cast<uintptr_t>(ptrs[o]);
    packs = p.s0[o] == 1 && addr % static_cast<uintptr_t>(vec * elem_sizes[o]) == 0;
    for (int a = 1; a < nest.num_axes && packs; ++a) packs = nest.strides[o][a] % vec == 0;
  }
  // One contiguous axis: packs over the whole tensor.
  if (nest.num_axes == 1) {
    if (packs) {
      p.path = Path::kVector;
      p.vec = vec;
      p.grid_x = std::min(CeilDiv(p.total / vec, kThreads), kMaxGridX);
      return p;
    }
  }
  // A copy whose output is dense on axis 0 while the input jumps there but is dense on axis t.
  if (copy && no == 2 && nest.num_axes >= 2 && AbsI(p.s0[0]) == 1 && AbsI(p.s0[1]) >= 16 &&
      p.n0 >= 16) {
    for (int t = 1; t < nest.num_axes; ++t) {
      if (AbsI(nest.strides[1][t]) != 1 || nest.dims[t] < 16) continue;
      p.path = Path::kTiled;
      p.nt = nest.dims[t];
      for (int o = 0; o < no; ++o) p.st[o] = nest.strides[o][t];
      p.outer = AxesOf(nest, all & ~1u & ~(1u << t));
      p.outer_count = p.outer.Count();
      p.grid_x = std::min(CeilDiv(p.n0, kTile), kMaxGridX);
      p.grid_y = std::min(CeilDiv(p.nt, kTile), kMaxGridY);
      p.grid_z = std::min(p.outer_count, kMaxGridY);
      p.block_x = kTile;
      p.block_y = kTileRows;
      return p;
    }
  }
  if (p.n0 >= kRowsMinInner) {
    p.path = Path::kRows;
    p.outer = AxesOf(nest, all & ~1u);
    p.outer_count = p.outer.Count();
    if (packs) p.vec = vec;
    const int64_t units = packs ? p.n0 / vec : p.n0;
    p.grid_x = std::min(CeilDiv(units, int64_t{kThreads} * kPerThread), kMaxGridX);
    p.grid_y = std::min(p.outer_count, kMaxGridY);
    return p;
  }
  p.path = Path::kFlat;
  p.outer = AxesOf(nest, all);
  p.outer_count = p.total;
  p.grid_x = std::min(CeilDiv(p.total, int64_t{kThreads} * kPerThread), kMaxGridX);
  return p;
}

ReducePlan PlanReduce(const LoopNest& nest) {
  ReducePlan p;
  p.num_operands = nest.num_operands;
  uint32_t kept = 0, summed = 0;
  for (int a = 0; a < nest.num_axes; ++a) {
    if (nest.strides[0][a] != 0) {
      kept |= 1u << a;
    } else {
      summed |= 1u << a;
    }
  }
  p.rows = (summed & 1u) != 0;
  p.kept = AxesOf(nest, kept);
  p.summed = AxesOf(nest, summed);
  p.k = p.kept.Count();
  p.r = p.summed.Count();
  p.chunk = p.rows ? kRowChunk : kColChunk;
  p.splits = CeilDiv(p.r, p.chunk);
  if (p.rows && p.splits == 1) {
    const int64_t want = CeilDiv(p.r, int64_t{kRowElementsPerLane});
    while (p.lanes > 1 && p.lanes / 2 >= want) p.lanes /= 2;
  }
  return p;
}

}  // namespace tensorkit::dense_cuda
