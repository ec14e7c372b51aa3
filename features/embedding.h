// tensorkit/features/embedding.h: embedding bags, one table or many, and their gradient.
//
// Glossary
//   table        a dense [V, D] Tensor of float32, float16 or bfloat16 (16-bit tables accumulate
//                in float32); row v is the embedding of id v.
//   bag          one row of a JaggedTensor of ids (int32 or int64): its table rows are reduced
//                to one [D] output row by a Combiner. An empty bag gives zeros.
//   padding id   an id that is skipped wherever it occurs (PyTorch's padding_idx); -1 for none.
//   weights      the jagged tensor's optional per-id weights scale each row (kSum, kMean and
//                kSqrtN: mean divides by the sum of the weights, sqrtn by the root of the sum of
//                their squares, as TensorFlow's weighted embedding_lookup_sparse does).
//   table-batched  many tables, one per feature of a KeyedJaggedTensor, reduced in one pass into
//                one [B, sum of D] output (FBGEMM's table-batched embedding).
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
// outside [0, V) that is not the padding id, or ids on another device than the table, is an
// Error naming the bag and the position; nothing is read out of bounds.
Tensor EmbeddingBag(const Tensor& table, const JaggedTensor& ids, Combiner combiner,
                    int64_t padding_id = -1);

// One table and one combiner per feature of `features` (in keys() order): [B, sum of D_f],
// feature f's bags in columns [sum of D_<f, sum of D_<=f). Tables may differ in V, D and dtype
// (the output takes the first table's dtype; all must be float32 or all 16-bit of one kind).
Tensor EmbeddingBags(const std::vector<Tensor>& tables, const KeyedJaggedTensor& features,
                     const std::vector<Combiner>& combiners);

// The gradient of EmbeddingBag with respect to the table, for grad [B, D]: a coalesced
// SparseTensor [num_rows, D] whose rows are the distinct ids that occur (sorted), each the sum
// of the scaled grad rows of the bags it occurs in (in bag order: deterministic). kMax and kMin
// need the forward table to find the winning rows and take it as `table`.
SparseTensor EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                                  int64_t num_rows, int64_t padding_id = -1,
                                  const Tensor& table = {});
// The same gradient added into a dense table_grad [num_rows, D] (of grad's dtype).
void EmbeddingBagBackward(const Tensor& grad, const JaggedTensor& ids, Combiner combiner,
                          Tensor* table_grad, int64_t padding_id = -1, const Tensor& table = {});

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_EMBEDDING_H_
