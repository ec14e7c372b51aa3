// EmbeddingBag and EmbeddingBags (the forward passes) and the checks the embedding sources share.
//
// Note [bag kernels]
// ~~~~~~~~~~~~~~~~~~
// A bag reads one table row per id, at random: the cost is memory latency, not arithmetic. So
// each kernel walks the ids of a range of bags in sequence and prefetches the row of the id
// PrefetchAhead positions on (across bag boundaries, clamped to the range) while it adds the
// current row into an accumulator of D compute-type values. The distance is set in bytes
// (kPrefetchBytes of rows in flight, 16 to 64 ids): a row of DRAM latency is several hundred
// cycles on a server, so 16 rows of 256 bytes left the loads waiting (1.5x slower on a table of
// 4 KiB pages), while 16 KiB stays well inside L1. The accumulator is a fixed-size
// array for D = 16, 32, 64 and 128, so that the row loop is fully unrolled and vectorised and
// the accumulator stays in registers; other widths take a runtime-D loop. Every kernel is also
// compiled for AVX2 (picked from cpuid, ActiveSimdPath) with the same arithmetic
// in the same sequence: no FMA contraction, one add per id per column in id order, so every
// path gives the same bits. Ids are checked before any kernel runs (a branch-free pass), so the
// kernels read without checks. Each bag is reduced by the one task that owns it, in id order:
// results do not depend on the thread count.
#include "tensorkit/features/embedding.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <memory>
#include <type_traits>

#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/embedding_device.h"
#include "tensorkit/features/embedding_internal.h"

namespace tensorkit {

namespace embedding_internal {

void CheckTable(const Tensor& table, const char* what, const char* op) {
  TK_CHECK(table.defined(), kInvalidArgument, op, ": ", what, " is an undefined tensor");
  TK_CHECK(table.NumAxes() == 2, kShapeMismatch, op, ": ", what,
           " must be 2-D [num_rows, embedding_dim], got dims ", ShapeString(table.Dims()));
  TK_CHECK(IsFloat(table.dtype()), kDTypeMismatch, op, ": ", what,
           " must be float16, bfloat16, float32 or float64, got ", DTypeName(table.dtype()));
}

Tensor RowMajor(const Tensor& table) {
  return table.Dim(1) <= 1 || table.Stride(1) == 1 ? table : table.Clone();
}

Ids PrepareIds(const JaggedTensor& ids, const char* op) {
  TK_CHECK(ids.defined(), kInvalidArgument, op,
           ": ids is an empty (default-constructed) JaggedTensor; make one with "
           "JaggedTensor::FromOffsets or FromLengths");
  TK_CHECK(ids.values().NumAxes() == 1, kShapeMismatch, op,
           ": the values of ids must be 1-D [N] (one id per item), got dims ",
           ShapeString(ids.values().Dims()));
  TK_CHECK((kIdDTypes & Bit(ids.dtype())) != 0, kDTypeMismatch, op,
           ": ids must be int32 or int64, got ", DTypeName(ids.dtype()),
           "; convert them with Converted(values, DType::kInt64)");
  Ids out;
  out.values = ids.values().Contiguous();
  out.offsets = ids.offsets_data();
  out.batch_size = ids.batch_size();
  out.num_values = ids.num_values();
  return out;
}

void CheckPaddingId(int64_t padding_id, int64_t num_rows, const char* op) {
  TK_CHECK(padding_id == -1 || (padding_id >= 0 && padding_id < num_rows), kOutOfRange, op,
           ": padding_id ", padding_id, " is outside [0, ", num_rows,
           "), the rows of the table; pass -1 for no padding id");
}

void CheckCombinerWeights(Combiner combiner, bool weighted, const std::string& where,
                          const char* op) {
  TK_CHECK(!weighted || (combiner != Combiner::kMax && combiner != Combiner::kMin),
           kInvalidArgument, op, where, ": the combiner \"", CombinerName(combiner),
           "\" takes no weights (weights scale sums); drop them with a JaggedTensor without "
           "weights, or use sum, mean or sqrtn");
}

void CheckIdsInRange(const Tensor& values, int64_t begin, int64_t end, const int64_t* offsets,
                     int64_t bag_begin, int64_t bag_end, int64_t num_rows, const std::string& where,
                     const char* op) {
  Dispatch<kIdDTypes>(values.dtype(), op, [&]<typename I>() {
    const I* ids = values.data<I>() + begin;
    const uint64_t rows = static_cast<uint64_t>(num_rows);
    // One unsigned compare catches negative ids too.
    const int64_t bad = FirstWhere(end - begin, [&](int64_t i) {
      return static_cast<uint64_t>(static_cast<int64_t>(ids[i])) >= rows;
    });
    if (bad < 0) return;
    ThrowIdOutOfRange(static_cast<int64_t>(ids[bad]), begin + bad, offsets, bag_begin, bag_end,
                      num_rows, where, op);
  });
}

void ThrowIdOutOfRange(int64_t id, int64_t pos, const int64_t* offsets, int64_t bag_begin,
                       int64_t bag_end, int64_t num_rows, const std::string& where,
                       const char* op) {
  const int64_t bag =
      std::upper_bound(offsets + bag_begin, offsets + bag_end + 1, pos) - offsets - 1;
  Throw(ErrorCode::kOutOfRange, op, where, ": id ", id, " in bag ", bag - bag_begin,
        " at position ", pos - offsets[bag], " (values[", pos, "]) is outside [0, ", num_rows,
        "), the rows of the table; every id must name a row of the table or be the padding id");
}

Tensor ComputeWeights(const Tensor& weights, DType compute_dtype) {
  if (!weights.defined()) return Tensor();
  return Converted(weights, compute_dtype).Contiguous();
}

void CheckIdsOnDevice(const Tensor& values, const std::vector<int64_t>& begins,
                      const std::vector<int64_t>& rows, const int64_t* host_offsets, int64_t batch,
                      const std::vector<std::string>& wheres, const char* op) {
  const std::vector<int64_t> bad = features_cuda::FirstIdsOutOfRange(values, begins, rows, op);
  for (size_t f = 0; f < bad.size(); ++f) {
    if (bad[f] < 0) continue;
    const Tensor id = Converted(Slice(values, 0, bad[f], bad[f] + 1), DType::kInt64);
    ThrowIdOutOfRange(id.To(Device::Cpu()).ToVector<int64_t>()[0], bad[f], host_offsets,
                      static_cast<int64_t>(f) * batch, static_cast<int64_t>(f + 1) * batch, rows[f],
                      wheres[f], op);
  }
}

}  // namespace embedding_internal

namespace {

namespace ei = embedding_internal;
namespace fi = features_internal;

using ei::BagJob;  // embedding_device.h: shared with the device body

// Reduces bags [bag_begin, bag_end) of a job.
template <typename C>
using BagKernel = void (*)(const BagJob<C>&, int64_t bag_begin, int64_t bag_end);

// How many bytes of rows are prefetched ahead of the current id, and at most how many bytes of
// each row.
constexpr int64_t kPrefetchBytes = 16 * 1024;
constexpr int64_t kMaxPrefetchBytes = 1024;

// How far ahead (in ids) rows of `row_bytes` are prefetched (Note [bag kernels]).
constexpr int64_t PrefetchAhead(int64_t row_bytes) {
  return std::clamp<int64_t>(kPrefetchBytes / std::max<int64_t>(row_bytes, 1), 16, 64);
}

// The accumulator of one bag: fixed-size for a known width, else allocated once per call.
template <typename C, int kD>
class Accumulator {
 public:
  explicit Accumulator(int64_t d) {
    if constexpr (kD == 0) heap_.reset(new C[static_cast<size_t>(std::max<int64_t>(d, 1))]);
  }
  C* data() {
    if constexpr (kD == 0) {
      return heap_.get();
    } else {
      return fixed_.data();
    }
  }

 private:
  alignas(64) std::array<C, kD == 0 ? 1 : kD> fixed_{};  // zeroed once per call: no warning
  std::unique_ptr<C[]> heap_;
};

// Prefetches the cache lines of a row (its first kMaxPrefetchBytes). For a known width the
// lines are a fixed, unrolled sequence: row + 64 l, and the row's last byte for the line a row
// that does not start on a line boundary reaches into (a repeat of a line when it does).
template <int kD, typename T>
[[gnu::always_inline]] inline void PrefetchRow(const T* row, int64_t d) {
  const char* p = reinterpret_cast<const char*>(row);
  if constexpr (kD > 0) {
    constexpr int64_t kBytes = std::min<int64_t>(kD * sizeof(T), kMaxPrefetchBytes);
    for (int64_t a = 0; a < kBytes; a += 64) __builtin_prefetch(p + a);
    __builtin_prefetch(p + kBytes - 1);
  } else {
    const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
    const uintptr_t last =
        reinterpret_cast<uintptr_t>(p) + std::min<int64_t>(d * sizeof(T), kMaxPrefetchBytes) - 1;
    for (uintptr_t a = first; a <= last; a += 64) __builtin_prefetch(reinterpret_cast<void*>(a));
  }
}

// Float16 row values as float32, 8 at a time with F16C (exact, as Half::ToFloat).
[[gnu::target("avx2,f16c")]] inline void HalfRowToFloat(const Half* row, int64_t n, float* out) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c));
    _mm256_storeu_ps(out + c, _mm256_cvtph_ps(h));
  }
  for (; c < n; ++c) out[c] = static_cast<float>(row[c]);
}

// A row in the compute type: the row itself for float32 and float64 tables, else converted
// into `tmp` (with F16C where kF16c).
template <int kD, bool kF16c, typename T, typename C>
[[gnu::always_inline]] inline const C* WideRow(const T* row, int64_t d, C* tmp) {
  if constexpr (std::is_same_v<T, C>) {
    return row;
  } else {
    const int64_t n = kD > 0 ? kD : d;
    if constexpr (kF16c && std::is_same_v<T, Half>) {
      HalfRowToFloat(row, n, tmp);
    } else {
      for (int64_t c = 0; c < n; ++c) tmp[c] = static_cast<C>(row[c]);
    }
    return tmp;
  }
}

// Writes acc / divisor (0 where the divisor is 0) as T.
template <typename T, int kD, typename C>
[[gnu::always_inline]] inline void StoreBag(const C* acc, int64_t d, C divisor, bool divide,
                                            T* out) {
  const int64_t n = kD > 0 ? kD : d;
  if (!divide) {
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(acc[c]);
  } else if (divisor == C(0)) {
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(C(0));
  } else {
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(acc[c] / divisor);
  }
}

// Walks the ids of bags [bag_begin, bag_end) of a job: Row(p) prefetches the row PrefetchAhead
// positions on (clamped to the range) and gives id p's row in the compute type, or nullptr for
// the padding id; acc() is the accumulator of one bag.
template <typename T, typename I, int kD, bool kF16c>
class RowReader {
 public:
  using C = ComputeType<T>;
  RowReader(const BagJob<C>& job, int64_t bag_end)
      : d_(kD > 0 ? kD : job.d),
        table_(static_cast<const T*>(job.table)),
        ids_(static_cast<const I*>(job.ids)),
        ld_(job.table_ld),
        pad_(job.padding_id),
        ahead_(kD > 0 ? PrefetchAhead(kD * sizeof(T))
                      : PrefetchAhead(job.d * static_cast<int64_t>(sizeof(T)))),
        last_(job.off[bag_end] - 1),
        tmp_(d_),
        acc_(d_) {}
  int64_t d() const { return d_; }
  C* acc() { return acc_.data(); }
  // Prefetches the rows that Row() of the first positions from `first` on would have fetched
  // ahead, had the walk started earlier.
  void Warm(int64_t first) {
    for (int64_t p = first; p < std::min(first + ahead_, last_ + 1); ++p) {
      PrefetchRow<kD>(table_ + static_cast<int64_t>(ids_[p]) * ld_, d_);
    }
  }
  [[gnu::always_inline]] const C* Row(int64_t p) {
    PrefetchRow<kD>(table_ + static_cast<int64_t>(ids_[std::min(p + ahead_, last_)]) * ld_, d_);
    const int64_t id = ids_[p];
    if (id == pad_) return nullptr;
    return WideRow<kD, kF16c>(table_ + id * ld_, d_, tmp_.data());
  }

 private:
  const int64_t d_;
  const T* table_;
  const I* ids_;
  const int64_t ld_, pad_, ahead_, last_;
  Accumulator<C, kD> tmp_, acc_;
};

template <typename T, typename C>
T* OutRow(const BagJob<C>& job, int64_t bag) {
  return static_cast<T*>(job.out) + (bag - job.first_bag) * job.out_ld;
}

enum class Kind { kSum, kWeightedSum, kMax, kMin };

// kSum, kMean and kSqrtN: the (weighted) sum, then the bag divisor. kMax and kMin: the
// elementwise winner (embedding_internal.h), zeros for a bag without ids.
template <typename T, typename I, int kD, Kind kKind, bool kF16c>
[[gnu::always_inline]] inline void RunBags(const BagJob<ComputeType<T>>& job, int64_t bag_begin,
                                           int64_t bag_end) {
  using C = ComputeType<T>;
  constexpr bool kExtreme = kKind == Kind::kMax || kKind == Kind::kMin;
  RowReader<T, I, kD, kF16c> reader(job, bag_end);
  reader.Warm(job.off[bag_begin]);
  const int64_t d = reader.d();
  C* __restrict acc = reader.acc();
  for (int64_t bag = bag_begin; bag < bag_end; ++bag) {
    for (int64_t c = 0; c < d; ++c) acc[c] = C(0);  // also a bag without ids' max
    int64_t count = 0;
    C weight_sum = 0, square_sum = 0;
    for (int64_t p = job.off[bag]; p < job.off[bag + 1]; ++p) {
      const C* __restrict row = reader.Row(p);
      if (row == nullptr) continue;
      if constexpr (kExtreme) {
        for (int64_t c = 0; c < d; ++c) {
          const C v = row[c];
          const bool wins = kKind == Kind::kMax ? v > acc[c] : v < acc[c];
          acc[c] = count == 0 || wins ? v : acc[c];
        }
      } else if constexpr (kKind == Kind::kWeightedSum) {
        const C w = job.weights[p];
        weight_sum += w;
        square_sum += w * w;
        for (int64_t c = 0; c < d; ++c) acc[c] += w * row[c];
      } else {
        for (int64_t c = 0; c < d; ++c) acc[c] += row[c];
      }
      ++count;
    }
    if constexpr (kExtreme) {
      StoreBag<T, kD, C>(acc, d, C(1), false, OutRow<T>(job, bag));
    } else {
      const C divisor = ei::BagDivisor<C>(job.combiner, kKind == Kind::kWeightedSum, count,
                                          weight_sum, square_sum);
      StoreBag<T, kD, C>(acc, d, divisor, job.combiner != Combiner::kSum, OutRow<T>(job, bag));
    }
  }
}

template <typename T, typename I, int kD, Kind kKind>
void RunBagsBase(const BagJob<ComputeType<T>>& job, int64_t bag_begin, int64_t bag_end) {
  RunBags<T, I, kD, kKind, false>(job, bag_begin, bag_end);
}

// The same arithmetic in wider vectors (Note [bag kernels]); float16 rows convert with F16C,
// which every AVX2 processor has (checked all the same in ChooseKernel).
template <typename T, typename I, int kD, Kind kKind>
[[gnu::target("avx2,f16c")]] void RunBagsAvx2(const BagJob<ComputeType<T>>& job, int64_t bag_begin,
                                              int64_t bag_end) {
  RunBags<T, I, kD, kKind, true>(job, bag_begin, bag_end);
}

template <typename T, typename I, int kD>
BagKernel<ComputeType<T>> KernelForWidth(Kind kind, bool avx2) {
  switch (kind) {
    case Kind::kSum:
      return avx2 ? &RunBagsAvx2<T, I, kD, Kind::kSum> : &RunBagsBase<T, I, kD, Kind::kSum>;
    case Kind::kWeightedSum:
      return avx2 ? &RunBagsAvx2<T, I, kD, Kind::kWeightedSum>
                  : &RunBagsBase<T, I, kD, Kind::kWeightedSum>;
    case Kind::kMax:
      return avx2 ? &RunBagsAvx2<T, I, kD, Kind::kMax> : &RunBagsBase<T, I, kD, Kind::kMax>;
    case Kind::kMin:
      return avx2 ? &RunBagsAvx2<T, I, kD, Kind::kMin> : &RunBagsBase<T, I, kD, Kind::kMin>;
  }
  return nullptr;
}

// The kernel for rows of width d reduced by `combiner`.
template <typename T, typename I>
BagKernel<ComputeType<T>> ChooseKernel(int64_t d, Combiner combiner, bool weighted) {
  const Kind kind = combiner == Combiner::kMax   ? Kind::kMax
                    : combiner == Combiner::kMin ? Kind::kMin
                    : weighted                   ? Kind::kWeightedSum
                                                 : Kind::kSum;
  const bool avx2 = ActiveSimdPath() != SimdPath::kDefault && CpuHasF16c();
  switch (d) {
    case 16:
      return KernelForWidth<T, I, 16>(kind, avx2);
    case 32:
      return KernelForWidth<T, I, 32>(kind, avx2);
    case 64:
      return KernelForWidth<T, I, 64>(kind, avx2);
    case 128:
      return KernelForWidth<T, I, 128>(kind, avx2);
    default:
      return KernelForWidth<T, I, 0>(kind, avx2);
  }
}

// Bags per task: enough ids that the prefetch runs ahead for most of a task, and enough bytes
// to be worth a task.
int64_t BagGrain(int64_t num_bags, int64_t num_ids, int64_t row_bytes) {
  const int64_t per_bag = std::max<int64_t>(num_ids / std::max<int64_t>(num_bags, 1), 1);
  return std::max(GrainFor(per_bag * std::max<int64_t>(row_bytes, 1)), 4096 / per_bag);
}

// EmbeddingBag (one table) and EmbeddingBags on a CUDA device, the checks that do not depend
// on the device done: every operand on the ids' device, the ids checked there (one wait for all
// tables), then each table's bags reduced there into its columns (device_ops.h). `tables` have
// unit column strides; feature f's bags are rows [f * batch, (f + 1) * batch) of the offsets.
Tensor BagsOnDevice(const std::vector<Tensor>& tables, const std::vector<Combiner>& combiners,
                    const Tensor& values, const Tensor& device_offsets, const int64_t* host_offsets,
                    const Tensor& weights_in, int64_t batch, int64_t padding_id,
                    const std::vector<std::string>& wheres, const char* op) {
  const size_t num_tables = tables.size();
  std::vector<int64_t> begins(num_tables + 1), rows(num_tables), col(num_tables + 1, 0);
  for (size_t f = 0; f < num_tables; ++f) {
    CheckSameDevice(tables[f].device(), values.device(), op, "a table", "ids");
    begins[f] = host_offsets[static_cast<int64_t>(f) * batch];
    rows[f] = tables[f].Dim(0);
    col[f + 1] = col[f] + tables[f].Dim(1);
  }
  begins[num_tables] = host_offsets[static_cast<int64_t>(num_tables) * batch];
  ei::CheckIdsOnDevice(values, begins, rows, host_offsets, batch, wheres, op);
  Tensor out = Tensor::Empty({batch, col[num_tables]}, tables[0].dtype(), values.device());
  if (batch == 0 || col[num_tables] == 0) return out;
  Tensor weights;
  Dispatch<ei::kTableDTypes>(tables[0].dtype(), op, [&]<typename T>() {
    weights = ei::ComputeWeights(weights_in, DTypeOf<ComputeType<T>>);
  });
  for (size_t f = 0; f < num_tables; ++f) {
    features_cuda::EmbeddingBagOnDevice(tables[f], values, device_offsets, weights,
                                        static_cast<int64_t>(f) * batch, batch, padding_id,
                                        combiners[f], &out, col[f], op);
  }
  return out;
}

// EmbeddingBag (one table) and EmbeddingBags on the CPU, the checks that do not depend on the
// device done: each feature's ids checked against its table, then one pass over the (feature,
// bag) pairs, feature-major as the ids lie, a task's range running each feature's kernel over
// its share of that feature's bags. `tables` have unit column strides, `values` is contiguous;
// feature f's bags are rows [f * batch, (f + 1) * batch) of the host offsets `off`.
Tensor BagsOnHost(const std::vector<Tensor>& tables, const std::vector<Combiner>& combiners,
                  const Tensor& values, const int64_t* off, const Tensor& weights_in, int64_t batch,
                  int64_t padding_id, const std::vector<std::string>& wheres, const char* op) {
  const int64_t num_features = static_cast<int64_t>(tables.size());
  std::vector<int64_t> col(static_cast<size_t>(num_features) + 1, 0);
  for (int64_t f = 0; f < num_features; ++f) {
    ei::CheckIdsInRange(values, off[f * batch], off[(f + 1) * batch], off, f * batch,
                        (f + 1) * batch, tables[f].Dim(0), wheres[f], op);
    col[f + 1] = col[f] + tables[f].Dim(1);
  }
  Tensor out = Tensor::Empty({batch, col[num_features]}, tables[0].dtype());
  if (batch == 0 || col[num_features] == 0) return out;
  Dispatch<ei::kTableDTypes>(tables[0].dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    const Tensor weights = ei::ComputeWeights(weights_in, DTypeOf<C>);
    Dispatch<ei::kIdDTypes>(values.dtype(), op, [&]<typename I>() {
      std::vector<BagJob<C>> jobs(static_cast<size_t>(num_features));
      std::vector<BagKernel<C>> kernels(static_cast<size_t>(num_features));
      int64_t bytes = 0;
      for (int64_t f = 0; f < num_features; ++f) {
        BagJob<C>& job = jobs[f];
        job.table = tables[f].data<T>();
        job.table_ld = tables[f].Stride(0);
        job.d = tables[f].Dim(1);
        job.ids = values.data<I>();
        job.off = off;
        job.weights = weights.defined() ? weights.data<C>() : nullptr;
        job.padding_id = padding_id;
        job.combiner = combiners[f];
        job.out = out.data<T>() + col[f];
        job.out_ld = col[num_features];
        job.first_bag = f * batch;
        kernels[f] = ChooseKernel<T, I>(job.d, combiners[f], weights.defined());
        bytes += job.d * static_cast<int64_t>(sizeof(T));
      }
      const int64_t pairs = num_features * batch;
      ParallelFor(0, pairs, BagGrain(pairs, values.Dim(0), bytes / num_features),
                  [&](int64_t pb, int64_t pe) {
                    for (int64_t p = pb; p < pe;) {
                      const int64_t f = p / batch;
                      const int64_t end = std::min(pe, (f + 1) * batch);
                      if (jobs[f].d > 0) kernels[f](jobs[f], p, end);
                      p = end;
                    }
                  });
    });
  });
  return out;
}

}  // namespace

Tensor EmbeddingBag(const Tensor& table_in, const JaggedTensor& ids_in, Combiner combiner,
                    int64_t padding_id) {
  const char* op = "EmbeddingBag";
  ei::CheckTable(table_in, "table", op);
  const ei::Ids ids = ei::PrepareIds(ids_in, op);
  ei::CheckPaddingId(padding_id, table_in.Dim(0), op);
  ei::CheckCombinerWeights(combiner, ids_in.has_weights(), "", op);
  if (OnCuda(table_in) || OnCuda(ids.values)) {
    return BagsOnDevice({ei::RowMajor(table_in)}, {combiner}, ids.values, ids_in.offsets(),
                        ids.offsets, ids_in.weights(), ids.batch_size, padding_id, {""}, op);
  }
  return BagsOnHost({ei::RowMajor(table_in)}, {combiner}, ids.values, ids.offsets, ids_in.weights(),
                    ids.batch_size, padding_id, {""}, op);
}

Tensor EmbeddingBags(const std::vector<Tensor>& tables_in, const KeyedJaggedTensor& features,
                     const std::vector<Combiner>& combiners) {
  const char* op = "EmbeddingBags";
  const int64_t num_features = features.num_keys();
  TK_CHECK(static_cast<int64_t>(tables_in.size()) == num_features, kInvalidArgument, op, ": got ",
           tables_in.size(), " tables for ", num_features, " features; pass one table per key");
  TK_CHECK(static_cast<int64_t>(combiners.size()) == num_features, kInvalidArgument, op, ": got ",
           combiners.size(), " combiners for ", num_features,
           " features; pass one combiner per key");
  TK_CHECK(num_features > 0, kInvalidArgument, op,
           ": the KeyedJaggedTensor has no features (and so no tables give the output's dtype)");
  const std::vector<std::string>& keys = features.keys();
  std::vector<Tensor> tables(static_cast<size_t>(num_features));
  for (int64_t f = 0; f < num_features; ++f) {
    const std::string name = "table " + std::to_string(f) + " (feature \"" + keys[f] + "\")";
    ei::CheckTable(tables_in[f], name.c_str(), op);
    TK_CHECK(tables_in[f].dtype() == tables_in[0].dtype(), kDTypeMismatch, op, ": ", name, " is ",
             DTypeName(tables_in[f].dtype()), " but table 0 is ", DTypeName(tables_in[0].dtype()),
             "; all tables must have one dtype (convert them with Converted)");
    tables[f] = ei::RowMajor(tables_in[f]);
  }
  TK_CHECK(features.values().NumAxes() == 1, kShapeMismatch, op,
           ": the values of features must be 1-D [N] (one id per item), got dims ",
           ShapeString(features.values().Dims()));
  TK_CHECK((ei::kIdDTypes & Bit(features.values().dtype())) != 0, kDTypeMismatch, op,
           ": ids must be int32 or int64, got ", DTypeName(features.values().dtype()));
  const Tensor values = features.values().Contiguous();
  const int64_t b = features.batch_size();
  const int64_t* off = features.offsets_data();
  std::vector<std::string> wheres(static_cast<size_t>(num_features));
  for (int64_t f = 0; f < num_features; ++f) {
    wheres[f] = " (feature \"" + keys[f] + "\")";
    ei::CheckCombinerWeights(combiners[f], features.has_weights(), wheres[f], op);
  }
  if (OnCuda(values) ||
      std::any_of(tables.begin(), tables.end(), [](const Tensor& t) { return OnCuda(t); })) {
    return BagsOnDevice(tables, combiners, values, features.offsets(), off, features.weights(), b,
                        -1, wheres, op);
  }
  return BagsOnHost(tables, combiners, values, off, features.weights(), b, -1, wheres, op);
}

}  // namespace tensorkit
