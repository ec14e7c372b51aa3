// Internal: the CUDA versions of the structural sparse primitives (sparse/internal.h), behind a
// header with no CUDA include so that the sparse sources call them the same with and without
// CUDA. Implemented in cuda/structure_*.cu (one file per topic, sharing
// cuda/structure_common.cuh), or in no_gpu/structure_stub.cc (throwing "built without CUDA";
// never reached, since no tensor can live on a CUDA device in such a build). The operations'
// CUDA bodies that call these are in device_ops.h.
//
// Glossary
//   device rows   an int64 [n, rank] Tensor with default strides on a CUDA device.
//   fetched       copied to the host: the only places where the host waits for the stream.
//                 Fetched are a count that sizes an output (one wait per call; RunHeads, whose
//                 heads are host output, waits once more for them), a check's verdict (the
//                 First* calls: whether to throw) and, on failure, the entries an error message
//                 names. Nothing else waits: host metadata (shapes, orders, strides, boxes) goes
//                 to the kernels as kernel parameters (beyond 64 numbers, an upload nobody waits
//                 for), and counts that size no allocation stay on the device.
//   stream        everything is enqueued on the current stream of the tensors' device.
// Operands are checked by the callers (the sparse sources), which also build the messages.
#ifndef TENSORKIT_SPARSE_CUDA_STRUCTURE_H_
#define TENSORKIT_SPARSE_CUDA_STRUCTURE_H_

#include <cstdint>
#include <vector>

#include "tensorkit/dense/tensor.h"

namespace tensorkit::sparse_cuda {

// The first entry of device rows `idx` outside `shape` (the lowest position), or -1; its row is
// fetched into *row.
int64_t FirstOutOfBounds(const Tensor& idx, const std::vector<int64_t>& shape,
                         std::vector<int64_t>* row);
// The first entry of device rows `idx` with an index on `axis` outside [0, dim), or -1; its row
// is fetched into *row.
int64_t FirstOutOfBoundsOn(const Tensor& idx, int axis, int64_t dim, std::vector<int64_t>* row);
// The first entry i > 0 not after entry i - 1 in `order` (strictly after when `strict`), or -1;
// rows i - 1 and i are fetched into *rows (2 * rank numbers).
int64_t FirstUnordered(const Tensor& idx, const std::vector<int>& order, bool strict,
                       std::vector<int64_t>* rows);
// For rows in bounds and in any order: the lowest position that repeats an earlier entry, or -1;
// *head receives the first entry with the same row and *row that row.
int64_t FirstRepeat(const Tensor& idx, const std::vector<int64_t>& shape, int64_t* head,
                    std::vector<int64_t>* row);

// Stable sort of entries inside `shape` by `order` (a permutation of all axes): new device rows
// and contiguous values (`values` [n], any numeric dtype, default strides) on the same device.
void SortEntries(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                 const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values);
// How MergeRuns combines the values of one run of equal rows: kSum adds (AddW:
// integers wrap, bools OR), kProduct multiplies (MulW), kMax / kMin propagate NaN (the dense
// MaxF / MinF). A run shorter than `min_run` gives no entry (SparseMultiply's intersection of
// two coalesced operands: 2); a run shorter than `zero_below` also meets one zero, the implicit
// entries of a reduced slice (ReduceMax: the slice size).
enum class MergeOp { kSum, kProduct, kMax, kMin };
struct MergeRule {
  MergeOp op = MergeOp::kSum;
  int64_t min_run = 1;
  int64_t zero_below = 0;
};
// The merge of sorted entries: one entry per run of equal rows (of at least rule.min_run
// entries), combined as rule says: in entry order by one thread (the CPU's sequence, so its bits)
// for runs of up to 2048 entries, by one block in a fixed tree for longer ones (deterministic;
// exact for integers, bools, max and min; float sums then round differently from the CPU's). With
// the default rule (Coalesce) it returns false, outputs untouched, when nothing repeats; otherwise
// it always fills the outputs and returns true.
bool MergeRuns(const Tensor& idx, const Tensor& values, Tensor* merged_idx, Tensor* merged_values,
               const MergeRule& rule = {});
// values[i] = the element of `dense` at row i of device rows `idx` (every row inside dense's
// dims after broadcasting: `strides` gives dense's stride per row column, 0 where it repeats).
Tensor GatherAt(const Tensor& idx, const Tensor& dense, const std::vector<int64_t>& strides);
// Scatters entries inside dense's dims into `dense` (any strides): of equal rows the last entry
// wins, without atomics.
void Scatter(const Tensor& idx, const Tensor& values, Tensor* dense);
// The nonzero elements of `dense` (default strides) in C order, as device rows and values.
void Nonzeros(const Tensor& dense, Tensor* idx, Tensor* values);
// For device rows sorted by column `axis` with indices in [0, num): the num + 1 pointers
// ptr[k] = the first entry whose index on `axis` is >= k.
Tensor RunPointers(const Tensor& idx, int axis, int64_t num);
// The [nnz, 2] device rows of compressed arrays (device ptr [num + 1], valid, and minor [nnz]):
// entry p gets its slice on column `major_axis` and minor[p] on the other.
Tensor ExpandPointers(const Tensor& ptr, const Tensor& minor, int major_axis);
// Rows with columns permuted: out[i][a] = idx[i][perm[a]].
Tensor PermuteColumns(const Tensor& idx, const std::vector<int>& perm);
// The entries inside the box [start, start + size) (on axis `only_axis` alone when >= 0), in
// entry order, their rows shifted by -start; values gathered alike.
void SliceBox(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& start,
              const std::vector<int64_t>& size, int only_axis, Tensor* out_idx, Tensor* out_values);
// Split's grouping: entries whose index on `axis` lies in [starts[r], starts[r + 1]) go to
// piece r (in entry order, rows shifted by -starts[r] on `axis`), for r < starts.size() - 1;
// indices on `axis` already checked to be in [0, starts.back()). One stable radix sort by piece
// and one gather per piece; the host waits once, for the piece sizes.
void SplitEntries(const Tensor& idx, const Tensor& values, int axis,
                  const std::vector<int64_t>& starts, std::vector<Tensor>* piece_idx,
                  std::vector<Tensor>* piece_values);
// Copies device rows `src` into rows [row0, row0 + n) of `dst` (device rows with as many
// columns), adding `shift` to column `axis`.
void CopyRowsShifted(const Tensor& src, int axis, int64_t shift, int64_t row0, Tensor* dst);
// Positions i (ascending) that start a run of rows equal on `dims` (entry 0 always does),
// fetched, with each run's coordinates on `dims` (heads * dims.size() numbers) in *coords: two
// waits, for the number of runs and then for heads and coordinates in one copy.
std::vector<int64_t> RunHeads(const Tensor& idx, const std::vector<int>& dims,
                              std::vector<int64_t>* coords);

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_CUDA_STRUCTURE_H_
