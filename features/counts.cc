// CountSparse and ToIndicator: per-row counts of ids (TensorFlow's SparseCountSparseOutput).
//
// Note [counting by groups]
// The entries are first put in groups, one per output row that has entries, each group in entry
// order: a jagged tensor's rows already are; a sparse tensor's rows are when its row indices
// never decrease (checked), else a stable sort by row gives the order. Each group is then sorted
// by (id, position) in a scratch buffer and run-length coded: the runs are the output entries,
// and a run adds its weights in entry order, as TensorFlow's kernel does, so float sums agree bit
// for bit. Groups run in parallel and write their runs at their own offset of one scratch array
// (a group has at most as many runs as entries); a prefix sum over the groups' run counts then
// places them in the output. Nothing depends on how the groups are split among threads.
#include "tensorkit/features/counts.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/sparse/index_rows.h"
#include "tensorkit/sparse/sparse_ops.h"

namespace tensorkit {
namespace {

namespace fi = features_internal;
namespace sr = sparse_rows;

constexpr DTypeSet kIdDTypes = Bit(DType::kInt32) | Bit(DType::kInt64);
constexpr DTypeSet kWeightDTypes =
    Bit(DType::kInt32) | Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kFloat64);

// Entries grouped by output row (Note [counting by groups]).
struct Groups {
  int64_t num = 0;
  std::vector<int64_t> start;  // [num + 1]: group g is grouped positions [start[g], start[g+1])
  std::vector<int64_t> row;    // [num]: the output row of group g; empty when group g is row g
  std::vector<int64_t> perm;   // grouped position -> entry; empty for the identity
  const int64_t* start_data = nullptr;  // start, or a jagged tensor's offsets
  int64_t Row(int64_t g) const { return row.empty() ? g : row[g]; }
  int64_t Entry(int64_t k) const { return perm.empty() ? k : perm[k]; }
};

// The entries of a sparse tensor of rank 1 (one row) or more grouped by index[0], stably.
Groups GroupSparse(const SparseTensor& st) {
  Groups g;
  const int64_t n = st.nnz();
  if (st.rank() == 1 || n == 0) {
    g.num = n > 0 ? 1 : 0;
    g.start = n > 0 ? std::vector<int64_t>{0, n} : std::vector<int64_t>{0};
  } else {
    const Tensor idx = st.indices().HostContiguous();
    const int64_t* p = idx.data<int64_t>();
    const int64_t w = st.rank();  // entry i's row is p[w * i]
    const bool sorted = FirstWhere(n - 1, [&](int64_t i) { return p[w * (i + 1)] < p[w * i]; }) < 0;
    std::vector<int64_t> sorted_rows;
    if (!sorted) {
      std::vector<int64_t> rows(static_cast<size_t>(n));
      ParallelFor(0, n, GrainFor(16), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) rows[i] = p[w * i];
      });
      sorted_rows.resize(static_cast<size_t>(n));
      g.perm = sr::SortPermutation(rows.data(), n, {st.shape()[0]}, {0}, sorted_rows.data());
    }
    const auto row_at = [&](int64_t k) { return sorted ? p[w * k] : sorted_rows[k]; };
    const int64_t num_rows = st.shape()[0];
    if (num_rows <= 2 * n) {
      // One group per row, empty ones included: the starts of sorted keys, one pass.
      g.num = num_rows;
      g.start.resize(static_cast<size_t>(num_rows) + 1);
      fi::StartsOfSortedKeys(n, num_rows, row_at, g.start.data());
    } else {
      // Far more rows than entries: only the rows that occur, so that nothing is O(rows).
      g.start =
          sr::SelectPositions(n, [&](int64_t k) { return k == 0 || row_at(k) != row_at(k - 1); });
      g.num = static_cast<int64_t>(g.start.size());
      g.row.resize(static_cast<size_t>(g.num));
      for (int64_t s = 0; s < g.num; ++s) g.row[s] = row_at(g.start[s]);
      g.start.push_back(n);
    }
  }
  g.start_data = g.start.data();
  return g;
}

// What is counted: ids in [0, limit) (negative ones are refused before); binary counts 1.
struct CountRule {
  uint64_t limit = std::numeric_limits<uint64_t>::max();  // above every int64 id
  bool binary = false;
};

// The runs of every group (Note [counting by groups]) as the output entries.
struct Runs {
  Tensor indices;  // int64 [K, rank]
  Tensor values;   // W [K]
  int64_t max_id = -1;
};

// Note [rank sort]
// Most groups are short (a row of a batch: tens of ids), where std::sort spends its time in
// mispredicted branches. A group of at most kRankSortMax ids is sorted by rank instead: id i goes
// to the number of ids below it plus the number of equal ids before it, which is its place in the
// stable sorted order. The m * m compares have no branch and vectorise over i. When the ids leave
// room, each is packed with its index below it (id * 64 + i: distinct keys in the same order, so
// one compare per pair decides both), on 32-bit lanes for ids below 2^25 (twice as many per
// vector), else on 64-bit lanes up to 2^57. The compiler makes a copy of the loops
// per instruction set (AVX-512, AVX2, the baseline) and the loader picks one by the CPU; every
// copy computes the same ranks, so the results are the same on every machine.
constexpr int64_t kRankSortMax = 64;

// Not under ThreadSanitizer: the loader runs the clones' resolver, which the sanitizer
// instruments, before the sanitizer's runtime has started.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define TK_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TK_VECTOR_CLONES
#endif

// rank[i] = the number of keys below key[i], for distinct keys key[0..n), n <= kRankSortMax.
template <typename K>
TK_VECTOR_CLONES void DistinctRanks(const K* key, int64_t n, K* rank) {
  for (int64_t i = 0; i < n; ++i) rank[i] = 0;
  for (int64_t j = 0; j < n; ++j) {
    const K x = key[j];
    for (int64_t i = 0; i < n; ++i) rank[i] += static_cast<K>(x < key[i]);
  }
}

// rank[i] = the place of key[i] in the stable sorted order of key[0..n), n <= kRankSortMax.
template <typename K>
TK_VECTOR_CLONES void StableRanks(const K* key, int64_t n, K* rank) {
  for (int64_t i = 0; i < n; ++i) rank[i] = 0;
  for (int64_t j = 0; j < n; ++j) {
    const K x = key[j];
    for (int64_t i = 0; i < n; ++i) {
      rank[i] += static_cast<K>(x < key[i]) + static_cast<K>((x == key[i]) & (j < i));
    }
  }
}

// One group's kept ids sorted stably, with their grouped positions (reused across groups).
class SortedGroup {
 public:
  // Sorts the positions q in [b, e) with id(q) >= 0 (-1: not kept) by (id, q).
  template <typename Id>
  void Fill(int64_t b, int64_t e, const Id& id) {
    keys_.clear();
    pos_.clear();
    int64_t top = 0;
    for (int64_t q = b; q < e; ++q) {
      const int64_t v = id(q);
      if (v < 0) continue;
      keys_.push_back(v);
      pos_.push_back(q);
      top = std::max(top, v);
    }
    const int64_t m = size();
    if (m <= 1) return;
    if (m <= kRankSortMax) {
      // Packed keys id * 64 + i (Note [rank sort]): 6 bits for the index.
      if (top < (int64_t{1} << 25)) {
        int32_t k32[kRankSortMax], r32[kRankSortMax];
        for (int64_t i = 0; i < m; ++i) k32[i] = static_cast<int32_t>((keys_[i] << 6) | i);
        DistinctRanks(k32, m, r32);
        Place(r32);
      } else if (top < (int64_t{1} << 57)) {
        int64_t k64[kRankSortMax], r64[kRankSortMax];
        for (int64_t i = 0; i < m; ++i) k64[i] = (keys_[i] << 6) | i;
        DistinctRanks(k64, m, r64);
        Place(r64);
      } else {
        int64_t r64[kRankSortMax];
        StableRanks(keys_.data(), m, r64);
        Place(r64);
      }
      return;
    }
    pairs_.clear();
    for (int64_t i = 0; i < m; ++i) pairs_.emplace_back(keys_[i], pos_[i]);
    std::sort(pairs_.begin(), pairs_.end());
    for (int64_t i = 0; i < m; ++i) {
      keys_[i] = pairs_[i].first;
      pos_[i] = pairs_[i].second;
    }
  }
  int64_t size() const { return static_cast<int64_t>(keys_.size()); }
  const int64_t* keys() const { return keys_.data(); }
  const int64_t* positions() const { return pos_.data(); }

 private:
  // Moves id i and its position to place rank[i].
  template <typename R>
  void Place(const R* rank) {
    const int64_t m = size();
    int64_t k[kRankSortMax], p[kRankSortMax];
    for (int64_t i = 0; i < m; ++i) {
      k[rank[i]] = keys_[i];
      p[rank[i]] = pos_[i];
    }
    std::copy(k, k + m, keys_.begin());
    std::copy(p, p + m, pos_.begin());
  }

  std::vector<int64_t> keys_, pos_;
  std::vector<std::pair<int64_t, int64_t>> pairs_;
};

// a + b, wrapping around for integers (as two's complement hardware adds) instead of
// overflowing.
template <typename W>
W Plus(W a, W b) {
  if constexpr (std::is_integral_v<W>) {
    using U = std::make_unsigned_t<W>;
    return static_cast<W>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// Output k (0 the indices, 1 the values, 2 the dense shape) of dims and dtype on the CPU: from
// `out` when given (checked to be what was asked for), else a new tensor.
Tensor Allocate(OutputAllocator* out, int k, const std::vector<int64_t>& dims, DType dtype,
                const char* op) {
  if (out == nullptr) return Tensor::Empty(dims, dtype);
  return AllocateChecked(*out, k, dims, dtype, Device::Cpu(), op);
}

// Pass 1 sorts every group into `scratch` at the group's own offset: all its kept ids when the
// values are counts (pass 2 counts the runs again, so no second scratch array is needed), or
// one id per run beside the run's weight sum in `sums`. Pass 2 writes the runs at their output
// offsets (Note [counting by groups]).
template <typename T, typename W>
Runs CountGroups(const T* ids, const W* weights, const Groups& g, int64_t n, int out_rank,
                 const CountRule& rule, DType w_dtype, OutputAllocator* allocate, const char* op) {
  const bool weighted = weights != nullptr && !rule.binary;
  const size_t slots = static_cast<size_t>(std::max<int64_t>(n, 1));
  std::unique_ptr<int64_t[]> scratch(new int64_t[slots]);
  std::unique_ptr<W[]> sums(weighted ? new W[slots] : nullptr);
  std::vector<int64_t> runs(static_cast<size_t>(g.num) + 1, 0);
  std::vector<int64_t> kept(static_cast<size_t>(g.num), 0);
  std::vector<int64_t> group_max(static_cast<size_t>(g.num), -1);
  const int64_t* start = g.start_data;
  const int64_t grain = std::max<int64_t>(1, int64_t{1 << 12} * g.num / std::max<int64_t>(n, 1));
  ParallelFor(0, g.num, grain, [&](int64_t gb, int64_t ge) {
    SortedGroup sorted;
    for (int64_t s = gb; s < ge; ++s) {
      const int64_t b = start[s], e = start[s + 1];
      sorted.Fill(b, e, [&](int64_t q) {
        const int64_t v = static_cast<int64_t>(ids[g.Entry(q)]);
        return v >= 0 && static_cast<uint64_t>(v) < rule.limit ? v : int64_t{-1};
      });
      const int64_t m = sorted.size();
      const int64_t* key = sorted.keys();
      const int64_t* pos = sorted.positions();
      int64_t* out = scratch.get() + b;
      int64_t k = 0;
      if (!weighted) {
        std::copy(key, key + m, out);
        for (int64_t i = 0; i < m; ++i) k += i == 0 || key[i] != key[i - 1];
      } else {
        for (int64_t i = 0; i < m;) {
          // From zero, as TensorFlow's zero-initialised map entries: -0.0 alone sums to +0.0.
          W sum = W(0);
          int64_t j = i;
          for (; j < m && key[j] == key[i]; ++j) sum = Plus(sum, weights[g.Entry(pos[j])]);
          out[k] = key[i];
          sums[b + k] = sum;
          ++k;
          i = j;
        }
      }
      kept[s] = m;
      runs[s + 1] = k;
      if (m > 0) group_max[s] = key[m - 1];
    }
  });
  Runs r;
  for (int64_t s = 0; s < g.num; ++s) {
    runs[s + 1] += runs[s];
    r.max_id = std::max(r.max_id, group_max[s]);
  }
  const int64_t total = runs[g.num];
  r.indices = Allocate(allocate, 0, {total, out_rank}, DType::kInt64, op);
  r.values = Allocate(allocate, 1, {total}, w_dtype, op);
  int64_t* oi = r.indices.data<int64_t>();
  W* ov = r.values.data<W>();
  ParallelFor(0, g.num, grain, [&](int64_t gb, int64_t ge) {
    for (int64_t s = gb; s < ge; ++s) {
      const int64_t* in = scratch.get() + start[s];
      const int64_t row = g.Row(s);
      int64_t o = runs[s];
      const auto put = [&](int64_t id, W value) {
        if (out_rank == 2) {
          oi[2 * o] = row;
          oi[2 * o + 1] = id;
        } else {
          oi[o] = id;
        }
        ov[o++] = value;
      };
      if (weighted) {
        const W* sum = sums.get() + start[s];
        for (int64_t j = 0; j < runs[s + 1] - runs[s]; ++j) put(in[j], sum[j]);
        continue;
      }
      for (int64_t i = 0; i < kept[s];) {
        int64_t j = i + 1;
        while (j < kept[s] && in[j] == in[i]) ++j;
        put(in[i], rule.binary ? W(1) : static_cast<W>(j - i));
        i = j;
      }
    }
  });
  return r;
}

// Throws unless ids is a defined int32/int64 tensor [n] (on the CPU unless `any_device`).
void CheckIds(const Tensor& ids, const char* op, bool any_device = false) {
  TK_CHECK(ids.defined(), kInvalidArgument, op, ": the ids are undefined");
  if (!any_device) fi::CheckOnCpu(ids, "ids", op);
  TK_CHECK((kIdDTypes & Bit(ids.dtype())) != 0, kDTypeMismatch, op, ": ids of dtype ",
           DTypeName(ids.dtype()), " cannot be counted; pass int32 or int64 ids");
  TK_CHECK(ids.NumAxes() == 1, kShapeMismatch, op, ": ids must be 1-D (one id per entry), got ",
           ShapeString(ids.Dims()));
}

// The first entry whose id is negative, or -1.
template <typename T>
int64_t FirstNegativeId(const T* v, int64_t n) {
  return FirstWhere(n, [&](int64_t i) { return v[i] < 0; });
}
// The first entry whose id is outside [0, depth), or -1.
template <typename T>
int64_t FirstIdOutside(const T* v, int64_t n, int64_t depth) {
  return FirstWhere(n, [&](int64_t i) {
    return static_cast<int64_t>(v[i]) < 0 || static_cast<int64_t>(v[i]) >= depth;
  });
}

// Counts entries grouped by `g` with ids `ids` (CPU int32/int64 [n]); the outputs (and the
// dense shape, output 2) from `allocate` when given.
SparseTensor CountCore(const Tensor& ids_in, const Tensor& weights, const Groups& g,
                       int64_t num_rows, int out_rank, bool binary, int64_t min_length,
                       int64_t max_length, const char* op, OutputAllocator* allocate = nullptr) {
  const Tensor ids = ids_in.HostContiguous();
  const int64_t n = ids.NumElements();
  TK_CHECK(min_length >= -1, kInvalidArgument, op, ": min_length ", min_length,
           " must be -1 (no minimum) or >= 0");
  TK_CHECK(max_length >= -1, kInvalidArgument, op, ": max_length ", max_length,
           " must be -1 (no maximum) or >= 0");
  DType w_dtype = DType::kInt64;
  Tensor w;
  if (weights.defined()) {
    fi::CheckOnCpu(weights, "weights", op);
    TK_CHECK((kWeightDTypes & Bit(weights.dtype())) != 0, kDTypeMismatch, op, ": weights of dtype ",
             DTypeName(weights.dtype()),
             " are not supported; pass int32, int64, float32 or float64 weights");
    w_dtype = weights.dtype();
    if (weights.NumElements() > 0) {
      TK_CHECK(weights.NumAxes() == 1 && weights.Dim(0) == n, kShapeMismatch, op,
               ": weights must be [", n, "] (one per id) or empty, got ",
               ShapeString(weights.Dims()));
      w = weights.HostContiguous();
    }
  }
  CountRule rule;
  rule.binary = binary;
  if (max_length >= 0) rule.limit = static_cast<uint64_t>(max_length);
  Runs r;
  Dispatch<kIdDTypes>(ids.dtype(), op, [&]<typename T>() {
    const T* v = ids.data<T>();
    const int64_t bad = FirstNegativeId(v, n);
    TK_CHECK(bad < 0, kInvalidArgument, op, ": id ", +v[bad < 0 ? 0 : bad], " of entry ", bad,
             " is negative; ids must be >= 0");
    Dispatch<kWeightDTypes>(w_dtype, op, [&]<typename W>() {
      r = CountGroups<T, W>(v, w.defined() ? w.data<W>() : nullptr, g, n, out_rank, rule, w_dtype,
                            allocate, op);
    });
  });
  int64_t width = max_length;
  if (max_length < 0) {
    TK_CHECK(r.max_id < std::numeric_limits<int64_t>::max(), kOutOfRange, op, ": id ", r.max_id,
             " leaves no room for the output's width (id + 1); pass a max_length to drop it");
    width = std::max({r.max_id + 1, min_length, int64_t{1}});
  }
  std::vector<int64_t> shape =
      out_rank == 2 ? std::vector<int64_t>{num_rows, width} : std::vector<int64_t>{width};
  if (allocate != nullptr) {
    Tensor dense_shape = Allocate(allocate, 2, {out_rank}, DType::kInt64, op);
    std::copy(shape.begin(), shape.end(), dense_shape.data<int64_t>());
  }
  std::vector<int> order = out_rank == 2 ? std::vector<int>{0, 1} : std::vector<int>{0};
  return SparseTensor::Create(std::move(r.indices), std::move(r.values), std::move(shape),
                              std::move(order));
}

// Throws unless st holds ids of rank 1 to max_rank within its shape (on the CPU unless
// `any_device`).
void CheckSparseIds(const SparseTensor& st, const char* op, int max_rank, bool any_device = false) {
  sr::CheckCreated(st, op);
  TK_CHECK(st.rank() >= 1 && st.rank() <= max_rank, kShapeMismatch, op,
           ": ids must be a SparseTensor of rank 1 ([L]) or ",
           max_rank == 2 ? "2 ([B, L])" : "more ([B, ...], rows by the first axis)", ", got shape ",
           ShapeString(st.shape()));
  CheckIds(st.values(), op, any_device);
  if (OnCuda(st)) {
    sr::CheckBounds(op, st.indices(), st.shape());
    return;
  }
  fi::CheckOnCpu(st.indices(), "the indices", op);
  sr::CheckIndexBounds(st, op);
}

// The CUDA body of CountSparse (Note [device choice] of common/device.h): the (row, id) keys
// made on the device, the entries at or past max_length sliced off and the rest summed by
// sparse/'s device Coalesce, which adds each (row, id)'s weights in entry order. Rows come from
// `indices` (a SparseTensor's) or `offsets` (a JaggedTensor's).
SparseTensor CountOnDevice(const Tensor& ids, const Tensor& indices, const Tensor& offsets,
                           const Tensor& weights, int64_t num_rows, int out_rank, bool binary,
                           int64_t min_length, int64_t max_length, const char* op) {
  TK_CHECK(min_length >= -1, kInvalidArgument, op, ": min_length ", min_length,
           " must be -1 (no minimum) or >= 0");
  TK_CHECK(max_length >= -1, kInvalidArgument, op, ": max_length ", max_length,
           " must be -1 (no maximum) or >= 0");
  const int64_t n = ids.NumElements();
  DType w_dtype = DType::kInt64;
  if (weights.defined()) {
    CheckSameDevice(weights.device(), ids.device(), op, "weights", "ids");
    TK_CHECK((kWeightDTypes & Bit(weights.dtype())) != 0, kDTypeMismatch, op, ": weights of dtype ",
             DTypeName(weights.dtype()),
             " are not supported; pass int32, int64, float32 or float64 weights");
    w_dtype = weights.dtype();
    TK_CHECK(weights.NumElements() == 0 || (weights.NumAxes() == 1 && weights.Dim(0) == n),
             kShapeMismatch, op, ": weights must be [", n, "] (one per id) or empty, got ",
             ShapeString(weights.Dims()));
  }
  const features_cuda::CountKeys k = features_cuda::CountKeysOnDevice(ids, indices, offsets, op);
  if (k.first_negative >= 0) {
    const Tensor host = ids.HostContiguous();
    const int64_t v = host.dtype() == DType::kInt64 ? host.data<int64_t>()[k.first_negative]
                                                    : host.data<int32_t>()[k.first_negative];
    Throw(ErrorCode::kInvalidArgument, op, ": id ", v, " of entry ", k.first_negative,
          " is negative; ids must be >= 0");
  }
  int64_t width = max_length;
  if (max_length < 0) {
    TK_CHECK(k.max_id < std::numeric_limits<int64_t>::max(), kOutOfRange, op, ": id ", k.max_id,
             " leaves no room for the output's width (id + 1); pass a max_length to drop it");
    width = std::max({k.max_id + 1, min_length, int64_t{1}});
  }
  Tensor values;
  if (weights.defined() && weights.NumElements() > 0) {
    values = weights.IsContiguous() ? weights : weights.Clone();
  } else {
    values = Tensor::Empty({n}, w_dtype, ids.device());
    Set(Scalar(int64_t{1}), &values);
  }
  const int64_t full = std::max(k.max_id + 1, width);
  SparseTensor st = SparseTensor::Create(k.keys, values, {num_rows, full});
  if (full > width) st = Slice(st, {0, 0}, {num_rows, width});
  st.Coalesce();
  if (binary) {
    Tensor v = st.values();  // shares the storage: ones in place
    Set(Scalar(int64_t{1}), &v);
  }
  if (out_rank == 1) {
    return SparseTensor::Create(CopyColumns(st.indices(), 1, 2), st.values(), {width}, {0});
  }
  return SparseTensor::Create(st.indices(), st.values(), {num_rows, width}, {0, 1});
}

Groups GroupJagged(const JaggedTensor& jt, const char* op) {
  TK_CHECK(jt.defined(), kInvalidArgument, op, ": the jagged ids are undefined");
  CheckIds(jt.values(), op);
  Groups g;
  g.num = jt.batch_size();
  g.start_data = jt.offsets_data();
  return g;
}

// The shared part of ToIndicator: ids checked (or dropped) against depth, counted with binary.
SparseTensor Indicator(const Tensor& ids, const Groups& g, int64_t num_rows, int out_rank,
                       int64_t depth, DType dtype, OutOfRangeIds out_of_range, const char* op) {
  TK_CHECK(depth >= 0, kInvalidArgument, op, ": depth ", depth, " must be >= 0");
  CheckDType<kNumericDTypes>(dtype, op);
  const Tensor host = ids.HostContiguous();
  const int64_t n = host.NumElements();
  Tensor filtered = host;
  Dispatch<kIdDTypes>(host.dtype(), op, [&]<typename T>() {
    const T* v = host.data<T>();
    const int64_t bad = FirstIdOutside(v, n, depth);
    if (bad < 0) return;
    TK_CHECK(out_of_range == OutOfRangeIds::kDrop, kOutOfRange, op, ": id ", +v[bad], " of entry ",
             bad, " is outside [0, ", depth, "); pass OutOfRangeIds::kDrop to ignore such ids");
    // The count refuses negative ids, so every dropped id becomes depth in a copy, which the
    // count's limit (max_length = depth) drops.
    Tensor copy = Tensor::Empty({n}, DType::kInt64);
    int64_t* c = copy.data<int64_t>();
    ParallelFor(0, n, GrainFor(16), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t x = static_cast<int64_t>(v[i]);
        c[i] = x < 0 || x >= depth ? depth : x;
      }
    });
    filtered = copy;
  });
  SparseTensor counted =
      CountCore(filtered, Tensor(), g, num_rows, out_rank, /*binary=*/true, depth, depth, op);
  Tensor values = Tensor::Empty({counted.nnz()}, dtype);
  Set(Scalar(int64_t{1}), &values);
  return SparseTensor::Create(counted.indices(), std::move(values), counted.shape(),
                              counted.order());
}

// CountSparse of a SparseTensor, its outputs from `out` (new tensors when null).
SparseTensor CountSparseIds(const SparseTensor& ids, const Tensor& weights, bool binary,
                            int64_t min_length, int64_t max_length, OutputAllocator* out) {
  const char* op = "CountSparse";
  return fi::ReportingAllocationFailure(op, [&] {
    CheckSparseIds(ids, op, std::numeric_limits<int>::max(), /*any_device=*/true);
    // A row is everything under one index[0], whatever the rank (TensorFlow's rule).
    const int out_rank = std::min(ids.rank(), 2);
    const int64_t num_rows = out_rank == 2 ? ids.shape()[0] : 1;
    if (OnCuda(ids)) {
      TK_CHECK(out == nullptr, kUnsupported, op,
               ": ids on a CUDA device count into new tensors; call the form without an "
               "allocator");
      return CountOnDevice(ids.values(), ids.indices(), Tensor(), weights, num_rows, out_rank,
                           binary, min_length, max_length, op);
    }
    const Groups g = GroupSparse(ids);
    return CountCore(ids.values(), weights, g, num_rows, out_rank, binary, min_length, max_length,
                     op, out);
  });
}

}  // namespace

SparseTensor CountSparse(const SparseTensor& ids, const Tensor& weights, bool binary,
                         int64_t min_length, int64_t max_length) {
  return CountSparseIds(ids, weights, binary, min_length, max_length, nullptr);
}

SparseTensor CountSparse(const SparseTensor& ids, const Tensor& weights, bool binary,
                         int64_t min_length, int64_t max_length, OutputAllocator& out) {
  SparseTensor r = CountSparseIds(ids, weights, binary, min_length, max_length, &out);
  out.Commit();
  return r;
}

SparseTensor CountSparse(const JaggedTensor& ids, const Tensor& weights, bool binary,
                         int64_t min_length, int64_t max_length) {
  const char* op = "CountSparse";
  return fi::ReportingAllocationFailure(op, [&] {
    if (ids.defined() && OnCuda(ids.values())) {
      CheckIds(ids.values(), op, /*any_device=*/true);
      return CountOnDevice(ids.values(), Tensor(), ids.offsets(), weights, ids.batch_size(), 2,
                           binary, min_length, max_length, op);
    }
    const Groups g = GroupJagged(ids, op);
    return CountCore(ids.values(), weights, g, ids.batch_size(), 2, binary, min_length, max_length,
                     op);
  });
}

SparseTensor ToIndicator(const SparseTensor& ids, int64_t depth, DType dtype,
                         OutOfRangeIds out_of_range) {
  const char* op = "ToIndicator";
  return fi::ReportingAllocationFailure(op, [&] {
    CheckSparseIds(ids, op, /*max_rank=*/2);
    const Groups g = GroupSparse(ids);
    const int out_rank = ids.rank();
    return Indicator(ids.values(), g, out_rank == 2 ? ids.shape()[0] : 1, out_rank, depth, dtype,
                     out_of_range, op);
  });
}

SparseTensor ToIndicator(const JaggedTensor& ids, int64_t depth, DType dtype,
                         OutOfRangeIds out_of_range) {
  const char* op = "ToIndicator";
  return fi::ReportingAllocationFailure(op, [&] {
    const Groups g = GroupJagged(ids, op);
    return Indicator(ids.values(), g, ids.batch_size(), 2, depth, dtype, out_of_range, op);
  });
}

Tensor ToIndicatorDense(const SparseTensor& ids, int64_t depth, DType dtype,
                        OutOfRangeIds out_of_range) {
  return ToIndicator(ids, depth, dtype, out_of_range).ToDense();
}

Tensor ToIndicatorDense(const JaggedTensor& ids, int64_t depth, DType dtype,
                        OutOfRangeIds out_of_range) {
  return ToIndicator(ids, depth, dtype, out_of_range).ToDense();
}

}  // namespace tensorkit
