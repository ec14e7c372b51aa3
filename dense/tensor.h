// tensorkit/dense/tensor.h: the dense Tensor handle.
//
// Glossary
//   Tensor   shared Storage + Pattern + DType + Device. Copying a Tensor copies the handle; the
//            data is shared. Views (dense/views.h) make new handles on the same Storage.
//   C order  row-major: the last axis varies fastest. ToVector and FromVector use it.
//   defined  a default-constructed Tensor has no storage; every operation rejects it.
#ifndef TENSORKIT_DENSE_TENSOR_H_
#define TENSORKIT_DENSE_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/dense/pattern.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class Tensor {
 public:
  Tensor() = default;
  // A tensor over existing storage; throws Error if the pattern is invalid or reaches outside
  // the storage.
  Tensor(std::shared_ptr<Storage> storage, const Pattern& pattern, DType dtype);

  static Tensor Zeros(const std::vector<int64_t>& dims, DType dtype, Device device = Device::Cpu());
  static Tensor Empty(const std::vector<int64_t>& dims, DType dtype, Device device = Device::Cpu());
  template <typename T>
  static Tensor FromVector(std::vector<T> data, const std::vector<int64_t>& dims);
  template <typename T>
  static Tensor FromVector(std::vector<T> data);  // 1-D
  // A rank-0 tensor holding one value.
  template <typename T>
  static Tensor FromScalar(T value);

  bool defined() const { return storage_ != nullptr; }
  int NumAxes() const { return pattern_.num_axes; }
  int64_t Dim(int axis) const;     // negative axis counts from the end
  int64_t Stride(int axis) const;  // in elements
  int64_t NumElements() const { return pattern_.NumElements(); }
  std::vector<int64_t> Dims() const { return pattern_.Dims(); }
  std::vector<int64_t> Strides() const { return pattern_.Strides(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::Cpu(); }
  const Pattern& pattern() const { return pattern_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // True when the elements are laid out in C order without gaps, from data().
  bool IsContiguous() const { return HasDefaultStrides(pattern_); }

  // Pointer to the element with all-zero index (storage base + offset). T must match dtype().
  template <typename T>
  T* data() const;
  void* raw_data() const;  // same, untyped

  // Elements in C order from any pattern or device. T must be the CType of dtype().
  template <typename T>
  std::vector<T> ToVector() const;
  // A copy on `device` with default strides.
  Tensor To(Device device) const;
  // A copy on the same device with default strides (a new storage).
  Tensor Clone() const;
  // This tensor when it is on the CPU with default strides, else To(Device::Cpu()): for code
  // that reads the elements in C order through raw_data() on the host.
  Tensor HostContiguous() const;
  // This tensor when it has default strides, else Clone(): the same on any device, for code
  // (and kernels) that reads the elements in C order where they live.
  Tensor Contiguous() const;
  // A handle on the same storage with a different pattern (checked like the constructor).
  Tensor WithPattern(const Pattern& pattern) const;
  // Library-internal: a handle on `storage` with `pattern`, WITHOUT the constructor's checks.
  // Only for patterns valid and inside the storage by construction (e.g. a row range of a
  // contiguous tensor) on hot paths that make one view per small piece; never for user input.
  static Tensor ViewUnchecked(std::shared_ptr<Storage> storage, const Pattern& pattern,
                              DType dtype);

  // Throws Error naming `op` if this tensor is not defined.
  void CheckDefined(const char* op) const;

 private:
  std::shared_ptr<Storage> storage_;
  Pattern pattern_;
  DType dtype_ = DType::kFloat32;
};

bool SharesStorage(const Tensor& a, const Tensor& b);
// The seed's predicates, on tensors. Broadcastable: dims, padded on the left with 1s, agree on
// every axis or one of them is 1. Compatible: same dtype and device. Identical: the same
// elements of the same storage in the same arrangement (same pattern and dtype). Overlap: some
// element of a is also an element of b. All are false for an undefined tensor.
bool Broadcastable(const Tensor& a, const Tensor& b);
bool Broadcastable(const Tensor& a, const Tensor& b, const Tensor& c);
bool Compatible(const Tensor& a, const Tensor& b);
bool Compatible(const Tensor& a, const Tensor& b, const Tensor& c);
bool Identical(const Tensor& a, const Tensor& b);
bool Overlap(const Tensor& a, const Tensor& b);
// "Tensor float32 cpu dims=[2 3]" followed by the values (at most 64 of them).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Copies `src` (any pattern, any device) into `dst_bytes`, a C-order buffer on the CPU.
void GatherToHost(const Tensor& src, void* dst);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename T>
T* Tensor::data() const {
  TK_CHECK(DTypeOf<T> == dtype_, kDTypeMismatch, "Tensor::data: requested ", DTypeName(DTypeOf<T>),
           " from a ", DTypeName(dtype_), " tensor");
  return static_cast<T*>(raw_data());
}

template <typename T>
Tensor Tensor::FromVector(std::vector<T> data, const std::vector<int64_t>& dims) {
  Pattern p = DefaultPattern(dims, "Tensor::FromVector");
  TK_CHECK(static_cast<int64_t>(data.size()) == p.NumElements(), kShapeMismatch,
           "Tensor::FromVector: ", data.size(), " values do not fill dims ", ShapeString(dims),
           " (", p.NumElements(), " elements)");
  Tensor t = Empty(dims, DTypeOf<T>);
  T* out = t.data<T>();
  if constexpr (std::is_trivially_copyable_v<T> && !std::is_same_v<T, bool>) {
    if (!data.empty()) std::memcpy(out, data.data(), data.size() * sizeof(T));
  } else {
    for (size_t i = 0; i < data.size(); ++i) out[i] = std::move(data[i]);
  }
  return t;
}

template <typename T>
Tensor Tensor::FromVector(std::vector<T> data) {
  const int64_t n = static_cast<int64_t>(data.size());
  return FromVector(std::move(data), {n});
}

template <typename T>
Tensor Tensor::FromScalar(T value) {
  return FromVector(std::vector<T>{std::move(value)}, {});
}

template <typename T>
std::vector<T> Tensor::ToVector() const {
  CheckDefined("Tensor::ToVector");
  TK_CHECK(DTypeOf<T> == dtype_, kDTypeMismatch, "Tensor::ToVector: requested ",
           DTypeName(DTypeOf<T>), " from a ", DTypeName(dtype_),
           " tensor; convert first with Copy into a tensor of that dtype");
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no data()
    std::unique_ptr<bool[]> tmp(new bool[static_cast<size_t>(NumElements())]);
    if (NumElements() > 0) GatherToHost(*this, tmp.get());
    return std::vector<bool>(tmp.get(), tmp.get() + NumElements());
  } else {
    std::vector<T> out(static_cast<size_t>(NumElements()));
    if (!out.empty()) GatherToHost(*this, out.data());
    return out;
  }
}

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_TENSOR_H_
