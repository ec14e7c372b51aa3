// Segment reductions with TensorFlow's semantics: SegmentReduce, UnsortedSegmentReduce,
// SparseSegmentReduce and SparseSegmentReduceGrad.
//
// Note [one task per output row]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every operation first says which source rows each output row reduces, as a list of slots
// [start[s], start[s + 1]) per output row s in entry order: for sorted ids the slots are the
// entries themselves (start found in one parallel pass), for ids in any order a stable counting
// sort (features_internal.h) lists each output row's entries. One kernel then reduces output
// rows in parallel, each row by one task from its first slot to its last, so the floating-point
// sum is the same at any thread count. Random source rows (gathers through indices) are
// prefetched a few slots ahead, which is what makes a gather of short rows run at memory speed.
#include "tensorkit/features/segment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/segment_device.h"

namespace tensorkit {
namespace {

namespace fi = features_internal;

constexpr DTypeSet kIndexDTypes = fi::kIdDTypes;
constexpr DTypeSet kDataDTypes = kFloatDTypes | kIndexDTypes;

// --- Checks ----------------------------------------------------------------------------------

// `any_device`: the operation has a CUDA body, so a device tensor is not refused here.
void CheckTensor(const Tensor& t, const char* what, const char* op, bool any_device = false) {
  TK_CHECK(t.defined(), kInvalidArgument, op, ": ", what, " is an undefined tensor");
  if (!any_device) fi::CheckOnCpu(t, what, op);
}

void CheckIds(const Tensor& ids, const char* what, const char* op, bool any_device = false) {
  CheckTensor(ids, what, op, any_device);
  TK_CHECK((kIndexDTypes & Bit(ids.dtype())) != 0, kDTypeMismatch, op, ": ", what,
           " must be int32 or int64, got ", DTypeName(ids.dtype()));
}

void CheckVector(const Tensor& ids, const char* what, const char* op) {
  TK_CHECK(ids.NumAxes() == 1, kShapeMismatch, op, ": ", what, " must be 1-D, got ",
           ShapeString(ids.Dims()));
}

// The data dtype and the combiner: mean and sqrtn need floats (TensorFlow has no integer
// SparseSegmentMean either).
void CheckData(const Tensor& data, Combiner c, const char* what, const char* op,
               bool any_device = false) {
  CheckTensor(data, what, op, any_device);
  TK_CHECK(data.NumAxes() >= 1, kShapeMismatch, op, ": ", what,
           " must have at least one axis (the rows), got a rank-0 tensor; Unsqueeze(", what,
           ", 0) makes it [1]");
  TK_CHECK((kDataDTypes & Bit(data.dtype())) != 0, kDTypeMismatch, op, ": ", what,
           " must be float16, bfloat16, float32, float64, int32 or int64, got ",
           DTypeName(data.dtype()));
  TK_CHECK(
      IsFloat(data.dtype()) || c == Combiner::kSum || c == Combiner::kMax || c == Combiner::kMin,
      kDTypeMismatch, op, ": combiner ", CombinerName(c), " needs float ", what, ", got ",
      DTypeName(data.dtype()), "; convert it with Converted(", what,
      ", DType::kFloat32), or use sum, max or min");
}

// The entries of a sparse segment reduction: indices and segment_ids 1-D of one length K,
// returned.
int64_t CheckEntries(const Tensor& indices, const Tensor& segment_ids, const char* op,
                     bool any_device = false) {
  CheckIds(indices, "indices", op, any_device);
  CheckIds(segment_ids, "segment_ids", op, any_device);
  CheckVector(indices, "indices", op);
  CheckVector(segment_ids, "segment_ids", op);
  const int64_t k = indices.Dim(0);
  TK_CHECK(segment_ids.Dim(0) == k, kShapeMismatch, op, ": indices has ", k,
           " entries but segment_ids has ", segment_ids.Dim(0), "; they must be equal");
  return k;
}

void CheckNumSegments(int64_t num_segments, const char* op) {
  TK_CHECK(num_segments >= -1, kInvalidArgument, op, ": num_segments is ", num_segments,
           "; it must be >= 0, or -1 for the largest segment id + 1");
}

// The product of dims[from:], or an Error when it overflows int64.
int64_t RowLength(const std::vector<int64_t>& dims, size_t from, const char* op) {
  int64_t d = 1;
  for (size_t a = from; a < dims.size(); ++a) {
    TK_CHECK(!__builtin_mul_overflow(d, dims[a], &d), kShapeMismatch, op, ": the dims ",
             ShapeString(dims), " hold more elements than int64 can count");
  }
  return d;
}

// A new [rows, tail...] output; an Error before allocating when its size overflows.
Tensor NewOutput(int64_t rows, const std::vector<int64_t>& dims, size_t tail_from, int64_t d,
                 DType dtype, const char* op, Device device = Device::Cpu()) {
  int64_t bytes = 0;
  TK_CHECK(!__builtin_mul_overflow(rows, d, &bytes) &&
               !__builtin_mul_overflow(bytes, DTypeSize(dtype), &bytes),
           kShapeMismatch, op, ": the output of ", rows, " rows of ", d,
           " elements is too large to address; use fewer segments");
  std::vector<int64_t> out_dims{rows};
  out_dims.insert(out_dims.end(), dims.begin() + static_cast<std::ptrdiff_t>(tail_from),
                  dims.end());
  return Tensor::Empty(out_dims, dtype, device);
}

// Sorted ids (SegmentReduce, SparseSegmentReduce): each >= 0, below num_segments when that is
// given, and not below its predecessor; an Error names the first bad one. Returns the number of
// output rows.
template <typename I>
int64_t CheckSortedIds(const I* ids, int64_t n, int64_t num_segments, const char* what,
                       const char* op) {
  const int64_t limit = num_segments >= 0 ? num_segments : std::numeric_limits<int64_t>::max();
  const int64_t bad = FirstWhere(n, [&](int64_t k) {
    const int64_t v = ids[k];
    return (v < 0) | (v >= limit) | ((k > 0) & (v < static_cast<int64_t>(ids[k > 0 ? k - 1 : 0])));
  });
  if (bad >= 0) {
    const int64_t v = ids[bad];
    TK_CHECK(v >= 0, kOutOfRange, op, ": ", what, "[", bad, "] = ", v,
             " is negative; segment ids must be >= 0");
    TK_CHECK(v < limit, kOutOfRange, op, ": ", what, "[", bad, "] = ", v, " is outside [0, ",
             num_segments,
             "); every id must be below num_segments (-1 sizes the output by the ids)");
    Throw(ErrorCode::kInvalidArgument, op, ": ", what, "[", bad, "] = ", v, " is less than ", what,
          "[", bad - 1, "] = ", static_cast<int64_t>(ids[bad - 1]),
          "; the ids must be sorted (non-decreasing); UnsortedSegmentReduce takes them in any "
          "order");
  }
  if (num_segments >= 0) return num_segments;
  return n == 0 ? 0 : static_cast<int64_t>(ids[n - 1]) + 1;
}

// Row indices in [0, rows); an Error names the first one outside.
template <typename I>
void CheckRowIndices(const I* idx, int64_t n, int64_t rows, const char* what, const char* rows_is,
                     const char* op) {
  const int64_t bad = FirstWhere(n, [&](int64_t k) {
    return static_cast<uint64_t>(static_cast<int64_t>(idx[k])) >= static_cast<uint64_t>(rows);
  });
  TK_CHECK(bad < 0, kOutOfRange, op, ": ", what, "[", bad,
           "] = ", static_cast<int64_t>(idx[bad < 0 ? 0 : bad]), " is outside [0, ", rows, ") (",
           rows_is, ")");
}

// --- The kernel (Note [one task per output row]) ---------------------------------------------

// Slots this far ahead have their source rows prefetched.
constexpr int64_t kAhead = 8;
// At most this many cache lines of a source row are prefetched (the hardware follows longer
// rows by itself).
constexpr int64_t kPrefetchLines = 8;

using fi::EmptyValue;

using fi::SegmentOrder;

// Note [summation order]
// ~~~~~~~~~~~~~~~~~~~~~~
// Floating-point sums depend on their order, so each operation adds rows as TensorFlow's CPU
// kernel does, and its results match TensorFlow's bit for bit for float32 and float64:
// SegmentReduce adds a segment's rows one by one (a segment of several rows starting from +0, as
// Eigen's reduction does; a single row is copied), UnsortedSegmentReduce from +0 in entry order,
// SparseSegmentReduce in TensorFlow's blocks: a segment of n > 1 rows first sums
// r = n % 8 rows (8 when r == 0, 9 when r == 1) left to right, then adds each next block of 8
// rows summed left to right; kMean / kSqrtN scale the first block by 1 / n (1 / sqrt(n)) when
// n < 10 and divide the total by n (sqrt(n)) otherwise. Blocks also let eight independent row
// loads overlap, which a gather needs to run at memory speed. The gradient scales each row
// and adds it in entry order. 16-bit floats accumulate in float32 (TensorFlow does so in its
// sparse kernels; elsewhere it sums in the 16-bit type). Integer sums wrap around; kMax / kMin
// compare with < and keep the first of equal values. fi::PlanSegmentSum (segment_device.h)
// writes this order down once; the CPU kernel below and the CUDA body both follow it.

// acc = (x[0] + ... + x[kM - 1]) * scale (kAssign) or acc += x[0] + ... + x[kM - 1], each
// element summed left to right.
template <int kM, bool kAssign, typename T, typename A>
inline void AddBlock(A* __restrict acc, const T* const* x, int64_t d, A scale) {
  for (int64_t t = 0; t < d; ++t) {
    A sum = static_cast<A>(x[0][t]);
    for (int q = 1; q < kM; ++q) sum += static_cast<A>(x[q][t]);
    if constexpr (kAssign) {
      acc[t] = sum * scale;
    } else {
      acc[t] += sum;
    }
  }
}

// Reduces output rows [0, num_out): row s from slots [start[s], start[s + 1]), slot j's source
// row at row_of(j), multiplied by weights[j] when kWeighted (always summed then), in the order
// fi::PlanSegmentSum gives (the device body follows the same plan).
template <typename T, Combiner C, SegmentOrder kOrder, bool kWeighted, bool kPrefetch,
          typename RowOf>
void ReduceRows(int64_t num_out, const int64_t* start, int64_t d, const RowOf& row_of,
                const ComputeType<T>* weights, T empty_value, T* out) {
  using A = ComputeType<T>;
  constexpr bool kScratch = !std::is_same_v<A, T>;
  constexpr bool kScaled = C == Combiner::kMean || C == Combiner::kSqrtN;
  constexpr bool kSum = C == Combiner::kSum || kScaled;
  // Only an unweighted float sum in blocks order has blocks (the plan's block > 1).
  constexpr bool kMayBlock =
      kOrder == SegmentOrder::kBlocks && std::is_floating_point_v<A> && kSum && !kWeighted;
  const int64_t slots = start[num_out];
  const int64_t bytes_per_row =
      (slots / std::max<int64_t>(num_out, 1) + 1) * d * static_cast<int64_t>(sizeof(T));
  const int64_t lines =
      std::min<int64_t>(kPrefetchLines, (d * static_cast<int64_t>(sizeof(T)) + 63) / 64);
  ParallelFor(0, num_out, GrainFor(bytes_per_row), [&](int64_t s0, int64_t s1) {
    std::vector<A> scratch(kScratch ? static_cast<size_t>(d) : 0);
    const int64_t limit = start[s1];
    auto prefetch = [&](int64_t j) {
      if constexpr (kPrefetch) {
        if (j < limit) {
          const char* p = reinterpret_cast<const char*>(row_of(j));
          for (int64_t l = 0; l < lines; ++l) __builtin_prefetch(p + 64 * l);
        }
      }
    };
    for (int64_t j = start[s0]; j < std::min(limit, start[s0] + kAhead); ++j) prefetch(j);
    for (int64_t s = s0; s < s1; ++s) {
      T* __restrict o = out + s * d;
      const int64_t b = start[s], e = start[s + 1], n = e - b;
      if (n == 0) {
        std::fill(o, o + d, empty_value);
        continue;
      }
      A* __restrict acc;
      if constexpr (kScratch) {
        acc = scratch.data();
      } else {
        acc = o;
      }
      // The decisions come from the plan; the loops stay here, where acc and the rows are
      // known not to alias, so that they vectorise.
      const fi::SumPlan plan = fi::PlanSegmentSum<A>(kOrder, C, n);
      if (kMayBlock && plan.block > 1) {
        if constexpr (kMayBlock) {
          const A scale = plan.pre_scale ? A(1) / static_cast<A>(plan.root) : A(1);
          const T* x[fi::kSumBlock + 1];
          for (int64_t q = 0; q < plan.first; ++q) {
            prefetch(b + q + kAhead);
            x[q] = row_of(b + q);
          }
          switch (plan.first) {
            case 2:
              AddBlock<2, true>(acc, x, d, scale);
              break;
            case 3:
              AddBlock<3, true>(acc, x, d, scale);
              break;
            case 4:
              AddBlock<4, true>(acc, x, d, scale);
              break;
            case 5:
              AddBlock<5, true>(acc, x, d, scale);
              break;
            case 6:
              AddBlock<6, true>(acc, x, d, scale);
              break;
            case 7:
              AddBlock<7, true>(acc, x, d, scale);
              break;
            case 8:
              AddBlock<8, true>(acc, x, d, scale);
              break;
            default:
              AddBlock<fi::kSumBlock + 1, true>(acc, x, d, scale);
              break;
          }
          for (int64_t j = b + plan.first; j < e; j += fi::kSumBlock) {
            for (int q = 0; q < fi::kSumBlock; ++q) {
              prefetch(j + q + kAhead);
              x[q] = row_of(j + q);
            }
            AddBlock<fi::kSumBlock, false>(acc, x, d, A(1));
          }
        }
      } else {
        {
          prefetch(b + kAhead);
          const T* __restrict x = row_of(b);
          if constexpr (kWeighted) {
            const A w = weights[b];
            for (int64_t t = 0; t < d; ++t) acc[t] = static_cast<A>(x[t]) * w;
          } else if constexpr (kSum) {
            // Adding to -0 copies; adding to +0 turns a -0 row into +0, as a sum from 0 does.
            const A zero = plan.from_zero ? A(0) : A(-0.0);
            for (int64_t t = 0; t < d; ++t) acc[t] = AddW<A>(zero, static_cast<A>(x[t]));
          } else {
            for (int64_t t = 0; t < d; ++t) acc[t] = static_cast<A>(x[t]);
          }
        }
        for (int64_t j = b + 1; j < e; ++j) {
          prefetch(j + kAhead);
          const T* __restrict x = row_of(j);
          if constexpr (kWeighted) {
            const A w = weights[j];
            for (int64_t t = 0; t < d; ++t) acc[t] += static_cast<A>(x[t]) * w;
          } else if constexpr (C == Combiner::kMax) {
            for (int64_t t = 0; t < d; ++t) {
              const A v = static_cast<A>(x[t]);
              acc[t] = acc[t] < v ? v : acc[t];
            }
          } else if constexpr (C == Combiner::kMin) {
            for (int64_t t = 0; t < d; ++t) {
              const A v = static_cast<A>(x[t]);
              acc[t] = v < acc[t] ? v : acc[t];
            }
          } else {
            for (int64_t t = 0; t < d; ++t) acc[t] = AddW<A>(acc[t], static_cast<A>(x[t]));
          }
        }
      }
      if constexpr (kScaled && std::is_floating_point_v<A>) {
        if (plan.divide) {
          const A div = static_cast<A>(plan.root);
          for (int64_t t = 0; t < d; ++t) acc[t] = acc[t] / div;
        }
      }
      if constexpr (kScratch) {
        for (int64_t t = 0; t < d; ++t) o[t] = static_cast<T>(acc[t]);
      }
    }
  });
}

// Calls f.template operator()<C>() for the runtime combiner c.
template <typename F>
decltype(auto) WithCombiner(Combiner c, F&& f) {
  switch (c) {
    case Combiner::kSum:
      return f.template operator()<Combiner::kSum>();
    case Combiner::kMean:
      return f.template operator()<Combiner::kMean>();
    case Combiner::kSqrtN:
      return f.template operator()<Combiner::kSqrtN>();
    case Combiner::kMax:
      return f.template operator()<Combiner::kMax>();
    case Combiner::kMin:
      break;
  }
  return f.template operator()<Combiner::kMin>();
}

// Reduces output rows from slots whose source row numbers are src[j] (or j itself when src is
// null, the rows of a sorted SegmentReduce), for data of dtype `dtype`, adding in `order`.
template <SegmentOrder kOrder, typename I>
void ReduceBySlots(const Tensor& data, int64_t d, const int64_t* start, int64_t num_out,
                   const I* src, Combiner c, Tensor* out) {
  Dispatch<kDataDTypes>(data.dtype(), "segment reduction", [&]<typename T>() {
    const T* base = data.data<T>();
    T* o = out->data<T>();
    WithCombiner(c, [&]<Combiner C>() {
      if constexpr (std::is_floating_point_v<ComputeType<T>> ||
                    (C != Combiner::kMean && C != Combiner::kSqrtN)) {
        const T empty = EmptyValue<T>(C, kOrder == SegmentOrder::kFromZero);
        if (src == nullptr) {
          ReduceRows<T, C, kOrder, false, false>(
              num_out, start, d, [&](int64_t j) { return base + j * d; }, nullptr, empty, o);
        } else {
          ReduceRows<T, C, kOrder, false, true>(
              num_out, start, d, [&](int64_t j) { return base + static_cast<int64_t>(src[j]) * d; },
              nullptr, empty, o);
        }
      }
    });
  });
}

// --- Shared steps ----------------------------------------------------------------------------

// start[s] for ids already checked sorted and below num_out.
template <typename I>
Tensor SortedStarts(const I* ids, int64_t n, int64_t num_out) {
  Tensor start = Tensor::Empty({num_out + 1}, DType::kInt64);
  fi::StartsOfSortedKeys(
      n, num_out, [&](int64_t k) { return static_cast<int64_t>(ids[k]); }, start.data<int64_t>());
  return start;
}

// "segment_ids[1, 2]" for the flat position k of ids with dims `dims`.
std::string IdPosition(const char* what, const std::vector<int64_t>& dims, int64_t k) {
  if (dims.size() == 1) return std::string(what) + "[" + std::to_string(k) + "]";
  std::vector<int64_t> index(dims.size());
  for (size_t a = dims.size(); a-- > 0;) {
    index[a] = dims[a] == 0 ? 0 : k % dims[a];
    k = dims[a] == 0 ? 0 : k / dims[a];
  }
  std::string s = std::string(what) + "[";
  for (size_t a = 0; a < index.size(); ++a) s += (a ? ", " : "") + std::to_string(index[a]);
  return s + "]";
}

// Unsorted ids below num_out (negative ones are dropped); an Error names the first that is not.
template <typename I>
void CheckUnsortedIds(const I* ids, int64_t n, int64_t num_out, const std::vector<int64_t>& dims,
                      const char* op) {
  const int64_t bad = FirstWhere(n, [&](int64_t k) { return ids[k] >= num_out; });
  TK_CHECK(bad < 0, kOutOfRange, op, ": ", IdPosition("segment_ids", dims, bad), " = ",
           static_cast<int64_t>(ids[bad < 0 ? 0 : bad]), " is out of range [0, ", num_out,
           "); every id must be below num_segments (negative ids are dropped)");
}

// The segment reductions with an operand on a CUDA device (device_ops.h), their
// device-independent checks done: every operand on one device, the ids (and indices) checked
// there with one wait, which also sizes the output for num_segments -1. A bad id is reported by
// the CPU checks on host copies of the ids, so the Error is the CPU's.
void CheckOneDevice(const Tensor& data, const Tensor& other, const char* other_name,
                    const char* op) {
  CheckSameDevice(data.device(), other.device(), op, "data", other_name);
}

// SegmentReduce (indices undefined) and SparseSegmentReduce on the device.
Tensor SortedReduceOnDevice(const Tensor& data, const Tensor& indices, const Tensor& segment_ids,
                            int64_t num_segments, Combiner combiner,
                            const std::vector<int64_t>& dims, int64_t d, const char* op) {
  if (indices.defined()) CheckOneDevice(data, indices, "indices", op);
  CheckOneDevice(data, segment_ids, "segment_ids", op);
  const int64_t k = segment_ids.Dim(0);
  const Tensor ids = segment_ids.Contiguous();
  const Tensor idx = indices.defined() ? indices.Contiguous() : Tensor();
  const features_cuda::SegmentVerdict v =
      features_cuda::CheckSortedSegmentsOnDevice(idx, ids, num_segments, dims[0], op);
  if (v.first_bad_id >= 0 || v.first_bad_index >= 0) {
    const Tensor host_ids = ids.HostContiguous();
    Dispatch<kIndexDTypes>(host_ids.dtype(), op, [&]<typename I>() {
      CheckSortedIds(host_ids.data<I>(), k, num_segments, "segment_ids", op);
    });
    if (idx.defined()) {
      const Tensor host_idx = idx.HostContiguous();
      Dispatch<kIndexDTypes>(host_idx.dtype(), op, [&]<typename J>() {
        CheckRowIndices(host_idx.data<J>(), k, dims[0], "indices", "the rows of data", op);
      });
    }
    Throw(ErrorCode::kInternal, op, ": the device found a bad entry that the host checks pass");
  }
  const int64_t num_out = num_segments >= 0 ? num_segments : k == 0 ? 0 : v.last_id + 1;
  Tensor out = NewOutput(num_out, dims, 1, d, data.dtype(), op, data.device());
  features_cuda::SortedSegmentReduceOnDevice(data.Contiguous(), idx, ids, combiner, &out, op);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Tensor SegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                     Combiner combiner) {
  const char* op = "SegmentReduce";
  const bool device = OnCuda(data) || OnCuda(segment_ids);
  CheckData(data, combiner, "data", op, device);
  CheckIds(segment_ids, "segment_ids", op, device);
  CheckVector(segment_ids, "segment_ids", op);
  CheckNumSegments(num_segments, op);
  const int64_t n = data.Dim(0);
  TK_CHECK(segment_ids.Dim(0) == n, kShapeMismatch, op, ": segment_ids has ", segment_ids.Dim(0),
           " ids but data has ", n, " rows (dims ", ShapeString(data.Dims()),
           "); give one id per row");
  const std::vector<int64_t> dims = data.Dims();
  const int64_t d = RowLength(dims, 1, op);
  if (device)
    return SortedReduceOnDevice(data, Tensor(), segment_ids, num_segments, combiner, dims, d, op);
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor ids_t = segment_ids.HostContiguous();
    return Dispatch<kIndexDTypes>(ids_t.dtype(), op, [&]<typename I>() {
      const I* ids = ids_t.data<I>();
      const int64_t num_out = CheckSortedIds(ids, n, num_segments, "segment_ids", op);
      Tensor out = NewOutput(num_out, dims, 1, d, data.dtype(), op);
      if (out.NumElements() == 0) return out;
      const Tensor start = SortedStarts(ids, n, num_out);
      ReduceBySlots<SegmentOrder::kEigen, int64_t>(data.HostContiguous(), d, start.data<int64_t>(),
                                                   num_out, nullptr, combiner, &out);
      return out;
    });
  });
}

Tensor UnsortedSegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             Combiner combiner) {
  const char* op = "UnsortedSegmentReduce";
  const bool device = OnCuda(data) || OnCuda(segment_ids);
  CheckData(data, combiner, "data", op, device);
  CheckIds(segment_ids, "segment_ids", op, device);
  CheckNumSegments(num_segments, op);
  const std::vector<int64_t> dims = data.Dims();
  const std::vector<int64_t> id_dims = segment_ids.Dims();
  // TensorFlow's rule: the ids' dims are a prefix of data's, one id per slice of data.
  TK_CHECK(
      id_dims.size() <= dims.size() && std::equal(id_dims.begin(), id_dims.end(), dims.begin()),
      kShapeMismatch, op, ": segment_ids dims ", ShapeString(id_dims),
      " must be a prefix of data's dims ", ShapeString(dims), " (one id per row of data)");
  const int64_t n = segment_ids.NumElements();
  const int64_t d = RowLength(dims, id_dims.size(), op);
  if (device) {
    CheckOneDevice(data, segment_ids, "segment_ids", op);
    const Tensor ids = segment_ids.Contiguous();
    const features_cuda::UnsortedVerdict v =
        features_cuda::CheckUnsortedIdsOnDevice(ids, num_segments, op);
    // The largest id + 1; negative ids are dropped.
    const int64_t num_out = num_segments >= 0 ? num_segments : std::max<int64_t>(v.max_id, -1) + 1;
    if (v.first_bad_id >= 0) {
      const Tensor host_ids = ids.HostContiguous();
      Dispatch<kIndexDTypes>(host_ids.dtype(), op, [&]<typename I>() {
        CheckUnsortedIds(host_ids.data<I>(), n, num_out, id_dims, op);
      });
      Throw(ErrorCode::kInternal, op, ": the device found a bad id that the host checks pass");
    }
    Tensor out = NewOutput(num_out, dims, id_dims.size(), d, data.dtype(), op, data.device());
    features_cuda::UnsortedSegmentReduceOnDevice(data.Contiguous(), *View(ids, {n}), combiner, &out,
                                                 op);
    return out;
  }
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor ids_t = segment_ids.HostContiguous();
    return Dispatch<kIndexDTypes>(ids_t.dtype(), op, [&]<typename I>() {
      const I* ids = ids_t.data<I>();
      int64_t num_out = num_segments;
      if (num_out < 0) {  // the largest id + 1; negative ids are dropped
        int64_t top = -1;
        for (int64_t k = 0; k < n; ++k) top = std::max<int64_t>(top, ids[k]);
        num_out = top + 1;
      }
      CheckUnsortedIds(ids, n, num_out, id_dims, op);
      Tensor out = NewOutput(num_out, dims, id_dims.size(), d, data.dtype(), op);
      if (out.NumElements() == 0) return out;
      // Each output row's entries in entry order (Note [one task per output row]).
      auto key = [&](int64_t k) { return static_cast<int64_t>(ids[k]); };
      fi::CountingPlan plan = fi::PlanCountingSort(n, num_out, 0, key);
      Tensor src_t = Tensor::Empty({std::max<int64_t>(plan.start[num_out], 1)}, DType::kInt64);
      int64_t* src = src_t.data<int64_t>();
      fi::PlaceItems(&plan, n, key, [&](int64_t k, int64_t slot) { src[slot] = k; });
      ReduceBySlots<SegmentOrder::kFromZero, int64_t>(data.HostContiguous(), d, plan.start.data(),
                                                      num_out, src, combiner, &out);
      return out;
    });
  });
}

Tensor SparseSegmentReduce(const Tensor& data, const Tensor& indices, const Tensor& segment_ids,
                           int64_t num_segments, Combiner combiner) {
  const char* op = "SparseSegmentReduce";
  const bool device = OnCuda(data) || OnCuda(indices) || OnCuda(segment_ids);
  CheckData(data, combiner, "data", op, device);
  CheckNumSegments(num_segments, op);
  const int64_t k = CheckEntries(indices, segment_ids, op, device);
  const std::vector<int64_t> dims = data.Dims();
  const int64_t n = dims[0];
  const int64_t d = RowLength(dims, 1, op);
  if (device) {
    return SortedReduceOnDevice(data, indices, segment_ids, num_segments, combiner, dims, d, op);
  }
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor ids_t = segment_ids.HostContiguous();
    const Tensor idx_t = indices.HostContiguous();
    const int64_t num_out = Dispatch<kIndexDTypes>(ids_t.dtype(), op, [&]<typename I>() {
      return CheckSortedIds(ids_t.data<I>(), k, num_segments, "segment_ids", op);
    });
    Dispatch<kIndexDTypes>(idx_t.dtype(), op, [&]<typename J>() {
      CheckRowIndices(idx_t.data<J>(), k, n, "indices", "the rows of data", op);
    });
    Tensor out = NewOutput(num_out, dims, 1, d, data.dtype(), op);
    if (out.NumElements() == 0) return out;
    const Tensor start = Dispatch<kIndexDTypes>(
        ids_t.dtype(), op, [&]<typename I>() { return SortedStarts(ids_t.data<I>(), k, num_out); });
    const Tensor host = data.HostContiguous();
    Dispatch<kIndexDTypes>(idx_t.dtype(), op, [&]<typename J>() {
      ReduceBySlots<SegmentOrder::kBlocks, J>(host, d, start.data<int64_t>(), num_out,
                                              idx_t.data<J>(), combiner, &out);
    });
    return out;
  });
}

Tensor SparseSegmentReduceGrad(const Tensor& grad, const Tensor& indices, const Tensor& segment_ids,
                               int64_t num_rows, Combiner combiner) {
  const char* op = "SparseSegmentReduceGrad";
  TK_CHECK(
      combiner == Combiner::kSum || combiner == Combiner::kMean || combiner == Combiner::kSqrtN,
      kInvalidArgument, op, ": combiner ", CombinerName(combiner),
      " has no gradient here (TensorFlow has none for sparse segment max or min); use sum, "
      "mean or sqrtn");
  CheckData(grad, combiner, "grad", op);
  TK_CHECK(num_rows >= 0, kInvalidArgument, op, ": num_rows is ", num_rows,
           "; it must be >= 0 (the rows of the forward pass's data)");
  const int64_t k = CheckEntries(indices, segment_ids, op);
  const std::vector<int64_t> dims = grad.Dims();
  const int64_t num_seg = dims[0];
  const int64_t d = RowLength(dims, 1, op);
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor ids_t = Converted(segment_ids.HostContiguous(), DType::kInt64).Contiguous();
    const int64_t* ids = ids_t.data<int64_t>();
    CheckRowIndices(ids, k, num_seg, "segment_ids", "the rows of grad", op);
    const Tensor idx_t = indices.HostContiguous();
    Tensor out = NewOutput(num_rows, dims, 1, d, grad.dtype(), op);
    return Dispatch<kIndexDTypes>(idx_t.dtype(), op, [&]<typename J>() {
      const J* idx = idx_t.data<J>();
      CheckRowIndices(idx, k, num_rows, "indices", "num_rows", op);
      if (out.NumElements() == 0) return out;
      // Each output row's entries in entry order; slot j reads grad row src[j].
      auto key = [&](int64_t i) { return static_cast<int64_t>(idx[i]); };
      fi::CountingPlan plan = fi::PlanCountingSort(k, num_rows, 0, key);
      const int64_t slots = plan.start[num_rows];
      Tensor src_t = Tensor::Empty({std::max<int64_t>(slots, 1)}, DType::kInt64);
      int64_t* src = src_t.data<int64_t>();
      // The forward pass's scale of each segment, as TensorFlow computes it: 1 / max(n, 1) or
      // 1 / sqrt(max(n, 1)) in double, then rounded to the accumulator type.
      std::vector<double> scale;
      if (combiner != Combiner::kSum) {
        std::vector<int64_t> count(static_cast<size_t>(num_seg), 0);
        for (int64_t i = 0; i < k; ++i) ++count[ids[i]];
        scale.resize(static_cast<size_t>(num_seg));
        for (int64_t s = 0; s < num_seg; ++s) {
          const double c = static_cast<double>(std::max<int64_t>(count[s], 1));
          scale[s] = 1.0 / (combiner == Combiner::kMean ? c : std::sqrt(c));
        }
      }
      const Tensor host = grad.HostContiguous();
      Dispatch<kFloatDTypes | kIndexDTypes>(grad.dtype(), op, [&]<typename T>() {
        using A = ComputeType<T>;
        const T* g = host.data<T>();
        T* o = out.data<T>();
        auto row_of = [&](int64_t j) { return g + src[j] * d; };
        if (combiner == Combiner::kSum) {
          fi::PlaceItems(&plan, k, key, [&](int64_t i, int64_t slot) { src[slot] = ids[i]; });
          ReduceRows<T, Combiner::kSum, SegmentOrder::kSequential, false, true>(
              num_rows, plan.start.data(), d, row_of, nullptr, T(0), o);
          return;
        }
        if constexpr (std::is_floating_point_v<A>) {
          std::vector<A> weight(static_cast<size_t>(std::max<int64_t>(slots, 1)));
          fi::PlaceItems(&plan, k, key, [&](int64_t i, int64_t slot) {
            src[slot] = ids[i];
            weight[slot] = static_cast<A>(scale[ids[i]]);
          });
          ReduceRows<T, Combiner::kSum, SegmentOrder::kSequential, true, true>(
              num_rows, plan.start.data(), d, row_of, weight.data(), T(0), o);
        }
      });
      return out;
    });
  });
}

}  // namespace tensorkit
