// FBGEMM's block_bucketize_sparse_features (its schema of fbgemm-gpu 1.9 and its CPU semantics):
// the ids of T features over B rows (lengths [T * B]) spread over my_size buckets (ranks), each
// id to the bucket whose block holds it, the outputs in bucket-major order (lengths
// [my_size * T * B], ids of bucket 0 first), the order within a row kept. The features library
// has no such op (it is a sharding step, not a feature transform), so its body lives here.
//
// Per feature t with block size s (block_sizes[t]), n blocks in all (total_num_blocks[t], else
// my_size) of which each bucket holds k = n / my_size, and id x read as unsigned:
//   uniform    x < s * n: bucket x / (s * k), new id x % (s * k);
//              else      bucket (x % n) / k,  new id x / n.
//   positions  with block_bucketize_pos[t] = p[0..m] (bucket boundaries, sorted): j = the last
//              boundary <= x (for s = 0, x is first mapped to (x % n) * p[m] / n); j < my_size:
//              bucket j, new id x - p[j] (x / n for s = 0); else bucket x % my_size, new id
//              x / my_size.
//   keep_orig_idx (or keep_orig_idx_per_feature[t]) keeps x as the new id.
// bucketize_pos gives each output id its position within its input row; sequence gives, for
// each input id, its output position (unbucketize_permute). FBGEMM writes out of bounds where
// an id lies below the first boundary, reads past lengths that do not add up, and divides by
// zero for T = 0 or total_num_blocks 0 (or, with int32 ids, a multiple of 2^32): each is an
// Error here naming the position. The divisions by a feature's block counts are precomputed
// (FastRule), and neither the buckets nor the new ids are kept between the count and the
// scatter pass: computing them twice costs less than writing and reading N of each.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tensorkit/common/fast_div.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/embed/torch/torch_glue.h"

namespace tensorkit::torch_ops {
namespace {

constexpr const char* kOp = "tensorkit::block_bucketize_sparse_features";

struct FeatureRule {
  uint64_t block = 0;          // s
  uint64_t global_blocks = 0;  // n
  uint64_t local_blocks = 0;   // k
  bool keep = false;
  const int64_t* bounds = nullptr;  // block_bucketize_pos[t], or null
  int64_t num_bounds = 0;
};

// A rule's divisions precomputed (common/fast_div.h) for ids of unsigned type U: every id costs
// one to three of them, and a hardware 64-bit divide is the larger part of a pass otherwise. The
// divisors are computed in U, as FBGEMM computes them (s * n and s * k wrap in 32 bits for int32
// ids).
template <typename U>
struct FastRule {
  FastRule() = default;
  FastRule(const FeatureRule& r, uint64_t my_size)
      : s(static_cast<U>(r.block)),
        sk(static_cast<U>(static_cast<U>(r.block) * static_cast<U>(r.local_blocks))),
        limit(static_cast<U>(static_cast<U>(r.block) * static_cast<U>(r.global_blocks))),
        n(static_cast<U>(r.global_blocks)),
        keep(r.keep),
        bounds(r.bounds),
        num_bounds(r.num_bounds),
        by_sk(sk),
        by_n(n),
        by_k(static_cast<U>(r.local_blocks)),
        by_size(my_size) {}
  U s = 0, sk = 0, limit = 0, n = 0;
  bool keep = false;
  const int64_t* bounds = nullptr;
  int64_t num_bounds = 0;
  // sk is nonzero wherever it divides: x < limit = s * n (mod 2^w) needs limit > 0, and with
  // n = k * my_size, sk = 0 (mod 2^w) makes limit 0 too.
  FastDivider by_sk, by_n, by_k, by_size;
};

// BucketOf for a rule with bucket positions: a binary search over them (out of line: it would
// crowd the uniform rule's loop).
template <typename U, bool kNewId>
[[gnu::noinline]] uint64_t BucketByPositions(U x, const FastRule<U>& rule, uint64_t my_size,
                                             int64_t t, int64_t position, U* new_id) {
  const int64_t* p = rule.bounds;
  const int64_t m = rule.num_bounds;
  const U n = rule.n;
  U probe = x;
  if (rule.s == 0) {
    const U x_mod_n = static_cast<U>(x - static_cast<U>(rule.by_n.Divide(x)) * n);
    probe = static_cast<U>(static_cast<U>(x_mod_n * static_cast<U>(p[m - 1])) / n);
  }
  const int64_t j =
      std::upper_bound(p, p + m, probe, [](U v, int64_t b) { return v < static_cast<U>(b); }) - p -
      1;
  TK_CHECK(j >= 0, kOutOfRange, kOp, ": indices[", position, "] = ", static_cast<int64_t>(x),
           " (feature ", t, ") is below block_bucketize_pos[", t, "][0] = ", p[0],
           "; the first boundary must be at most the smallest id");
  if (static_cast<uint64_t>(j) < my_size) {
    if constexpr (kNewId) {
      *new_id = rule.keep ? x
                          : (rule.s == 0 ? static_cast<U>(rule.by_n.Divide(x))
                                         : static_cast<U>(x - p[j]));
    }
    return static_cast<uint64_t>(j);
  }
  const U q = static_cast<U>(rule.by_size.Divide(x));
  if constexpr (kNewId) {
    *new_id = rule.keep ? x : (rule.s == 0 ? static_cast<U>(rule.by_n.Divide(x)) : q);
  }
  return static_cast<U>(x - q * static_cast<U>(my_size));
}

// Bucket and new id of x under `rule` (U: the unsigned type of the ids, as FBGEMM reads them).
// kPositions: the rules have bucket positions (every feature's, or none). kNewId false computes
// the bucket alone.
template <typename U, bool kPositions, bool kNewId>
[[gnu::always_inline]] inline uint64_t BucketOf(U x, const FastRule<U>& rule, uint64_t my_size,
                                                int64_t t, int64_t position, U* new_id) {
  if constexpr (kPositions) {
    return BucketByPositions<U, kNewId>(x, rule, my_size, t, position, new_id);
  } else {
    if (x < rule.limit) {
      const U q = static_cast<U>(rule.by_sk.Divide(x));
      if constexpr (kNewId) *new_id = rule.keep ? x : static_cast<U>(x - q * rule.sk);
      return q;
    }
    const U q = static_cast<U>(rule.by_n.Divide(x));
    if constexpr (kNewId) *new_id = rule.keep ? x : q;
    return rule.by_k.Divide(static_cast<U>(x - q * rule.n));
  }
}

// Copies one weight of `kBytes` bytes (any dtype: weights are moved, not read).
template <int kBytes>
struct WeightWord;
template <>
struct WeightWord<1> {
  using Type = uint8_t;
};
template <>
struct WeightWord<2> {
  using Type = uint16_t;
};
template <>
struct WeightWord<4> {
  using Type = uint32_t;
};
template <>
struct WeightWord<8> {
  using Type = uint64_t;
};

// A 1-D int32/int64 tensor's elements as int64 values (a copy).
std::vector<int64_t> Int64s(const TorchTensor& t, const char* what) {
  const Tensor v = IndexVector(t, kOp, what);
  const int64_t* d = v.data<int64_t>();
  return std::vector<int64_t>(d, d + v.Dim(0));
}

// The first row of each feature, [T + 1]: B = R / T rows each, or batch_size_per_feature[t].
std::vector<int64_t> FeatureRowStarts(const std::optional<TorchTensor>& batch_size_per_feature,
                                      int64_t T, int64_t R) {
  std::vector<int64_t> row_start(static_cast<size_t>(T) + 1, 0);
  if (batch_size_per_feature) {
    const std::vector<int64_t> bs = Int64s(*batch_size_per_feature, "batch_size_per_feature");
    TK_CHECK(static_cast<int64_t>(bs.size()) == T, kShapeMismatch, kOp,
             ": batch_size_per_feature has ", bs.size(), " elements but block_sizes has T = ", T);
    for (int64_t t = 0; t < T; ++t) {
      TK_CHECK(bs[t] >= 0, kInvalidArgument, kOp, ": batch_size_per_feature[", t, "] = ", bs[t],
               " is negative");
      row_start[t + 1] = row_start[t] + bs[t];
    }
    TK_CHECK(row_start[T] == R, kShapeMismatch, kOp, ": batch_size_per_feature adds up to ",
             row_start[T], " rows but lengths has ", R);
  } else {
    TK_CHECK(T > 0 || R == 0, kInvalidArgument, kOp,
             ": block_sizes is empty (T = 0) but lengths has ", R, " rows");
    TK_CHECK(T == 0 || R % T == 0, kShapeMismatch, kOp, ": lengths has ", R,
             " elements, not a multiple of T = ", T, " features (block_sizes' size)");
    const int64_t B = T == 0 ? 0 : R / T;
    for (int64_t t = 0; t < T; ++t) row_start[t + 1] = row_start[t] + B;
  }
  return row_start;
}

// The rows' offsets into the N indices, [R + 1], each length checked.
Tensor CheckedOffsets(const int64_t* len, int64_t R, int64_t N) {
  Tensor offsets_t = Tensor::Empty({R + 1}, DType::kInt64);
  int64_t* offsets = offsets_t.data<int64_t>();
  offsets[0] = 0;
  for (int64_t r = 0; r < R; ++r) {
    TK_CHECK(len[r] >= 0, kInvalidArgument, kOp, ": lengths[", r, "] = ", len[r], " is negative");
    offsets[r + 1] = offsets[r] + len[r];
    TK_CHECK(offsets[r + 1] <= N, kShapeMismatch, kOp, ": lengths up to lengths[", r,
             "] add up to ", offsets[r + 1], ", more than the ", N, " indices");
  }
  TK_CHECK(offsets[R] == N, kShapeMismatch, kOp, ": lengths add up to ", offsets[R],
           " but indices has ", N, " elements");
  return offsets_t;
}

// Each feature's bucketing rule from block_sizes, total_num_blocks, block_bucketize_pos and the
// keep_orig_idx flags, checked; the rules point into `bounds`.
struct FeatureRules {
  std::vector<FeatureRule> rules;
  std::vector<std::vector<int64_t>> bounds;
  bool by_positions = false;
};
FeatureRules MakeFeatureRules(const std::vector<int64_t>& blocks, int64_t my_size,
                              const std::optional<TorchTensor>& total_num_blocks,
                              const std::optional<std::vector<TorchTensor>>& block_bucketize_pos,
                              bool keep_orig_idx,
                              const std::optional<TorchTensor>& keep_orig_idx_per_feature) {
  const int64_t T = static_cast<int64_t>(blocks.size());
  FeatureRules out;
  std::vector<int64_t> totals;
  if (total_num_blocks) {
    totals = Int64s(*total_num_blocks, "total_num_blocks");
    TK_CHECK(static_cast<int64_t>(totals.size()) == T, kShapeMismatch, kOp,
             ": total_num_blocks has ", totals.size(), " elements but T = ", T);
  }
  out.by_positions = block_bucketize_pos.has_value() && !block_bucketize_pos->empty();
  const bool by_positions = out.by_positions;
  if (by_positions) {
    TK_CHECK(static_cast<int64_t>(block_bucketize_pos->size()) == T, kShapeMismatch, kOp,
             ": block_bucketize_pos has ", block_bucketize_pos->size(), " tensors but T = ", T,
             " features");
    for (int64_t t = 0; t < T; ++t) {
      const std::string what = "block_bucketize_pos[" + std::to_string(t) + "]";
      out.bounds.push_back(Int64s((*block_bucketize_pos)[t], what.c_str()));
      const std::vector<int64_t>& p = out.bounds.back();
      TK_CHECK(!p.empty(), kInvalidArgument, kOp, ": ", what, " is empty");
      for (size_t i = 0; i < p.size(); ++i) {
        TK_CHECK(p[i] >= 0 && (i == 0 || p[i] >= p[i - 1]), kInvalidArgument, kOp, ": ", what, "[",
                 i, "] = ", p[i], " is negative or below the boundary before it");
      }
    }
  }
  std::vector<bool> keep(static_cast<size_t>(T), keep_orig_idx);
  if (keep_orig_idx_per_feature) {
    TK_CHECK(keep_orig_idx_per_feature->dim() == 1 && keep_orig_idx_per_feature->size(0) == T &&
                 keep_orig_idx_per_feature->scalar_type() == ScalarType::Bool,
             kInvalidArgument, kOp, ": keep_orig_idx_per_feature must be torch.bool [T = ", T,
             "], got ", ScalarTypeName(keep_orig_idx_per_feature->scalar_type()), " ",
             SizesText(*keep_orig_idx_per_feature));
    const Tensor k = Wrap(*keep_orig_idx_per_feature, kOp, "keep_orig_idx_per_feature");
    const Tensor kc = k.IsContiguous() ? k : k.Clone();
    for (int64_t t = 0; t < T; ++t) keep[t] = kc.data<bool>()[t];
  }
  out.rules.resize(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    FeatureRule& rule = out.rules[t];
    TK_CHECK(blocks[t] >= 0, kInvalidArgument, kOp, ": block_sizes[", t, "] = ", blocks[t],
             " is negative");
    const int64_t n = totals.empty() ? my_size : totals[t];
    TK_CHECK(n >= 1, kInvalidArgument, kOp, ": total_num_blocks[", t, "] = ", n,
             " must be at least 1");
    TK_CHECK(by_positions || n % my_size == 0, kInvalidArgument, kOp, ": total_num_blocks[", t,
             "] = ", n, " is not a multiple of my_size = ", my_size);
    rule.block = static_cast<uint64_t>(blocks[t]);
    rule.global_blocks = static_cast<uint64_t>(n);
    rule.local_blocks = static_cast<uint64_t>(std::max<int64_t>(1, n / my_size));
    rule.keep = keep[t];
    if (by_positions) {
      rule.bounds = out.bounds[t].data();
      rule.num_bounds = static_cast<int64_t>(out.bounds[t].size());
    }
  }
  return out;
}

using Result = std::tuple<TorchTensor, TorchTensor, std::optional<TorchTensor>,
                          std::optional<TorchTensor>, std::optional<TorchTensor>>;

Result BlockBucketizeSparseFeatures(TorchTensor lengths, TorchTensor indices, bool bucketize_pos,
                                    bool sequence, TorchTensor block_sizes, int64_t my_size,
                                    std::optional<TorchTensor> weights,
                                    std::optional<TorchTensor> batch_size_per_feature,
                                    int64_t /*max_B: the device kernel's*/,
                                    std::optional<std::vector<TorchTensor>> block_bucketize_pos,
                                    bool keep_orig_idx, std::optional<TorchTensor> total_num_blocks,
                                    std::optional<TorchTensor> keep_orig_idx_per_feature) {
  return Run(kOp, [&]() -> Result {
    TK_CHECK(my_size >= 1, kInvalidArgument, kOp, ": my_size = ", my_size,
             " must be at least 1 (the number of buckets)");
    // 2^31 buckets would need 2^31 lengths per row; the bound also keeps my_size exact in the
    // ids' 32-bit type.
    TK_CHECK(my_size <= INT32_MAX, kInvalidArgument, kOp, ": my_size = ", my_size,
             " is more than 2^31 - 1 buckets");
    // Lengths and offsets as tensorkit tensors (a view of int64 lengths; its allocator keeps
    // freed blocks of these sizes, where vectors of R elements fault in fresh pages each call).
    const Tensor len_t = IndexVector(lengths, kOp, "lengths");
    const int64_t* len = len_t.data<int64_t>();
    const std::vector<int64_t> blocks = Int64s(block_sizes, "block_sizes");
    TK_CHECK(indices.dim() == 1, kInvalidArgument, kOp, ": indices must be 1-D, got shape ",
             SizesText(indices));
    TK_CHECK(indices.scalar_type() == ScalarType::Int || indices.scalar_type() == ScalarType::Long,
             kDTypeMismatch, kOp, ": indices must be torch.int32 or torch.int64, got ",
             ScalarTypeName(indices.scalar_type()));
    const int64_t R = len_t.Dim(0), T = static_cast<int64_t>(blocks.size());
    const int64_t N = indices.size(0);

    const std::vector<int64_t> row_start = FeatureRowStarts(batch_size_per_feature, T, R);
    const Tensor offsets_t = CheckedOffsets(len, R, N);
    const int64_t* offsets = offsets_t.data<int64_t>();
    const FeatureRules feature_rules =
        MakeFeatureRules(blocks, my_size, total_num_blocks, block_bucketize_pos, keep_orig_idx,
                         keep_orig_idx_per_feature);
    const std::vector<FeatureRule>& rules = feature_rules.rules;
    const bool by_positions = feature_rules.by_positions;

    std::optional<Tensor> w;
    if (weights) {
      TK_CHECK(weights->dim() == 1 && weights->size(0) == N, kShapeMismatch, kOp,
               ": weights must be [N] with N = ", N, " indices, got shape ", SizesText(*weights));
      w = Wrap(*weights, kOp, "weights");
      if (!w->IsContiguous()) w = w->Clone();
    }
    const Tensor ids_in = Wrap(indices, kOp, "indices");
    const Tensor ids = ids_in.IsContiguous() ? ids_in : ids_in.Clone();

    const uint64_t P = static_cast<uint64_t>(my_size);
    TK_CHECK(R <= INT64_MAX / my_size, kInvalidArgument, kOp, ": ", R,
             " rows times my_size = ", my_size, " buckets overflow int64");
    const int64_t cells = R * my_size;
    // Outputs in tensorkit's allocator, which keeps freed blocks of this size for the next batch
    // (torch's would fault in fresh pages each call), exported without a copy.
    const DType ids_dtype = ids.dtype(), lengths_dtype = *ToDType(lengths.scalar_type());
    Tensor new_lengths = Tensor::Empty({cells}, lengths_dtype);
    Tensor new_indices = Tensor::Empty({N}, ids_dtype);
    std::optional<Tensor> new_weights, new_pos, unbucketize;
    if (w) new_weights = Tensor::Empty({N}, w->dtype());
    if (bucketize_pos) new_pos = Tensor::Empty({N}, ids_dtype);
    if (sequence) unbucketize = Tensor::Empty({N}, ids_dtype);
    // cursor[p * R + r]: the first output position of row r's ids in bucket p (bucket-major, as
    // the outputs lie); every cell is written by the prefix sum, so nothing is zeroed.
    Tensor cursor_t = Tensor::Empty({cells}, DType::kInt64);
    int64_t* cursor = cursor_t.data<int64_t>();

    Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(ids_dtype, kOp, [&]<typename I>() {
      using U = std::make_unsigned_t<I>;
      std::vector<FastRule<U>> fast(static_cast<size_t>(T));
      for (int64_t t = 0; t < T; ++t) {
        // In U the divisors n and k must not wrap to 0 (int32 ids with total_num_blocks a
        // multiple of 2^32): FBGEMM divides by zero there.
        TK_CHECK(static_cast<U>(rules[t].global_blocks) != 0 &&
                     static_cast<U>(rules[t].local_blocks) != 0,
                 kInvalidArgument, kOp, ": total_num_blocks[", t, "] = ", rules[t].global_blocks,
                 " gives 0 blocks in the ids' 32-bit type; pass int64 indices");
        fast[t] = FastRule<U>(rules[t], P);
      }
      const I* x = ids.data<I>();
      // Rows [rb, re) as runs of one feature: body(t, first row, end row).
      auto features = [&](int64_t rb, int64_t re, const auto& body) {
        int64_t t =
            std::upper_bound(row_start.begin(), row_start.end(), rb) - row_start.begin() - 1;
        for (int64_t r = rb; r < re; ++t) {
          const int64_t e = std::min(re, row_start[t + 1]);
          if (e > r) body(t, r, e);
          r = std::max(r, e);
        }
      };
      // Count: each row's ids per bucket, into its column (r) of the bucket-major counts; rows
      // run in parallel. The lengths output is the counts.
      auto count_pass = [&]<bool kPositions, typename L>(L* nl) {
        ParallelFor(0, R, GrainFor(64), [&](int64_t rb, int64_t re) {
          std::vector<int64_t> count(P);
          int64_t* const cnt = count.data();
          features(rb, re, [&](int64_t t, int64_t fb, int64_t fe) {
            // Copies in locals: the stores below could alias the captured ones otherwise, and
            // the compiler would reload them for every id.
            const FastRule<U> rule = fast[t];
            const I* const xs = x;
            for (int64_t r = fb; r < fe; ++r) {
              const int64_t end = offsets[r + 1];
              for (int64_t i = offsets[r]; i < end; ++i) {
                ++cnt[BucketOf<U, kPositions, false>(static_cast<U>(xs[i]), rule, P, t, i,
                                                     nullptr)];
              }
              // Zeroed as they are read out for the next row (a fill of its own would be a
              // memset call per row).
              for (uint64_t p = 0; p < P; ++p) {
                nl[p * R + r] = static_cast<L>(cnt[p]);
                cnt[p] = 0;
              }
            }
          });
        });
      };
      // The counts (the lengths output) become each cell's first output position: an exclusive
      // prefix sum in fixed chunks (each chunk's total, the totals' prefix, then each chunk from
      // its start).
      Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(lengths_dtype, kOp, [&]<typename L>() {
        L* const nl = new_lengths.data<L>();
        if (by_positions) {
          count_pass.template operator()<true, L>(nl);
        } else {
          count_pass.template operator()<false, L>(nl);
        }
        constexpr int64_t kChunk = 1 << 16;
        std::vector<int64_t> chunk_start(static_cast<size_t>(NumChunks(cells, kChunk)) + 1, 0);
        ParallelChunks(cells, kChunk, [&](int64_t k, int64_t b, int64_t e) {
          int64_t sum = 0;
          for (int64_t c = b; c < e; ++c) sum += static_cast<int64_t>(nl[c]);
          chunk_start[k + 1] = sum;
        });
        for (size_t k = 1; k < chunk_start.size(); ++k) chunk_start[k] += chunk_start[k - 1];
        ParallelChunks(cells, kChunk, [&](int64_t k, int64_t b, int64_t e) {
          int64_t start = chunk_start[k];
          for (int64_t c = b; c < e; ++c) {
            cursor[c] = start;
            start += static_cast<int64_t>(nl[c]);
          }
        });
      });
      // Scatter: each id to the next position of its row's cell (the buckets computed again,
      // with the new ids: cheaper than keeping N of each between the passes).
      I* const out_ids = new_indices.data<I>();
      I* const out_pos = new_pos ? new_pos->data<I>() : nullptr;
      I* const out_perm = unbucketize ? unbucketize->data<I>() : nullptr;
      auto scatter_pass = [&]<bool kPositions, typename W>(const W* w_in, W* w_out) {
        ParallelFor(0, R, GrainFor(64), [&](int64_t rb, int64_t re) {
          std::vector<int64_t> next(P);
          int64_t* const nx = next.data();
          features(rb, re, [&](int64_t t, int64_t fb, int64_t fe) {
            // Locals, as in the count pass.
            const FastRule<U> rule = fast[t];
            const I* const xs = x;
            I* const ids_out = out_ids;
            I* const pos_out = out_pos;
            I* const perm_out = out_perm;
            const W* const win = w_in;
            W* const wout = w_out;
            for (int64_t r = fb; r < fe; ++r) {
              for (uint64_t p = 0; p < P; ++p) nx[p] = cursor[p * R + r];
              const int64_t first = offsets[r], end = offsets[r + 1];
              for (int64_t i = first; i < end; ++i) {
                U new_id = 0;
                const uint64_t p =
                    BucketOf<U, kPositions, true>(static_cast<U>(xs[i]), rule, P, t, i, &new_id);
                const int64_t pos = nx[p]++;
                ids_out[pos] = static_cast<I>(new_id);
                if (pos_out) pos_out[pos] = static_cast<I>(i - first);
                if (perm_out) perm_out[i] = static_cast<I>(pos);
                if constexpr (!std::is_void_v<W>) wout[pos] = win[i];
              }
            }
          });
        });
      };
      auto scatter = [&]<typename W>(const W* w_in, W* w_out) {
        if (by_positions) {
          scatter_pass.template operator()<true, W>(w_in, w_out);
        } else {
          scatter_pass.template operator()<false, W>(w_in, w_out);
        }
      };
      if (!w) {
        scatter.template operator()<void>(nullptr, nullptr);
        return;
      }
      auto typed = [&]<int kBytes>() {
        using W = typename WeightWord<kBytes>::Type;
        scatter.template operator()<W>(static_cast<const W*>(w->raw_data()),
                                       static_cast<W*>(new_weights->raw_data()));
      };
      switch (DTypeSize(w->dtype())) {
        case 1:
          typed.template operator()<1>();
          break;
        case 2:
          typed.template operator()<2>();
          break;
        case 4:
          typed.template operator()<4>();
          break;
        case 8:
          typed.template operator()<8>();
          break;
        default:
          Throw(ErrorCode::kDTypeMismatch, kOp, ": weights of ", DTypeSize(w->dtype()),
                "-byte elements are not supported");
      }
    });
    auto out = [](const std::optional<Tensor>& t) -> std::optional<TorchTensor> {
      if (!t) return std::nullopt;
      return Export(*t);
    };
    return {Export(new_lengths), Export(new_indices), out(new_weights), out(new_pos),
            out(unbucketize)};
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("block_bucketize_sparse_features", TORCH_BOX(&BlockBucketizeSparseFeatures));
}

}  // namespace tensorkit::torch_ops
