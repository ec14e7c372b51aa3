// FillEmptyRows and FillEmptyRowsGrad: TensorFlow's SparseFillEmptyRows and its gradient.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "tensorkit/common/simd_path.h"
#include "tensorkit/common/streaming.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/fill_device.h"
#include "tensorkit/features/segment.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit {
namespace {

namespace fi = features_internal;
namespace sr = sparse_rows;

constexpr const char* kFillOp = "FillEmptyRows";
constexpr const char* kGradOp = "FillEmptyRowsGrad";

// Rows per task when a pass goes over the rows of the dense shape.
constexpr int64_t kRowGrain = 1 << 12;

// The checked input: contiguous host rows, whether their rows (axis 0) never decrease, as
// TensorFlow's kernel asks, and if so, per fixed chunk (kChunk) of entries, how many empty
// rows its entries skip, and whether each row's entries are in C order too.
struct CheckedRows {
  Tensor idx;
  bool rows_sorted = false;
  bool c_sorted = false;
  std::vector<int64_t> skipped;
};

// Whether row x comes before row y on axes 1.. (the minor axes), without branches.
template <int R>
inline bool MinorBefore(const int64_t* x, const int64_t* y, int rank) {
  if constexpr (R == 2) {
    return x[1] < y[1];
  } else {
    const int r = R > 0 ? R : rank;
    int cmp = 0;
    for (int a = 1; a < r; ++a) {
      const int here = (x[a] > y[a]) - (x[a] < y[a]);
      cmp = cmp != 0 ? cmp : here;
    }
    return cmp < 0;
  }
}

// The chunk [b, e) of CheckRows' pass: false at an entry outside the shape or before its
// predecessor's row; else its skipped rows to *skipped and whether some row's entries are out
// of C order to *down. Blocks of entries are tested without branches; the skipped rows are the
// rows the chunk spans less the row changes in it.
template <int R>
bool CheckRowChunk(const int64_t* idx, int64_t b, int64_t e, int rank, const int64_t* shape,
                   int64_t* skipped, bool* down) {
  const int r = R > 0 ? R : rank;
  constexpr int64_t kBlock = 256;
  const int64_t start = b == 0 ? -1 : idx[(b - 1) * r];
  int64_t prev = start, changes = 0;
  bool unordered = false;
  for (int64_t s = b; s < e; s += kBlock) {
    const int64_t t = std::min(e, s + kBlock);
    bool bad = false;
    for (int64_t i = s; i < t; ++i) {
      const int64_t* x = idx + i * r;
      bad |= sr::OutOfBounds(x, shape, r) | (x[0] < prev);
      changes += x[0] != prev;
      const int64_t* y = i > 0 ? x - r : x;  // entry 0 has no predecessor
      unordered |= (x[0] == prev) & MinorBefore<R>(x, y, rank);
      prev = x[0];
    }
    if (bad) return false;
  }
  *skipped = prev - start - changes;
  *down = unordered;
  return true;
}

#if defined(__x86_64__)
// CheckRowChunk<2> on AVX2 CPUs: two entries (row, column, row, column) per vector, each
// compared lane by lane with the entry before it (the same vector loaded one entry earlier):
// bounds, row order, row changes and columns out of order within a row, all without branches.
// The chunk's first entry and an odd last one are CheckRowChunk<2>'s; the parts' skipped rows
// add up (each counts from the row before it), so the results are CheckRowChunk<2>'s.
[[gnu::target("avx2,bmi,bmi2,popcnt")]] bool CheckRowChunk2Avx2(const int64_t* idx, int64_t b,
                                                                int64_t e, const int64_t* shape,
                                                                int64_t* skipped, bool* down) {
  int64_t head_skipped = 0, tail_skipped = 0;
  bool head_down = false, tail_down = false;
  if (!CheckRowChunk<2>(idx, b, b + 1, 2, shape, &head_skipped, &head_down)) return false;
  int64_t changes = 0;
  bool unordered = false;
  const __m256i zero = _mm256_setzero_si256();
  const __m256i limit = _mm256_setr_epi64x(shape[0], shape[1], shape[0], shape[1]);
  constexpr int64_t kBlock = 256;
  int64_t i = b + 1;
  while (i + 2 <= e) {  // blocks of kBlock entries, each checked once
    const int64_t t = std::min(e, i + kBlock);
    __m256i bad = zero;
    for (; i + 2 <= t; i += 2) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + 2 * i));
      const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + 2 * i - 2));
      const __m256i outside =
          _mm256_or_si256(_mm256_cmpgt_epi64(zero, v),
                          _mm256_xor_si256(_mm256_cmpgt_epi64(limit, v), _mm256_set1_epi64x(-1)));
      const __m256i before = _mm256_cmpgt_epi64(p, v);  // lane-wise: v below its predecessor
      const unsigned same =
          static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, p))));
      const unsigned lower = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(before)));
      // Rows are lanes 0 and 2, columns 1 and 3.
      bad = _mm256_or_si256(
          bad,
          _mm256_or_si256(outside, _mm256_and_si256(before, _mm256_setr_epi64x(-1, 0, -1, 0))));
      changes += std::popcount(~same & 0b0101u);
      unordered |= (same & (lower >> 1) & 0b0101u) != 0;
    }
    if (!_mm256_testz_si256(bad, bad)) return false;
  }
  if (i < e && !CheckRowChunk<2>(idx, i, e, 2, shape, &tail_skipped, &tail_down)) return false;
  // Entries b + 1 .. i - 1 span the rows from entry b's to entry i - 1's.
  *skipped = head_skipped + (idx[2 * (i - 1)] - idx[2 * b] - changes) + tail_skipped;
  *down = head_down || unordered || tail_down;
  return true;
}
#endif

// CheckRowChunk<R>, on the widest path the CPU has.
template <int R>
bool CheckRowChunkOnPath(bool avx2, const int64_t* idx, int64_t b, int64_t e, int rank,
                         const int64_t* shape, int64_t* skipped, bool* down) {
#if defined(__x86_64__)
  if constexpr (R == 2) {
    if (avx2) return CheckRowChunk2Avx2(idx, b, e, shape, skipped, down);
  }
#else
  (void)avx2;
#endif
  return CheckRowChunk<R>(idx, b, e, rank, shape, skipped, down);
}

// Throws naming the first entry outside the shape. One pass over the rows finds that, whether
// the rows never decrease, and, for sorted rows, each chunk's skipped rows (the first entry
// outside the shape or out of row order stops it, so only an input with unsorted rows pays
// for a second, bounds-only pass).
CheckedRows CheckRows(const SparseTensor& st) {
  CheckedRows out;
  out.idx = st.indices().HostContiguous();
  const int64_t* idx = out.idx.data<int64_t>();
  const int64_t nnz = st.nnz();
  const std::vector<int64_t>& shape = st.shape();
  const int rank = st.rank();
  out.skipped.assign(static_cast<size_t>(NumChunks(nnz, kChunk)), 0);
  std::atomic<bool> minor_down{false};
  const bool avx2 = ActiveSimdPath() != SimdPath::kDefault;
  const int64_t first = sr::WithRank(rank, [&]<int R>() {
    return FirstFailure(
        nnz,
        [&](int64_t b, int64_t e) {
          bool down = false;
          if (!CheckRowChunkOnPath<R>(avx2, idx, b, e, rank, shape.data(),
                                      &out.skipped[static_cast<size_t>(b / kChunk)], &down)) {
            return false;
          }
          if (down) minor_down.store(true, std::memory_order_relaxed);
          return true;
        },
        [&](int64_t i) {
          const int64_t* x = idx + i * rank;
          return sr::OutOfBounds(x, shape.data(), rank) || (i > 0 && x[0] < x[-rank]);
        });
  });
  out.rows_sorted = first < 0;
  out.c_sorted = out.rows_sorted && !minor_down.load();
  if (first >= 0) {
    if (sr::OutOfBounds(idx + first * rank, shape.data(), rank)) {
      sr::ThrowOutOfBounds(kFillOp, idx, first, shape);
    }
    const int64_t rest = sr::FirstOutOfBounds(idx + first * rank, nnz - first, shape);
    if (rest >= 0) sr::ThrowOutOfBounds(kFillOp, idx, first + rest, shape);
  }
  return out;
}

// Output k of dims and dtype on `device` from `allocate` (new tensors without one), checked to
// be what the writers below expect: a contiguous tensor of exactly those dims and dtype there.
Tensor Allocate(OutputAllocator* allocate, int k, const std::vector<int64_t>& dims, DType dtype,
                Device device) {
  if (allocate == nullptr) return Tensor::Empty(dims, dtype, device);
  return AllocateChecked(*allocate, k, dims, dtype, device, kFillOp);
}

// The outputs under construction: out_slots entries of rank `rank`, on `device`.
struct Outputs {
  Tensor idx, values, empty, reverse;
  // `made_reverse`, when defined, is output 3 made before (by the caller, from `allocate`).
  Outputs(int64_t out_slots, int rank, DType dtype, int64_t rows, int64_t nnz,
          OutputAllocator* allocate, Device device = Device::Cpu(), Tensor made_reverse = {})
      : idx(Allocate(allocate, 0, {out_slots, rank}, DType::kInt64, device)),
        values(Allocate(allocate, 1, {out_slots}, dtype, device)),
        empty(Allocate(allocate, 2, {rows}, DType::kBool, device)),
        reverse(made_reverse.defined() ? std::move(made_reverse)
                                       : Allocate(allocate, 3, {nnz}, DType::kInt64, device)) {}
};

// The result of the outputs `out` (a tensor of `st`'s shape), in C order when `c_order`.
FillEmptyRowsResult Finish(const Outputs& out, const SparseTensor& st, bool c_order) {
  const int rank = st.rank();
  FillEmptyRowsResult res;
  res.output = SparseTensor::Create(out.idx, out.values, st.shape(),
                                    c_order ? sr::Iota(rank) : std::vector<int>(rank, -1));
  res.empty_row_indicator = out.empty;
  res.reverse_index_map = out.reverse;
  return res;
}

// The arrays of a checked input.
template <typename T>
struct Input {
  Input(const SparseTensor& st, const Tensor& idx_t)
      : nnz(st.nnz()),
        rows(st.shape()[0]),
        vstride(st.values().Stride(0)),
        rank(st.rank()),
        idx(idx_t.data<int64_t>()),
        vals(st.values().data<T>()) {}
  int64_t nnz, rows, vstride;
  int rank;
  const int64_t* idx;
  const T* vals;
};

// Writes the filled entry (r, 0, ..., 0) = fill at output slot `slot`.
template <typename T>
inline void WriteFilled(int64_t r, int64_t slot, int rank, const T& fill, int64_t* out_idx,
                        T* out_val) {
  int64_t* row = out_idx + slot * rank;
  row[0] = r;
  for (int a = 1; a < rank; ++a) row[a] = 0;
  out_val[slot] = fill;
}

// Rows never decreasing: each entry moves by the number of empty rows before its row, which
// the chunks' skipped rows (CheckRows) give at each chunk's start; the entry after a gap writes
// the gap's filled entries first. Tasks take whole chunks; only gaps branch.
template <typename T>
FillEmptyRowsResult FillSorted(const SparseTensor& st, const CheckedRows& checked, const T& fill,
                               OutputAllocator* allocate) {
  const Input<T> in(st, checked.idx);
  const int64_t nnz = in.nnz, rows = in.rows, vstride = in.vstride;
  const int rank = in.rank;
  const int64_t* idx = in.idx;
  const T* vals = in.vals;
  // Empty rows before each chunk's first entry's row, then the total.
  const int64_t num_chunks = static_cast<int64_t>(checked.skipped.size());
  std::vector<int64_t> before(static_cast<size_t>(num_chunks) + 1, 0);
  for (int64_t c = 0; c < num_chunks; ++c) before[c + 1] = before[c] + checked.skipped[c];
  const int64_t last_row = nnz > 0 ? idx[(nnz - 1) * rank] : -1;
  const int64_t num_empty = before[num_chunks] + (rows - 1 - last_row);

  const std::vector<int> iota = sr::Iota(rank);
  const std::vector<int> out_order = checked.c_sorted ? iota : std::vector<int>(rank, -1);
  FillEmptyRowsResult res;
  if (num_empty == 0 && st.values().IsContiguous()) {
    // Nothing moves: the outputs are the inputs (as TensorFlow returns them).
    res.output = SparseTensor::Create(checked.idx, st.values(), st.shape(), out_order);
    res.empty_row_indicator = Allocate(allocate, 2, {rows}, DType::kBool, Device::Cpu());
    SetZero(&res.empty_row_indicator);
    res.reverse_index_map = Allocate(allocate, 3, {nnz}, DType::kInt64, Device::Cpu());
    int64_t* rev = res.reverse_index_map.data<int64_t>();
    ParallelFor(0, nnz, GrainFor(8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) rev[i] = i;
    });
    return res;
  }
  Outputs out(nnz + num_empty, rank, st.dtype(), rows, nnz, allocate);
  int64_t* const out_idx = out.idx.data<int64_t>();
  T* const out_val = out.values.data<T>();
  bool* const empty = out.empty.data<bool>();
  int64_t* const rev = out.reverse.data<int64_t>();
  // Writes the filled entries of the rows strictly between `from` and `to` at slots from
  // `slot`; returns the slot after them.
  const auto fill_gap = [&](int64_t from, int64_t to, int64_t slot) {
    for (int64_t q = from + 1; q < to; ++q, ++slot) {
      empty[q] = true;
      WriteFilled(q, slot, rank, fill, out_idx, out_val);
    }
    return slot;
  };
  sr::WithRank(rank, [&]<int R>() {
    const int r = R > 0 ? R : rank;
    ParallelChunks(nnz, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      int64_t shift = before[c];
      const int64_t* const x0 = idx;
      int64_t prev = b == 0 ? -1 : x0[(b - 1) * r];
      const auto move = [&](int64_t i) {
        const int64_t o = i + shift;
        for (int a = 0; a < r; ++a) out_idx[o * r + a] = x0[i * r + a];
        out_val[o] = vals[i * vstride];
        rev[i] = o;
      };
      int64_t i = b;
      // The rest of a row that began in the chunk before: that chunk marks the row.
      for (; i < e && x0[i * r] == prev; ++i) move(i);
      for (; i < e; ++i) {
        const int64_t row = x0[i * r];
        if (row > prev + 1) [[unlikely]] {
          shift = fill_gap(prev, row, i + shift) - i;
        }
        empty[row] = false;
        prev = row;
        move(i);
      }
      if (e == nnz) fill_gap(prev, rows, e + shift);  // the rows after the last entry
    });
  });
  if (nnz == 0) {
    ParallelFor(0, rows, kRowGrain, [&](int64_t b, int64_t e) { fill_gap(b - 1, e, b); });
  }
  return Finish(out, st, checked.c_sorted);
}

// Any order: a stable counting sort by row (features_internal.h) in which every row takes at
// least one slot, so that an empty row's slot is there for its filled entry.
template <typename T>
FillEmptyRowsResult FillUnsorted(const SparseTensor& st, const Tensor& idx_t, const T& fill,
                                 OutputAllocator* allocate) {
  const Input<T> in(st, idx_t);
  const int64_t nnz = in.nnz, rows = in.rows, vstride = in.vstride;
  const int rank = in.rank;
  const int64_t* idx = in.idx;
  const T* vals = in.vals;
  auto row_of = [&](int64_t i) { return idx[i * rank]; };
  fi::CountingPlan plan = fi::PlanCountingSort(nnz, rows, 1, row_of);
  Outputs out(plan.start[rows], rank, st.dtype(), rows, nnz, allocate);
  int64_t* out_idx = out.idx.data<int64_t>();
  T* out_val = out.values.data<T>();
  bool* empty = out.empty.data<bool>();
  int64_t* rev = out.reverse.data<int64_t>();
  fi::PlaceItems(&plan, nnz, row_of, [&](int64_t i, int64_t slot) {
    const int64_t* src = idx + i * rank;
    int64_t* dst = out_idx + slot * rank;
    for (int a = 0; a < rank; ++a) dst[a] = src[a];
    out_val[slot] = vals[i * vstride];
    rev[i] = slot;
  });
  ParallelFor(0, rows, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      empty[r] = plan.count[r] == 0;
      if (plan.count[r] == 0) WriteFilled(r, plan.start[r], rank, fill, out_idx, out_val);
    }
  });
  // Rows come out grouped and ascending; the result is sorted in C order exactly when every
  // row's entries were already in column order, which only the output itself can tell.
  const int64_t n_out = plan.start[rows];
  const std::vector<int> iota = sr::Iota(rank);
  return Finish(out, st, sr::FirstUnordered(out_idx, n_out, rank, iota, /*strict=*/false) < 0);
}

// Note [bucketed placement]: the counting sort's placement takes each entry's slot from its
// row's cursor and writes it there: for inputs far larger than the caches every cursor read and
// every write misses. For large inputs the rows are cut into buckets of about kBucketBytes of
// output (half an L2 cache: the bucket's output and its rows' cursors stay there), and the
// entries (index row, value) are first grouped by bucket into scratch with the same stable
// counting sort over the few buckets, whose cursors stay in cache. Each bucket, one task, then
// counts its rows, and, once every bucket's slot total is summed, builds its output in a cached
// block (a stable counting sort within the bucket), fills its empty rows, checks its rows'
// column order there, and streams the block to its slots (common/streaming.h: no output line
// is read before it is written, which random stores into a fresh output would do).
// No output is written at random: the grouping writes each entry's scratch position to the
// reverse map in entry order, each bucket writes its entries' slots to scratch in scratch order,
// and a last pass in entry order replaces each position by its slot, reading the slots from as
// many sequential streams as there are buckets. (The reverse map written at random, one line
// read and written back per entry, was the largest cost of the placement.)
constexpr int64_t kBucketBytes = int64_t{1} << 19;
// Inputs with fewer entries take the plain placement.
constexpr int64_t kBucketedEntries = int64_t{1} << 16;

template <typename T>
FillEmptyRowsResult FillUnsortedBucketed(const SparseTensor& st, const Tensor& idx_t, const T& fill,
                                         OutputAllocator* allocate) {
  const Input<T> in(st, idx_t);
  const int64_t nnz = in.nnz, rows = in.rows, vstride = in.vstride;
  const int rank = in.rank;
  const int64_t* idx = in.idx;
  const T* vals = in.vals;
  // Rows per bucket: a power of two near kBucketBytes of output at the average row's slots.
  const int64_t entry_bytes = 8 * rank + static_cast<int64_t>(sizeof(T));
  const int64_t want = std::max<int64_t>(1, kBucketBytes / entry_bytes * rows / (nnz + rows));
  const int shift = std::bit_width(static_cast<uint64_t>(want)) - 1;
  const int64_t num_buckets = ((rows - 1) >> shift) + 1;
  // Scratch from tensors: their large blocks come back from the block cache, not as fresh pages.
  const Tensor scratch_idx = Tensor::Empty({nnz, rank}, DType::kInt64);
  const Tensor scratch_slot = Tensor::Empty({nnz}, DType::kInt64);
  const Tensor scratch_val = Tensor::Empty({nnz}, st.dtype());
  // The reverse map, made now: it holds the scratch positions until the last pass.
  Tensor reverse = Allocate(allocate, 3, {nnz}, DType::kInt64, Device::Cpu());
  int64_t* const sidx = scratch_idx.data<int64_t>();
  int64_t* const sslot = scratch_slot.data<int64_t>();
  T* const sval = scratch_val.data<T>();
  int64_t* const rev = reverse.data<int64_t>();
  // Entries grouped by bucket, in entry order within each (the one stable counting sort).
  const auto bucket_of = [&](int64_t i) { return idx[i * rank] >> shift; };
  fi::CountingPlan plan = fi::PlanCountingSort(nnz, num_buckets, 0, bucket_of);
  const std::vector<int64_t>& bucket_start = plan.start;
  fi::PlaceItems(&plan, nnz, bucket_of, [&](int64_t i, int64_t p) {
    const int64_t* x = idx + i * rank;
    for (int a = 0; a < rank; ++a) sidx[p * rank + a] = x[a];
    sval[p] = vals[i * vstride];
    rev[i] = p;
  });
  // Each row's entries, and each bucket's slots (an empty row takes one).
  const Tensor count_t = Tensor::Empty({rows}, DType::kInt64);  // zeroed by each bucket
  int64_t* const count = count_t.data<int64_t>();
  std::vector<int64_t> bucket_slots(static_cast<size_t>(num_buckets) + 1, 0);
  ParallelFor(0, num_buckets, 1, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      const int64_t k0 = q << shift, k1 = std::min(rows, (q + 1) << shift);
      std::fill(count + k0, count + k1, 0);
      for (int64_t p = bucket_start[q]; p < bucket_start[q + 1]; ++p) ++count[sidx[p * rank]];
      int64_t slots = 0;
      for (int64_t k = k0; k < k1; ++k) slots += std::max<int64_t>(count[k], 1);
      bucket_slots[q + 1] = slots;
    }
  });
  for (int64_t q = 0; q < num_buckets; ++q) bucket_slots[q + 1] += bucket_slots[q];
  const int64_t n_out = bucket_slots[num_buckets];
  Outputs out(n_out, rank, st.dtype(), rows, nnz, allocate, Device::Cpu(), std::move(reverse));
  int64_t* const out_idx = out.idx.data<int64_t>();
  T* const out_val = out.values.data<T>();
  bool* const empty = out.empty.data<bool>();
  std::atomic<bool> unordered{false};
  ParallelFor(0, num_buckets, 1, [&](int64_t b, int64_t e) {
    // The buckets' outputs are built here, in cache, then streamed to theirs (Note
    // [bucketed placement]); blocks from the block cache, so no fresh pages.
    int64_t most = 0;
    for (int64_t q = b; q < e; ++q) most = std::max(most, bucket_slots[q + 1] - bucket_slots[q]);
    const Tensor stage_idx_t = Tensor::Empty({most, rank}, DType::kInt64);
    const Tensor stage_val_t = Tensor::Empty({most}, st.dtype());
    int64_t* const stage_idx = stage_idx_t.data<int64_t>();
    T* const stage_val = stage_val_t.data<T>();
    std::vector<int64_t> cursor;
    bool down = false;
    for (int64_t q = b; q < e; ++q) {
      const int64_t k0 = q << shift, k1 = std::min(rows, (q + 1) << shift);
      const int64_t first = bucket_slots[q], n_q = bucket_slots[q + 1] - first;
      cursor.resize(static_cast<size_t>(k1 - k0));
      for (int64_t k = k0, slot = 0; k < k1; ++k) {
        cursor[k - k0] = slot;
        empty[k] = count[k] == 0;
        if (count[k] == 0) WriteFilled(k, slot, rank, fill, stage_idx, stage_val);
        slot += std::max<int64_t>(count[k], 1);
      }
      for (int64_t p = bucket_start[q]; p < bucket_start[q + 1]; ++p) {
        const int64_t* x = sidx + p * rank;
        const int64_t s = cursor[x[0] - k0]++;
        for (int a = 0; a < rank; ++a) stage_idx[s * rank + a] = x[a];
        stage_val[s] = sval[p];
        sslot[p] = first + s;
      }
      for (int64_t s = 1; s < n_q; ++s) {
        const int64_t* x = stage_idx + s * rank;
        down |= x[0] == x[-rank] && MinorBefore<0>(x, x - rank, rank);
      }
      StreamingCopy(out_idx + first * rank, stage_idx, n_q * rank * 8);
      StreamingCopy(out_val + first, stage_val, n_q * static_cast<int64_t>(sizeof(T)));
    }
    if (down) unordered.store(true, std::memory_order_relaxed);
  });
  ParallelFor(0, nnz, GrainFor(16), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) rev[i] = sslot[rev[i]];
  });
  return Finish(out, st, !unordered.load());
}

// Unsorted rows: bucketed placement (Note [bucketed placement]) when the entries are many and
// their values plain bytes.
template <typename T>
FillEmptyRowsResult FillUnsortedAny(const SparseTensor& st, const Tensor& idx_t, const T& fill,
                                    OutputAllocator* allocate) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (st.nnz() >= kBucketedEntries && st.shape()[0] > 0) {
      return FillUnsortedBucketed<T>(st, idx_t, fill, allocate);
    }
  }
  return FillUnsorted<T>(st, idx_t, fill, allocate);
}

// The checks TensorFlow makes (and the bounds of every axis), then the fill.
template <typename T>
FillEmptyRowsResult Fill(const SparseTensor& st, const T& fill,
                         OutputAllocator* allocate = nullptr) {
  const CheckedRows checked = CheckRows(st);
  return checked.rows_sorted ? FillSorted<T>(st, checked, fill, allocate)
                             : FillUnsortedAny<T>(st, checked.idx, fill, allocate);
}

// FillEmptyRows on the device of st (Note [device choice] of common/device.h): the bounds
// checked there (the CPU's Error for the first entry outside the shape), the entries grouped by
// a stable sort of their rows there and placed at fill_device.h's slots. Two fetches: whether
// the input is sorted, and the number of empty rows (it sizes the output).
FillEmptyRowsResult FillOnDevice(const SparseTensor& st, Scalar default_value,
                                 OutputAllocator* allocate) {
  const Tensor idx = st.indices().Contiguous();
  sr::CheckBounds(kFillOp, idx, st.shape());
  const int rank = st.rank();
  const int64_t rows = st.shape()[0], nnz = st.nnz();
  const std::vector<int> iota = sr::Iota(rank);
  std::vector<int64_t> pair;
  const bool sorted = sr::FirstUnordered(idx, iota, /*strict=*/false, &pair) < 0;
  const features_cuda::FillPlan plan = features_cuda::PlanFillOnDevice(idx, rows, sorted, kFillOp);
  const Tensor values = st.values().Contiguous();
  const Device device = st.device();
  FillEmptyRowsResult res;
  if (plan.num_empty == 0 && sorted && st.values().IsContiguous()) {
    // Nothing moves: the outputs are the inputs (as on the CPU); only the maps are written.
    res.output = SparseTensor::Create(idx, st.values(), st.shape(), iota);
    res.empty_row_indicator = Allocate(allocate, 2, {rows}, DType::kBool, device);
    res.reverse_index_map = Allocate(allocate, 3, {nnz}, DType::kInt64, device);
    features_cuda::FillOnDevice(plan, idx, values, 0, nullptr, nullptr, &res.empty_row_indicator,
                                &res.reverse_index_map, kFillOp);
    return res;
  }
  Outputs out(nnz + plan.num_empty, rank, st.dtype(), rows, nnz, allocate, device);
  uint64_t fill = 0;
  Dispatch<kNumericDTypes>(st.dtype(), kFillOp, [&]<typename T>() {
    const T v = default_value.To<T>();
    static_assert(sizeof(T) <= sizeof(fill));
    std::memcpy(&fill, &v, sizeof(T));
  });
  features_cuda::FillOnDevice(plan, idx, values, fill, &out.idx, &out.values, &out.empty,
                              &out.reverse, kFillOp);
  // Sorted input gives sorted output; otherwise the output itself tells (FillUnsorted).
  return Finish(out, st, sorted || sr::FirstUnordered(out.idx, iota, /*strict=*/false, &pair) < 0);
}

// The Error for reverse_index_map[pos] = value outside [0, n_full).
[[noreturn]] void ThrowMapEntryOutside(int64_t pos, int64_t value, int64_t n_full) {
  // TensorFlow's CVE-2020-15195 fix: a map entry outside the gradient would be an out of
  // bounds read.
  Throw(ErrorCode::kOutOfRange, kGradOp, ": reverse_index_map[", pos, "] = ", value,
        " is outside [0, ", n_full,
        ") (grad_values has that many elements); pass the reverse_index_map that FillEmptyRows "
        "returned with the gradient of its output values");
}

// FillEmptyRowsGrad on the device of its checked operands: the map checked there (one fetch of
// the verdict; the CPU's Error), then the gather and the default value's sum in the CPU's
// sequence (fill_device.h).
FillEmptyRowsGradResult GradOnDevice(const Tensor& reverse_index_map, const Tensor& grad_values) {
  const Tensor rev = reverse_index_map.Contiguous();
  const Tensor grad = grad_values.Contiguous();
  const int64_t n_full = grad.Dim(0);
  // The map's entries are ids into grad_values: EmbeddingBag's device check.
  const int64_t bad =
      features_cuda::FirstIdsOutOfRange(rev, {0, rev.NumElements()}, {n_full}, kGradOp)[0];
  if (bad >= 0) {
    ThrowMapEntryOutside(bad, Slice(rev, 0, bad, bad + 1).ToVector<int64_t>()[0], n_full);
  }
  CheckDType<kIntDTypes | kFloatDTypes>(grad.dtype(), kGradOp);
  FillEmptyRowsGradResult res;
  res.d_values = Tensor::Empty({rev.Dim(0)}, grad.dtype(), grad.device());
  res.d_default_value = Tensor::Empty({}, grad.dtype(), grad.device());
  features_cuda::FillGradOnDevice(rev, grad, kChunk, &res.d_values, &res.d_default_value, kGradOp);
  return res;
}

// The checks that need no element: a created tensor of rank >= 1, not rows 0 with entries.
void CheckFillInput(const SparseTensor& st) {
  sr::CheckCreated(st, kFillOp);
  TK_CHECK(st.rank() >= 1, kShapeMismatch, kFillOp,
           ": needs a sparse tensor of rank >= 1 (rows along axis 0), got rank 0");
  TK_CHECK(st.shape()[0] > 0 || st.nnz() == 0, kInvalidArgument, kFillOp, ": the shape ",
           ShapeString(st.shape()), " has no rows but the tensor has ", st.nnz(),
           " entries; a tensor with shape[0] == 0 must have no entries");
}

}  // namespace

namespace {

// FillEmptyRows of numbers, its outputs from `allocate` (new tensors when null).
FillEmptyRowsResult FillNumbers(const SparseTensor& st, Scalar default_value,
                                OutputAllocator* allocate) {
  CheckFillInput(st);
  TK_CHECK(st.dtype() != DType::kString, kDTypeMismatch, kFillOp,
           ": the values are strings; pass the default value as a std::string, e.g. "
           "FillEmptyRows(st, \"\")");
  FillEmptyRowsResult res;
  if (OnCuda(st)) {
    res = FillOnDevice(st, default_value, allocate);
  } else {
    res = fi::ReportingAllocationFailure(kFillOp, [&] {
      return Dispatch<kNumericDTypes>(st.dtype(), kFillOp, [&]<typename T>() {
        return Fill<T>(st, default_value.To<T>(), allocate);
      });
    });
  }
  if (allocate != nullptr) allocate->Commit();
  return res;
}

}  // namespace

FillEmptyRowsResult FillEmptyRows(const SparseTensor& st, Scalar default_value) {
  return FillNumbers(st, default_value, nullptr);
}

FillEmptyRowsResult FillEmptyRows(const SparseTensor& st, Scalar default_value,
                                  OutputAllocator& out) {
  return FillNumbers(st, default_value, &out);
}

FillEmptyRowsResult FillEmptyRowsOfStrings(const SparseTensor& st,
                                           const std::string& default_value) {
  CheckFillInput(st);
  TK_CHECK(st.dtype() == DType::kString, kDTypeMismatch, kFillOp, ": the values are ",
           DTypeName(st.dtype()),
           ", not strings; pass the default value as a number (a Scalar) instead");
  return fi::ReportingAllocationFailure(kFillOp,
                                        [&] { return Fill<std::string>(st, default_value); });
}

FillEmptyRowsGradResult FillEmptyRowsGrad(const Tensor& reverse_index_map,
                                          const Tensor& grad_values) {
  TK_CHECK(reverse_index_map.defined() && grad_values.defined(), kInvalidArgument, kGradOp,
           ": reverse_index_map and grad_values must be defined tensors");
  CheckSameDevice(reverse_index_map.device(), grad_values.device(), kGradOp, "reverse_index_map",
                  "grad_values");
  TK_CHECK(reverse_index_map.NumAxes() == 1, kShapeMismatch, kGradOp,
           ": reverse_index_map must be 1-D [nnz], got ", ShapeString(reverse_index_map.Dims()));
  TK_CHECK(grad_values.NumAxes() == 1, kShapeMismatch, kGradOp,
           ": grad_values must be 1-D [nnz + empty rows], got ", ShapeString(grad_values.Dims()));
  TK_CHECK(reverse_index_map.dtype() == DType::kInt64, kDTypeMismatch, kGradOp,
           ": reverse_index_map must be int64, got ", DTypeName(reverse_index_map.dtype()),
           "; convert it with Converted(reverse_index_map, DType::kInt64)");
  if (OnCuda(grad_values)) return GradOnDevice(reverse_index_map, grad_values);
  const Tensor rev_t = reverse_index_map.HostContiguous();
  const Tensor grad_t = grad_values.HostContiguous();
  const int64_t n = rev_t.Dim(0);
  const int64_t n_full = grad_t.Dim(0);
  const int64_t* rev = rev_t.data<int64_t>();
  // TensorFlow's CVE-2020-15195 fix: a map entry outside the gradient would be an out of
  // bounds read.
  const int64_t bad = FirstWhere(
      n, [&](int64_t i) { return static_cast<uint64_t>(rev[i]) >= static_cast<uint64_t>(n_full); });
  if (bad >= 0) ThrowMapEntryOutside(bad, rev[bad], n_full);
  return fi::ReportingAllocationFailure(kGradOp, [&] {
    return Dispatch<kIntDTypes | kFloatDTypes>(grad_t.dtype(), kGradOp, [&]<typename T>() {
      using Acc = ComputeType<T>;
      const T* grad = grad_t.data<T>();
      FillEmptyRowsGradResult res;
      res.d_values = Tensor::Empty({n}, grad_t.dtype());
      T* d_values = res.d_values.data<T>();
      // Positions that no input entry maps to held the default value.
      std::unique_ptr<uint8_t[]> used(new uint8_t[static_cast<size_t>(n_full) + 1]());
      ParallelFor(0, n, GrainFor(16), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          d_values[i] = grad[rev[i]];
          // Repeated map entries (not FillEmptyRows' own) may mark one byte from two tasks.
          std::atomic_ref<uint8_t>(used[rev[i]]).store(1, std::memory_order_relaxed);
        }
      });
      // Fixed chunks summed in chunk order (fill_device.h): the same sum at any thread count,
      // and on a device.
      const int64_t num_chunks = NumChunks(n_full, kChunk);
      std::vector<Acc> partial(static_cast<size_t>(num_chunks), Acc(0));
      ParallelChunks(n_full, kChunk, [&](int64_t c, int64_t b, int64_t e) {
        partial[c] = fi::UnusedSum<Acc>(grad, used.get(), b, e);
      });
      const Acc total = fi::SumInOrder(partial.data(), num_chunks);
      res.d_default_value = Tensor::FromScalar<T>(static_cast<T>(total));
      return res;
    });
  });
}

}  // namespace tensorkit
