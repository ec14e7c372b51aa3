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
// zero for T = 0 or total_num_blocks 0: each is an Error here naming the position.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

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

// Bucket and new id of x under `rule` (U: the unsigned type of the ids, as FBGEMM reads them).
template <typename U>
void BucketOf(U x, const FeatureRule& rule, uint64_t my_size, int64_t t, int64_t position,
              uint64_t* bucket, U* new_id) {
  const U s = static_cast<U>(rule.block), n = static_cast<U>(rule.global_blocks);
  if (rule.bounds == nullptr) {
    const U k = static_cast<U>(rule.local_blocks);
    const U limit = static_cast<U>(s * n);
    if (x < limit) {
      *bucket = x / (s * k);
      *new_id = rule.keep ? x : static_cast<U>(x % (s * k));
    } else {
      *bucket = (x % n) / k;
      *new_id = rule.keep ? x : static_cast<U>(x / n);
    }
    return;
  }
  const int64_t* p = rule.bounds;
  const int64_t m = rule.num_bounds;
  U probe = x;
  if (s == 0) probe = static_cast<U>(static_cast<U>(x % n) * static_cast<U>(p[m - 1]) / n);
  const int64_t j =
      std::upper_bound(p, p + m, probe, [](U v, int64_t b) { return v < static_cast<U>(b); }) - p -
      1;
  TK_CHECK(j >= 0, kOutOfRange, kOp, ": indices[", position, "] = ", static_cast<int64_t>(x),
           " (feature ", t, ") is below block_bucketize_pos[", t, "][0] = ", p[0],
           "; the first boundary must be at most the smallest id");
  if (static_cast<uint64_t>(j) < my_size) {
    *bucket = static_cast<uint64_t>(j);
    *new_id = rule.keep ? x : (s == 0 ? static_cast<U>(x / n) : static_cast<U>(x - p[j]));
  } else {
    *bucket = x % static_cast<U>(my_size);
    *new_id = rule.keep ? x : (s == 0 ? static_cast<U>(x / n) : static_cast<U>(x / my_size));
  }
}

// A 1-D int32/int64 tensor's elements as int64 values (a copy).
std::vector<int64_t> Int64s(const TorchTensor& t, const char* what) {
  const Tensor v = IndexVector(t, kOp, what);
  const int64_t* d = v.data<int64_t>();
  return std::vector<int64_t>(d, d + v.Dim(0));
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
    const std::vector<int64_t> len = Int64s(lengths, "lengths");
    const std::vector<int64_t> blocks = Int64s(block_sizes, "block_sizes");
    TK_CHECK(indices.dim() == 1, kInvalidArgument, kOp, ": indices must be 1-D, got shape ",
             SizesText(indices));
    TK_CHECK(indices.scalar_type() == ScalarType::Int || indices.scalar_type() == ScalarType::Long,
             kDTypeMismatch, kOp, ": indices must be torch.int32 or torch.int64, got ",
             ScalarTypeName(indices.scalar_type()));
    const int64_t R = static_cast<int64_t>(len.size()), T = static_cast<int64_t>(blocks.size());
    const int64_t N = indices.size(0);

    // Rows of each feature: B each, or batch_size_per_feature[t].
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
    std::vector<int64_t> offsets(static_cast<size_t>(R) + 1, 0);
    for (int64_t r = 0; r < R; ++r) {
      TK_CHECK(len[r] >= 0, kInvalidArgument, kOp, ": lengths[", r, "] = ", len[r], " is negative");
      offsets[r + 1] = offsets[r] + len[r];
      TK_CHECK(offsets[r + 1] <= N, kShapeMismatch, kOp, ": lengths up to lengths[", r,
               "] add up to ", offsets[r + 1], ", more than the ", N, " indices");
    }
    TK_CHECK(offsets[R] == N, kShapeMismatch, kOp, ": lengths add up to ", offsets[R],
             " but indices has ", N, " elements");

    // Each feature's rule.
    std::vector<int64_t> totals;
    if (total_num_blocks) {
      totals = Int64s(*total_num_blocks, "total_num_blocks");
      TK_CHECK(static_cast<int64_t>(totals.size()) == T, kShapeMismatch, kOp,
               ": total_num_blocks has ", totals.size(), " elements but T = ", T);
    }
    const bool by_positions = block_bucketize_pos.has_value() && !block_bucketize_pos->empty();
    std::vector<std::vector<int64_t>> bounds;
    if (by_positions) {
      TK_CHECK(static_cast<int64_t>(block_bucketize_pos->size()) == T, kShapeMismatch, kOp,
               ": block_bucketize_pos has ", block_bucketize_pos->size(), " tensors but T = ", T,
               " features");
      for (int64_t t = 0; t < T; ++t) {
        const std::string what = "block_bucketize_pos[" + std::to_string(t) + "]";
        bounds.push_back(Int64s((*block_bucketize_pos)[t], what.c_str()));
        const std::vector<int64_t>& p = bounds.back();
        TK_CHECK(!p.empty(), kInvalidArgument, kOp, ": ", what, " is empty");
        for (size_t i = 0; i < p.size(); ++i) {
          TK_CHECK(p[i] >= 0 && (i == 0 || p[i] >= p[i - 1]), kInvalidArgument, kOp, ": ", what,
                   "[", i, "] = ", p[i], " is negative or below the boundary before it");
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
    std::vector<FeatureRule> rules(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
      FeatureRule& rule = rules[t];
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
        rule.bounds = bounds[t].data();
        rule.num_bounds = static_cast<int64_t>(bounds[t].size());
      }
    }

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
    const int64_t cells = R * my_size;
    TorchTensor new_lengths = Zeros({cells}, lengths.scalar_type());
    TorchTensor new_indices = Empty({N}, indices.scalar_type());
    std::optional<TorchTensor> new_weights, new_pos, unbucketize;
    if (w) new_weights = Empty({N}, weights->scalar_type());
    if (bucketize_pos) new_pos = Empty({N}, indices.scalar_type());
    if (sequence) unbucketize = Empty({N}, indices.scalar_type());
    std::vector<int64_t> cursor(static_cast<size_t>(cells), 0);
    std::vector<int32_t> row_feature(static_cast<size_t>(R));
    for (int64_t t = 0; t < T; ++t) {
      std::fill(row_feature.begin() + row_start[t], row_feature.begin() + row_start[t + 1], t);
    }

    Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(ids.dtype(), kOp, [&]<typename I>() {
      using U = std::make_unsigned_t<I>;
      const I* x = ids.data<I>();
      std::vector<U> new_id(static_cast<size_t>(N));
      std::vector<uint32_t> bucket(static_cast<size_t>(N));
      // Count: each row owns its column (r) of the bucket-major counts, so rows run in parallel.
      ParallelFor(0, R, GrainFor(64), [&](int64_t rb, int64_t re) {
        for (int64_t r = rb; r < re; ++r) {
          const FeatureRule& rule = rules[row_feature[r]];
          for (int64_t i = offsets[r]; i < offsets[r + 1]; ++i) {
            uint64_t p = 0;
            BucketOf<U>(static_cast<U>(x[i]), rule, P, row_feature[r], i, &p, &new_id[i]);
            bucket[i] = static_cast<uint32_t>(p);
            ++cursor[p * R + r];
          }
        }
      });
      // Lengths out, then the counts become each cell's first output position.
      Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64)>(
          ToDType(lengths.scalar_type()).value(), kOp, [&]<typename L>() {
            L* nl = static_cast<L*>(new_lengths.data_ptr());
            for (int64_t c = 0; c < cells; ++c) nl[c] = static_cast<L>(cursor[c]);
          });
      int64_t start = 0;
      for (int64_t c = 0; c < cells; ++c) {
        const int64_t count = cursor[c];
        cursor[c] = start;
        start += count;
      }
      I* out_ids = static_cast<I*>(new_indices.data_ptr());
      I* out_pos = new_pos ? static_cast<I*>(new_pos->data_ptr()) : nullptr;
      I* out_perm = unbucketize ? static_cast<I*>(unbucketize->data_ptr()) : nullptr;
      const int64_t wsize = w ? static_cast<int64_t>(DTypeSize(w->dtype())) : 0;
      const char* w_in = w ? static_cast<const char*>(w->raw_data()) : nullptr;
      char* w_out = new_weights ? static_cast<char*>(new_weights->data_ptr()) : nullptr;
      ParallelFor(0, R, GrainFor(64), [&](int64_t rb, int64_t re) {
        for (int64_t r = rb; r < re; ++r) {
          for (int64_t i = offsets[r]; i < offsets[r + 1]; ++i) {
            const int64_t pos = cursor[bucket[i] * R + r]++;
            out_ids[pos] = static_cast<I>(new_id[i]);
            if (out_pos) out_pos[pos] = static_cast<I>(i - offsets[r]);
            if (out_perm) out_perm[i] = static_cast<I>(pos);
            if (w_out) std::memcpy(w_out + pos * wsize, w_in + i * wsize, wsize);
          }
        }
      });
    });
    return {new_lengths, new_indices, new_weights, new_pos, unbucketize};
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("block_bucketize_sparse_features", TORCH_BOX(&BlockBucketizeSparseFeatures));
}

}  // namespace tensorkit::torch_ops
