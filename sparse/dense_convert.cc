// SparseTensor <-> dense Tensor: ToDense (a race-free parallel scatter) and FromDense.
//
// Note [scatter without races]: entries with equal indices write the same element, so two tasks
// must never hold two of them. When the entries are sorted (checked, not trusted from order())
// equal indices are neighbours: fixed chunks are widened so that no run of equal destinations
// straddles a chunk boundary. Otherwise entries are first grouped by destination range with a
// stable counting pass, and each range is scattered by one task in entry order. Either way the
// last entry of a repeated index wins, at any thread count. "Sorted" means non-decreasing
// destinations (found while computing them), which is all the widened chunks need.
//
// Note [fill and scatter in one pass]: a fill (zeros, or a default value) followed by a scatter
// walks the whole dense tensor twice, and for dense-ish entries the scatter re-reads almost
// every cache line the fill wrote. With a contiguous target and non-decreasing destinations,
// each block of the output is filled and then given its entries (a contiguous range, found by
// binary search) while it is still in cache; a block holds every entry of its destinations, in
// entry order, so the last of repeated entries still wins.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "tensorkit/common/streaming.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// Fills t (CPU, any pattern) with `v`.
template <typename T>
void Fill(Tensor& t, const T& v) {
  const int64_t n = t.NumElements();
  if (n == 0) return;
  T* base = static_cast<T*>(t.storage()->data());
  if (t.IsContiguous()) {
    T* data = t.data<T>();
    ParallelFor(0, n, GrainFor(sizeof(T)),
                [&](int64_t b, int64_t e) { std::fill(data + b, data + e, v); });
    return;
  }
  const std::vector<int64_t> dims = t.Dims(), strides = t.Strides();
  ParallelFor(0, n, GrainFor(sizeof(T)), [&](int64_t b, int64_t e) {
    si::ForEachPosition(dims, strides, t.pattern().offset, b, e,
                        [&](int64_t, int64_t m, const int64_t*) { base[m] = v; });
  });
}

// Where entries land in a dense pattern: the memory index of each host row.
struct Locator {
  const int64_t* rows;
  int rank;
  const int64_t* dims;
  std::vector<int64_t> strides;
  int64_t offset;

  // Memory index of entry i; *out |= whether it lies outside the dims (a bad index never forms
  // an address). R > 0 is the rank known at compile time (the loop unrolls), R == 0 any rank.
  template <int R = 0>
  int64_t At(int64_t i, bool* out) const {
    const int r = R > 0 ? R : rank;
    int64_t m = offset;
    for (int k = 0; k < r; ++k) {
      const int64_t v = rows[i * r + k];
      const bool o = static_cast<uint64_t>(v) >= static_cast<uint64_t>(dims[k]);
      *out |= o;
      m += (o ? 0 : v) * strides[k];
    }
    return m;
  }
  int64_t At(int64_t i) const {
    bool ignored = false;
    return At(i, &ignored);
  }
  // The first entry in [b, n) whose memory index is >= m (the indices never decrease there).
  int64_t LowerBound(int64_t b, int64_t n, int64_t m) const {
    while (b < n) {
      const int64_t mid = b + (n - b) / 2;
      if (At(mid) < m) {
        b = mid + 1;
      } else {
        n = mid;
      }
    }
    return b;
  }
};

// One pass without stores: the position of the first entry outside the dims in *bad (or -1),
// and in *sorted whether the memory indices never decrease.
void CheckDestinations(const Locator& loc, int64_t n, int64_t* bad, bool* sorted) {
  std::atomic<bool> decreases{false};
  *bad = FirstFailure(
      n,
      [&](int64_t b, int64_t e) {
        bool any = false, down = false;
        int64_t prev = b > 0 ? loc.At(b - 1) : std::numeric_limits<int64_t>::min();
        for (int64_t i = b; i < e; ++i) {
          const int64_t m = loc.At(i, &any);
          down |= m < prev;
          prev = m;
        }
        if (down) decreases.store(true, std::memory_order_relaxed);
        return !any;
      },
      [&](int64_t i) { return si::OutOfBounds(loc.rows + i * loc.rank, loc.dims, loc.rank); });
  *sorted = !decreases.load();
}

// Scatter of sorted entries: chunks widened over runs of equal destinations.
template <typename T>
void ScatterSorted(const T* src, const Locator& loc, int64_t n, T* base) {
  ParallelChunks(n, kChunk, [&](int64_t, int64_t b, int64_t e) {
    while (b > 0 && b < e && loc.At(b) == loc.At(b - 1)) ++b;  // the previous chunk owns this run
    while (e < n && e > b && loc.At(e) == loc.At(e - 1)) ++e;  // finish our own run
    for (int64_t i = b; i < e; ++i) base[loc.At(i)] = src[i];
  });
}

// Scatter in any entry sequence: a stable counting pass by destination range, then one task
// per range.
template <typename T>
void ScatterAny(const T* src, const int64_t* dest, int64_t n, int64_t lo, int64_t hi, T* base) {
  const int64_t buckets = std::clamp<int64_t>(n / 4096, 1, 1024);
  const int64_t width = (hi - lo) / buckets + 1;
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::vector<int64_t> offsets(static_cast<size_t>(num_chunks * buckets), 0);
  ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* h = offsets.data() + c * buckets;
    for (int64_t i = b; i < e; ++i) ++h[(dest[i] - lo) / width];
  });
  std::vector<int64_t> starts(static_cast<size_t>(buckets) + 1, 0);
  int64_t sum = 0;
  for (int64_t d = 0; d < buckets; ++d) {
    starts[d] = sum;
    for (int64_t c = 0; c < num_chunks; ++c) {
      const int64_t count = offsets[c * buckets + d];
      offsets[c * buckets + d] = sum;
      sum += count;
    }
  }
  starts[buckets] = n;
  std::vector<int64_t> sorted(static_cast<size_t>(n));
  ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* o = offsets.data() + c * buckets;
    for (int64_t i = b; i < e; ++i) sorted[o[(dest[i] - lo) / width]++] = i;
  });
  ParallelFor(0, buckets, 1, [&](int64_t b, int64_t e) {
    for (int64_t d = b; d < e; ++d) {
      for (int64_t j = starts[d]; j < starts[d + 1]; ++j) base[dest[sorted[j]]] = src[sorted[j]];
    }
  });
}

// Fills the contiguous `dense` with `v` and scatters entries with non-decreasing destinations
// into it, block by block (Note [fill and scatter in one pass]).
template <typename T>
void FillAndScatterSorted(const T* src, const Locator& loc, int64_t n, const T& v, Tensor& dense) {
  if (dense.NumElements() == 0) return;
  T* data = dense.data<T>();
  T* base = static_cast<T*>(dense.storage()->data());
  ParallelChunks(dense.NumElements(), kChunk, [&](int64_t, int64_t lo, int64_t hi) {
    std::fill(data + lo, data + hi, v);
    const int64_t first = loc.LowerBound(0, n, loc.offset + lo);
    const int64_t last = loc.LowerBound(first, n, loc.offset + hi);
    for (int64_t i = first; i < last; ++i) base[loc.At(i)] = src[i];
  });
}

// Note [checked fill and scatter]: FillAndScatterSorted without the checking pass before it,
// for a target whose earlier contents do not matter. Each block of `dense` is filled and given
// the entries a binary search assigns it, and checks them as it writes: every entry in bounds,
// inside the block, and after the entry before it (strictly when `strict`). Nothing is written
// outside the block. The blocks' entry ranges come from one search function at consecutive
// block edges, so when each range is well formed (first <= last) they tile [0, n) exactly and
// every entry, and every pair of neighbours, was checked once. Returns false when any check
// failed (the caller then takes the checked path); a failing block stops the others early.
// A target too large for the caches is assembled 16 KiB at a time in an L1 buffer and
// streamed out (common/streaming.h), so that no line of it is read before it is written.
template <int R, typename T>
bool CheckedFillAndScatter(const T* src, const Locator& loc, int64_t n, const T& v, bool strict,
                           Tensor& dense) {
  T* const data = dense.data<T>();
  T* const base = static_cast<T*>(dense.storage()->data());
  const int64_t total = dense.NumElements();
  constexpr int64_t kBuffer = 16384 / sizeof(T) > 0 ? 16384 / sizeof(T) : 1;
  const bool stream = std::is_trivially_copyable_v<T> && total * static_cast<int64_t>(sizeof(T)) >=
                                                             transpose_internal::StreamingBytes();
  const int64_t step = strict ? 1 : 0;
  std::atomic<bool> failed{false};
  ParallelChunks(total, kChunk, [&](int64_t, int64_t lo, int64_t hi) {
    if (failed.load(std::memory_order_relaxed)) return;
    const int64_t mlo = loc.offset + lo, mhi = loc.offset + hi;
    const int64_t first = lo == 0 ? 0 : loc.LowerBound(0, n, mlo);
    const int64_t last = hi == total ? n : loc.LowerBound(0, n, mhi);
    if (first > last) return failed.store(true, std::memory_order_relaxed);
    bool bad = false;
    int64_t i = first;
    int64_t prev = mlo - step;
    if (first > 0) prev = loc.At<R>(first - 1, &bad);
    // Writes entries i.. with destinations below `stop` to out[m - out_base], checking each.
    const auto scatter = [&](int64_t stop, T* out, int64_t out_base) {
      for (; i < last; ++i) {
        bool o = false;
        const int64_t m = loc.At<R>(i, &o);
        if (o || m < prev + step) {
          bad = true;
          return;
        }
        if (m >= stop) return;
        out[m - out_base] = src[i];
        prev = m;
      }
    };
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (stream) {
        alignas(64) T buf[kBuffer];
        for (int64_t s = lo; s < hi && !bad; s += kBuffer) {
          const int64_t len = std::min(kBuffer, hi - s);
          std::fill(buf, buf + len, v);
          scatter(loc.offset + s + len, buf, loc.offset + s);
          StreamingCopy(data + s, buf, len * static_cast<int64_t>(sizeof(T)));
        }
      }
    }
    if (!stream) {
      std::fill(data + lo, data + hi, v);
      if (!bad) scatter(mhi, base, 0);
    }
    if (bad || i != last) failed.store(true, std::memory_order_relaxed);
  });
  return !failed.load();
}

template <typename T>
bool IsZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v.empty();
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v) == 0.0f;
  } else {
    return v == T{};
  }
}

// How Scatter may treat the target: keep it unchanged on an Error (ToDense), or treat it as
// scratch (FillDense), optionally validating the indices as ValidateIndices does.
enum class Target { kKeep, kScratch, kScratchValidate };

// Both ToDense overloads and FillDense: unwritten elements become *fill (a CPU scalar of the
// values' dtype), zero when `zero`, else stay as they are.
void Scatter(const SparseTensor& st, Tensor* dense, bool zero, const Tensor* fill,
             Target target = Target::kKeep) {
  si::CheckCreated(st, "ToDense");
  const std::vector<int64_t>& shape = st.shape();
  TK_CHECK(dense != nullptr && dense->defined(), kInvalidArgument,
           "ToDense: the dense target is null or undefined; allocate it with Tensor::Empty(",
           ShapeString(shape), ", ", DTypeName(st.dtype()), ") or call ToDense()");
  TK_CHECK(dense->Dims() == shape, kShapeMismatch, "ToDense: dense dims ",
           ShapeString(dense->Dims()), " differ from the sparse shape ", ShapeString(shape));
  TK_CHECK(dense->dtype() == st.dtype(), kDTypeMismatch, "ToDense: dense dtype ",
           DTypeName(dense->dtype()), " differs from the values' dtype ", DTypeName(st.dtype()));
  if (fill != nullptr) {
    TK_CHECK(
        fill->defined() && fill->NumAxes() == 0 && fill->dtype() == st.dtype(), kInvalidArgument,
        "ToDense: the fill value must be a scalar of dtype ", DTypeName(st.dtype()), ", got ",
        fill->defined() ? std::string(DTypeName(fill->dtype())) + " " + ShapeString(fill->Dims())
                        : std::string("an undefined tensor"));
  }
  // Like the dense engine, no operation mixes devices (DESIGN.md section 4).
  TK_CHECK(dense->device() == st.device(), kDeviceMismatch, "ToDense: the sparse tensor is on ",
           st.device(), " but the dense target is on ", dense->device(),
           "; every operand of a compute op must be on one device: move the sparse tensor with "
           "SparseTensor::To(",
           dense->device(), ") or allocate the target on ", st.device());
  const bool validate = target == Target::kScratchValidate;
  if (OnCuda(st)) {
    if (validate) st.ValidateIndices();
    return sparse_cuda::ToDense(st, dense, zero, fill);
  }
  const bool fills = zero || fill != nullptr;
  const Tensor idx = st.indices().HostContiguous();
  const Tensor vals = st.values().HostContiguous();
  const Tensor fill_host = fill != nullptr ? fill->HostContiguous() : Tensor();
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  const int64_t n = st.nnz();
  const Locator loc{rows, st.rank(), shape.data(), dense->pattern().Strides(),
                    dense->pattern().offset};
  // Note [checked fill and scatter]: strictly increasing C-order destinations are the validity
  // ValidateIndices asks for when the order is unknown or C order.
  if (target != Target::kKeep && fills && dense->IsContiguous() && dense->NumElements() > 0 &&
      (!validate || !st.OrderKnown() || st.order() == si::Iota(st.rank()))) {
    const bool done = Dispatch(st.dtype(), "ToDense", [&]<typename T>() {
      const T v = fill != nullptr ? fill_host.data<T>()[0] : T{};
      const T* src = n > 0 ? vals.data<T>() : nullptr;
      return si::WithRank(st.rank(), [&]<int R>() {
        return CheckedFillAndScatter<R>(src, loc, n, v, validate, *dense);
      });
    });
    if (done) return;
  }
  if (validate) st.ValidateIndices();  // names the first bad entry
  int64_t bad = -1;
  bool sorted = false;
  CheckDestinations(loc, n, &bad, &sorted);
  if (bad >= 0) si::ThrowOutOfBounds("ToDense", rows, bad, shape);
  Dispatch(st.dtype(), "ToDense", [&]<typename T>() {
    const T v = fill != nullptr ? fill_host.data<T>()[0] : T{};
    const T* src = n > 0 ? vals.data<T>() : nullptr;
    T* base = static_cast<T*>(dense->storage()->data());
    if (fills && sorted && dense->IsContiguous()) {
      FillAndScatterSorted(src, loc, n, v, *dense);
      return;
    }
    if (fills) Fill(*dense, v);
    if (n == 0) return;
    if (sorted) {
      ScatterSorted(src, loc, n, base);
      return;
    }
    std::unique_ptr<int64_t[]> dest(new int64_t[static_cast<size_t>(n)]);
    ParallelFor(0, n, GrainFor(8 * (loc.rank + 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dest[i] = loc.At(i);
    });
    ScatterAny(src, dest.get(), n, MinMemoryIndex(dense->pattern()),
               MaxMemoryIndex(dense->pattern()), base);
  });
}

}  // namespace

void SparseTensor::ToDense(Tensor* dense, bool initialize) const {
  Scatter(*this, dense, initialize, nullptr);
}

void SparseTensor::ToDense(Tensor* dense, const Tensor& fill) const {
  Scatter(*this, dense, false, &fill);
}

void SparseTensor::FillDense(Tensor* dense, const Tensor& fill, bool validate) const {
  Scatter(*this, dense, false, &fill, validate ? Target::kScratchValidate : Target::kScratch);
}

Tensor SparseTensor::ToDense() const {
  si::CheckCreated(*this, "ToDense");
  TK_CHECK(rank() <= kMaxAxes, kUnsupported, "ToDense: shape ", ShapeString(shape_), " has ",
           rank(), " axes; dense tensors have at most ", kMaxAxes);
  int64_t volume = 0;
  TK_CHECK(ElementCount(shape_, &volume), kOutOfRange, "ToDense: shape ", ShapeString(shape_),
           " has more elements than fit in int64; no dense tensor of it can exist (reduce some "
           "axes first, or keep the sparse form)");
  Tensor dense = Tensor::Empty(shape_, dtype(), device());
  ToDense(&dense, true);
  return dense;
}

SparseTensor SparseTensor::FromDense(const Tensor& dense) {
  dense.CheckDefined("FromDense");
  if (OnCuda(dense)) return sparse_cuda::FromDense(dense);
  const std::vector<int64_t> dims = dense.Dims(), strides = dense.Strides();
  const int rank = dense.NumAxes();
  const int64_t total = dense.NumElements();
  const int64_t offset = dense.pattern().offset;
  return Dispatch(dense.dtype(), "FromDense", [&]<typename T>() {
    const T* base = static_cast<const T*>(dense.storage()->data());
    const int64_t num_chunks = NumChunks(total, kChunk);
    std::vector<int64_t> starts(static_cast<size_t>(num_chunks) + 1, 0);
    ParallelChunks(total, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      int64_t k = 0;
      si::ForEachPosition(dims, strides, offset, b, e, [&](int64_t, int64_t m, const int64_t*) {
        k += IsZero(base[m]) ? 0 : 1;
      });
      starts[c + 1] = k;
    });
    for (int64_t c = 0; c < num_chunks; ++c) starts[c + 1] += starts[c];
    const int64_t nnz = starts[num_chunks];
    Tensor indices = Tensor::Empty({nnz, rank}, DType::kInt64);
    Tensor values = Tensor::Empty({nnz}, dense.dtype());
    int64_t* out_rows = nnz * rank > 0 ? indices.data<int64_t>() : nullptr;
    T* out_values = nnz > 0 ? values.data<T>() : nullptr;
    ParallelChunks(total, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      int64_t k = starts[c];
      si::ForEachPosition(dims, strides, offset, b, e,
                          [&](int64_t, int64_t m, const int64_t* index) {
                            if (IsZero(base[m])) return;
                            for (int a = 0; a < rank; ++a) out_rows[k * rank + a] = index[a];
                            out_values[k++] = base[m];
                          });
    });
    std::vector<int> order(static_cast<size_t>(rank));
    for (int a = 0; a < rank; ++a) order[a] = a;
    return Create(std::move(indices), std::move(values), dims, order);
  });
}

}  // namespace tensorkit
