// tensorkit/features/embedding_internal.h: what the embedding sources share (not a public
// header): input checks, the ids in a form the kernels read, and the per-bag arithmetic that the
// forward pass and the gradient must agree on bit for bit.
//
// Glossary
//   bag divisor  what a bag's weighted sum is divided by: 1 (kSum), the count or the sum of the
//                weights (kMean), the root of the count or of the sum of squared weights
//                (kSqrtN). A divisor of 0 gives 0 (TensorFlow's div_no_nan), so empty bags and
//                bags whose weights add up to 0 give zeros.
//   winner       for kMax (kMin), the first position in bag order whose row holds the largest
//                (smallest) value of a column; later rows replace it only when strictly larger
//                (smaller), so a NaN never replaces and a NaN in the first row stays.
#ifndef TENSORKIT_FEATURES_EMBEDDING_INTERNAL_H_
#define TENSORKIT_FEATURES_EMBEDDING_INTERNAL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorkit/common/dtype.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/features/embedding_device.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/jagged.h"

namespace tensorkit::embedding_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

inline constexpr DTypeSet kTableDTypes = kFloatDTypes;
using features_internal::kIdDTypes;

// Throws unless `table` is a defined float tensor [V, D] (on any device).
void CheckTable(const Tensor& table, const char* what, const char* op);
// `table` with unit column stride (itself when it has one): the kernels read rows
// table + id * Stride(0).
Tensor RowMajor(const Tensor& table);

// The ids of a jagged tensor as the kernels read them.
struct Ids {
  Tensor values;           // contiguous int32 or int64 [N] on the jagged tensor's device
  const int64_t* offsets;  // host offsets [B + 1]
  int64_t batch_size = 0;
  int64_t num_values = 0;
};
// Checks that `ids` is defined, with 1-D int32 or int64 values (on any device).
Ids PrepareIds(const JaggedTensor& ids, const char* op);
// Throws unless padding_id is -1 or inside [0, num_rows).
void CheckPaddingId(int64_t padding_id, int64_t num_rows, const char* op);
// Throws kInvalidArgument for kMax / kMin with weights; `where` ("" or " for feature \"k\"")
// goes into the message.
void CheckCombinerWeights(Combiner combiner, bool weighted, const std::string& where,
                          const char* op);
// Throws kOutOfRange for the first id among values [begin, end) outside [0, num_rows) (the
// padding id, when it is not -1, lies inside), naming the bag (rows [bag_begin, bag_end) of
// `offsets`, reported relative to bag_begin), the position in the bag, and `where`. A fast
// branch-free pass runs first; only a failure searches.
void CheckIdsInRange(const Tensor& values, int64_t begin, int64_t end, const int64_t* offsets,
                     int64_t bag_begin, int64_t bag_end, int64_t num_rows, const std::string& where,
                     const char* op);
// The Error of CheckIdsInRange for `id` at position pos (inside bags [bag_begin, bag_end)).
[[noreturn]] void ThrowIdOutOfRange(int64_t id, int64_t pos, const int64_t* offsets,
                                    int64_t bag_begin, int64_t bag_end, int64_t num_rows,
                                    const std::string& where, const char* op);
// CheckIdsInRange on the ids' CUDA device for ranges r = [begins[r], begins[r + 1]) of values,
// each the ids of bags [r * batch, (r + 1) * batch) of host_offsets and below rows[r]: one wait
// for every range's verdict, then ThrowIdOutOfRange's Error for the first range with a bad id.
void CheckIdsOnDevice(const Tensor& values, const std::vector<int64_t>& begins,
                      const std::vector<int64_t>& rows, const int64_t* host_offsets, int64_t batch,
                      const std::vector<std::string>& wheres, const char* op);
// Weights converted to the compute type C (contiguous), or an undefined tensor without them.
Tensor ComputeWeights(const Tensor& weights, DType compute_dtype);

// BagDivisor and Replaces, shared with the device bodies, are in embedding_device.h.

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

}  // namespace tensorkit::embedding_internal

#endif  // TENSORKIT_FEATURES_EMBEDDING_INTERNAL_H_
