// tensorkit/dense/engine.h: the one kernel engine behind every dense copy, elementwise,
// reduction and product operation (internal: dense/ops.h is the public face of it).
//
// Glossary
//   operand       one Pattern of a pattern-tuple; operand 0 is always the output, operands 1 and
//                 2 the inputs. A tuple has 1 to 3 operands.
//   broadcast dim the dim of an axis over the whole tuple: the dim that is not 1 (after padding
//                 every pattern with dim-1 axes on the left).
//   summed axis   an axis where the output has dim 1 and the broadcast dim is n != 1: the output
//                 element receives the sum over that axis (the seed's rule).
//   LoopNest      the reduced pattern-tuple: broadcast dims plus per-operand strides (0 where an
//                 operand is broadcast or summed into), trivial axes dropped, mergeable axes
//                 merged, ordered innermost first. Pure index arithmetic, so device-neutral.
//   inner loop    a typed function that walks n elements along the innermost axis of a nest;
//                 the CPU driver calls it for every position of the outer axes.
//   Mode          how the inner loop writes the output: assign f, assign alpha*f, or
//                 alpha*f + beta*out. Summation always uses the last with beta == 1 after a
//                 separate pass that applied beta to the output.
//
// Note [kernel engine]
// ~~~~~~~~~~~~~~~~~~~~
// Every dense operation, from Copy to AddProduct, goes through the same pipeline:
//  1. Broadcast check (ops.cc): every operand dim equals the broadcast dim or is 1. An input
//     with dim 1 is broadcast; an output with dim 1 is summed into.
//  2. MakeLoopNest: per axis, the broadcast dim and each operand's stride (patterns already
//     carry stride 0 on dim-1 axes, which is exactly "broadcast" for inputs and "sum" for the
//     output). Axes of broadcast dim 1 are dropped; an axis whose output stride is negative is
//     flipped for all operands (moving their offsets) so contiguous fast paths see stride +1;
//     axes are ordered innermost first by the output's |stride| (ties and summed axes decided by
//     the inputs' strides, as PyTorch's TensorIterator does); neighbouring axes that are
//     contiguous for every operand are merged. A fully contiguous tensor becomes one axis.
//  3. RunCpu: the innermost axis is the inner loop; typed loops (below) test at run time for
//     unit strides and stride-0 operands and then run simple loops over raw pointers that the
//     compiler vectorises. The library is built without -march, so the loops whose speed depends
//     on vector width (float32/float64 Exp, Log, Sigmoid, Tanh) are also compiled for AVX2 and
//     AVX-512 and picked from cpuid (common/simd_path.h), with bit-identical results. Outer
//     axes are split across oneTBB tasks (common/parallel.h) so each task gets at least
//     kParallelMinBytes of traffic; when the outer axes are too few, the inner axis is cut into
//     fixed chunks too. Only axes where the output has a nonzero stride are ever split, so every
//     output element is written by exactly one task in a fixed order: results, sums included, are
//     bit-identical at any thread count. Sums along the inner axis use a fixed number of lanes
//     combined in a fixed tree (vectorisable and deterministic). A long summed inner axis (a
//     contiguous tensor summed into one element merges into one such axis, so the outer axes give
//     no parallelism) is cut by the typed loop itself into kSumChunk-element chunks
//     (ParallelChunks): each chunk's lane sum is a partial, and the partials are lane-summed in
//     chunk order. The chunks never depend on the thread count, so neither does the result; rows up
//     to 2 * kSumChunk keep the plain lane sum. A summed outer axis (a sum over rows) goes whole
//     to the kernel's SumRowsLoop when it has one: rows are added kSumRowGroup at a time in a
//     fixed pairwise tree, counted from row 0, before each group meets the output row, so the
//     output is read and written once per group rather than once per row.
//  4. Transpose-like tuples, where the output's inner axis is a large stride for an input that
//     is dense along another axis, run in tiles over those two axes. A plain element copy
//     (Copy without conversion, GatherToHost) copies each tile as in-register block transposes
//     (dense/transpose_internal.h: 8 x 8 floats with AVX2, 16 x 16 with AVX-512, any element
//     size, picked by the same SimdPath as the math loops), or through a small buffer when a
//     dense axis has a non-unit stride; either way every cache line is read and written whole
//     once per tile, so power-of-two strides, which map all rows of a tile to one cache set,
//     cost nothing.
// AddProduct first inspects the nest for a (batched) GEMM/GEMV and calls the gemm wrapper;
// everything else, including integer products, runs through the same driver.
#ifndef TENSORKIT_DENSE_ENGINE_H_
#define TENSORKIT_DENSE_ENGINE_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/functors.h"
#include "tensorkit/dense/pattern.h"

namespace tensorkit {
namespace engine {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

inline constexpr int kMaxOperands = 3;

// The reduced pattern-tuple (see Note [kernel engine]); axis 0 is the innermost.
struct LoopNest {
  int num_operands = 0;
  int num_axes = 0;    // 0 for a tuple of one element
  bool empty = false;  // some broadcast dim is 0: no element tuples at all
  std::array<int64_t, kMaxAxes> dims{};
  std::array<std::array<int64_t, kMaxAxes>, kMaxOperands> strides{};  // [operand][axis]
  std::array<int64_t, kMaxOperands> offsets{};  // element offset of index tuple (0, ..., 0)

  // True when the output is summed into along some axis.
  bool Sums() const;
  int64_t NumTuples() const;
  std::string ToString() const;
};

// Builds the nest of `n` patterns (output first). The patterns must be broadcastable (checked
// by the caller, which knows the operation's name for the message).
LoopNest MakeLoopNest(const Pattern* const* patterns, int n);

// Processes `n` element tuples along the innermost axis: ptrs[k] points at operand k's first
// element, strides[k] is its step in elements; ctx is the kernel's parameters.
using InnerLoop = void (*)(char* const* ptrs, const int64_t* strides, int64_t n, const void* ctx);

// Sums `rows` rows of the inputs into one row of the output: like InnerLoop over n tuples,
// repeated for rows r = 0 .. rows-1 with operand k moved by r * row_strides[k] (0 for the
// output), the rows added in fixed groups of kSumRowGroup before each group meets the output.
using SumRowsLoop = void (*)(char* const* ptrs, const int64_t* strides, int64_t n,
                             const int64_t* row_strides, int64_t rows, const void* ctx);

struct Kernel {
  InnerLoop loop = nullptr;
  // Optional, for summations (Mode kAxpby with beta 1): an outer summed axis taken several rows
  // per call, so the output row is read and written once per group instead of once per row.
  SumRowsLoop sum_rows = nullptr;
  const void* ctx = nullptr;
  std::array<int64_t, kMaxOperands> elem_sizes{};  // bytes per element of each operand
  bool allow_tiles = true;                         // false when the loop must see whole inner rows
  // > 0 when the loop is a plain copy of elements of this many bytes (1, 2, 4 or 8) between
  // two operands: transposes then run as register-sized block transposes.
  int copy_elem_size = 0;
};

// How RunCpu walks a nest (Note [kernel engine] steps 3 and 4), decided by PlanCpu before
// anything runs, so that tests check the decisions without running a loop.
struct CpuPlan {
  enum class Path {
    kNothing,    // the nest is empty
    kBlockCopy,  // a transposing plain copy: register block transposes of axes 0 and tile_axis
    kTiled,      // a transposing tuple: the inner loop over tiles of axes 0 and tile_axis
    kLoop,       // the inner loop along axis 0 at every position of the outer axes
  };
  Path path = Path::kNothing;
  LoopNest nest;          // the nest walked; a tuple of one element gets one axis of dim 1
  int tile_operand = -1;  // kBlockCopy, kTiled: the input that jumps far along axis 0
  int tile_axis = -1;     // kBlockCopy, kTiled: the outer axis along which that input is dense
  // kLoop: the outer axes of the nest that the output steps along, which tasks split, and the
  // summed ones, walked whole in order by each task; innermost first, with their positions.
  std::array<int, kMaxAxes> split_axes{};
  int num_split = 0;
  int64_t split_count = 1;
  std::array<int, kMaxAxes> summed_axes{};
  int num_summed = 0;
  int64_t summed_count = 1;
  // kLoop: axis 0 is cut into num_chunks fixed chunks of `chunk` elements (the last may be
  // shorter; one chunk when there are outer positions enough for the threads).
  int64_t chunk = 0;
  int64_t num_chunks = 0;
  bool sum_rows = false;    // summed_axes[0] goes whole to the kernel's SumRowsLoop
  int64_t grain_bytes = 0;  // bytes each task item moves, for GrainFor
};

// The plan of `kernel` over `nest` with `threads` threads. Pure: only chunk, num_chunks and
// grain_bytes depend on `threads`, and never along a summed axis, so results do not.
CpuPlan PlanCpu(const LoopNest& nest, const Kernel& kernel, int threads);

// Runs `kernel` over every tuple of `nest` as PlanCpu plans it; bases[k] is operand k's
// memory-index 0 (its storage's data pointer) on the CPU.
void RunCpu(const LoopNest& nest, char* const* bases, const Kernel& kernel);

// Copies the elements of `p` (over `src_base`, the storage's data) into the C-order buffer
// `dst` of the same dtype; used by GatherToHost. Not for kString.
void GatherStrided(const Pattern& p, DType dtype, const void* src_base, void* dst);

// Typed inner loops; T is the element type of every operand, F a functor of functors.h on the
// compute type C = ComputeType<T>; Mode, Coeffs and Convert are in functors.h as well.
template <typename T, typename F, Mode M>
void UnaryLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx);
template <typename T, typename F, Mode M>
void BinaryLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx);
// The SumRowsLoop of UnaryLoop<T, F, Mode::kAxpby> (ctx: Coeffs with beta 1).
template <typename T, typename F>
void UnarySumRows(char* const* p, const int64_t* s, int64_t n, const int64_t* rs, int64_t rows,
                  const void* ctx);
// out = scalar (ctx points at a T); for Set and SetZero.
template <typename T>
void FillLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx);
// out = Convert<D>(in) between element types (no summation: callers convert first).
template <typename D, typename S>
void ConvertLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx);

// Lanes of the fixed-shape summation along the inner axis.
inline constexpr int kSumLanes = 16;
// Elements per fixed chunk of a long summation along the inner axis (see Note [kernel engine]).
inline constexpr int64_t kSumChunk = 32768;
// Rows of an outer summed axis added together (a fixed pairwise tree) per SumRowsLoop group.
inline constexpr int kSumRowGroup = 8;

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace detail {

// Sum of g(i) for i in [0, n) in kSumLanes fixed lanes, combined in a fixed tree.
template <typename C, typename G>
C LaneSum(int64_t n, const G& g) {
  C lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int l = 0; l < kSumLanes; ++l) lanes[l] = AddW(lanes[l], g(i + l));
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] = AddW(lanes[l], g(i));
  for (int w = kSumLanes / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) lanes[l] = AddW(lanes[l], lanes[l + w]);
  }
  return lanes[0];
}

// LaneSum, cut into fixed chunks summed in parallel when n is long; the partials are combined
// in chunk order, so the result does not depend on the thread count.
template <typename C, typename G>
C ChunkedSum(int64_t n, const G& g) {
  if (n <= 2 * kSumChunk) return LaneSum<C>(n, g);
  const int64_t chunks = NumChunks(n, kSumChunk);
  std::unique_ptr<C[]> part(new C[chunks]);
  ParallelChunks(n, kSumChunk, [&](int64_t c, int64_t b, int64_t e) {
    part[c] = LaneSum<C>(e - b, [&](int64_t i) { return g(b + i); });
  });
  return LaneSum<C>(chunks, [&](int64_t c) { return part[c]; });
}

}  // namespace detail

template <typename T, typename F, Mode M>
void UnaryLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx) {
  using C = ComputeType<T>;
  const Coeffs<C>& k = *static_cast<const Coeffs<C>*>(ctx);
  T* o = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const int64_t so = s[0], sa = s[1];
  if (so == 0) {  // summed into one output element
    C acc =
        detail::ChunkedSum<C>(n, [&](int64_t i) { return F::Apply(detail::Load<C>(a[i * sa])); });
    detail::Put<M>(o, acc, k);
  } else if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) detail::Put<M>(o + i, F::Apply(detail::Load<C>(a[i])), k);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      detail::Put<M>(o + i * so, F::Apply(detail::Load<C>(a[i * sa])), k);
    }
  }
}

template <typename T, typename F>
void UnarySumRows(char* const* p, const int64_t* s, int64_t n, const int64_t* rs, int64_t rows,
                  const void* ctx) {
  static_assert(kSumRowGroup == 8, "the group below names eight rows");
  using C = ComputeType<T>;
  const Coeffs<C>& k = *static_cast<const Coeffs<C>*>(ctx);
  T* __restrict o = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const int64_t so = s[0], sa = s[1], ra = rs[1];
  auto f = [&](const T* __restrict row, int64_t i) { return F::Apply(detail::Load<C>(row[i])); };
  int64_t r = 0;
  for (; r + kSumRowGroup <= rows; r += kSumRowGroup) {
    const T* __restrict a0 = a + r * ra;
    const T* __restrict a1 = a0 + ra;
    const T* __restrict a2 = a1 + ra;
    const T* __restrict a3 = a2 + ra;
    const T* __restrict a4 = a3 + ra;
    const T* __restrict a5 = a4 + ra;
    const T* __restrict a6 = a5 + ra;
    const T* __restrict a7 = a6 + ra;
    auto group = [&](int64_t i) {
      return AddW(AddW(AddW(f(a0, i), f(a1, i)), AddW(f(a2, i), f(a3, i))),
                  AddW(AddW(f(a4, i), f(a5, i)), AddW(f(a6, i), f(a7, i))));
    };
    if (so == 1 && sa == 1) {
      for (int64_t i = 0; i < n; ++i) detail::Put<Mode::kAxpby>(o + i, group(i), k);
    } else {
      for (int64_t i = 0; i < n; ++i) detail::Put<Mode::kAxpby>(o + i * so, group(i * sa), k);
    }
  }
  for (; r < rows; ++r) {
    char* q[2] = {p[0], const_cast<char*>(reinterpret_cast<const char*>(a + r * ra))};
    UnaryLoop<T, F, Mode::kAxpby>(q, s, n, ctx);
  }
}

template <typename T, typename F, Mode M>
void BinaryLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx) {
  using C = ComputeType<T>;
  const Coeffs<C>& k = *static_cast<const Coeffs<C>*>(ctx);
  T* o = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  const int64_t so = s[0], sa = s[1], sb = s[2];
  auto f = [&](int64_t ia, int64_t ib) {
    return F::Apply(detail::Load<C>(a[ia]), detail::Load<C>(b[ib]));
  };
  if (so == 0) {
    if (sa == 1 && sb == 1) {
      detail::Put<M>(o, detail::ChunkedSum<C>(n, [&](int64_t i) { return f(i, i); }), k);
    } else {
      detail::Put<M>(o, detail::ChunkedSum<C>(n, [&](int64_t i) { return f(i * sa, i * sb); }), k);
    }
  } else if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) detail::Put<M>(o + i, f(i, i), k);
  } else if (so == 1 && sa == 1 && sb == 0) {
    const C bv = detail::Load<C>(*b);
    for (int64_t i = 0; i < n; ++i) detail::Put<M>(o + i, F::Apply(detail::Load<C>(a[i]), bv), k);
  } else if (so == 1 && sa == 0 && sb == 1) {
    const C av = detail::Load<C>(*a);
    for (int64_t i = 0; i < n; ++i) detail::Put<M>(o + i, F::Apply(av, detail::Load<C>(b[i])), k);
  } else {
    for (int64_t i = 0; i < n; ++i) detail::Put<M>(o + i * so, f(i * sa, i * sb), k);
  }
}

template <typename T>
void FillLoop(char* const* p, const int64_t* s, int64_t n, const void* ctx) {
  const T v = *static_cast<const T*>(ctx);
  T* o = reinterpret_cast<T*>(p[0]);
  const int64_t so = s[0];
  if (so == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = v;
  }
}

template <typename D, typename S>
void ConvertLoop(char* const* p, const int64_t* s, int64_t n, const void*) {
  D* o = reinterpret_cast<D*>(p[0]);
  const S* a = reinterpret_cast<const S*>(p[1]);
  const int64_t so = s[0], sa = s[1];
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = Convert<D>(a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = Convert<D>(a[i * sa]);
  }
}

}  // namespace engine
}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_ENGINE_H_
