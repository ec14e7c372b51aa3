// Bucketize: TensorFlow's upper_bound per value, as a fixed-step branch-free search.
//
// Note [fixed-step search]
// TensorFlow calls std::upper_bound per value; its branches go either way at random, so most
// steps of the search mispredict. Here the boundaries are padded with +inf to P = bit_ceil(n + 1)
// slots and the bucket id is the number of slots s with !(v < b[s]), found by binary lifting over
// P/2, P/4, ..., 1: the same log2(P) loads and compares for every value, written as conditional
// adds (no branch), and kLanes values walk the steps together so that their loads overlap. The
// count is the upper_bound of v in the sorted boundaries for every v: the pads only count for
// v = +inf or NaN (for which !(v < inf) holds), where the count clamps to n, upper_bound's answer
// (a NaN is less than nothing). Each value is independent, so any thread count gives the same
// ids.
#include "tensorkit/features/bucketize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/bucketize_device.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/features_internal.h"

namespace tensorkit {
namespace {

namespace fi = features_internal;

constexpr const char* kOp = "Bucketize";
constexpr int kLanes = 16;
constexpr DTypeSet kValueDTypes =
    Bit(DType::kInt32) | Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kFloat64);

// Throws naming the first NaN boundary or the first one below its predecessor.
template <typename B>
void CheckBoundaries(const std::vector<B>& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    TK_CHECK(!std::isnan(b[i]), kInvalidArgument, kOp, ": boundaries[", i,
             "] is NaN; boundaries must be sorted numbers (infinities are allowed)");
    TK_CHECK(i == 0 || !(b[i] < b[i - 1]), kInvalidArgument, kOp, ": boundaries[", i, "] = ", b[i],
             " is below boundaries[", i - 1, "] = ", b[i - 1], "; boundaries must be sorted");
  }
}

// The boundaries as C, padded with +inf to bit_ceil(n + 1) slots.
template <typename C, typename B>
std::vector<C> PaddedBoundaries(const std::vector<B>& b) {
  const size_t slots = std::bit_ceil(b.size() + 1);
  std::vector<C> out(slots, std::numeric_limits<C>::infinity());
  for (size_t i = 0; i < b.size(); ++i) out[i] = static_cast<C>(b[i]);
  return out;
}

// out[i] = bucket id of v[i] for i < n, comparing in C (Note [fixed-step search]).
template <typename C, typename T>
void SearchAll(const T* v, int64_t n, const std::vector<C>& slots, int32_t num_boundaries,
               int32_t* out) {
  const C* b = slots.data();
  const uint32_t top = static_cast<uint32_t>(slots.size()) / 2;
  ParallelChunks(n, int64_t{1} << 14, [&](int64_t, int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      C x[kLanes];
      uint32_t pos[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        x[l] = static_cast<C>(v[i + l]);
        pos[l] = 0;
      }
      for (uint32_t step = top; step >= 1; step >>= 1) {
        for (int l = 0; l < kLanes; ++l) {
          pos[l] += static_cast<uint32_t>(!(x[l] < b[pos[l] + step - 1])) * step;
        }
      }
      for (int l = 0; l < kLanes; ++l) {
        out[i + l] = std::min(static_cast<int32_t>(pos[l]), num_boundaries);
      }
    }
    for (; i < end; ++i) {
      out[i] = fi::FixedStepBucket(b, top, static_cast<C>(v[i]), num_boundaries);
    }
  });
}

// The checks that do not depend on the device.
template <typename B>
void CheckBucketize(const Tensor& values, const std::vector<B>& boundaries) {
  TK_CHECK(values.defined(), kInvalidArgument, kOp, ": values is an undefined tensor");
  CheckDType<kValueDTypes>(values.dtype(), kOp);
  CheckBoundaries(boundaries);
  TK_CHECK(boundaries.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()),
           kInvalidArgument, kOp, ": ", boundaries.size(),
           " boundaries do not fit the int32 bucket ids");
}

template <typename B>
void BucketizeInto(const Tensor& values, const std::vector<B>& boundaries, Tensor* out) {
  CheckBucketize(values, boundaries);
  fi::CheckOnCpu(values, "values", kOp);
  TK_CHECK(out != nullptr && out->defined() && out->dtype() == DType::kInt32 &&
               out->device().is_cpu() && out->IsContiguous() && out->Dims() == values.Dims(),
           kInvalidArgument, kOp, ": the output must be a contiguous CPU int32 tensor of dims ",
           ShapeString(values.Dims()));
  fi::ReportingAllocationFailure(kOp, [&] {
    const Tensor in = values.HostContiguous();
    const int32_t nb = static_cast<int32_t>(boundaries.size());
    Dispatch<kValueDTypes>(in.dtype(), kOp, [&]<typename T>() {
      // The type in which `value < boundary` compares in C++ (the glossary's comparison type).
      using C = std::common_type_t<T, B>;
      SearchAll<C>(in.data<T>(), in.NumElements(), PaddedBoundaries<C>(boundaries), nb,
                   out->data<int32_t>());
    });
  });
}

template <typename B>
Tensor BucketizeImpl(const Tensor& values, const std::vector<B>& boundaries) {
  CheckBucketize(values, boundaries);
  if (OnCuda(values)) {
    // Values compare as float with float boundaries unless they are double (the glossary).
    const int32_t nb = static_cast<int32_t>(boundaries.size());
    if (std::is_same_v<B, float> && values.dtype() != DType::kFloat64) {
      return features_cuda::BucketizeOnDevice(values, PaddedBoundaries<float>(boundaries), nb, kOp);
    }
    return features_cuda::BucketizeOnDevice(values, PaddedBoundaries<double>(boundaries), nb, kOp);
  }
  Tensor out = fi::ReportingAllocationFailure(
      kOp, [&] { return Tensor::Empty(values.Dims(), DType::kInt32); });
  BucketizeInto(values, boundaries, &out);
  return out;
}

}  // namespace

Tensor Bucketize(const Tensor& values, const std::vector<float>& boundaries) {
  return BucketizeImpl(values, boundaries);
}
Tensor Bucketize(const Tensor& values, const std::vector<double>& boundaries) {
  return BucketizeImpl(values, boundaries);
}
void Bucketize(const Tensor& values, const std::vector<float>& boundaries, Tensor* out) {
  BucketizeInto(values, boundaries, out);
}
void Bucketize(const Tensor& values, const std::vector<double>& boundaries, Tensor* out) {
  BucketizeInto(values, boundaries, out);
}
Tensor Bucketize(const Tensor& values, const Tensor& boundaries) {
  TK_CHECK(boundaries.defined() && boundaries.NumAxes() == 1 &&
               (boundaries.dtype() == DType::kFloat32 || boundaries.dtype() == DType::kFloat64),
           kInvalidArgument, kOp, ": boundaries must be a 1-D float32 or float64 tensor, got ",
           boundaries.defined() ? DTypeName(boundaries.dtype()) : "an undefined tensor",
           boundaries.defined() ? " of dims " + ShapeString(boundaries.Dims()) : std::string());
  const Tensor b = boundaries.To(Device::Cpu());
  if (b.dtype() == DType::kFloat32) return BucketizeImpl(values, b.ToVector<float>());
  return BucketizeImpl(values, b.ToVector<double>());
}

Tensor Bucketize(const Tensor& values, std::initializer_list<float> boundaries) {
  return BucketizeImpl(values, std::vector<float>(boundaries));
}

JaggedTensor Bucketize(const JaggedTensor& values, const std::vector<float>& boundaries) {
  return JaggedTensor::FromOffsets(Bucketize(values.values(), boundaries), values.offsets(),
                                   values.weights());
}
JaggedTensor Bucketize(const JaggedTensor& values, const std::vector<double>& boundaries) {
  return JaggedTensor::FromOffsets(Bucketize(values.values(), boundaries), values.offsets(),
                                   values.weights());
}
SparseTensor Bucketize(const SparseTensor& values, const std::vector<float>& boundaries) {
  return SparseTensor::Create(values.indices(), Bucketize(values.values(), boundaries),
                              values.shape(), values.order());
}
SparseTensor Bucketize(const SparseTensor& values, const std::vector<double>& boundaries) {
  return SparseTensor::Create(values.indices(), Bucketize(values.values(), boundaries),
                              values.shape(), values.order());
}

}  // namespace tensorkit
