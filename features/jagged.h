// tensorkit/features/jagged.h: batches of variable-length features.
//
// Glossary
//   jagged tensor  B rows of different lengths stored back to back: `values` holds every row's
//                  items in row order along axis 0 ([N] or [N, D...]), `offsets` (int64 [B + 1],
//                  offsets[0] == 0, non-decreasing, offsets[B] == N) says where each row starts.
//                  Row i is values[offsets[i] : offsets[i + 1]].
//   lengths        offsets[i + 1] - offsets[i], int64 [B].
//   weights        optional per-item weights beside the values (a float Tensor [N]), e.g. the
//                  per-sample weights of a weighted embedding bag.
//   padded         the dense form [B, max_length, D...]: row i's items first, then `pad`.
//   VarLenFeature  TensorFlow's layout of a jagged batch as a 2-D SparseTensor [B, max_len]:
//                  item j of row i is the entry at (i, j).
//   keyed jagged   F named features of one batch in one values tensor (TorchRec's
//                  KeyedJaggedTensor): feature f's rows are rows f * B .. f * B + B - 1 of one
//                  jagged layout, so lengths are [F, B] and the values are grouped by feature.
//   view           a Tensor sharing storage with the values (dense/views.h); no copy.
#ifndef TENSORKIT_FEATURES_JAGGED_H_
#define TENSORKIT_FEATURES_JAGGED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class JaggedTensor {
 public:
  JaggedTensor() = default;

  // values [N, ...] of any dtype on any device; offsets int64 [B + 1] on the same device, with
  // offsets[0] == 0, non-decreasing and offsets[B] == N (an Error names the first bad offset);
  // weights empty or a float Tensor [N] on the same device. No element is copied (a strided
  // offsets tensor is made contiguous).
  static JaggedTensor FromOffsets(Tensor values, Tensor offsets, Tensor weights = {});
  // The same from lengths (int32 or int64 [B], each >= 0, adding up to N); the offsets are
  // their running sum, computed on the lengths' device (on a CUDA device nothing but the
  // verdict of the checks is fetched).
  static JaggedTensor FromLengths(Tensor values, Tensor lengths, Tensor weights = {});
  // A 2-D SparseTensor in TensorFlow's VarLenFeature layout ([B, max_len], column = position
  // in the row): row i holds the values of the entries with index (i, *) in column order.
  // Entries need not be sorted; a repeated (row, column) or an index outside the shape is an
  // Error naming the entry. Values of any dtype; entries already sorted in order {0, 1} (checked,
  // whatever order() says) keep their contiguous values (shared, no copy). On a CUDA device (the
  // tensor's) the same result and Errors, sorted there.
  static JaggedTensor FromSparse(const SparseTensor& st);
  // dense [B, L, ...] and lengths [B] (int32 or int64, 0 <= lengths[i] <= L, else an Error
  // naming the row): row i is dense[i, :lengths[i]]. Values [sum(lengths), ...], a view of
  // dense when every row is full. dense and lengths on one device; on a CUDA device the lengths
  // are checked on the host (they give the host offsets) and the rows copied there.
  static JaggedTensor FromPadded(const Tensor& dense, const Tensor& lengths);

  bool defined() const { return offsets_.defined(); }
  const Tensor& values() const { return values_; }
  const Tensor& offsets() const { return offsets_; }
  // Empty (undefined) when the tensor has no weights.
  const Tensor& weights() const { return weights_; }
  bool has_weights() const { return weights_.defined(); }
  // int64 [B], a new tensor.
  Tensor lengths() const;
  int64_t batch_size() const { return offsets_.defined() ? offsets_.Dim(0) - 1 : 0; }
  int64_t num_values() const { return values_.defined() ? values_.Dim(0) : 0; }
  DType dtype() const { return values_.dtype(); }
  Device device() const { return values_.device(); }
  // The offsets on the host, offsets_data()[i] for 0 <= i <= batch_size(): offsets() itself on
  // the CPU; on a CUDA device a copy made at the first call that needs one, then kept (and
  // shared by copies of this tensor).
  const int64_t* offsets_data() const;

  // Row i's values (a view); an i outside [0, B) is an Error.
  Tensor Row(int64_t i) const;
  // Row i's weights (a view); Error without weights.
  Tensor RowWeights(int64_t i) const;
  // The same values and offsets with other weights (float [N]).
  JaggedTensor WithWeights(Tensor weights) const;

  // The inverse of FromSparse for 1-D values: [B, max(lengths)] (at least 0), entry (i, j) for
  // the j-th item of row i, sorted in order {0, 1}. The values are shared when contiguous;
  // values [N, D...] with D are an Error (a SparseTensor holds one value per entry). On a CUDA
  // device the indices are made there.
  SparseTensor ToSparse() const;
  // [B, max_length, D...]: row i's first min(length, max_length) items, then `pad`. Rows longer
  // than max_length are TRUNCATED (TorchRec's jagged_to_padded_dense does the same); max_length
  // -1 means the longest row's length, other negatives are an Error. `pad` is converted to the
  // values' dtype (as Set converts); string rows are padded with "" and then pad must be 0
  // (a Scalar holds no string). On a CUDA device the output is made there.
  Tensor ToPadded(int64_t max_length, Scalar pad) const;

 private:
  // Throws naming `op` for a default-constructed jagged tensor.
  void CheckDefined(const char* op) const;
  // Row i of t (the values or the weights): a view; an i outside [0, B) is an Error naming op.
  Tensor RowOf(const Tensor& t, int64_t i, const char* op) const;

  // offsets_ on the CPU: offsets_ itself for a CPU jagged tensor, else fetched once (HostCopy).
  const Tensor& host_offsets() const;
  // Sets offsets_ and its host copy: `host` when the caller has one, else fetched when needed.
  void SetOffsets(Tensor offsets, Tensor host = {});

  struct HostCopy;  // jagged.cc
  Tensor values_, offsets_, weights_;
  std::shared_ptr<HostCopy> host_copy_;
};

class KeyedJaggedTensor {
 public:
  KeyedJaggedTensor() = default;
  // keys unique and non-empty strings; values [N, ...]; lengths int32 or int64 [F, B] with
  // F == keys.size(), each >= 0, adding up to N; weights empty or float [N]. All on one device.
  KeyedJaggedTensor(std::vector<std::string> keys, Tensor values, Tensor lengths,
                    Tensor weights = {});

  const std::vector<std::string>& keys() const { return keys_; }
  const Tensor& values() const { return values_; }
  const Tensor& weights() const { return weights_; }
  bool has_weights() const { return weights_.defined(); }
  // int64 [F, B].
  const Tensor& lengths() const { return lengths_; }
  // int64 [F * B + 1]: the offsets of the F * B rows, feature-major.
  const Tensor& offsets() const { return offsets_; }
  // The same offsets on the host (whatever the device), offsets_data()[i] for 0 <= i <= F * B;
  // null for a default-constructed tensor.
  const int64_t* offsets_data() const {
    return host_offsets_.defined() ? host_offsets_.data<int64_t>() : nullptr;
  }
  int num_keys() const { return static_cast<int>(keys_.size()); }
  int64_t batch_size() const { return batch_size_; }
  Device device() const { return values_.device(); }
  // The index of `key` in keys(); an unknown key is an Error listing the keys.
  int KeyIndex(const std::string& key) const;
  // The values offset at which each feature starts, int64 [F + 1] (host).
  std::vector<int64_t> KeyOffsets() const;

  // Feature `key` as a JaggedTensor whose values (and weights) are views of this tensor's.
  JaggedTensor Get(const std::string& key) const;
  // The features `keys` in that sequence (repeats allowed: a repeated key then appears twice
  // in keys(), and KeyIndex and Get find its first copy), values and weights gathered in one
  // parallel pass (one kernel on a CUDA device); an unknown key is an Error listing the keys.
  KeyedJaggedTensor Permute(const std::vector<std::string>& keys) const;
  // Joins parts in one of two ways. Parts with the same keys (in the same sequence) are joined
  // along the batch: batch sizes add, and each feature holds part 0's rows, then part 1's, ...
  // Parts whose keys no other part has, with one batch size, are joined along the keys, as
  // TorchRec's KeyedJaggedTensor.concat: part 0's features, then part 1's, ... Every part needs
  // the same value dtype and item dims, and weights of one dtype in all parts or in none; an
  // Error names the first part and key that fit neither way. Parts on one device (else
  // kDeviceMismatch).
  static KeyedJaggedTensor Concat(const std::vector<KeyedJaggedTensor>& parts);
  // Splits along the batch into pieces of batch_sizes (each >= 0, adding up to batch_size(),
  // else an Error): piece k holds rows [sum(batch_sizes[:k]), ...) of every feature, on this
  // tensor's device.
  std::vector<KeyedJaggedTensor> Split(const std::vector<int64_t>& batch_sizes) const;
  // Feature `key` as a [B, max_len] SparseTensor (JaggedTensor::ToSparse).
  SparseTensor ToSparse(const std::string& key) const;

 private:
  // Throws naming `op` for a default-constructed keyed jagged tensor.
  void CheckDefined(const char* op) const;
  // KeyIndex with errors naming `op`.
  int KeyIndexFor(const std::string& key, const char* op) const;
  // A run of rows of one source moved to consecutive output rows (jagged_keyed.cc).
  struct RowBlock;
  // The tensor of `keys` (which may repeat) and batch_size whose F * B rows, feature-major, are
  // the blocks' rows: blocks in output order, tiling the rows. Sources on one device with one
  // value dtype, item dims and weights dtype, checked by the caller (`op`).
  static KeyedJaggedTensor Gather(const std::vector<const KeyedJaggedTensor*>& srcs,
                                  const std::vector<RowBlock>& blocks,
                                  std::vector<std::string> keys, int64_t batch_size,
                                  const char* op);
  // Gather's copies on a CUDA device into *out (its host offsets and lengths made; values and
  // weights allocated there): block k's items start at base[k] of the output; `values` and
  // `weights` are the sources' contiguous tensors, `inner` elements per item.
  static void GatherOnDevice(const std::vector<const KeyedJaggedTensor*>& srcs,
                             const std::vector<RowBlock>& blocks, const std::vector<int64_t>& base,
                             const std::vector<Tensor>& values, const std::vector<Tensor>& weights,
                             int64_t inner, KeyedJaggedTensor* out, const char* op);

  std::vector<std::string> keys_;
  Tensor values_, lengths_, offsets_, weights_;
  Tensor host_offsets_;  // offsets_ on the CPU
  int64_t batch_size_ = 0;
};

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_JAGGED_H_
