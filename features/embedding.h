// tensorkit/features/embedding.h: embedding bags, one table or many, and their gradient.
//
// Glossary
//   table        a dense [V, D] Tensor of float32, float16, bfloat16 or float64 (16-bit tables
//                accumulate in float32, float64 ones in float64); row v is the embedding of id v.
//                Any strides (a table whose columns are not adjacent is copied first).
//   bag          one row of a JaggedTensor of ids (1-D int32 or int64 values): its table rows
//                are reduced to one [D] output row by a Combiner, in id order. An empty bag
//                gives zeros, for every combiner (PyTorch's rule, also for kMax and kMin).
//   padding id   an id that is skipped wherever it occurs and not counted (PyTorch's
//                padding_idx): -1 (no padding id) or a row in [0, V).
//   weights      the jagged tensor's optional per-id weights scale each row. Allowed with kSum,
//                kMean and kSqrtN (PyTorch's embedding_bag allows per_sample_weights only with
//                sum; TensorFlow's embedding_lookup_sparse allows all three): mean divides the
//                weighted sum by the sum of the weights, sqrtn by the root of the sum of their
//                squares; without weights by the count of ids, or its root. A divisor of 0 gives
//                0 (TensorFlow's div_no_nan). kMax and kMin with weights are an Error.
//   winner       for kMax (kMin), per column the first row in bag order holding the largest
//                (smallest) value: a later row replaces it only when strictly larger (smaller),
//                so a NaN never replaces and a NaN in the first row stays (PyTorch's max mode).
//   table-batched  many tables, one per feature of a KeyedJaggedTensor, reduced in one pass into
//                one [B, sum of D] output (FBGEMM's table-batched embedding).
//   row gradient  the gradient of the table: the rows of the ids that occur, each the sum of the
//                scaled grad rows of its bags, summed in bag order (deterministic).
#ifndef TENSORKIT_FEATURES_EMBEDDING_H_
#define TENSORKIT_FEATURES_EMBEDDING_H_

#include <cstdint>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// [B, D] of the table's dtype: bag b reduces the rows table[ids[j]] over the ids of row b of
// `ids` (padding ids skipped; kMean and kSqrtN count only the ids that are not padding). An id
// outside [0, V) that is not the padding id is an Error (kOutOfRange) naming the bag and the
// position; nothing is read out of bounds. Bit-identical at any thread count (each bag is
// reduced by one task in id order). On a CUDA device (table and ids on one device; the output
// there): the same bits, one warp per bag in the same sequence of operations, with one wait
// for the id check's verdict (embedding_device.h).
Tensor EmbeddingBag(const Tensor& table, const JaggedTensor& ids, Combiner combiner,
                    int64_t padding_id = -1);

// One table and one combiner per feature of `features` (in keys() order): [B, sum of D_f],
// feature f's bags in columns [sum of D_<f, sum of D_<=f). Tables may differ in V and D but
// share one dtype, the output's; the features' weights (if any) apply to every feature, so
// they allow no kMax / kMin feature. There is no padding id. Errors name the feature (its key),
// the bag and the position. On a CUDA device (every table and the features on one device) as
// EmbeddingBag: the CPU's bits, one wait for all the tables' id checks.
Tensor EmbeddingBags(const std::vector<Tensor>& tables, const KeyedJaggedTensor& features,
                     const std::vector<Combiner>& combiners);

// The gradient of EmbeddingBag with respect to the table, for grad [B, D] (float; the sums run
// in grad's compute type): id p of bag b adds grad[b, :] * w_p / (b's divisor) to row ids[p]
// (kSum, kMean, kSqrtN), or, for kMax and kMin, grad[b, c] to column c of the winner's row only.
// kMax and kMin need the forward table [num_rows, D] to find the winners and take it as
// `table` (without it: an Error). On a CUDA device (grad, ids, the table and table_grad on one
// device, else kDeviceMismatch) both forms run there with the CPU's bits and Errors: the
// positions sorted stably by id, one warp summing each id's run in bag order, no atomics.
//
// The sparse form is a plain rank-2 COO SparseTensor [num_rows, D] of grad's dtype with one
// entry per (row, column) of every distinct non-padding id that occurs: U distinct ids give
// U * D entries, indices int64 [U * D, 2] = (id, c), rows ascending, columns ascending within a
// row, order {0, 1}, no repeats (coalesced). Explicit zeros are kept (a column an id never won,
// a weight of 0), so the pattern is exactly the set of rows the ids touch, as an optimizer's
// sparse update expects; ToDense gives the dense gradient. The index arrays cost 16 bytes per
// value: for wide rows the dense form below is cheaper.
SparseTensor EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                                  int64_t num_rows, int64_t padding_id = -1,
                                  const Tensor& table = {});
// The same gradient added into a dense table_grad [num_rows, D] (of grad's dtype, any strides):
// only the rows of the ids that occur are read and written, each once, row += sum (in the compute
// type).
void EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                          Tensor* table_grad, int64_t padding_id = -1, const Tensor& table = {});

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_EMBEDDING_H_
