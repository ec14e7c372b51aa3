// tensorkit/features/cross.h: feature crosses, bit for bit as TensorFlow's SparseCross family.
//
// Glossary
//   feature      one batch-aligned column of B rows, each row a list of items (strings or
//                integers): a JaggedTensor (1-D values), a 2-D SparseTensor [B, L] (row = first
//                coordinate; a row's items in entry order, TensorFlow's rule) or a dense Tensor
//                [B, K] (K items a row; a 1-D dense [B] is one item a row).
//   cross        for one row, one item of every feature: the features' items of that row
//                combined in the order of a mixed-radix counter whose last feature varies
//                fastest. A row where any feature is empty has no crosses.
//   string cross the items' strings (integers as decimal) joined by a separator ("_X_" by
//                default): SparseCross(hashed_output=false), SparseCrossV2.
//   hashed cross a 64-bit chain of FingerprintCat64 over the items' hashes, mod num_buckets (or
//                mod INT64_MAX when num_buckets is 0): SparseCross(hashed_output=true), chained
//                from hash_key, and SparseCrossHashed (kHashedKeyed), chained from the first
//                item's hash, optionally with StrongKeyedHash under a salt.
#ifndef TENSORKIT_FEATURES_CROSS_H_
#define TENSORKIT_FEATURES_CROSS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// tf.sparse.cross_hashed's default hash_key.
inline constexpr uint64_t kDefaultCrossHashKey = 0xDECAFCAFFEULL;

enum class CrossOutput {
  kStrings,      // kString values: SparseCross(hashed_output=false) / SparseCrossV2
  kHashed,       // int64: SparseCross(hashed_output=true), chain from hash_key
  kHashedKeyed,  // int64: SparseCrossHashed, chain from the first item, strong_hash and salt
};

// How each item enters a hashed cross (TensorFlow's rules, kept for bit equality):
//   kHashed       strings by Fingerprint64, integers as their own 64-bit value.
//   kHashedKeyed  strings by Fingerprint64, or by StrongKeyedHash(salt) with strong_hash;
//                 integers of a JaggedTensor or SparseTensor feature by the same hash of the
//                 low 4 bytes of their little-endian int64 (TensorFlow hashes sizeof(DataType)
//                 bytes), integers of a dense feature as their own value without strong_hash and
//                 by the strong hash of their low 4 bytes with it (where TensorFlow 2.21 crashes).
struct CrossOptions {
  CrossOutput output = CrossOutput::kHashed;
  int64_t num_buckets = 0;                   // >= 0; 0 keeps the hash (mod INT64_MAX)
  uint64_t hash_key = kDefaultCrossHashKey;  // kHashed only
  std::string separator = "_X_";             // kStrings only
  bool strong_hash = false;                  // kHashedKeyed only
  std::array<uint64_t, 2> salt = {0, 0};     // kHashedKeyed with strong_hash
};

// One feature of a cross (see the glossary); converts implicitly from each form.
class CrossFeature {
 public:
  enum class Kind { kDense, kJagged, kSparse };
  CrossFeature(Tensor dense) : kind_(Kind::kDense), dense_(std::move(dense)) {}
  CrossFeature(JaggedTensor jagged) : kind_(Kind::kJagged), jagged_(std::move(jagged)) {}
  CrossFeature(SparseTensor sparse) : kind_(Kind::kSparse), sparse_(std::move(sparse)) {}

  Kind kind() const { return kind_; }
  const Tensor& dense() const { return dense_; }
  const JaggedTensor& jagged() const { return jagged_; }
  const SparseTensor& sparse() const { return sparse_; }

 private:
  Kind kind_;
  Tensor dense_;
  JaggedTensor jagged_;
  SparseTensor sparse_;
};

// The crosses of `features` (at least one; all with the same batch size B) as a 2-D SparseTensor
// [B, max crosses in a row]: entry (b, j) is row b's j-th cross, entries sorted in order {0, 1}.
// Items are kString, int32 or int64 (features may mix them), on the CPU. TensorFlow's ops take
// their sparse inputs first and their dense inputs after them: list features in that order for
// the same crosses. Errors: batch sizes that disagree, a SparseTensor not 2-D or with an index
// outside its shape, a dense feature of more than 2 axes, another dtype, a negative num_buckets,
// a row with more crosses than int64 holds. Rows may be given unsorted (SparseTensor); each
// row's crosses are made by one task, so results do not depend on the thread count.
SparseTensor Cross(const std::vector<CrossFeature>& features, const CrossOptions& options = {});

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_CROSS_H_
