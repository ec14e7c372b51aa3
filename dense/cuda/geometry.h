// Internal: the index arithmetic and launch geometry of the CUDA executor. Includes no CUDA
// header and is TK_HOST_DEVICE throughout, so the host tests run the very arithmetic the kernels
// use and compare it with the CPU engine (tests/dense/cuda_geometry_test.cc).
//
// Glossary
//   OffsetCalc   the element offsets of every operand at one position of a subset of a nest's
//                axes (the first axis of the subset varies fastest): one division per axis.
//   Path         how an elementwise pass is laid out on the grid:
//                  kVector  one contiguous axis for every operand, aligned: each thread moves
//                           16 bytes of the widest operand per load/store;
//                  kRows    a long inner axis: blocks along it (threads coalesced over axis 0),
//                           the other axes over blockIdx.y; 16-byte packs when every row is
//                           contiguous and aligned in every operand (vec > 1);
//                  kFlat    a short inner axis: every element tuple decomposed from one linear
//                           index over all axes;
//                  kTiled   a transpose-like copy: 32 x 32 tiles through shared memory, read
//                           along the input's dense axis t, written along the output's axis 0.
//   ReducePlan   a summation into dim-1 outputs: kept axes (the output steps along them) and
//                summed axes, the summed extent R cut into fixed chunks. The chunks depend on
//                the shape only, each thread adds its elements in a fixed order and blocks
//                combine in a fixed tree: the same bits on every run, with no atomics.
#ifndef TENSORKIT_DENSE_CUDA_GEOMETRY_H_
#define TENSORKIT_DENSE_CUDA_GEOMETRY_H_

#include <cstdint>

#include "tensorkit/common/fast_div.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/dense/engine.h"

namespace tensorkit::dense_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

using engine::kMaxOperands;
using engine::LoopNest;

inline constexpr int kThreads = 256;             // threads per block of elementwise passes
inline constexpr int kPerThread = 4;             // elements per thread (kRows, kFlat)
inline constexpr int kTile = 32;                 // kTiled: tile edge
inline constexpr int kTileRows = 8;              // kTiled: threads per block are kTile x this
inline constexpr int64_t kMaxGridY = 65535;      // CUDA's limit on gridDim.y and gridDim.z
inline constexpr int64_t kMaxGridX = 1ll << 30;  // blocks along x; kernels loop beyond it
inline constexpr int64_t kRowsMinInner = 128;    // shorter inner axes use kFlat
inline constexpr int64_t kRowChunk = 16384;      // summed elements per block (row reduction)
inline constexpr int kRowElementsPerLane = 4;    // short rows: elements per thread (ReducePlan)
inline constexpr int kColX = 32;                 // column reduction: outputs per block
inline constexpr int kColLanes = 8;              // column reduction: threads per output
inline constexpr int64_t kColChunk = 256;        // column reduction: summed rows per block

struct OffsetCalc {
  int num_axes = 0;
  int num_operands = 0;
  int64_t dims[kMaxAxes] = {};
  int64_t strides[kMaxOperands][kMaxAxes] = {};
  // Set by Prepare when Count() < 2^31: positions are then split by 32-bit magic-number
  // division (div32), several times cheaper on a GPU than 64-bit division.
  bool narrow = false;
  FastDivider32 div32[kMaxAxes];

  // Fills narrow and div32 from dims; call after the axes are set.
  void Prepare();

  // Offsets (in elements) of position `linear` of these axes, added to off[0..num_operands).
  // `linear` must be below Count(); the last axis then needs no division.
  TK_HOST_DEVICE void Add(int64_t linear, int64_t* off) const {
    if (narrow) {
      uint32_t l = static_cast<uint32_t>(linear);
      for (int a = 0; a < num_axes; ++a) {
        uint32_t i = l;
        if (a + 1 < num_axes) {
          const uint32_t q = div32[a].Divide(l);
          i = l - q * static_cast<uint32_t>(dims[a]);
          l = q;
        }
        for (int o = 0; o < num_operands; ++o) off[o] += static_cast<int64_t>(i) * strides[o][a];
      }
      return;
    }
    for (int a = 0; a < num_axes; ++a) {
      int64_t i = linear;
      if (a + 1 < num_axes) {
        const int64_t q = linear / dims[a];
        i = linear - q * dims[a];
        linear = q;
      }
      for (int o = 0; o < num_operands; ++o) off[o] += i * strides[o][a];
    }
  }
  int64_t Count() const;
};

// The axes of `nest` whose bit is set in `mask`, in nest order (innermost first).
OffsetCalc AxesOf(const LoopNest& nest, uint32_t mask);

enum class Path { kVector, kRows, kFlat, kTiled };

struct ElementwisePlan {
  Path path = Path::kFlat;
  int num_operands = 0;
  int64_t total = 0;              // element tuples
  int64_t n0 = 1;                 // inner dim (kRows, kTiled: axis 0)
  int64_t s0[kMaxOperands] = {};  // strides along axis 0
  int64_t nt = 1;                 // kTiled: dim of the input's dense axis t
  int64_t st[kMaxOperands] = {};  // kTiled: strides along axis t
  OffsetCalc outer;               // kRows: axes 1..; kTiled: axes other than 0 and t; kFlat: all
  int64_t outer_count = 1;        // positions of `outer` (kRows, kTiled)
  int vec = 1;                    // kVector: elements per load
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int block_x = kThreads, block_y = 1;
};

// Lays out an elementwise pass of `nest` (not summing). elem_sizes[k]: bytes per element of
// operand k; ptrs[k]: its first element (for alignment); `copy` allows kTiled.
ElementwisePlan PlanElementwise(const LoopNest& nest, const int64_t* elem_sizes,
                                const char* const* ptrs, bool copy);

// kRows: the offsets of the tuple at inner index i0 for outer position `outer_pos`.
TK_HOST_DEVICE inline void RowsTuple(const ElementwisePlan& p, int64_t outer_pos, int64_t i0,
                                     int64_t* off);
// kFlat: the offsets of the tuple at linear position `linear` (axis 0 fastest).
TK_HOST_DEVICE inline void FlatTuple(const ElementwisePlan& p, int64_t linear, int64_t* off);
// kTiled: the offsets of tuple (i along axis 0, j along axis t) of outer position `outer_pos`.
TK_HOST_DEVICE inline void TiledTuple(const ElementwisePlan& p, int64_t outer_pos, int64_t i,
                                      int64_t j, int64_t* off);

struct ReducePlan {
  bool rows = false;  // the inner axis is summed (row reduction), else kept (columns)
  int num_operands = 0;
  OffsetCalc kept;     // axes the output steps along, innermost first
  OffsetCalc summed;   // axes summed over (output stride 0)
  int64_t k = 1;       // output positions
  int64_t r = 1;       // summed element tuples per output position
  int64_t chunk = 1;   // summed tuples per block
  int64_t splits = 1;  // chunks per output position (> 1: partials, then a combine pass)
  // Row reductions: threads per output position, a power of two up to kThreads. Short rows get
  // few (about kRowElementsPerLane elements each), so a block serves many outputs instead of
  // leaving most of its threads idle; rows of 1024 elements and more get a whole block.
  int lanes = kThreads;
};

ReducePlan PlanReduce(const LoopNest& nest);

// The offsets of summed tuple `ri` of output position `ki`.
TK_HOST_DEVICE inline void ReduceTuple(const ReducePlan& p, int64_t ki, int64_t ri, int64_t* off);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

TK_HOST_DEVICE inline void RowsTuple(const ElementwisePlan& p, int64_t outer_pos, int64_t i0,
                                     int64_t* off) {
  for (int o = 0; o < p.num_operands; ++o) off[o] = i0 * p.s0[o];
  p.outer.Add(outer_pos, off);
}

TK_HOST_DEVICE inline void FlatTuple(const ElementwisePlan& p, int64_t linear, int64_t* off) {
  for (int o = 0; o < p.num_operands; ++o) off[o] = 0;
  p.outer.Add(linear, off);
}

TK_HOST_DEVICE inline void TiledTuple(const ElementwisePlan& p, int64_t outer_pos, int64_t i,
                                      int64_t j, int64_t* off) {
  for (int o = 0; o < p.num_operands; ++o) off[o] = i * p.s0[o] + j * p.st[o];
  p.outer.Add(outer_pos, off);
}

TK_HOST_DEVICE inline void ReduceTuple(const ReducePlan& p, int64_t ki, int64_t ri, int64_t* off) {
  for (int o = 0; o < p.num_operands; ++o) off[o] = 0;
  p.kept.Add(ki, off);
  p.summed.Add(ri, off);
}

}  // namespace tensorkit::dense_cuda

#endif  // TENSORKIT_DENSE_CUDA_GEOMETRY_H_
