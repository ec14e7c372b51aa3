// Hash buckets of strings and integers, bit-exact with TensorFlow's StringToHashBucket ops.
#include "tensorkit/features/hash.h"

#include <farmhash.h>

#include <charconv>
#include <cstring>
#include <string>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/features/hash_device.h"
#include "tensorkit/features/hash_internal.h"

namespace tensorkit {

uint64_t Fingerprint64(std::string_view bytes) {
  return util::Fingerprint64(bytes.data(), bytes.size());
}

uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2) {
  // TensorFlow's combination: both halves go through a multiply and a shift-xor mix.
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  const auto mix = [](uint64_t v) { return v ^ (v >> 47); };
  uint64_t h = fp1 ^ kMul;
  h ^= mix(fp2 * kMul) * kMul;
  h *= kMul;
  h = mix(h) * kMul;
  return mix(h);
}

uint64_t StrongKeyedHash(uint64_t key0, uint64_t key1, std::string_view bytes) {
  return features_internal::SipHash24(key0, key1, bytes.data(), static_cast<int64_t>(bytes.size()));
}

namespace features_internal {

std::string_view DecimalOf(int64_t v, DecimalBuffer* buf) {
  const auto res = std::to_chars(buf->data(), buf->data() + buf->size(), v);
  return std::string_view(buf->data(), static_cast<size_t>(res.ptr - buf->data()));
}

void CheckHashable(const Tensor& values, const char* op) {
  if (!values.defined()) Throw(ErrorCode::kInvalidArgument, op, ": the values are undefined");
  const DType dt = values.dtype();
  if (dt != DType::kString && dt != DType::kInt32 && dt != DType::kInt64) {
    Throw(ErrorCode::kDTypeMismatch, op, ": values of dtype ", DTypeName(dt),
          " cannot be hashed; pass strings, int32 or int64 (convert other numbers first)");
  }
}

}  // namespace features_internal

namespace {

namespace fi = features_internal;

void CheckBuckets(int64_t num_buckets, const char* op) {
  if (num_buckets < 1) {
    Throw(ErrorCode::kInvalidArgument, op, ": num_buckets ", num_buckets, " must be at least 1");
  }
}

// out[i] = hash(value i) % num_buckets over the values in C order: strings by Fingerprint64 or
// SipHash-2-4, integers through their decimal string (IntegerHash, the same function on a CUDA
// device).
Tensor BucketsOf(const Tensor& values, int64_t num_buckets, bool strong,
                 const std::array<uint64_t, 2>& key, const char* op) {
  fi::CheckHashable(values, op);
  CheckBuckets(num_buckets, op);
  const uint64_t buckets = static_cast<uint64_t>(num_buckets);
  if (OnCuda(values)) return features_cuda::IntegerHashBuckets(values, buckets, strong, key, op);
  return fi::ReportingAllocationFailure(op, [&] {
    const Tensor v = values.HostContiguous();
    Tensor out = Tensor::Empty(values.Dims(), DType::kInt64);
    int64_t* o = out.data<int64_t>();
    const int64_t n = v.NumElements();
    if (v.dtype() == DType::kString) {
      const std::string* s = v.data<std::string>();
      fi::ForEachBytes(
          n, [s](int64_t i) { return std::string_view(s[i]); },
          [&](int64_t i, std::string_view b) {
            const uint64_t h = strong ? StrongKeyedHash(key[0], key[1], b) : Fingerprint64(b);
            o[i] = static_cast<int64_t>(h % buckets);
          });
      return out;
    }
    Dispatch<fi::kIdDTypes>(v.dtype(), op, [&]<typename T>() {
      const T* x = v.data<T>();
      ParallelChunks(n, int64_t{1} << 14, [&](int64_t, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          o[i] = static_cast<int64_t>(fi::IntegerHash(x[i], strong, key[0], key[1]) % buckets);
        }
      });
    });
    return out;
  });
}

JaggedTensor SameOffsets(const JaggedTensor& in, Tensor values) {
  return JaggedTensor::FromOffsets(std::move(values), in.offsets(), in.weights());
}

SparseTensor SameIndices(const SparseTensor& in, Tensor values) {
  return SparseTensor::Create(in.indices(), std::move(values), in.shape(), in.order());
}

}  // namespace

Tensor HashBucketFast(const Tensor& values, int64_t num_buckets) {
  return BucketsOf(values, num_buckets, false, {0, 0}, "HashBucketFast");
}
JaggedTensor HashBucketFast(const JaggedTensor& values, int64_t num_buckets) {
  return SameOffsets(values, HashBucketFast(values.values(), num_buckets));
}
SparseTensor HashBucketFast(const SparseTensor& values, int64_t num_buckets) {
  return SameIndices(values, HashBucketFast(values.values(), num_buckets));
}

Tensor HashBucketStrong(const Tensor& values, int64_t num_buckets,
                        const std::array<uint64_t, 2>& key) {
  return BucketsOf(values, num_buckets, true, key, "HashBucketStrong");
}
JaggedTensor HashBucketStrong(const JaggedTensor& values, int64_t num_buckets,
                              const std::array<uint64_t, 2>& key) {
  return SameOffsets(values, HashBucketStrong(values.values(), num_buckets, key));
}
SparseTensor HashBucketStrong(const SparseTensor& values, int64_t num_buckets,
                              const std::array<uint64_t, 2>& key) {
  return SameIndices(values, HashBucketStrong(values.values(), num_buckets, key));
}

}  // namespace tensorkit
