// SparseTensor <-> dense Tensor: ToDense (a race-free parallel scatter) and FromDense.
//
// Note [scatter without races]: entries with equal indices write the same element, so two tasks
// must never hold two of them. When the entries are sorted (checked, not trusted from order())
// equal indices are neighbours: fixed chunks are widened so that no run of equal destinations
// straddles a chunk boundary. Otherwise entries are first grouped by destination range with a
// stable counting pass, and each range is scattered by one task in entry order. Either way the
// last entry of a repeated index wins, at any thread count.
#include <algorithm>
#include <cstring>

#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// Fills t (CPU, any pattern) with zero, or "" for strings.
void FillZero(Tensor& t) {
  const int64_t n = t.NumElements();
  if (n == 0) return;
  Dispatch(t.dtype(), "ToDense", [&]<typename T>() {
    T* base = static_cast<T*>(t.storage()->data());
    if (t.IsContiguous()) {
      T* data = t.data<T>();
      ParallelFor(0, n, GrainFor(sizeof(T)), [&](int64_t b, int64_t e) {
        if constexpr (std::is_same_v<T, std::string>) {
          for (int64_t i = b; i < e; ++i) data[i].clear();
        } else {
          std::memset(static_cast<void*>(data + b), 0, static_cast<size_t>(e - b) * sizeof(T));
        }
      });
      return;
    }
    const std::vector<int64_t> dims = t.Dims(), strides = t.Strides();
    ParallelFor(0, n, GrainFor(sizeof(T)), [&](int64_t b, int64_t e) {
      si::ForEachPosition(dims, strides, t.pattern().offset, b, e,
                          [&](int64_t, int64_t m, const int64_t*) { base[m] = T{}; });
    });
  });
}

// Memory index in `dense` of every entry; the position of the first entry outside `shape` in
// *bad (or -1). The bounds test is fused into the pass that computes the destinations.
std::vector<int64_t> Destinations(const int64_t* rows, int64_t n, const std::vector<int64_t>& shape,
                                  const Pattern& pattern, int64_t* bad) {
  const int rank = static_cast<int>(shape.size());
  const std::vector<int64_t> strides = pattern.Strides();
  std::vector<int64_t> dest(static_cast<size_t>(n));
  const int64_t* dims = shape.data();
  *bad = si::FirstFailure(
      n,
      [&](int64_t b, int64_t e) {
        bool any = false;
        for (int64_t i = b; i < e; ++i) {
          int64_t m = pattern.offset;
          for (int k = 0; k < rank; ++k) {
            const int64_t v = rows[i * rank + k];
            const bool out = static_cast<uint64_t>(v) >= static_cast<uint64_t>(shape[k]);
            any |= out;
            m += (out ? 0 : v) * strides[k];  // never forms an address from a bad index
          }
          dest[i] = m;
        }
        return !any;
      },
      [&](int64_t i) { return si::OutOfBounds(rows + i * rank, dims, rank); });
  return dest;
}

// Scatter of sorted entries: chunks widened over runs of equal destinations.
template <typename T>
void ScatterSorted(const T* src, const std::vector<int64_t>& dest, T* base) {
  const int64_t n = static_cast<int64_t>(dest.size());
  ParallelChunks(n, si::kChunk, [&](int64_t, int64_t b, int64_t e) {
    while (b > 0 && b < e && dest[b] == dest[b - 1]) ++b;  // the previous chunk owns this run
    while (e < n && e > b && dest[e] == dest[e - 1]) ++e;  // finish our own run
    for (int64_t i = b; i < e; ++i) base[dest[i]] = src[i];
  });
}

// Scatter in any entry sequence: a stable counting pass by destination range, then one task
// per range.
template <typename T>
void ScatterAny(const T* src, const std::vector<int64_t>& dest, int64_t lo, int64_t hi, T* base) {
  const int64_t n = static_cast<int64_t>(dest.size());
  const int64_t buckets = std::clamp<int64_t>(n / 4096, 1, 1024);
  const int64_t width = (hi - lo) / buckets + 1;
  const int64_t num_chunks = NumChunks(n, si::kChunk);
  std::vector<int64_t> offsets(static_cast<size_t>(num_chunks * buckets), 0);
  ParallelChunks(n, si::kChunk, [&](int64_t c, int64_t b, int64_t e) {
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
  ParallelChunks(n, si::kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* o = offsets.data() + c * buckets;
    for (int64_t i = b; i < e; ++i) sorted[o[(dest[i] - lo) / width]++] = i;
  });
  ParallelFor(0, buckets, 1, [&](int64_t b, int64_t e) {
    for (int64_t d = b; d < e; ++d) {
      for (int64_t j = starts[d]; j < starts[d + 1]; ++j) base[dest[sorted[j]]] = src[sorted[j]];
    }
  });
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

}  // namespace

void SparseTensor::ToDense(Tensor* dense, bool initialize) const {
  si::CheckCreated(*this, "ToDense");
  TK_CHECK(dense != nullptr && dense->defined(), kInvalidArgument,
           "ToDense: the dense target is null or undefined; allocate it with Tensor::Empty(",
           ShapeString(shape_), ", ", DTypeName(dtype()), ") or call ToDense()");
  TK_CHECK(dense->Dims() == shape_, kShapeMismatch, "ToDense: dense dims ",
           ShapeString(dense->Dims()), " differ from the sparse shape ", ShapeString(shape_));
  TK_CHECK(dense->dtype() == dtype(), kDTypeMismatch, "ToDense: dense dtype ",
           DTypeName(dense->dtype()), " differs from the values' dtype ", DTypeName(dtype()));
  if (si::OnCuda(indices_)) {  // Note [scatter without races] on the device: sort, last wins
    TK_CHECK(dense->device() == device(), kDeviceMismatch, "ToDense: the sparse tensor is on ",
             device(), " but the dense target is on ", dense->device(),
             "; allocate the target on the same device (Tensor::Empty(", ShapeString(shape_), ", ",
             DTypeName(dtype()), ", ", device(), "))");
    const Tensor idx = si::Contiguous(indices_);
    si::CheckDeviceBounds("ToDense", idx, shape_);
    if (initialize) SetZero(dense);
    sparse_cuda::Scatter(idx, si::Contiguous(values_), dense);
    return;
  }
  if (!dense->device().is_cpu()) {
    // Scatter on the host, then copy the whole tensor back.
    TK_CHECK(dense->IsContiguous(), kUnsupported, "ToDense: a strided dense target on ",
             dense->device(), " is not supported; scatter into a contiguous tensor");
    Tensor host = initialize ? Tensor::Empty(shape_, dtype()) : dense->To(Device::Cpu());
    ToDense(&host, initialize);
    CopyBytes(dense->raw_data(), dense->device(), host.raw_data(), Device::Cpu(),
              host.NumElements() * DTypeSize(dtype()));
    return;
  }
  const Tensor idx = si::HostContiguous(indices_);
  const Tensor vals = si::HostContiguous(values_);
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  const int64_t n = nnz();
  int64_t bad = -1;
  const std::vector<int64_t> dest = Destinations(rows, n, shape_, dense->pattern(), &bad);
  if (bad >= 0) si::ThrowOutOfBounds("ToDense", rows, bad, shape_);
  if (initialize) FillZero(*dense);
  if (n == 0) return;
  const bool sorted =
      OrderKnown() && si::FirstUnordered(rows, n, rank(), order_, /*strict=*/false) < 0;
  Dispatch(dtype(), "ToDense", [&]<typename T>() {
    const T* src = vals.data<T>();
    T* base = static_cast<T*>(dense->storage()->data());
    if (sorted) {
      ScatterSorted(src, dest, base);
    } else {
      ScatterAny(src, dest, MinMemoryIndex(dense->pattern()), MaxMemoryIndex(dense->pattern()),
                 base);
    }
  });
}

Tensor SparseTensor::ToDense() const {
  si::CheckCreated(*this, "ToDense");
  TK_CHECK(rank() <= kMaxAxes, kUnsupported, "ToDense: shape ", ShapeString(shape_), " has ",
           rank(), " axes; dense tensors have at most ", kMaxAxes);
  Tensor dense = Tensor::Empty(shape_, dtype(), device());
  ToDense(&dense, true);
  return dense;
}

SparseTensor SparseTensor::FromDense(const Tensor& dense) {
  dense.CheckDefined("FromDense");
  if (si::OnCuda(dense)) {  // count, then compact, on the device
    Tensor indices, values;
    sparse_cuda::Nonzeros(si::Contiguous(dense), &indices, &values);
    return Create(std::move(indices), std::move(values), dense.Dims(), si::Iota(dense.NumAxes()));
  }
  const Tensor host = dense.device().is_cpu() ? dense : dense.To(Device::Cpu());
  const std::vector<int64_t> dims = host.Dims(), strides = host.Strides();
  const int rank = host.NumAxes();
  const int64_t total = host.NumElements();
  const int64_t offset = host.pattern().offset;
  return Dispatch(host.dtype(), "FromDense", [&]<typename T>() {
    const T* base = static_cast<const T*>(host.storage()->data());
    const int64_t num_chunks = NumChunks(total, si::kChunk);
    std::vector<int64_t> starts(static_cast<size_t>(num_chunks) + 1, 0);
    ParallelChunks(total, si::kChunk, [&](int64_t c, int64_t b, int64_t e) {
      int64_t k = 0;
      si::ForEachPosition(dims, strides, offset, b, e, [&](int64_t, int64_t m, const int64_t*) {
        k += IsZero(base[m]) ? 0 : 1;
      });
      starts[c + 1] = k;
    });
    for (int64_t c = 0; c < num_chunks; ++c) starts[c + 1] += starts[c];
    const int64_t nnz = starts[num_chunks];
    Tensor indices = Tensor::Empty({nnz, rank}, DType::kInt64);
    Tensor values = Tensor::Empty({nnz}, host.dtype());
    int64_t* out_rows = nnz * rank > 0 ? indices.data<int64_t>() : nullptr;
    T* out_values = nnz > 0 ? values.data<T>() : nullptr;
    ParallelChunks(total, si::kChunk, [&](int64_t c, int64_t b, int64_t e) {
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
    return Create(si::OnDevice(indices, dense.device()), si::OnDevice(values, dense.device()), dims,
                  order);
  });
}

}  // namespace tensorkit
