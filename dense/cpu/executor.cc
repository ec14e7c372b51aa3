// The CPU executor, twin of cuda/executor.cu: PlanCpu decides how a nest is walked (tiles, block
// copies, or the loop with its split and summed axes and chunks) and RunCpu walks it with the
// typed loops of cpu/unary.cc, binary.cc and convert.cc.
#include "tensorkit/dense/executor.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/engine.h"
#include "tensorkit/dense/transpose_internal.h"

namespace tensorkit::engine {
namespace {

// Walks a list of axes like an odometer, tracking every operand's element offset.
struct Odometer {
  int num_axes = 0;
  int num_operands = 0;
  std::array<int64_t, kMaxAxes> dims{};
  std::array<std::array<int64_t, kMaxAxes>, kMaxOperands> strides{};
  std::array<int64_t, kMaxAxes> idx{};
  std::array<int64_t, kMaxOperands> off{};

  void Add(const LoopNest& nest, int axis) {
    dims[num_axes] = nest.dims[axis];
    for (int o = 0; o < num_operands; ++o) strides[o][num_axes] = nest.strides[o][axis];
    ++num_axes;
  }
  int64_t Count() const {
    int64_t n = 1;
    for (int a = 0; a < num_axes; ++a) n *= dims[a];
    return n;
  }
  // Positions the odometer at C-order position `linear` (axis 0 fastest).
  void Set(int64_t linear) {
    off.fill(0);
    for (int a = 0; a < num_axes; ++a) {
      idx[a] = linear % dims[a];
      linear /= dims[a];
      for (int o = 0; o < num_operands; ++o) off[o] += idx[a] * strides[o][a];
    }
  }
  void Next() {
    for (int a = 0; a < num_axes; ++a) {
      if (++idx[a] < dims[a]) {
        for (int o = 0; o < num_operands; ++o) off[o] += strides[o][a];
        return;
      }
      for (int o = 0; o < num_operands; ++o) off[o] -= strides[o][a] * (dims[a] - 1);
      idx[a] = 0;
    }
  }
};

// Pointers of every operand at the element offsets `off` (plus `inner` steps of axis 0).
struct Bases {
  std::array<char*, kMaxOperands> base{};
  std::array<int64_t, kMaxOperands> esize{};
  int num_operands = 0;

  void At(const std::array<int64_t, kMaxOperands>& off, const std::array<int64_t, kMaxOperands>& s0,
          int64_t inner, char** out) const {
    for (int o = 0; o < num_operands; ++o) out[o] = base[o] + (off[o] + inner * s0[o]) * esize[o];
  }
};

// The input operand and outer axis that make a transpose-like copy worth tiling, or {-1, -1}:
// the output walks axis 0 densely while some input jumps far on axis 0 but is dense on axis t.
std::pair<int, int> FindTileAxes(const LoopNest& nest) {
  if (nest.num_axes < 2 || nest.dims[0] < 16 || std::abs(nest.strides[0][0]) > 4) return {-1, -1};
  for (int k = 1; k < nest.num_operands; ++k) {
    const int64_t s0 = std::abs(nest.strides[k][0]);
    if (s0 < 16) continue;
    int best = -1;
    for (int t = 1; t < nest.num_axes; ++t) {
      const int64_t st = std::abs(nest.strides[k][t]);
      if (st != 0 && st < s0 && nest.dims[t] >= 8 &&
          (best < 0 || st < std::abs(nest.strides[k][best]))) {
        best = t;
      }
    }
    if (best >= 0 && std::abs(nest.strides[k][best]) <= 4) return {k, best};
  }
  return {-1, -1};
}

// Copies one tile with any strides through a local buffer of kB x kB blocks: rows i (axis 0)
// and columns j (axis t) of the input read along j (its dense axis), then written along i (the
// output's dense axis), so every cache line is touched once per block.
template <typename U>
void StridedTile(U* out, int64_t so0, int64_t sot, const U* in, int64_t si0, int64_t sit,
                 int64_t ni, int64_t nj) {
  constexpr int64_t kB = 16;
  U buf[kB][kB];
  for (int64_t i0 = 0; i0 < ni; i0 += kB) {
    for (int64_t j0 = 0; j0 < nj; j0 += kB) {
      const int64_t bi = std::min(kB, ni - i0), bj = std::min(kB, nj - j0);
      for (int64_t i = 0; i < bi; ++i) {
        for (int64_t j = 0; j < bj; ++j) buf[j][i] = in[(i0 + i) * si0 + (j0 + j) * sit];
      }
      for (int64_t j = 0; j < bj; ++j) {
        for (int64_t i = 0; i < bi; ++i) out[(i0 + i) * so0 + (j0 + j) * sot] = buf[j][i];
      }
    }
  }
}

// Tiles of axis 0 by axis t, other axes around them: a plain element copy between a
// dense-on-0 output and a dense-on-t input. With unit strides on both dense axes each tile is
// an in-register block transpose (transpose_internal.h) of the active SIMD path. Consecutive
// tiles walk axis 0, so the output's rows of one tile column are written as sequential streams.
// Outputs too large to stay in the caches, with rows of whole cache lines, take the streaming
// tiles instead, which walk axis t: the input is then read as a few sequential row streams and
// every output line written once, whole, past the caches.
template <typename U>
void RunBlockCopy(const LoopNest& nest, const Bases& bases, int t) {
  constexpr int kSize = static_cast<int>(sizeof(U));
  const int64_t so0 = nest.strides[0][0], sot = nest.strides[0][t];
  const int64_t si0 = nest.strides[1][0], sit = nest.strides[1][t];
  const bool dense = so0 == 1 && sit == 1;
  const SimdPath path = ActiveSimdPath();
  const transpose_internal::TileFn fn =
      dense ? transpose_internal::TileKernel(kSize, path) : nullptr;
  const bool stream = dense && (sot * kSize) % 64 == 0 &&
                      nest.NumTuples() * kSize >= transpose_internal::StreamingBytes();
  const transpose_internal::TileFn stream_fn =
      stream ? transpose_internal::StreamingTileKernel(kSize, path) : nullptr;
  const transpose_internal::TileShape shape = stream
                                                  ? transpose_internal::StreamingTileShapeFor(kSize)
                                                  : transpose_internal::TileShapeFor(kSize);
  const int64_t n0 = nest.dims[0], nt = nest.dims[t];
  const int64_t tiles0 = (n0 + shape.rows - 1) / shape.rows;
  const int64_t tilest = (nt + shape.cols - 1) / shape.cols;
  const int64_t tiles = tiles0 * tilest;
  Odometer others;
  others.num_operands = 2;
  for (int a = 1; a < nest.num_axes; ++a) {
    if (a != t) others.Add(nest, a);
  }
  const int64_t tile_bytes = 2 * shape.rows * shape.cols * kSize;
  ParallelFor(0, others.Count() * tiles, GrainFor(tile_bytes), [&](int64_t b, int64_t e) {
    Odometer od = others;
    od.Set(b / tiles);
    int64_t tile = b % tiles;
    for (int64_t it = b; it < e; ++it) {
      const int64_t i0 = (stream ? tile / tilest : tile % tiles0) * shape.rows;
      const int64_t j0 = (stream ? tile % tilest : tile / tiles0) * shape.cols;
      const int64_t ni = std::min(shape.rows, n0 - i0), nj = std::min(shape.cols, nt - j0);
      U* out = reinterpret_cast<U*>(bases.base[0]) + od.off[0] + i0 * so0 + j0 * sot;
      const U* in = reinterpret_cast<const U*>(bases.base[1]) + od.off[1] + i0 * si0 + j0 * sit;
      if (stream_fn != nullptr && reinterpret_cast<uintptr_t>(out) % 64 == 0) {
        stream_fn(in, si0, out, sot, ni, nj);
      } else if (fn != nullptr) {
        fn(in, si0, out, sot, ni, nj);
      } else {
        StridedTile<U>(out, so0, sot, in, si0, sit, ni, nj);
      }
      if (++tile == tiles) {
        tile = 0;
        od.Next();
      }
    }
  });
}

// Tiles of axes 0 and t (see FindTileAxes); every other axis is enumerated around them. Only
// used without summation, so the split does not matter for the result.
void RunTiled(const LoopNest& nest, const Bases& bases, const Kernel& kernel, int k, int t) {
  const int no = nest.num_operands;
  const int64_t t0 = 64;
  const int64_t tt = std::max<int64_t>(8, 64 / std::max<int64_t>(1, kernel.elem_sizes[k]));
  const int64_t n0 = nest.dims[0], nt = nest.dims[t];
  const int64_t tiles0 = (n0 + t0 - 1) / t0, tilest = (nt + tt - 1) / tt;
  Odometer others;
  others.num_operands = no;
  for (int a = 1; a < nest.num_axes; ++a) {
    if (a != t) others.Add(nest, a);
  }
  std::array<int64_t, kMaxOperands> s0{}, st{};
  int64_t bpe = 0;
  for (int o = 0; o < no; ++o) {
    s0[o] = nest.strides[o][0];
    st[o] = nest.strides[o][t];
    bpe += kernel.elem_sizes[o];
  }
  const int64_t tiles = tiles0 * tilest;
  ParallelFor(0, others.Count() * tiles, GrainFor(t0 * tt * bpe), [&](int64_t b, int64_t e) {
    Odometer od = others;
    od.Set(b / tiles);
    int64_t tile = b % tiles;
    char* ptrs[kMaxOperands];
    for (int64_t item = b; item < e; ++item) {
      const int64_t i0 = (tile % tiles0) * t0, j0 = (tile / tiles0) * tt;
      const int64_t len = std::min(t0, n0 - i0), jend = std::min(nt, j0 + tt);
      for (int64_t j = j0; j < jend; ++j) {
        std::array<int64_t, kMaxOperands> off = od.off;
        for (int o = 0; o < no; ++o) off[o] += j * st[o];
        bases.At(off, s0, i0, ptrs);
        kernel.loop(ptrs, s0.data(), len, kernel.ctx);
      }
      if (++tile == tiles) {
        tile = 0;
        od.Next();
      }
    }
  });
}

// The plan's kLoop: the positions of the split axes, times the chunks of axis 0, spread across
// tasks; each item walks every summed position in order, so each output element is written by
// one task in a fixed order.
void RunLoop(const CpuPlan& plan, const Bases& bases, const Kernel& kernel) {
  const LoopNest& nest = plan.nest;
  const int no = nest.num_operands;
  std::array<int64_t, kMaxOperands> s0{};
  for (int o = 0; o < no; ++o) s0[o] = nest.strides[o][0];
  Odometer split, summed;
  split.num_operands = summed.num_operands = no;
  for (int i = 0; i < plan.num_split; ++i) split.Add(nest, plan.split_axes[i]);
  // With sum_rows the innermost summed outer axis goes to the loop whole (its rows are grouped
  // from row 0, whatever the split, so the result does not depend on the threads).
  std::array<int64_t, kMaxOperands> row_strides{};
  int64_t rows = 0;
  if (plan.sum_rows) {
    const int a = plan.summed_axes[0];
    rows = nest.dims[a];
    for (int o = 0; o < no; ++o) row_strides[o] = nest.strides[o][a];
  }
  for (int i = plan.sum_rows ? 1 : 0; i < plan.num_summed; ++i) {
    summed.Add(nest, plan.summed_axes[i]);
  }
  const int64_t n0 = nest.dims[0], chunk = plan.chunk, nchunks = plan.num_chunks;
  const bool no_summed_axes = plan.summed_count == 1;
  ParallelFor(0, plan.split_count * nchunks, GrainFor(plan.grain_bytes), [&](int64_t b, int64_t e) {
    Odometer po = split, so = summed;
    po.Set(b / nchunks);
    int64_t c = b % nchunks;
    char* ptrs[kMaxOperands];
    for (int64_t item = b; item < e; ++item) {
      const int64_t start = c * chunk, len = std::min(chunk, n0 - start);
      if (no_summed_axes) {
        bases.At(po.off, s0, start, ptrs);
        kernel.loop(ptrs, s0.data(), len, kernel.ctx);
      } else {
        so.Set(0);
        for (int64_t j = 0, m = so.Count(); j < m; ++j) {
          std::array<int64_t, kMaxOperands> off = po.off;
          for (int o = 0; o < no; ++o) off[o] += so.off[o];
          bases.At(off, s0, start, ptrs);
          if (rows > 0) {
            kernel.sum_rows(ptrs, s0.data(), len, row_strides.data(), rows, kernel.ctx);
          } else {
            kernel.loop(ptrs, s0.data(), len, kernel.ctx);
          }
          so.Next();
        }
      }
      if (++c == nchunks) {
        c = 0;
        po.Next();
      }
    }
  });
}

// The typed CPU loop of `desc`.
Kernel CpuKernel(const OpDesc& desc) {
  static const std::string kEmpty;
  Kernel k;
  k.ctx = desc.coeffs.bytes;
  const int64_t out_size = DTypeSize(desc.out);
  k.elem_sizes = {out_size, out_size, out_size};
  switch (desc.kind) {
    case OpKind::kFill:
      k.loop = ops_internal::FillKernel(desc.out, desc.op);
      if (desc.out == DType::kString) k.ctx = &kEmpty;
      break;
    case OpKind::kConvert: {
      k.loop = ops_internal::ConvertKernel(desc.out, desc.in, desc.op);
      k.elem_sizes[1] = DTypeSize(desc.in);
      const bool plain = desc.in == desc.out && desc.out != DType::kString &&
                         (out_size == 1 || out_size == 2 || out_size == 4 || out_size == 8);
      k.copy_elem_size = plain ? static_cast<int>(out_size) : 0;
      break;
    }
    case OpKind::kUnary:
      k.loop = ops_internal::UnaryKernel(desc.unary, desc.out, desc.mode, desc.op);
      // Summations accumulate (kAxpby); the engine hands an outer summed axis to sum_rows.
      if (desc.mode == Mode::kAxpby) {
        k.sum_rows = ops_internal::UnarySumRowsKernel(desc.unary, desc.out);
      }
      break;
    case OpKind::kBinary:
      k.loop = ops_internal::BinaryKernel(desc.binary, desc.out, desc.mode, desc.op);
      break;
  }
  return k;
}

}  // namespace

CpuPlan PlanCpu(const LoopNest& in_nest, const Kernel& kernel, int threads) {
  CpuPlan plan;
  if (in_nest.empty) return plan;
  plan.nest = in_nest;
  LoopNest& nest = plan.nest;
  const int no = nest.num_operands;
  if (nest.num_axes == 0) {  // one element tuple: an axis of dim 1
    nest.num_axes = 1;
    nest.dims[0] = 1;
    for (int o = 0; o < no; ++o) nest.strides[o][0] = 1;
  }
  if (!nest.Sums() && kernel.allow_tiles) {
    const auto [k, t] = FindTileAxes(nest);
    if (k >= 0) {
      const bool block = k == 1 && no == 2 && kernel.copy_elem_size > 0;
      plan.path = block ? CpuPlan::Path::kBlockCopy : CpuPlan::Path::kTiled;
      plan.tile_operand = k;
      plan.tile_axis = t;
      return plan;
    }
  }
  plan.path = CpuPlan::Path::kLoop;
  // Outer axes: those the output steps along may be split across tasks, summed ones may not.
  for (int a = 1; a < nest.num_axes; ++a) {
    if (nest.strides[0][a] != 0) {
      plan.split_axes[plan.num_split++] = a;
      plan.split_count *= nest.dims[a];
    } else {
      plan.summed_axes[plan.num_summed++] = a;
      plan.summed_count *= nest.dims[a];
    }
  }
  int64_t bpe = 0;
  for (int o = 0; o < no; ++o) bpe += kernel.elem_sizes[o];
  const int64_t n0 = nest.dims[0];
  const int64_t par_count = plan.split_count, ser_count = plan.summed_count;
  const bool inner_summed = nest.strides[0][0] == 0 && n0 > 1;
  // Too few outer positions for the threads: cut the inner axis into fixed chunks as well.
  int64_t chunk = n0;
  const int64_t want = 8 * static_cast<int64_t>(threads);
  if (!inner_summed && threads > 1 && par_count < want &&
      par_count * ser_count * n0 * bpe > 2 * kParallelMinBytes) {
    // With summed outer axes a chunk is walked once per outer position: keep its rows at
    // least a page long (1024 elements) so the hardware prefetcher keeps streaming, and make
    // only one chunk per thread. Otherwise each chunk moves at least kParallelMinBytes.
    const int64_t per =
        ser_count > 1 ? (threads + par_count - 1) / par_count : (want + par_count - 1) / par_count;
    const int64_t least = ser_count > 1 ? 1024 : std::max<int64_t>(64, kParallelMinBytes / bpe);
    chunk = std::max<int64_t>((n0 + per - 1) / per, least);
    chunk = (chunk + 63) / 64 * 64;
  }
  plan.chunk = chunk;
  plan.num_chunks = (n0 + chunk - 1) / chunk;
  plan.sum_rows = kernel.sum_rows != nullptr && plan.num_summed > 0 &&
                  nest.dims[plan.summed_axes[0]] >= kSumRowGroup;
  plan.grain_bytes = ser_count * chunk * bpe;
  return plan;
}

void RunCpu(const LoopNest& nest, char* const* base_ptrs, const Kernel& kernel) {
  const CpuPlan plan = PlanCpu(nest, kernel, GetNumThreads());
  if (plan.path == CpuPlan::Path::kNothing) return;
  Bases bases;
  bases.num_operands = plan.nest.num_operands;
  for (int o = 0; o < bases.num_operands; ++o) {
    bases.base[o] = base_ptrs[o] + plan.nest.offsets[o] * kernel.elem_sizes[o];
    bases.esize[o] = kernel.elem_sizes[o];
  }
  switch (plan.path) {
    case CpuPlan::Path::kBlockCopy:
      BySize(kernel.copy_elem_size,
             [&]<typename U>() { RunBlockCopy<U>(plan.nest, bases, plan.tile_axis); });
      return;
    case CpuPlan::Path::kTiled:
      RunTiled(plan.nest, bases, kernel, plan.tile_operand, plan.tile_axis);
      return;
    case CpuPlan::Path::kLoop:
      RunLoop(plan, bases, kernel);
      return;
    case CpuPlan::Path::kNothing:
      return;
  }
}

void ExecuteCpu(const OpDesc& desc, const LoopNest& nest, char* const* bases) {
  RunCpu(nest, bases, CpuKernel(desc));
}

}  // namespace tensorkit::engine
