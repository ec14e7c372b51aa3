// tensorkit/dense/outputs.h: the default OutputAllocator (common/outputs.h), which makes ordinary
// Tensors, and the checked allocation every operation that takes an allocator goes through.
#ifndef TENSORKIT_DENSE_OUTPUTS_H_
#define TENSORKIT_DENSE_OUTPUTS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "tensorkit/common/outputs.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The default allocator: output k is a new Tensor (Tensor::Empty), kept here by index; string
// outputs are kString Tensors. What a plain C++ caller of an operation gets.
class TensorOutputs : public OutputAllocator {
 public:
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override;
  // Output k as allocated (undefined when the operation made none with that index).
  const Tensor& operator[](int k) const;
  int size() const { return static_cast<int>(outputs_.size()); }

 private:
  std::vector<Tensor> outputs_;
};

// An allocator over a callable Tensor(int k, dims, dtype) that hands out tensors the caller
// made (over its own buffers, for example), for hosts with no need of Commit; the device is
// the CPU.
class CallbackOutputs : public OutputAllocator {
 public:
  using Callback = std::function<Tensor(int k, const std::vector<int64_t>& dims, DType dtype)>;
  explicit CallbackOutputs(Callback make) : make_(std::move(make)) {}
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override;

 private:
  Callback make_;
};

// The StringOutput of a contiguous kString Tensor's std::strings (what the default
// AllocateStrings gives).
class TensorStrings : public StringOutput {
 public:
  explicit TensorStrings(Tensor t);
  void Set(int64_t begin, int64_t end, CallRef<std::string_view(int64_t)> bytes) override;
  void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
             CallRef<void(int64_t, char*)> write) override;
  const Tensor& tensor() const { return t_; }

 private:
  Tensor t_;
};

// Output k of `out`, checked to be what the operation `op` writes: a contiguous tensor (any
// strides when `contiguous` is false) of exactly `dims` and `dtype` on `device`; otherwise an
// Error naming op, k and both shapes.
Tensor AllocateChecked(OutputAllocator& out, int k, const std::vector<int64_t>& dims, DType dtype,
                       Device device, const char* op, bool contiguous = true);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_OUTPUTS_H_
