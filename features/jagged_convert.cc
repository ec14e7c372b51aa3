// JaggedTensor conversions: from and to TensorFlow's VarLenFeature SparseTensor layout, and from
// and to the padded dense form. Each makes the checks that read no device data, then chooses the
// device once (device_ops.h): the CUDA bodies ask jagged_device.h where each output element comes
// from, and FromSparse composes sparse/'s device primitives.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>

#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/ops_internal.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/jagged_internal.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit {

namespace fi = features_internal;
namespace ji = jagged_internal;
namespace sr = sparse_rows;

namespace {

// ToPadded's rows [lo, hi) of items moved as words W, `row` words each: row r copies the words of
// its first min(o[r + 1] - o[r], L) items from src + o[r] * inner, then `fill`. Generic loops,
// and an AVX2 form that moves each row in vectors of 32 bytes with masked loads (lanes past the
// row's items are never read) and a masked store for the row's tail: most rows are shorter than
// L, and a row of a few items is too short for a loop or a memcpy call to pay off.
template <typename W>
void PadRows(const W* src, const int64_t* o, int64_t lo, int64_t hi, int64_t L, int64_t inner,
             W fill, W* dst) {
  const int64_t row = L * inner;
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t n = std::min(o[r + 1] - o[r], L) * inner;
    const W* __restrict s = src + o[r] * inner;
    W* __restrict d = dst + r * row;
    int64_t i = 0;
    for (; i < n; ++i) d[i] = s[i];
    for (; i < row; ++i) d[i] = fill;
  }
}

// PadRowsAvx2's vectors: lane k set where k < count (count clamped to [0, lanes]), a masked
// load (lanes not set are neither read nor faulted on), a masked store.
template <typename W>
[[gnu::target("avx2"), gnu::always_inline]] inline __m256i LanesBelow(int64_t count) {
  constexpr int64_t kLanes = 32 / sizeof(W);
  const int64_t k = std::clamp<int64_t>(count, 0, kLanes);
  if constexpr (sizeof(W) == 4) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  } else {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3));
  }
}

template <typename W>
[[gnu::target("avx2"), gnu::always_inline]] inline __m256i MaskedLoad(const W* p, __m256i mask) {
  if constexpr (sizeof(W) == 4) {
    return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), mask);
  } else {
    return _mm256_maskload_epi64(reinterpret_cast<const long long*>(p), mask);
  }
}

template <typename W>
[[gnu::target("avx2"), gnu::always_inline]] inline void MaskedStore(W* p, __m256i mask, __m256i v) {
  if constexpr (sizeof(W) == 4) {
    _mm256_maskstore_epi32(reinterpret_cast<int*>(p), mask, v);
  } else {
    _mm256_maskstore_epi64(reinterpret_cast<long long*>(p), mask, v);
  }
}

template <typename W>
[[gnu::target("avx2")]] void PadRowsAvx2(const W* src, const int64_t* o, int64_t lo, int64_t hi,
                                         int64_t L, int64_t inner, W fill, W* dst) {
  static_assert(sizeof(W) == 4 || sizeof(W) == 8);
  constexpr int64_t kLanes = 32 / sizeof(W);
  const int64_t row = L * inner;
  const __m256i f = sizeof(W) == 4 ? _mm256_set1_epi32(static_cast<int>(fill))
                                   : _mm256_set1_epi64x(static_cast<long long>(fill));
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t n = std::min(o[r + 1] - o[r], L) * inner;
    const W* s = src + o[r] * inner;
    W* d = dst + r * row;
    int64_t c = 0;
    for (; c + kLanes <= row; c += kLanes) {
      const __m256i m = LanesBelow<W>(n - c);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c),
                          _mm256_blendv_epi8(f, MaskedLoad(s + c, m), m));
    }
    if (c < row) {
      const __m256i m = LanesBelow<W>(n - c);
      MaskedStore(d + c, LanesBelow<W>(row - c), _mm256_blendv_epi8(f, MaskedLoad(s + c, m), m));
    }
  }
}

// Rows per fixed chunk of FromSparse's row pass (rows hold tens of entries each).
constexpr int64_t kRowChunk = 4096;

// Throws the message for entry `later` (at `row`, 2 numbers) repeating entry `earlier`.
[[noreturn]] void ThrowRepeat(const char* op, const int64_t* row, int64_t earlier, int64_t later) {
  Throw(ErrorCode::kInvalidArgument, op, ": entry ", later, " at ", sr::RowString(row, 2),
        " repeats entry ", earlier,
        "; each (row, column) may appear once (SparseTensor::Coalesce() merges repeats)");
}

// Throws the message for the first two entries of host rows [nnz, 2] at (row, column), in
// input order: the repeat that sorting found.
[[noreturn]] void ThrowRepeatOf(const char* op, const int64_t* rows, int64_t nnz, int64_t row,
                                int64_t column) {
  int64_t earlier = -1;
  for (int64_t i = 0; i < nnz; ++i) {
    if (rows[2 * i] != row || rows[2 * i + 1] != column) continue;
    if (earlier >= 0) ThrowRepeat(op, rows + 2 * i, earlier, i);
    earlier = i;
  }
  Throw(ErrorCode::kInternal, op, ": the repeat of (", row, ", ", column, ") was not found");
}

// Orders each compressed row's entries by column in place and returns the first row holding a
// column twice (-1 when none). Rows already strictly increasing stay as they are; a row whose
// columns are a permutation of 0..n-1 (VarLenFeature's layout: column = position in the row) is
// placed in one pass; any other row is sorted by SortSlices. Fixed chunks of rows, so the row
// found does not depend on the thread count.
template <typename T>
int64_t OrderRows(const int64_t* ptr, int64_t num_rows, int64_t* minor, T* vals) {
  std::vector<int64_t> first_repeat(static_cast<size_t>(NumChunks(num_rows, kRowChunk)), -1);
  ParallelChunks(num_rows, kRowChunk, [&](int64_t chunk, int64_t lo, int64_t hi) {
    std::vector<T> held;
    std::vector<uint8_t> seen;
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t n = ptr[r + 1] - ptr[r];
      int64_t* col = minor + ptr[r];
      T* val = vals + ptr[r];
      bool increasing = true;
      for (int64_t j = 1; j < n; ++j) increasing &= col[j] > col[j - 1];
      if (increasing) continue;
      seen.assign(static_cast<size_t>(n), 0);
      bool permutation = true;
      for (int64_t j = 0; j < n && permutation; ++j) {
        const uint64_t c = static_cast<uint64_t>(col[j]);
        permutation = c < static_cast<uint64_t>(n) && !seen[c];
        if (permutation) seen[c] = 1;
      }
      if (permutation) {
        held.assign(std::make_move_iterator(val), std::make_move_iterator(val + n));
        for (int64_t j = 0; j < n; ++j) val[col[j]] = std::move(held[j]);
        for (int64_t j = 0; j < n; ++j) col[j] = j;
        continue;
      }
      sr::SortSlices<T>(ptr + r, 1, minor, vals);
      bool repeat = false;
      for (int64_t j = 1; j < n; ++j) repeat |= col[j] == col[j - 1];
      if (repeat && first_repeat[chunk] < 0) first_repeat[chunk] = r;
    }
  });
  for (const int64_t r : first_repeat) {
    if (r >= 0) return r;
  }
  return -1;
}

// The product of dims[1:] of a tensor with `num_rows` rows of `num_elements` elements (the items'
// size; 0 when there are no rows, where nothing is copied).
int64_t ItemElements(int64_t num_elements, int64_t num_rows) {
  return num_rows > 0 ? num_elements / num_rows : 0;
}

// `leading` followed by dims[from:] (the dims of the items after the row axes).
std::vector<int64_t> Joined(const std::vector<int64_t>& leading, const std::vector<int64_t>& dims,
                            size_t from) {
  std::vector<int64_t> out = leading;
  out.insert(out.end(), dims.begin() + static_cast<std::ptrdiff_t>(from), dims.end());
  return out;
}

// The offsets and values of a jagged tensor under construction.
struct Layout {
  Tensor offsets, values;
};

// FromSparse on the device of `st` (rank 2, created): the CPU body's checks in its sequence
// (Note [FromSparse]), each answered on the device, where only the rows that a message names are
// fetched. Sorted entries keep their values; others are sorted stably by (row, column) with
// sparse/'s device sort, where a repeat is a sorted entry equal to its predecessor. The offsets
// are the row pointers of the sorted rows.
Layout FromSparseOnDevice(const SparseTensor& st, const char* op) {
  const std::vector<int64_t>& shape = st.shape();
  const Tensor idx = st.indices().Contiguous();
  std::vector<int64_t> outside, pair;
  const int64_t o = sr::FirstOutOfBounds(idx, shape, &outside);
  const int64_t u = sr::FirstUnordered(idx, {0, 1}, /*strict=*/true, &pair);
  // The first entry out of bounds or out of order decides, as FirstInvalid judges them.
  if (u >= 0 && (o < 0 || u < o) && sr::SameRow(pair.data(), pair.data() + 2, 2)) {
    ThrowRepeat(op, pair.data() + 2, u - 1, u);
  }
  if (o >= 0) sr::ThrowOutOfBoundsRow(op, outside.data(), o, shape);
  if (u < 0) return {sr::RunPointers(idx, 0, shape[0]), st.values().Contiguous()};
  Layout out;
  Tensor sorted;
  sr::SortEntries(idx, st.values().Contiguous(), shape, {0, 1}, &sorted, &out.values);
  if (sr::FirstUnordered(sorted, {0, 1}, /*strict=*/true, &pair) >= 0) {
    const Tensor host = idx.To(Device::Cpu());
    ThrowRepeatOf(op, host.data<int64_t>(), st.nnz(), pair[2], pair[3]);
  }
  out.offsets = sr::RunPointers(sorted, 0, shape[0]);
  return out;
}

// The bytes of `pad` converted to `dtype` (a numeric dtype of at most 8 bytes), for a kernel
// that moves elements as raw words.
uint64_t PadBits(DType dtype, Scalar pad, const char* op) {
  uint64_t bits = 0;
  Dispatch<kNumericDTypes>(dtype, op, [&]<typename T>() {
    const T fill = ops_internal::ScalarAs<T>(pad);
    static_assert(sizeof(T) <= sizeof(bits));
    std::memcpy(&bits, &fill, sizeof(T));
  });
  return bits;
}

}  // namespace

// Note [FromSparse]: VarLenFeature tensors come sorted in order {0, 1}, so one pass of
// FirstInvalid (bounds and strict order, the rank-2 specialisation) decides: when it finds
// nothing the offsets are the sorted rows' run starts and the values are shared. Otherwise the
// stable counting sort by row of Compress groups the entries, and one pass over the rows
// (OrderRows) orders the columns of the rows found out of order and finds repeated columns.
JaggedTensor JaggedTensor::FromSparse(const SparseTensor& st) {
  const char* op = "JaggedTensor::FromSparse";
  sr::CheckCreated(st, op);
  TK_CHECK(
      st.rank() == 2, kShapeMismatch, op,
      ": needs a 2-D sparse tensor [B, max_len] (TensorFlow's VarLenFeature layout), got shape ",
      ShapeString(st.shape()));
  const std::vector<int64_t>& shape = st.shape();
  const int64_t b = shape[0];
  TK_CHECK(b < INT64_MAX, kShapeMismatch, op, ": a batch of ", b, " rows has too many offsets");
  if (OnCuda(st)) {
    Layout on = FromSparseOnDevice(st, op);
    JaggedTensor jt;
    jt.SetOffsets(std::move(on.offsets));
    jt.values_ = std::move(on.values);
    return jt;
  }
  const int64_t nnz = st.nnz();
  const Tensor idx = st.indices().HostContiguous();
  const int64_t* rows = nnz > 0 ? idx.data<int64_t>() : nullptr;
  JaggedTensor jt;
  const int64_t bad = sr::FirstInvalid(rows, nnz, shape, {0, 1}, /*strict=*/true);
  if (bad < 0) {
    jt.offsets_ = Tensor::Empty({b + 1}, DType::kInt64);
    sr::FillPtrFromSorted(sr::KeyView{rows, 2}, nnz, b, jt.offsets_.data<int64_t>());
    jt.values_ = st.values().HostContiguous();
  } else {
    // Entries before `bad` are inside the shape and strictly increasing: an equal neighbour is
    // a repeat, found without sorting.
    const int64_t* row = rows + 2 * bad;
    if (sr::OutOfBounds(row, shape.data(), 2)) sr::ThrowOutOfBounds(op, rows, bad, shape);
    if (sr::SameRow(row, row - 2, 2)) ThrowRepeat(op, row, bad - 1, bad);
    sr::CheckBounds(op, rows, nnz, shape);
    // The values are new here (the entries are not sorted, so Compress copies them), and
    // OrderRows may reorder them in place.
    sr::Compressed c = sr::Compress(sr::KeyView{rows, 2}, sr::KeyView{rows + 1, 2}, nnz, b,
                                    st.values(), /*sort_minor=*/false);
    const int64_t* ptr = c.ptr.data<int64_t>();
    int64_t* minor = c.minor.data<int64_t>();
    const int64_t r = Dispatch(st.dtype(), op, [&]<typename T>() {
      return OrderRows<T>(ptr, b, minor, c.values.data<T>());
    });
    if (r >= 0) {  // name the repeat by its positions in the input
      int64_t column = 0;
      for (int64_t j = ptr[r + 1] - 1; j > ptr[r]; --j) {
        if (minor[j] == minor[j - 1]) column = minor[j];  // ends at the first repeat
      }
      ThrowRepeatOf(op, rows, nnz, r, column);
    }
    jt.offsets_ = c.ptr;
    jt.values_ = c.values;
  }
  jt.SetOffsets(jt.offsets_);
  return jt;
}

SparseTensor JaggedTensor::ToSparse() const {
  const char* op = "JaggedTensor::ToSparse";
  CheckDefined(op);
  TK_CHECK(values_.NumAxes() == 1, kShapeMismatch, op,
           ": a SparseTensor holds one value per entry, so the values must be 1-D [N], got ",
           ShapeString(values_.Dims()),
           "; flatten the items into rows of scalars first, or use ToPadded for [B, L, ...]");
  const int64_t b = batch_size(), n = num_values();
  const int64_t* off = offsets_data();
  if (OnCuda(values_)) {
    return SparseTensor::Create(features_cuda::JaggedIndicesOnDevice(offsets_, n, op),
                                values_.Contiguous(), {b, ji::MaxLength(off, b)}, {0, 1});
  }
  Tensor indices = Tensor::Empty({n, 2}, DType::kInt64);
  int64_t* idx = n > 0 ? indices.data<int64_t>() : nullptr;
  // Fixed chunks of entries, each starting at the row that holds its first entry: the same work
  // per chunk however the row lengths vary.
  ParallelChunks(n, kChunk, [&](int64_t, int64_t lo, int64_t hi) {
    ji::WriteIndices(off, b, lo, hi, 2, idx);
  });
  return SparseTensor::Create(std::move(indices), values_.HostContiguous(),
                              {b, ji::MaxLength(off, b)}, {0, 1});
}

Tensor JaggedTensor::ToPadded(int64_t max_length, Scalar pad) const {
  const char* op = "JaggedTensor::ToPadded";
  CheckDefined(op);
  TK_CHECK(max_length >= -1, kInvalidArgument, op, ": max_length is ", max_length,
           "; pass a length >= 0, or -1 for the longest row's length");
  TK_CHECK(values_.NumAxes() < kMaxAxes, kShapeMismatch, op, ": values ",
           ShapeString(values_.Dims()), " have ", values_.NumAxes(),
           " axes, so [B, max_length, ...] would have one more than the ", kMaxAxes,
           " a Tensor holds");
  TK_CHECK(dtype() != DType::kString || pad == Scalar(0), kInvalidArgument, op,
           ": string rows are padded with \"\" (a Scalar holds no string); pass pad 0, got ", pad);
  const int64_t b = batch_size();
  const int64_t* off = offsets_data();
  const int64_t len = max_length >= 0 ? max_length : ji::MaxLength(off, b);
  const std::vector<int64_t> out_dims = Joined({b, len}, values_.Dims(), 1);
  int64_t volume = 0;
  TK_CHECK(ElementCount(out_dims, &volume), kOutOfRange, op, ": the padded output ",
           ShapeString(out_dims),
           " has more elements than fit in int64; pass a smaller max_length");
  Tensor out = Tensor::Empty(out_dims, dtype(), device());
  if (OnCuda(values_)) {
    features_cuda::ToPaddedOnDevice(values_.Contiguous(), offsets_, len, PadBits(dtype(), pad, op),
                                    &out, op);
    return out;
  }
  const int64_t row_elems = ItemElements(out.NumElements(), b);
  if (row_elems == 0) return out;
  const int64_t inner = row_elems / len;
  const Tensor v = values_.HostContiguous();
  const bool avx2 = ActiveSimdPath() != SimdPath::kDefault;
  Dispatch(dtype(), op, [&]<typename T>() {
    T fill{};
    if constexpr (!std::is_same_v<T, std::string>) fill = ops_internal::ScalarAs<T>(pad);
    const T* src = v.NumElements() > 0 ? v.data<T>() : nullptr;
    T* dst = out.data<T>();
    ParallelFor(
        0, b, GrainFor(row_elems * static_cast<int64_t>(sizeof(T))), [&](int64_t lo, int64_t hi) {
          if constexpr (std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
            // Rows of a few items: vectors with masked ends beat a copy call per row.
            using W = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
            W word;
            std::memcpy(&word, &fill, sizeof(W));
            const W* s = reinterpret_cast<const W*>(src);
            W* d = reinterpret_cast<W*>(dst);
            if (avx2) return PadRowsAvx2<W>(s, off, lo, hi, len, inner, word, d);
            return PadRows<W>(s, off, lo, hi, len, inner, word, d);
          }
          for (int64_t r = lo; r < hi; ++r) {
            const int64_t n = std::min(off[r + 1] - off[r], len) * inner;
            T* d = dst + r * row_elems;
            if (n > 0) std::copy(src + off[r] * inner, src + off[r] * inner + n, d);
            std::fill(d + n, d + row_elems, fill);
          }
        });
  });
  return out;
}

JaggedTensor JaggedTensor::FromPadded(const Tensor& dense, const Tensor& lengths) {
  const char* op = "JaggedTensor::FromPadded";
  TK_CHECK(dense.defined() && dense.NumAxes() >= 2, kShapeMismatch, op,
           ": dense must be [B, L, ...] (at least 2 axes), got ",
           dense.defined() ? ShapeString(dense.Dims()) : std::string("an undefined tensor"));
  TK_CHECK(lengths.defined(), kInvalidArgument, op, ": lengths is an undefined tensor");
  CheckSameDevice(dense.device(), lengths.device(), op, "the padded tensor", "lengths");
  const int64_t b = dense.Dim(0), len = dense.Dim(1);
  TK_CHECK(lengths.NumAxes() == 1 && lengths.Dim(0) == b, kShapeMismatch, op,
           ": lengths must be [B] = [", b, "] (one per row of dense ", ShapeString(dense.Dims()),
           "), got ", ShapeString(lengths.Dims()));
  TK_CHECK(lengths.dtype() == DType::kInt32 || lengths.dtype() == DType::kInt64, kDTypeMismatch, op,
           ": lengths must be int32 or int64, got ", DTypeName(lengths.dtype()));
  const Tensor host_len = Converted(lengths, DType::kInt64).HostContiguous();
  const int64_t* lens = b > 0 ? host_len.data<int64_t>() : nullptr;
  const int64_t bad = FirstWhere(
      b, [&](int64_t i) { return static_cast<uint64_t>(lens[i]) > static_cast<uint64_t>(len); });
  TK_CHECK(bad < 0, kInvalidArgument, op, ": lengths[", bad, "] = ", bad >= 0 ? lens[bad] : 0,
           " is outside [0, ", len, "]; row ", bad, " of dense ", ShapeString(dense.Dims()),
           " holds at most ", len, " items");
  JaggedTensor jt;
  jt.offsets_ = Tensor::Empty({b + 1}, DType::kInt64);
  int64_t* off = jt.offsets_.data<int64_t>();
  off[0] = 0;
  for (int64_t i = 0; i < b; ++i) {
    // Each length is at most L, but with empty items ([B, L, 0]) B * L may pass int64.
    TK_CHECK(!__builtin_add_overflow(off[i], lens[i], &off[i + 1]), kShapeMismatch, op,
             ": the lengths add up to more than int64 holds at lengths[", i, "]");
  }
  jt.SetOffsets(OnCuda(dense) ? jt.offsets_.To(dense.device()) : jt.offsets_, jt.offsets_);
  const Tensor src = dense.Contiguous();
  const std::vector<int64_t> dims = Joined({off[b]}, dense.Dims(), 2);
  int64_t full = 0;
  if (!__builtin_mul_overflow(b, len, &full) && full == off[b]) {
    jt.values_ = *View(src, dims);  // every row full: the values are dense's rows, shared
    return jt;
  }
  jt.values_ = Tensor::Empty(dims, dense.dtype(), dense.device());
  if (OnCuda(dense)) {
    features_cuda::FromPaddedOnDevice(src, jt.offsets_, &jt.values_, op);
    return jt;
  }
  const int64_t row_elems = ItemElements(src.NumElements(), b);
  const int64_t inner = row_elems / len;  // len > 0: some row is not full
  Dispatch(dense.dtype(), op, [&]<typename T>() {
    const T* s = src.data<T>();
    T* d = jt.values_.NumElements() > 0 ? jt.values_.data<T>() : nullptr;
    if (d == nullptr) return;
    ParallelFor(
        0, b, GrainFor(row_elems * static_cast<int64_t>(sizeof(T))), [&](int64_t lo, int64_t hi) {
          for (int64_t r = lo; r < hi; ++r) {
            std::copy(s + r * row_elems, s + r * row_elems + lens[r] * inner, d + off[r] * inner);
          }
        });
  });
  return jt;
}

}  // namespace tensorkit
