// tensorkit/features/device_ops.h: the CUDA bodies of features/' operations (not a public
// header). Each operation checks what does not depend on the device, then chooses once
// (`if (OnCuda(x)) return features_cuda::Op(...)`, Note [device choice] of
// common/device.h); the bodies live in cuda/*.cu, and builds without CUDA link no_gpu/'s
// stubs, which nothing reaches (no tensor can live on a CUDA device there). A body gets checked
// operands on one CUDA device and returns its result on that device, computed there with the
// same host/device functions as the CPU body (hash_device.h), so the bits are the same.
#ifndef TENSORKIT_FEATURES_DEVICE_OPS_H_
#define TENSORKIT_FEATURES_DEVICE_OPS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/lookup_device.h"

namespace tensorkit::features_cuda {

// HashBucketFast / HashBucketStrong of int32 or int64 values on their CUDA device: int64 [same
// dims], IntegerHash(v) % buckets. Strings never live on a device.
Tensor IntegerHashBuckets(const Tensor& values, uint64_t buckets, bool strong,
                          const std::array<uint64_t, 2>& key, const char* op);

// Vocabulary::Lookup of int32 or int64 values on their CUDA device: keys the sorted tokens and
// index their token indices (int64, same device). *first_oov is the first position whose value
// is OOV when the rule has no OOV ids (-1 when none; its id is then -1).
Tensor IntegerLookup(const Tensor& values, const Tensor& keys, const Tensor& index,
                     const features_internal::IntegerIdRule& rule, int64_t* first_oov,
                     const char* op);

// Bucketize of int32/int64/float32/float64 values on their CUDA device: slots the boundaries in
// the comparison type, padded with +inf to a power of two (FixedStepBucket); int32 ids.
Tensor BucketizeOnDevice(const Tensor& values, const std::vector<float>& slots,
                         int32_t num_boundaries, const char* op);
Tensor BucketizeOnDevice(const Tensor& values, const std::vector<double>& slots,
                         int32_t num_boundaries, const char* op);

// CountSparse's keys on the ids' CUDA device: keys [n, 2] int64 (row, id) of n ids (int32 or
// int64, contiguous), the row of entry i read from `indices` (int64 [n, rank]: column 0, or row
// 0 for rank 1) or, when offsets is defined, found in a jagged tensor's offsets (int64 [B + 1]).
// *first_negative is the first entry with a negative id (-1 when none), *max_id the largest id
// (-1 without ids): one fetch of both after the kernel.
struct CountKeys {
  Tensor keys;
  int64_t first_negative = -1;
  int64_t max_id = -1;
};
CountKeys CountKeysOnDevice(const Tensor& ids, const Tensor& indices, const Tensor& offsets,
                            const char* op);

// The id checks of EmbeddingBag / EmbeddingBags on the ids' CUDA device: for each range r of
// ids [begins[r], begins[r + 1]) the first position whose id is outside [0, num_rows[r]), or -1;
// one fetch for all ranges. ids: contiguous int32 or int64 [N].
std::vector<int64_t> FirstIdsOutOfRange(const Tensor& ids, const std::vector<int64_t>& begins,
                                        const std::vector<int64_t>& num_rows, const char* op);

// One table's bags on their CUDA device (embedding_device.h): bags [first_bag, first_bag +
// num_bags) of the device offsets, reduced over `table` (row-major [V, D]) into columns
// [col, col + D) of `out` (contiguous [num_bags, out_d]); ids checked, weights (contiguous, the
// compute type) undefined or [N]. Enqueued on the current stream; nothing waits.
void EmbeddingBagOnDevice(const Tensor& table, const Tensor& ids, const Tensor& offsets,
                          const Tensor& weights, int64_t first_bag, int64_t num_bags,
                          int64_t padding_id, Combiner combiner, Tensor* out, int64_t col,
                          const char* op);

// EmbeddingBagBackward on the device of its operands, checked (embedding_backward.cc Note
// [sorted gradient]): ids contiguous int32 / int64 [N], each in [0, num_rows) or the padding
// id; offsets the device offsets [B + 1]; grad contiguous float [B, D]; weights undefined or
// contiguous [N] of grad's compute type; table (kMax / kMin only, else undefined) float
// [num_rows, D] with unit column stride. The positions are sorted stably by id on the device,
// then one warp sums each non-padding id's run, lanes over columns (embedding_device.h's
// RunColumnSum, the CPU's sequence). With table_grad (grad's dtype [num_rows, D], any strides)
// the sums are added into its rows; otherwise they are returned as the coalesced COO rows of
// EmbeddingBagBackward (indices [U * D, 2], values [U * D]; the number of ids U fetched).
struct GradRows {
  Tensor indices, values;
};
GradRows EmbeddingGradOnDevice(const Tensor& grad, const Tensor& ids, const Tensor& offsets,
                               const Tensor& weights, const Tensor& table, Combiner combiner,
                               int64_t num_rows, int64_t padding_id, Tensor* table_grad,
                               const char* op);

// The checks of SegmentReduce and SparseSegmentReduce on the device of segment_ids (and
// indices, when defined; both contiguous int32 or int64 [K]): the first position whose id is
// negative, not below num_segments (when that is >= 0) or below its predecessor, the first
// whose index is outside [0, num_rows) (-1 when none), and the last id (-1 for K == 0); one
// fetch of the three.
struct SegmentVerdict {
  int64_t first_bad_id = -1, first_bad_index = -1, last_id = -1;
};
SegmentVerdict CheckSortedSegmentsOnDevice(const Tensor& indices, const Tensor& segment_ids,
                                           int64_t num_segments, int64_t num_rows, const char* op);

// UnsortedSegmentReduce's check on the device of segment_ids (contiguous int32 or int64 [K]):
// the first position whose id is not below num_segments (when that is >= 0; -1 when none) and
// the largest id (-1 for K == 0); one fetch of both.
struct UnsortedVerdict {
  int64_t first_bad_id = -1, max_id = -1;
};
UnsortedVerdict CheckUnsortedIdsOnDevice(const Tensor& segment_ids, int64_t num_segments,
                                         const char* op);

// The reductions on the device (segment_device.h), their inputs checked: data contiguous
// [N, ...]; out contiguous [num_out, ...] of data's dtype. Sorted segment_ids [K] with
// `indices` (SparseSegmentReduce, kBlocks) or undefined (SegmentReduce, K == N, kEigen); or ids
// in any order (UnsortedSegmentReduce: [K] for the K rows of data, negative ids dropped), which
// are first sorted stably on the device. Enqueued; nothing waits.
void SortedSegmentReduceOnDevice(const Tensor& data, const Tensor& indices,
                                 const Tensor& segment_ids, Combiner combiner, Tensor* out,
                                 const char* op);
void UnsortedSegmentReduceOnDevice(const Tensor& data, const Tensor& segment_ids, Combiner combiner,
                                   Tensor* out, const char* op);

// The jagged conversions on the device of `values` (contiguous; off: device offsets [B + 1],
// contiguous, checked): ToPadded into out [B, len, inner...] (pad_bits: the pad value's bytes,
// of the values' element size), FromPadded from dense [B, len, ...] into out [N, ...], and
// ToSparse's indices [N, 2] = (row, position in the row). Enqueued; nothing waits.
void ToPaddedOnDevice(const Tensor& values, const Tensor& off, int64_t len, uint64_t pad_bits,
                      Tensor* out, const char* op);
void FromPaddedOnDevice(const Tensor& dense, const Tensor& off, Tensor* out, const char* op);
Tensor JaggedIndicesOnDevice(const Tensor& off, int64_t num_values, const char* op);
// JaggedTensor::FromLengths on the device of `lengths` (int64 [B], contiguous): the offsets
// [B + 1], their running sum by the device scan, when every length lies in [0, num_values] and
// they add up to num_values; else an undefined Tensor (the caller's host check then names the
// bad length). One wait, for the verdict and the total in one fetch.
Tensor OffsetsFromLengthsOnDevice(const Tensor& lengths, int64_t num_values, const char* op);

// KeyedJaggedTensor's gathers (Permute, Concat, Split) on the device of `out` (contiguous
// [N, ...], `inner` elements per item): item block k of jagged_device.h (host starts [K + 1])
// copies its items from sources[k], the device address of its source run's first element, of
// out's dtype. Enqueued; nothing waits.
void GatherItemBlocksOnDevice(const std::vector<int64_t>& starts,
                              const std::vector<const void*>& sources, int64_t inner, Tensor* out,
                              const char* op);

// FillEmptyRows' grouping on the device of `idx` (contiguous [nnz, rank], every entry inside
// the shape, `rows` = shape[0]), in fill_device.h's terms: perm [nnz] the grouped entries'
// input positions (a stable sort by row on the device; undefined when `sorted`: the entries'
// own order), start and empties [rows + 1], and num_empty = empties[rows] (fetched: it sizes
// the output).
struct FillPlan {
  Tensor perm, start, empties;
  int64_t num_empty = 0;
};
FillPlan PlanFillOnDevice(const Tensor& idx, int64_t rows, bool sorted, const char* op);
// FillEmptyRows' outputs from the plan, on its device: out_idx [nnz + num_empty, rank] and
// out_values (fill_bits: the default value's bytes, of the values' element size), both
// contiguous, unless out_idx is null; empty [rows] bool and reverse [nnz] int64 always. values
// contiguous [nnz]. Enqueued; nothing waits.
void FillOnDevice(const FillPlan& plan, const Tensor& idx, const Tensor& values, uint64_t fill_bits,
                  Tensor* out_idx, Tensor* out_values, Tensor* empty, Tensor* reverse,
                  const char* op);
// FillEmptyRowsGrad on the device (entries checked; grad contiguous [n_full] of an integer or
// float dtype): d_values [n] = grad[reverse], and d_default (rank 0, grad's dtype) the sum of
// grad over the positions no entry names, in chunks of `chunk` positions joined in order
// (fill_device.h, the CPU's sequence). Enqueued; nothing waits.
void FillGradOnDevice(const Tensor& reverse, const Tensor& grad, int64_t chunk, Tensor* d_values,
                      Tensor* d_default, const char* op);

}  // namespace tensorkit::features_cuda

#endif  // TENSORKIT_FEATURES_DEVICE_OPS_H_
