// tensorkit/features/hash.h: hashing raw values into ids, bit for bit as TensorFlow does.
//
// Glossary
//   fingerprint     a 64-bit hash of a byte string that never changes across machines and
//                   versions: farmhash's Fingerprint64, which TensorFlow calls Fingerprint64.
//   hash bucket     fingerprint % num_buckets, an id in [0, num_buckets).
//   strong hash     SipHash-2-4 under a 128-bit key {key0, key1}: TensorFlow's StrongKeyedHash,
//                   for inputs chosen by an adversary (StringToHashBucketStrong).
//   integer values  int32 or int64 values are hashed through their decimal string ("-12"), as
//                   TensorFlow's feature columns do (tf.strings.as_string, then the hash).
//   structure       a dense Tensor, a JaggedTensor or a SparseTensor: the output has the same
//                   structure (same dims, offsets or indices; shared, not copied) with int64
//                   values.
#ifndef TENSORKIT_FEATURES_HASH_H_
#define TENSORKIT_FEATURES_HASH_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// farmhash's Fingerprint64 of the bytes (TensorFlow's tensorflow::Fingerprint64).
uint64_t Fingerprint64(std::string_view bytes);
// TensorFlow's FingerprintCat64: a fingerprint of the pair (fp1, fp2); not symmetric. SparseCross
// chains it over a cross's values, starting from its hash_key.
uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2);
// SipHash-2-4 of the bytes under the key {key0, key1} (TensorFlow's StrongKeyedHash).
uint64_t StrongKeyedHash(uint64_t key0, uint64_t key1, std::string_view bytes);

// Every value's Fingerprint64 % num_buckets as int64 (TensorFlow's StringToHashBucketFast).
// Values of kString, int32 or int64 (integers through their decimal string). Strings live on the
// CPU; integer ids on a CUDA device are hashed there, into an output on that device, with the
// same bits (the decimal string is built in registers, never in memory). num_buckets < 1 is an
// Error. The output has the input's structure; results do not depend on the thread count.
Tensor HashBucketFast(const Tensor& values, int64_t num_buckets);
JaggedTensor HashBucketFast(const JaggedTensor& values, int64_t num_buckets);
SparseTensor HashBucketFast(const SparseTensor& values, int64_t num_buckets);

// The same with StrongKeyedHash(key[0], key[1], value) (TensorFlow's StringToHashBucketStrong).
Tensor HashBucketStrong(const Tensor& values, int64_t num_buckets,
                        const std::array<uint64_t, 2>& key);
JaggedTensor HashBucketStrong(const JaggedTensor& values, int64_t num_buckets,
                              const std::array<uint64_t, 2>& key);
SparseTensor HashBucketStrong(const SparseTensor& values, int64_t num_buckets,
                              const std::array<uint64_t, 2>& key);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_HASH_H_
