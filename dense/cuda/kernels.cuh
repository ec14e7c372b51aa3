// Internal: the CUDA kernels of the dense executor, as templates over a per-tuple operation.
// Every kernel loops over its grid (grid-stride), so any size fits CUDA's grid limits; the
// index arithmetic is geometry.h's, shared with the host tests.
//
// Glossary
//   tuple op   a device struct holding the operands' first-element pointers and the
//              coefficients: op(off) processes the element tuple at element offsets off[k];
//              op.template Vec<V>(off) processes the V tuples from off[k] on, contiguous in every
//              operand and aligned to V elements (one load or store per operand).
//   launch     every Launch* function enqueues on the given stream and checks the launch,
//              naming the operation in the Error.
#ifndef TENSORKIT_DENSE_CUDA_KERNELS_CUH_
#define TENSORKIT_DENSE_CUDA_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/dense/cuda/geometry.h"
#include "tensorkit/dense/executor.h"
#include "tensorkit/dense/functors.h"

namespace tensorkit::dense_cuda {

using engine::Coeffs;
using engine::Mode;
namespace ed = engine::detail;

// ---------------------------------------------------------------------------------------------
// Per-element pieces
// ---------------------------------------------------------------------------------------------

// V elements of T moved by one load or store.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// out = f by mode, the mode chosen at run time (uniform across the grid, so no divergence).
template <typename T, typename C>
__device__ __forceinline__ void PutDyn(Mode m, T* out, C f, const Coeffs<C>& k) {
  if (m == Mode::kAssign) {
    ed::Put<Mode::kAssign>(out, f, k);
  } else if (m == Mode::kScale) {
    ed::Put<Mode::kScale>(out, f, k);
  } else {
    ed::Put<Mode::kAxpby>(out, f, k);
  }
}

// The functor named by `fn`, for the reductions (one kernel per dtype for every functor); the
// cases come from the list of functions (dense/elementwise_fns.h), as DispatchUnary's do.
#define TK_APPLY_CASE(Name, ...) \
  case Fn::k##Name:              \
    return engine::Name##F::Apply(__VA_ARGS__);

template <typename C>
__device__ __forceinline__ C ApplyUnary(engine::UnaryFn fn, C x) {
  using Fn = engine::UnaryFn;
  // clang-format off
  switch (fn) {
    case Fn::kIdentity:
      return x;
#define TK_UNARY_CASE(Name) TK_APPLY_CASE(Name, x)
    TENSORKIT_UNARY_FNS(TK_UNARY_CASE)
#undef TK_UNARY_CASE
  }
  // clang-format on
  return x;
}

template <typename C>
__device__ __forceinline__ C ApplyBinary(engine::BinaryFn fn, C a, C b) {
  using Fn = engine::BinaryFn;
  // clang-format off
  switch (fn) {
#define TK_BINARY_CASE(Name) TK_APPLY_CASE(Name, a, b)
    TENSORKIT_BINARY_FNS(TK_BINARY_CASE)
#undef TK_BINARY_CASE
  }
  // clang-format on
  return a;
}

#undef TK_APPLY_CASE

// ---------------------------------------------------------------------------------------------
// Tuple ops
// ---------------------------------------------------------------------------------------------

template <typename T, typename F>
struct UnaryOp {
  using C = ComputeType<T>;
  T* out;
  const T* a;
  Coeffs<C> k;
  Mode mode;

  __device__ void operator()(const int64_t* off) const {
    PutDyn(mode, out + off[0], F::Apply(ed::Load<C>(a[off[1]])), k);
  }
  template <int V>
  __device__ void Vec(const int64_t* off) const {
    const auto x = *reinterpret_cast<const Pack<T, V>*>(a + off[1]);
    auto* po = reinterpret_cast<Pack<T, V>*>(out + off[0]);
    Pack<T, V> y;
    if (mode == Mode::kAxpby) y = *po;
#pragma unroll
    for (int l = 0; l < V; ++l) PutDyn(mode, &y.v[l], F::Apply(ed::Load<C>(x.v[l])), k);
    *po = y;
  }
};

template <typename T, typename F>
struct BinaryOp {
  using C = ComputeType<T>;
  T* out;
  const T* a;
  const T* b;
  Coeffs<C> k;
  Mode mode;

  __device__ void operator()(const int64_t* off) const {
    PutDyn(mode, out + off[0], F::Apply(ed::Load<C>(a[off[1]]), ed::Load<C>(b[off[2]])), k);
  }
  template <int V>
  __device__ void Vec(const int64_t* off) const {
    const auto x = *reinterpret_cast<const Pack<T, V>*>(a + off[1]);
    const auto z = *reinterpret_cast<const Pack<T, V>*>(b + off[2]);
    auto* po = reinterpret_cast<Pack<T, V>*>(out + off[0]);
    Pack<T, V> y;
    if (mode == Mode::kAxpby) y = *po;
#pragma unroll
    for (int l = 0; l < V; ++l) {
      PutDyn(mode, &y.v[l], F::Apply(ed::Load<C>(x.v[l]), ed::Load<C>(z.v[l])), k);
    }
    *po = y;
  }
};

template <typename D, typename S>
struct ConvertOp {
  D* out;
  const S* a;

  __device__ void operator()(const int64_t* off) const {
    out[off[0]] = engine::Convert<D>(a[off[1]]);
  }
  template <int V>
  __device__ void Vec(const int64_t* off) const {
    const auto x = *reinterpret_cast<const Pack<S, V>*>(a + off[1]);
    Pack<D, V> y;
#pragma unroll
    for (int l = 0; l < V; ++l) y.v[l] = engine::Convert<D>(x.v[l]);
    *reinterpret_cast<Pack<D, V>*>(out + off[0]) = y;
  }
};

// out = value, by element size (U is an unsigned integer of that size).
template <typename U>
struct FillOp {
  U* out;
  U value;

  __device__ void operator()(const int64_t* off) const { out[off[0]] = value; }
  template <int V>
  __device__ void Vec(const int64_t* off) const {
    Pack<U, V> y;
#pragma unroll
    for (int l = 0; l < V; ++l) y.v[l] = value;
    *reinterpret_cast<Pack<U, V>*>(out + off[0]) = y;
  }
};

// ---------------------------------------------------------------------------------------------
// Elementwise kernels
// ---------------------------------------------------------------------------------------------

template <int V, typename Op>
__global__ void __launch_bounds__(kThreads) VectorKernel(const ElementwisePlan p, const Op op) {
  const int64_t nvec = p.total / V;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < nvec;
       i += stride) {
    const int64_t off[kMaxOperands] = {i * V, i * V, i * V};
    op.template Vec<V>(off);
  }
  // The tail of fewer than V tuples: block 0 only.
  if (blockIdx.x == 0) {
    const int64_t t = nvec * V + threadIdx.x;
    if (t < p.total) {
      int64_t off[kMaxOperands] = {t, t, t};
      op(off);
    }
  }
}

// kRows; with p.vec > 1 every row is contiguous and aligned in every operand, and threads move
// V-element packs instead of single elements.
template <int V, typename Op>
__global__ void __launch_bounds__(kThreads) RowsKernel(const ElementwisePlan p, const Op op) {
  constexpr int64_t kSpan = int64_t{kThreads} * kPerThread;
  const bool packed = V > 1 && p.vec == V;
  const int64_t units = packed ? p.n0 / V : p.n0;  // packs or elements per row
  for (int64_t y = blockIdx.y; y < p.outer_count; y += gridDim.y) {
    int64_t base[kMaxOperands] = {0, 0, 0};
    RowsTuple(p, y, 0, base);
    for (int64_t bx = blockIdx.x; bx * kSpan < units; bx += gridDim.x) {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int64_t u = bx * kSpan + j * kThreads + threadIdx.x;
        if (u >= units) continue;
        int64_t off[kMaxOperands];
        if (packed) {
          for (int o = 0; o < kMaxOperands; ++o) off[o] = base[o] + u * V;
          op.template Vec<V>(off);
        } else {
          for (int o = 0; o < kMaxOperands; ++o) off[o] = base[o] + u * p.s0[o];
          op(off);
        }
      }
    }
    if (packed && blockIdx.x == 0 && threadIdx.x < p.n0 - units * V) {  // the row's tail
      const int64_t i0 = units * V + threadIdx.x;
      int64_t off[kMaxOperands];
      for (int o = 0; o < kMaxOperands; ++o) off[o] = base[o] + i0;
      op(off);
    }
  }
}

template <typename Op>
__global__ void __launch_bounds__(kThreads) FlatKernel(const ElementwisePlan p, const Op op) {
  constexpr int64_t kSpan = int64_t{kThreads} * kPerThread;
  for (int64_t bx = blockIdx.x; bx * kSpan < p.total; bx += gridDim.x) {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t linear = bx * kSpan + j * kThreads + threadIdx.x;
      if (linear < p.total) {
        int64_t off[kMaxOperands];
        FlatTuple(p, linear, off);
        op(off);
      }
    }
  }
}

// A plain element copy through 32 x 33 shared-memory tiles (the padding column keeps the
// transposed reads free of bank conflicts).
template <typename U>
__global__ void __launch_bounds__(kTile* kTileRows)
    TiledCopyKernel(const ElementwisePlan p, U* out, const U* in) {
  __shared__ U tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t z = blockIdx.z; z < p.outer_count; z += gridDim.z) {
    int64_t base[kMaxOperands] = {0, 0, 0};
    TiledTuple(p, z, 0, 0, base);
    for (int64_t by = blockIdx.y; by * kTile < p.nt; by += gridDim.y) {
      for (int64_t bx = blockIdx.x; bx * kTile < p.n0; bx += gridDim.x) {
        const int64_t i0 = bx * kTile, j0 = by * kTile;
        // Read along the input's dense axis t: threads x step along j.
        for (int r = ty; r < kTile; r += kTileRows) {
          const int64_t i = i0 + r, j = j0 + tx;
          if (i < p.n0 && j < p.nt) tile[r][tx] = in[base[1] + i * p.s0[1] + j * p.st[1]];
        }
        __syncthreads();
        // Write along the output's dense axis 0: threads x step along i.
        for (int r = ty; r < kTile; r += kTileRows) {
          const int64_t i = i0 + tx, j = j0 + r;
          if (i < p.n0 && j < p.nt) out[base[0] + i * p.s0[0] + j * p.st[0]] = tile[tx][r];
        }
        __syncthreads();
      }
    }
  }
}

// The grid of a plan.
inline dim3 GridOf(const ElementwisePlan& p) {
  return dim3(static_cast<unsigned>(p.grid_x), static_cast<unsigned>(p.grid_y),
              static_cast<unsigned>(p.grid_z));
}

// Launches `op` over the plan's path (kTiled is launched by the plain copy alone). V is the
// vector length of the op's types, which is what PlanElementwise chose for kVector.
template <int V, typename Op>
void LaunchElementwise(const ElementwisePlan& p, const Op& op, cudaStream_t s, const char* name) {
  const dim3 grid = GridOf(p);
  switch (p.path) {
    case Path::kVector:
      TK_INTERNAL_CHECK(p.vec == V);
      VectorKernel<V><<<grid, kThreads, 0, s>>>(p, op);
      break;
    case Path::kRows:
      RowsKernel<V><<<grid, kThreads, 0, s>>>(p, op);
      break;
    case Path::kFlat:
    case Path::kTiled:
      FlatKernel<<<grid, kThreads, 0, s>>>(p, op);
      break;
  }
  TK_CUDA_CHECK(name, cudaGetLastError());
}

// Calls f.template operator()<T>(plan, coeffs) for the compute dtype T of d.out: the plan of an
// elementwise pass whose operands are all T, and the coefficients as Coeffs<ComputeType<T>>.
template <typename F>
void WithTypedPlan(const engine::OpDesc& d, const LoopNest& nest, char* const* first, F&& f) {
  Dispatch<kComputeDTypes>(d.out, d.op, [&]<typename T>() {
    const int64_t sizes[kMaxOperands] = {sizeof(T), sizeof(T), sizeof(T)};
    const ElementwisePlan p = PlanElementwise(nest, sizes, first, /*copy=*/false);
    f.template operator()<T>(p, *reinterpret_cast<const Coeffs<ComputeType<T>>*>(d.coeffs.bytes));
  });
}

// ---------------------------------------------------------------------------------------------
// Reductions (see ReducePlan in geometry.h)
// ---------------------------------------------------------------------------------------------

// Independent accumulators per thread in the reductions.
inline constexpr int kAcc = 4;  // SumRange combines them as (0 + 1) + (2 + 3)

// What is summed: the functor of one or two inputs, the output's coefficients, the partials.
template <typename T>
struct ReduceArgs {
  using C = ComputeType<T>;
  T* out;
  const T* a;
  const T* b;  // null for one input
  engine::UnaryFn unary;
  engine::BinaryFn binary;
  Coeffs<C> k;
  Mode mode;
  C* partial;  // splits > 1: [k][splits] (rows) or [splits][k] (columns)

  __device__ C Value(const int64_t* off) const {
    if (b == nullptr) return ApplyUnary(unary, ed::Load<C>(a[off[1]]));
    return ApplyBinary(binary, ed::Load<C>(a[off[1]]), ed::Load<C>(b[off[2]]));
  }
};

// The sum of the values at summed tuples first, first + step, ... (< end) of the output position
// whose kept offsets are `base`: kAcc independent accumulators (tuple number i goes to
// accumulator i % kAcc), so the loads of separate chains overlap; the combination is fixed.
template <typename T>
__device__ ComputeType<T> SumRange(const ReducePlan& p, const ReduceArgs<T>& args,
                                   const int64_t* base, int64_t first, int64_t end, int64_t step) {
  using C = ComputeType<T>;
  C acc[kAcc] = {};
  int64_t ri = first;
  for (; ri + (kAcc - 1) * step < end; ri += kAcc * step) {
#pragma unroll
    for (int q = 0; q < kAcc; ++q) {
      int64_t off[kMaxOperands] = {base[0], base[1], base[2]};
      p.summed.Add(ri + q * step, off);
      acc[q] = engine::AddW(acc[q], args.Value(off));
    }
  }
  for (int q = 0; ri < end; ri += step, ++q) {
    int64_t off[kMaxOperands] = {base[0], base[1], base[2]};
    p.summed.Add(ri, off);
    acc[q] = engine::AddW(acc[q], args.Value(off));
  }
  return engine::AddW(engine::AddW(acc[0], acc[1]), engine::AddW(acc[2], acc[3]));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    RowReduceKernel(const ReducePlan p, const ReduceArgs<T> args) {
  using C = ComputeType<T>;
  __shared__ C sh[kThreads];
  const int t = threadIdx.x;
  for (int64_t ky = blockIdx.y; ky < p.k; ky += gridDim.y) {
    int64_t base[kMaxOperands] = {0, 0, 0};
    p.kept.Add(ky, base);
    for (int64_t split = blockIdx.x; split < p.splits; split += gridDim.x) {
      const int64_t begin = split * p.chunk;
      const int64_t end = begin + p.chunk < p.r ? begin + p.chunk : p.r;
      sh[t] = SumRange(p, args, base, begin + t, end, kThreads);
      __syncthreads();
      for (int w = kThreads / 2; w > 0; w /= 2) {
        if (t < w) sh[t] = engine::AddW(sh[t], sh[t + w]);
        __syncthreads();
      }
      if (t == 0) {
        if (p.splits == 1) {
          PutDyn(args.mode, args.out + base[0], sh[0], args.k);
        } else {
          args.partial[ky * p.splits + split] = sh[0];
        }
      }
      __syncthreads();
    }
  }
}

// Rows shorter than a block's worth (p.lanes < kThreads, one chunk): each group of p.lanes
// threads sums one output position (lane l takes tuples l, l + lanes, ...), then a fixed tree
// within the group; kThreads / lanes outputs per block, any number of blocks.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    RowGroupReduceKernel(const ReducePlan p, const ReduceArgs<T> args) {
  using C = ComputeType<T>;
  __shared__ C sh[kThreads];
  const int t = threadIdx.x, lanes = p.lanes, lane = t % lanes;
  const int64_t groups = kThreads / lanes;
  // k0 is the same for every thread of the block, so all reach the barriers together.
  for (int64_t k0 = static_cast<int64_t>(blockIdx.x) * groups; k0 < p.k;
       k0 += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t ky = k0 + t / lanes;
    int64_t base[kMaxOperands] = {0, 0, 0};
    C acc = C{0};
    if (ky < p.k) {
      p.kept.Add(ky, base);
      acc = SumRange(p, args, base, lane, p.r, lanes);
    }
    sh[t] = acc;
    __syncthreads();
    for (int w = lanes / 2; w > 0; w /= 2) {
      if (lane < w) sh[t] = engine::AddW(sh[t], sh[t + w]);
      __syncthreads();
    }
    if (lane == 0 && ky < p.k) PutDyn(args.mode, args.out + base[0], sh[t], args.k);
    __syncthreads();
  }
}

template <typename T>
__global__ void __launch_bounds__(kColX* kColLanes)
    ColReduceKernel(const ReducePlan p, const ReduceArgs<T> args) {
  using C = ComputeType<T>;
  __shared__ C sh[kColLanes][kColX];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t split = blockIdx.y; split < p.splits; split += gridDim.y) {
    const int64_t begin = split * p.chunk;
    const int64_t end = begin + p.chunk < p.r ? begin + p.chunk : p.r;
    for (int64_t bx = blockIdx.x; bx * kColX < p.k; bx += gridDim.x) {
      const int64_t ki = bx * kColX + tx;
      int64_t base[kMaxOperands] = {0, 0, 0};
      C acc = C{0};
      if (ki < p.k) {
        p.kept.Add(ki, base);
        acc = SumRange(p, args, base, begin + ty, end, kColLanes);
      }
      sh[ty][tx] = acc;
      __syncthreads();
      for (int w = kColLanes / 2; w > 0; w /= 2) {
        if (ty < w) sh[ty][tx] = engine::AddW(sh[ty][tx], sh[ty + w][tx]);
        __syncthreads();
      }
      if (ty == 0 && ki < p.k) {
        if (p.splits == 1) {
          PutDyn(args.mode, args.out + base[0], sh[0][tx], args.k);
        } else {
          args.partial[split * p.k + ki] = sh[0][tx];
        }
      }
      __syncthreads();
    }
  }
}

// Row partials [k][splits]: one block per output, a fixed tree over the splits.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    CombineRowsKernel(const ReducePlan p, const ReduceArgs<T> args) {
  using C = ComputeType<T>;
  __shared__ C sh[kThreads];
  const int t = threadIdx.x;
  for (int64_t ky = blockIdx.x; ky < p.k; ky += gridDim.x) {
    C acc = C{0};
    for (int64_t s = t; s < p.splits; s += kThreads) {
      acc = engine::AddW(acc, args.partial[ky * p.splits + s]);
    }
    sh[t] = acc;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (t < w) sh[t] = engine::AddW(sh[t], sh[t + w]);
      __syncthreads();
    }
    if (t == 0) {
      int64_t base[kMaxOperands] = {0, 0, 0};
      p.kept.Add(ky, base);
      PutDyn(args.mode, args.out + base[0], sh[0], args.k);
    }
    __syncthreads();
  }
}

// Column partials [splits][k]: one thread per output adds its splits in order.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    CombineColsKernel(const ReducePlan p, const ReduceArgs<T> args) {
  using C = ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t ki = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; ki < p.k;
       ki += stride) {
    C acc = C{0};
    for (int64_t s = 0; s < p.splits; ++s) acc = engine::AddW(acc, args.partial[s * p.k + ki]);
    int64_t base[kMaxOperands] = {0, 0, 0};
    p.kept.Add(ki, base);
    PutDyn(args.mode, args.out + base[0], acc, args.k);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers, one per pass kind (each instantiated in its own translation unit)
// ---------------------------------------------------------------------------------------------

// first[k]: operand k's first element (base + nest offset).
void LaunchFill(const engine::OpDesc& d, const LoopNest& nest, char* const* first, cudaStream_t s);
void LaunchConvert(const engine::OpDesc& d, const LoopNest& nest, char* const* first,
                   cudaStream_t s);
void LaunchUnary(const engine::OpDesc& d, const LoopNest& nest, char* const* first, cudaStream_t s);
void LaunchBinary(const engine::OpDesc& d, const LoopNest& nest, char* const* first,
                  cudaStream_t s);
// A summing pass (kUnary or kBinary, mode kAxpby) into dim-1 outputs; `device` for partials.
void LaunchReduce(const engine::OpDesc& d, const LoopNest& nest, char* const* first, cudaStream_t s,
                  int device);

}  // namespace tensorkit::dense_cuda

#endif  // TENSORKIT_DENSE_CUDA_KERNELS_CUH_
