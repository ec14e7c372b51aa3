// Typed inner loops of Copy between dtypes and of Set (see ops_internal.h).
#include <string>

#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::ops_internal {

engine::InnerLoop ConvertKernel(DType dst, DType src, const char* op) {
  if (dst == DType::kString || src == DType::kString) {
    TK_CHECK(dst == src, kDTypeMismatch, op, ": cannot convert between ", DTypeName(src), " and ",
             DTypeName(dst), "; string tensors copy only to string tensors");
    return &engine::ConvertLoop<std::string, std::string>;
  }
  return Dispatch<kNumericDTypes>(dst, op, [&]<typename D>() -> engine::InnerLoop {
    return Dispatch<kNumericDTypes>(
        src, op, [&]<typename S>() -> engine::InnerLoop { return &engine::ConvertLoop<D, S>; });
  });
}

engine::InnerLoop FillKernel(DType dtype, const char* op) {
  return Dispatch<kAllDTypes>(
      dtype, op, [&]<typename T>() -> engine::InnerLoop { return &engine::FillLoop<T>; });
}

}  // namespace tensorkit::ops_internal
