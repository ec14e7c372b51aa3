#include "tensorkit/sparse/compressed.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace sparse_internal {
namespace {

// Entries per chunk when scanning keys in parallel.
constexpr int64_t kScanChunk = kChunk;

// True when entries are non-decreasing by (major, minor).
bool SortedByKeys(KeyView major, KeyView minor, int64_t nnz) {
  return FirstWhere(nnz, [&](int64_t i) {
           const int64_t pm = major[i > 0 ? i - 1 : 0], cm = major[i];
           return i > 0 && (cm < pm || (cm == pm && minor[i] < minor[i - 1]));
         }) < 0;
}

}  // namespace

namespace {

// Chunks of entries counted separately: one histogram of num_major counters each, so at most
// one chunk per thread, per 2^16 entries and per num_major entries (the histograms never
// outgrow the input). The result does not depend on the count.
struct Chunking {
  explicit Chunking(int64_t nnz, int64_t num_major)
      : num(std::max<int64_t>(
            1, std::min({int64_t{GetNumThreads()}, std::max<int64_t>(1, nnz >> 16),
                         std::max<int64_t>(1, (nnz + num_major) / (num_major + 1))}))),
        size(std::max<int64_t>(1, (nnz + num - 1) / num)) {}
  int64_t num, size;
};

// Per-chunk counts of every major key (hist[c * num_major + key]); fills ptr from their totals.
template <typename P>
std::vector<P> CountByMajor(KeyView major, int64_t nnz, int64_t num_major, const Chunking& ch,
                            int64_t* ptr) {
  std::vector<P> hist(static_cast<size_t>(ch.num * num_major), 0);
  ParallelChunks(nnz, ch.size, [&](int64_t c, int64_t b, int64_t e) {
    P* h = hist.data() + c * num_major;
    for (int64_t i = b; i < e; ++i) ++h[major[i]];
  });
  ParallelFor(0, num_major, GrainFor(8 * ch.num), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t sum = 0;
      for (int64_t c = 0; c < ch.num; ++c) sum += hist[c * num_major + r];
      ptr[r + 1] = sum;
    }
  });
  ptr[0] = 0;
  for (int64_t r = 0; r < num_major; ++r) ptr[r + 1] += ptr[r];
  return hist;
}

// Stable counting sort by major key: fills ptr and scatters minor keys and values. Each chunk
// keeps its own histogram, so entries of one chunk land after those of earlier chunks: the
// result is the unique stable order whatever the chunk count. The histograms end up holding
// absolute write positions, so the scatter touches one counter per entry (not ptr as well), and
// counters are P = int32 when positions fit: half the cache footprint for the random accesses
// that dominate this function.
template <typename P, typename T>
void ScatterByMajorAs(KeyView major, KeyView minor, int64_t nnz, int64_t num_major, const T* vals,
                      int64_t vstride, int64_t* ptr, int64_t* minor_out, T* vals_out) {
  const Chunking ch(nnz, num_major);
  const int64_t num_chunks = ch.num, chunk = ch.size;
  std::vector<P> hist = CountByMajor<P>(major, nnz, num_major, ch, ptr);
  const int64_t grain = GrainFor(8 * num_chunks);
  // Per major key: the absolute position where each chunk's first entry goes.
  ParallelFor(0, num_major, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t pos = ptr[r];
      for (int64_t c = 0; c < num_chunks; ++c) {
        const int64_t t = hist[c * num_major + r];
        hist[c * num_major + r] = static_cast<P>(pos);
        pos += t;
      }
    }
  });
  ParallelChunks(nnz, chunk, [&](int64_t c, int64_t b, int64_t e) {
    P* h = hist.data() + c * num_major;
    for (int64_t i = b; i < e; ++i) {
      const int64_t pos = h[major[i]]++;
      minor_out[pos] = minor[i];
      vals_out[pos] = vals[i * vstride];
    }
  });
}

// Large inputs: the random scatter of ScatterByMajorAs misses the cache on every entry. Instead,
// entries first go to at most 2^kMaxBucketBits buckets of consecutive major keys (few enough
// output streams to stay in cache), then each bucket is scattered within its own output region,
// about kBucketBytes (small enough to stay in cache), and its slices are sorted while hot. Both
// passes keep input order within a major key, so the result is the same stable order.
constexpr int kMaxBucketBits = 10;
constexpr int64_t kBucketBytes = int64_t{256} << 10;

template <typename T>
void ScatterByBuckets(KeyView major, KeyView minor, int64_t nnz, int64_t num_major, const T* vals,
                      int64_t vstride, int64_t* ptr, int64_t* minor_out, T* vals_out,
                      bool sort_minor) {
  const int64_t out_bytes = nnz * static_cast<int64_t>(8 + sizeof(T));
  const int bucket_bits =
      std::clamp(static_cast<int>(std::bit_width(static_cast<uint64_t>(out_bytes / kBucketBytes))),
                 1, kMaxBucketBits);
  const int shift = std::max(
      0, static_cast<int>(std::bit_width(static_cast<uint64_t>(num_major - 1))) - bucket_bits);
  const int64_t num_buckets = ((num_major - 1) >> shift) + 1;
  const Chunking ch(nnz, num_major);
  const int64_t num_chunks = ch.num, chunk = ch.size;
  const std::vector<int32_t> hist = CountByMajor<int32_t>(major, nnz, num_major, ch, ptr);
  // Each chunk's first write position in every bucket.
  std::vector<int64_t> bucket_pos(static_cast<size_t>(num_chunks * num_buckets));
  for (int64_t k = 0; k < num_buckets; ++k) {
    const int64_t r0 = k << shift, r1 = std::min(num_major, (k + 1) << shift);
    int64_t pos = ptr[r0];
    for (int64_t c = 0; c < num_chunks; ++c) {
      bucket_pos[c * num_buckets + k] = pos;
      for (int64_t r = r0; r < r1; ++r) pos += hist[c * num_major + r];
    }
  }
  // A bucket's entries land in the very range of the outputs that its rows own, so the first
  // pass writes into the outputs themselves; the second copies each bucket out (a small,
  // cache-resident copy) and places its entries back by row.
  Tensor key_t = Tensor::Empty({nnz}, DType::kInt32);
  int32_t* key = key_t.data<int32_t>();  // major key minus its bucket's first key
  ParallelChunks(nnz, chunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* pos = bucket_pos.data() + c * num_buckets;
    for (int64_t i = b; i < e; ++i) {
      const int64_t r = major[i];
      const int64_t p = pos[r >> shift]++;
      key[p] = static_cast<int32_t>(r & ((int64_t{1} << shift) - 1));
      minor_out[p] = minor[i];
      vals_out[p] = vals[i * vstride];
    }
  });
  ParallelFor(0, num_buckets, 1, [&](int64_t kb, int64_t ke) {
    std::vector<int64_t> cursor(size_t{1} << shift);
    std::vector<int64_t> held_minor;
    std::vector<T> held_val;
    for (int64_t k = kb; k < ke; ++k) {
      const int64_t r0 = k << shift, r1 = std::min(num_major, (k + 1) << shift);
      const int64_t p0 = ptr[r0], n = ptr[r1] - p0;
      held_minor.assign(minor_out + p0, minor_out + p0 + n);
      held_val.assign(vals_out + p0, vals_out + p0 + n);
      std::copy(ptr + r0, ptr + r1, cursor.begin());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t q = cursor[key[p0 + i]]++;
        minor_out[q] = held_minor[i];
        vals_out[q] = held_val[i];
      }
      if (sort_minor) SortSlices<T>(ptr + r0, r1 - r0, minor_out, vals_out);
    }
  });
}

// Fills ptr and the minor keys and values in (major, minor) order, stable.
template <typename T>
void ScatterSorted(KeyView major, KeyView minor, int64_t nnz, int64_t num_major, const T* vals,
                   int64_t vstride, int64_t* ptr, int64_t* minor_out, T* vals_out,
                   bool sort_minor) {
  // Buckets pay off once the output outgrows the caches (its random writes miss) and there are
  // keys enough to spread; with no more keys than entries the in-bucket key and the counts fit
  // int32.
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (num_major > (int64_t{1} << 12) && num_major <= nnz && nnz > (int64_t{1} << 20) &&
        nnz < INT32_MAX) {
      ScatterByBuckets<T>(major, minor, nnz, num_major, vals, vstride, ptr, minor_out, vals_out,
                          sort_minor);
      return;
    }
  }
  if (nnz < INT32_MAX) {
    ScatterByMajorAs<int32_t, T>(major, minor, nnz, num_major, vals, vstride, ptr, minor_out,
                                 vals_out);
  } else {
    ScatterByMajorAs<int64_t, T>(major, minor, nnz, num_major, vals, vstride, ptr, minor_out,
                                 vals_out);
  }
  if (sort_minor) SortSlices<T>(ptr, num_major, minor_out, vals_out);
}

}  // namespace

Compressed CompressSparse(const SparseTensor& st, int major_axis, const char* op) {
  CheckCreated(st, op);
  TK_CHECK(st.rank() == 2, kShapeMismatch, op, ": needs a 2-D sparse tensor, got shape ",
           ShapeString(st.shape()));
  TK_CHECK(st.shape()[major_axis] < std::numeric_limits<int64_t>::max(), kOutOfRange, op,
           ": shape ", ShapeString(st.shape()), " needs a pointer array of ",
           st.shape()[major_axis], " + 1 entries, more than int64 counts");
  if (OnCuda(st)) return sparse_cuda::CompressSparse(st, major_axis, op);
  CheckIndexBounds(st, op);
  const Tensor& idx = st.indices();
  const int64_t nnz = st.nnz();
  const int64_t num_major = st.shape()[major_axis];
  if (nnz == 0) {
    Compressed out;
    out.ptr = Tensor::Zeros({num_major + 1}, DType::kInt64);
    out.minor = Tensor::Empty({0}, DType::kInt64);
    out.values = Tensor::Empty({0}, st.dtype());
    return out;
  }
  const int64_t* base = idx.data<int64_t>();
  const int64_t s0 = idx.Stride(0), s1 = idx.Stride(1);
  KeyView major{base + major_axis * s1, s0};
  KeyView minor{base + (1 - major_axis) * s1, s0};
  return Compress(major, minor, nnz, num_major, st.values());
}

namespace {

// CheckCreated of either compressed class.
template <typename M>
void CheckMatrixCreated(const M& m, const char* op, const char* name) {
  TK_CHECK(m.values().defined(), kInvalidArgument, op, ": the ", name,
           " is empty (default-constructed); make one with ", name, "::Create or ", name,
           "::FromSparse");
}

}  // namespace

void CheckCreated(const CsrMatrix& m, const char* op) { CheckMatrixCreated(m, op, "CsrMatrix"); }

void CheckCreated(const CscMatrix& m, const char* op) { CheckMatrixCreated(m, op, "CscMatrix"); }

void CheckOnCpu(const CsrMatrix& m, const char* op) {
  CheckCreated(m, op);
  TK_CHECK(!OnCuda(m), kUnsupported, op, ": the CsrMatrix is on ", m.device(),
           "; sparse compute runs on the CPU, move it with CsrMatrix::To(Device::Cpu()) first");
}

void ThrowMinorOutside(const char* op, const char* major_name, const char* minor_name,
                       int64_t value, int64_t p, int64_t r, int64_t num_minor) {
  Throw(ErrorCode::kOutOfRange, op, ": ", minor_name, " index ", value, " at position ", p, " (",
        major_name, " ", r, ") is outside [0, ", num_minor, ")");
}

void ThrowMinorUnsorted(const char* op, const char* major_name, const char* minor_name,
                        int64_t prev, int64_t value, int64_t p, int64_t r) {
  Throw(ErrorCode::kInvalidArgument, op, ": ", minor_name, " indices of ", major_name, " ", r,
        " are not sorted: ", prev, " at position ", p - 1, " is followed by ", value,
        "; sort them or build the matrix with FromSparse");
}

void CheckCompressedPointers(const int64_t* ptr, int64_t num_major, int64_t nnz, const char* op,
                             const char* major_name, const char* minor_name) {
  TK_CHECK(ptr[0] == 0, kInvalidArgument, op, ": ", major_name, "_ptr[0] is ", ptr[0],
           " but must be 0");
  TK_CHECK(ptr[num_major] == nnz, kInvalidArgument, op, ": ", major_name, "_ptr[", num_major,
           "] is ", ptr[num_major], " but must equal nnz ", nnz, " (the length of ", minor_name,
           "_indices)");
  const int64_t r_dec = FirstWhere(num_major, [&](int64_t r) { return ptr[r] > ptr[r + 1]; });
  TK_CHECK(r_dec < 0, kInvalidArgument, op, ": ", major_name, "_ptr decreases at ", major_name, " ",
           r_dec, ": ", ptr[r_dec < 0 ? 0 : r_dec], " > ", ptr[r_dec < 0 ? 0 : r_dec + 1],
           "; it must be non-decreasing");
}

CsrMatrix WrapCsr(Tensor ptr, Tensor col, Tensor values, int64_t rows, int64_t cols) {
  return compressed_detail::CompressedMatrix<0>::Wrap(std::move(ptr), std::move(col),
                                                      std::move(values), rows, cols);
}

CsrMatrix CsrFromSparse(const SparseTensor& st, const char* op) {
  Compressed c = CompressSparse(st, 0, op);
  return compressed_detail::CompressedMatrix<0>::Wrap(
      std::move(c.ptr), std::move(c.minor), std::move(c.values), st.shape()[0], st.shape()[1]);
}

}  // namespace sparse_internal

// index_rows.h's compression of host entries, built on the passes above.
namespace sparse_rows {
namespace si = sparse_internal;

void FillPtrFromSorted(KeyView major, int64_t nnz, int64_t num_major, int64_t* ptr) {
  ParallelChunks(nnz, si::kScanChunk, [&](int64_t, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t prev = i == 0 ? -1 : major[i - 1];
      for (int64_t r = prev + 1; r <= major[i]; ++r) ptr[r] = i;
    }
  });
  const int64_t first_after = nnz == 0 ? 0 : major[nnz - 1] + 1;
  std::fill(ptr + first_after, ptr + num_major + 1, nnz);
}

Compressed Compress(KeyView major, KeyView minor, int64_t nnz, int64_t num_major,
                    const Tensor& values, bool sort_minor) {
  Compressed out;
  out.ptr = Tensor::Empty({num_major + 1}, DType::kInt64);
  out.minor = Tensor::Empty({nnz}, DType::kInt64);
  int64_t* ptr = out.ptr.data<int64_t>();
  int64_t* minor_out = out.minor.data<int64_t>();
  if (si::SortedByKeys(major, minor, nnz)) {  // fast path: nothing moves
    FillPtrFromSorted(major, nnz, num_major, ptr);
    ParallelFor(0, nnz, GrainFor(16), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) minor_out[i] = minor[i];
    });
    out.values = values.HostContiguous();
    return out;
  }
  out.values = Tensor::Empty({nnz}, values.dtype());
  Dispatch(values.dtype(), "Compress", [&]<typename T>() {
    si::ScatterSorted<T>(major, minor, nnz, num_major, values.data<T>(), values.Stride(0), ptr,
                         minor_out, out.values.data<T>(), sort_minor);
  });
  return out;
}

}  // namespace sparse_rows

namespace compressed_detail {
namespace si = sparse_internal;
namespace {

// Names in messages: "CsrMatrix::Create", "row_ptr", "col" for kMajor = 0.
template <int kMajor>
struct Names {
  static constexpr const char* kClass = kMajor == 0 ? "CsrMatrix" : "CscMatrix";
  static constexpr const char* kMajorName = kMajor == 0 ? "row" : "col";
  static constexpr const char* kMinorName = kMajor == 0 ? "col" : "row";
  static std::string Op(const char* method) { return std::string(kClass) + "::" + method; }
};

// Checks the arrays of a compressed matrix; `major`/`minor` name the axes in messages.
void ValidateCompressed(const Tensor& ptr_t, const Tensor& minor_t, int64_t num_major,
                        int64_t num_minor, int major_axis, const char* op, const char* major_name,
                        const char* minor_name) {
  if (OnCuda(minor_t)) {
    sparse_cuda::ValidateCompressed(ptr_t, minor_t, num_major, num_minor, major_axis, op,
                                    major_name, minor_name);
    return;
  }
  const int64_t* ptr = ptr_t.data<int64_t>();
  const int64_t nnz = minor_t.Dim(0);
  si::CheckCompressedPointers(ptr, num_major, nnz, op, major_name, minor_name);
  const int64_t* minor = minor_t.data<int64_t>();
  // Pointers are valid now, so slices can be read; one branch-free test per entry.
  auto slice_bad = [&](int64_t r) {
    bool bad = false;
    for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
      bad |= static_cast<uint64_t>(minor[p]) >= static_cast<uint64_t>(num_minor);
      bad |= p > ptr[r] && minor[p] < minor[p - 1];
    }
    return bad;
  };
  const int64_t r =
      FirstWhere(num_major, slice_bad, kChunk / (nnz / std::max<int64_t>(num_major, 1) + 1));
  if (r < 0) return;
  for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {  // name the first violation of slice r
    if (minor[p] < 0 || minor[p] >= num_minor) {
      si::ThrowMinorOutside(op, major_name, minor_name, minor[p], p, r, num_minor);
    }
    if (p > ptr[r] && minor[p] < minor[p - 1]) {
      si::ThrowMinorUnsorted(op, major_name, minor_name, minor[p - 1], minor[p], p, r);
    }
  }
}

// Checks dtypes, ranks and lengths of the arrays given to Create, and makes them contiguous.
void CheckCompressedArrays(Tensor* ptr, Tensor* minor, Tensor* values,
                           const std::vector<int64_t>& shape, int major_axis, const char* op,
                           const char* ptr_name, const char* minor_name) {
  ptr->CheckDefined(op);
  minor->CheckDefined(op);
  values->CheckDefined(op);
  TK_CHECK(shape.size() == 2 && shape[0] >= 0 && shape[1] >= 0, kShapeMismatch, op,
           ": shape must be two non-negative dims, got ", ShapeString(shape));
  TK_CHECK(ptr->device() == values->device() && minor->device() == values->device(),
           kDeviceMismatch, op, ": ", ptr_name, " is on ", ptr->device(), ", ", minor_name, " on ",
           minor->device(), " and values on ", values->device(),
           "; move them to one device with Tensor::To");
  for (const Tensor* t : {ptr, minor, values}) {
    TK_CHECK(t->NumAxes() == 1, kShapeMismatch, op, ": arrays must be 1-D, got dims ",
             ShapeString(t->Dims()));
  }
  TK_CHECK(ptr->dtype() == DType::kInt64 && minor->dtype() == DType::kInt64, kDTypeMismatch, op,
           ": ", ptr_name, " and ", minor_name, " must be int64, got ", DTypeName(ptr->dtype()),
           " and ", DTypeName(minor->dtype()));
  const int64_t num_major = shape[major_axis];
  TK_CHECK(ptr->Dim(0) == num_major + 1, kShapeMismatch, op, ": ", ptr_name, " has ", ptr->Dim(0),
           " entries but shape ", ShapeString(shape), " needs ", num_major + 1);
  TK_CHECK(minor->Dim(0) == values->Dim(0), kShapeMismatch, op, ": ", minor_name, " has ",
           minor->Dim(0), " entries but values has ", values->Dim(0));
  *ptr = ptr->Contiguous();
  *minor = minor->Contiguous();
  *values = values->Contiguous();
}

// COO indices [nnz, 2] from compressed arrays: column `major_axis` gets the major index.
Tensor ExpandIndices(const Tensor& ptr_t, const Tensor& minor_t, int64_t num_major,
                     int major_axis) {
  const int64_t nnz = minor_t.Dim(0);
  Tensor idx = Tensor::Empty({nnz, 2}, DType::kInt64);
  if (nnz == 0) return idx;
  const int64_t* ptr = ptr_t.data<int64_t>();
  const int64_t* minor = minor_t.data<int64_t>();
  int64_t* out = idx.data<int64_t>();
  ParallelFor(0, num_major, GrainFor(16 * (nnz / std::max<int64_t>(num_major, 1) + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) {
                  for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
                    out[2 * p + major_axis] = r;
                    out[2 * p + 1 - major_axis] = minor[p];
                  }
                }
              });
  return idx;
}

}  // namespace

template <int kMajor>
auto CompressedMatrix<kMajor>::Wrap(Tensor ptr, Tensor minor, Tensor values, int64_t rows,
                                    int64_t cols) -> Self {
  Self m;
  m.ptr_ = std::move(ptr);
  m.minor_ = std::move(minor);
  m.values_ = std::move(values);
  m.rows_ = rows;
  m.cols_ = cols;
  return m;
}

template <int kMajor>
auto CompressedMatrix<kMajor>::Create(Tensor ptr, Tensor minor_indices, Tensor values,
                                      std::vector<int64_t> shape) -> Self {
  using N = Names<kMajor>;
  const std::string op = N::Op("Create");
  const std::string ptr_name = std::string(N::kMajorName) + "_ptr";
  const std::string minor_name = std::string(N::kMinorName) + "_indices";
  CheckCompressedArrays(&ptr, &minor_indices, &values, shape, kMajor, op.c_str(), ptr_name.c_str(),
                        minor_name.c_str());
  Self m = Wrap(std::move(ptr), std::move(minor_indices), std::move(values), shape[0], shape[1]);
  m.Validate();
  return m;
}

template <int kMajor>
auto CompressedMatrix<kMajor>::FromSparse(const SparseTensor& st) -> Self {
  const std::string op = Names<kMajor>::Op("FromSparse");
  si::Compressed c = si::CompressSparse(st, kMajor, op.c_str());
  return Wrap(std::move(c.ptr), std::move(c.minor), std::move(c.values), st.shape()[0],
              st.shape()[1]);
}

template <int kMajor>
SparseTensor CompressedMatrix<kMajor>::ToSparse() const {
  si::CheckCreated(static_cast<const Self&>(*this), Names<kMajor>::Op("ToSparse").c_str());
  Tensor idx = OnCuda(ptr_) ? sparse_cuda::ExpandPointers(ptr_, minor_, kMajor)
                            : ExpandIndices(ptr_, minor_, shape()[kMajor], kMajor);
  return SparseTensor::Create(std::move(idx), values_, {rows_, cols_}, {kMajor, 1 - kMajor});
}

template <int kMajor>
void CompressedMatrix<kMajor>::Validate() const {
  using N = Names<kMajor>;
  const std::string op = N::Op("Validate");
  si::CheckCreated(static_cast<const Self&>(*this), op.c_str());
  ValidateCompressed(ptr_, minor_, shape()[kMajor], shape()[1 - kMajor], kMajor, op.c_str(),
                     N::kMajorName, N::kMinorName);
}

template <int kMajor>
auto CompressedMatrix<kMajor>::To(Device device) const -> Self {
  ptr_.CheckDefined(Names<kMajor>::Op("To").c_str());
  return Wrap(ptr_.To(device), minor_.To(device), values_.To(device), rows_, cols_);
}

template <int kMajor>
Tensor CompressedMatrix<kMajor>::SliceNnz(const char* op) const {
  si::CheckCreated(static_cast<const Self&>(*this), op);
  const int64_t num_major = shape()[kMajor];
  Tensor out = Tensor::Empty({num_major}, DType::kInt64, ptr_.device());
  Sub(Slice(ptr_, 0, 1, num_major + 1), Slice(ptr_, 0, 0, num_major), &out);  // on ptr's device
  return out;
}

template <int kMajor>
auto CompressedMatrix<kMajor>::Recompress(const char* op) const -> Other {
  si::CheckCreated(static_cast<const Self&>(*this), op);
  return Other::FromSparse(ToSparse());
}

template class CompressedMatrix<0>;
template class CompressedMatrix<1>;

}  // namespace compressed_detail

CscMatrix CsrMatrix::ToCsc() const { return Recompress("CsrMatrix::ToCsc"); }

Tensor CsrMatrix::RowNnz() const { return SliceNnz("CsrMatrix::RowNnz"); }

const int32_t* CsrMatrix::col_indices32() const {
  sparse_internal::CheckOnCpu(*this, "CsrMatrix::col_indices32");
  if (cols_ > INT32_MAX) return nullptr;
  std::call_once(narrow_->once, [this] {
    const int64_t n = nnz();
    Tensor out = Tensor::Empty({n}, DType::kInt32);
    const int64_t* in = minor_.data<int64_t>();
    int32_t* o = out.data<int32_t>();
    ParallelFor(0, n, GrainFor(12), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<int32_t>(in[i]);
    });
    narrow_->cols = out;
  });
  return narrow_->cols.data<int32_t>();
}

CsrMatrix CscMatrix::ToCsr() const { return Recompress("CscMatrix::ToCsr"); }

Tensor CscMatrix::ColNnz() const { return SliceNnz("CscMatrix::ColNnz"); }

}  // namespace tensorkit
