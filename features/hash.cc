// Hash buckets of strings and integers, bit-exact with TensorFlow's StringToHashBucket ops.
#include "tensorkit/features/hash.h"

#include <farmhash.h>

#include <charconv>
#include <cstring>
#include <string>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/features_internal.h"
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

namespace {

inline uint64_t Rotl(uint64_t v, int b) { return (v << b) | (v >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13) ^ v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16) ^ v2;
    v0 += v3;
    v3 = Rotl(v3, 21) ^ v0;
    v2 += v1;
    v1 = Rotl(v1, 17) ^ v2;
    v2 = Rotl(v2, 32);
  }
  void Absorb(uint64_t m) {  // two compression rounds per 8-byte word
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

inline uint64_t LoadLe64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // x86-64 and every CUDA host are little-endian
  return v;
}

}  // namespace

uint64_t StrongKeyedHash(uint64_t key0, uint64_t key1, std::string_view bytes) {
  // SipHash-2-4 (Aumasson and Bernstein): the initial constants spell "somepseudorandomlygenerat"
  // "edbytes"; the last word carries the length's low byte in its top byte.
  SipState s{key0 ^ 0x736f6d6570736575ULL, key1 ^ 0x646f72616e646f6dULL,
             key0 ^ 0x6c7967656e657261ULL, key1 ^ 0x7465646279746573ULL};
  const size_t n = bytes.size();
  const size_t full = n & ~size_t{7};
  for (size_t i = 0; i < full; i += 8) s.Absorb(LoadLe64(bytes.data() + i));
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t i = full; i < n; ++i) {
    last |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * (i - full));
  }
  s.Absorb(last);
  s.v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
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
  CheckOnCpu(values, "values", op);
}

}  // namespace features_internal

namespace {

namespace fi = features_internal;

void CheckBuckets(int64_t num_buckets, const char* op) {
  if (num_buckets < 1) {
    Throw(ErrorCode::kInvalidArgument, op, ": num_buckets ", num_buckets, " must be at least 1");
  }
}

// out[i] = hash(value i) % num_buckets over the values in C order.
template <typename Hash>
Tensor BucketsOf(const Tensor& values, int64_t num_buckets, const Hash& hash, const char* op) {
  fi::CheckHashable(values, op);
  CheckBuckets(num_buckets, op);
  const uint64_t buckets = static_cast<uint64_t>(num_buckets);
  return fi::ReportingAllocationFailure(op, [&] {
    Tensor out = Tensor::Empty(values.Dims(), DType::kInt64);
    int64_t* o = out.data<int64_t>();
    fi::ForEachHashInput(values, [&](int64_t i, std::string_view bytes) {
      o[i] = static_cast<int64_t>(hash(bytes) % buckets);
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
  return BucketsOf(
      values, num_buckets, [](std::string_view b) { return Fingerprint64(b); }, "HashBucketFast");
}
JaggedTensor HashBucketFast(const JaggedTensor& values, int64_t num_buckets) {
  return SameOffsets(values, HashBucketFast(values.values(), num_buckets));
}
SparseTensor HashBucketFast(const SparseTensor& values, int64_t num_buckets) {
  return SameIndices(values, HashBucketFast(values.values(), num_buckets));
}

Tensor HashBucketStrong(const Tensor& values, int64_t num_buckets,
                        const std::array<uint64_t, 2>& key) {
  return BucketsOf(
      values, num_buckets,
      [&key](std::string_view b) { return StrongKeyedHash(key[0], key[1], b); },
      "HashBucketStrong");
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
