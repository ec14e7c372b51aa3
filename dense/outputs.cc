#include "tensorkit/dense/outputs.h"

#include <string>
#include <utility>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"

namespace tensorkit {

StringOutput* OutputAllocator::AllocateStrings(int k, const std::vector<int64_t>& dims) {
  Tensor t = Allocate(k, dims, DType::kString, Device::Cpu());
  TK_CHECK(t.defined() && t.dtype() == DType::kString && t.Dims() == dims && t.IsContiguous() &&
               t.device().is_cpu(),
           kInvalidArgument, "OutputAllocator::AllocateStrings: output ", k,
           " must be a contiguous CPU string tensor ", ShapeString(dims));
  owned_strings_.push_back(std::make_unique<TensorStrings>(std::move(t)));
  return owned_strings_.back().get();
}

Tensor TensorOutputs::Allocate(int k, const std::vector<int64_t>& dims, DType dtype,
                               Device device) {
  TK_CHECK(k >= 0, kInvalidArgument, "TensorOutputs: output index ", k, " must be >= 0");
  if (k >= static_cast<int>(outputs_.size())) outputs_.resize(static_cast<size_t>(k) + 1);
  return outputs_[k] = Tensor::Empty(dims, dtype, device);
}

const Tensor& TensorOutputs::operator[](int k) const {
  static const Tensor kNone;
  return k >= 0 && k < static_cast<int>(outputs_.size()) ? outputs_[k] : kNone;
}

Tensor CallbackOutputs::Allocate(int k, const std::vector<int64_t>& dims, DType dtype,
                                 Device device) {
  TK_CHECK(device.is_cpu(), kUnsupported, "CallbackOutputs: output ", k, " on ", device.ToString(),
           "; the callback makes CPU tensors");
  return make_(k, dims, dtype);
}

TensorStrings::TensorStrings(Tensor t) : t_(std::move(t)) {}

void TensorStrings::Set(int64_t begin, int64_t end, CallRef<std::string_view(int64_t)> bytes) {
  std::string* s = t_.data<std::string>();
  for (int64_t i = begin; i < end; ++i) s[i].assign(bytes(i));
}

void TensorStrings::Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
                          CallRef<void(int64_t, char*)> write) {
  std::string* s = t_.data<std::string>();
  for (int64_t i = begin; i < end; ++i) {
    s[i].resize(static_cast<size_t>(size(i)));
    write(i, s[i].data());
  }
}

Tensor AllocateChecked(OutputAllocator& out, int k, const std::vector<int64_t>& dims, DType dtype,
                       Device device, const char* op, bool contiguous) {
  Tensor t = out.Allocate(k, dims, dtype, device);
  TK_CHECK(t.defined() && t.Dims() == dims && t.dtype() == dtype &&
               (!contiguous || t.IsContiguous()) && t.device() == device,
           kInvalidArgument, op, ": the allocator gave output ", k, " as ",
           t.defined() ? DTypeName(t.dtype()) : "undefined", " ",
           t.defined() ? ShapeString(t.Dims()) : std::string(),
           t.defined() && !t.IsContiguous() ? " (not contiguous)" : "", "; it must be a ",
           contiguous ? "contiguous " : "",
           device.is_cpu() ? std::string("CPU") : device.ToString(), " ", DTypeName(dtype),
           " tensor ", ShapeString(dims));
  return t;
}

}  // namespace tensorkit
