// Typed inner loops of the binary functions (see ops_internal.h).
#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::ops_internal {
namespace {

// The loop for functor F in `mode`; kScale exists only for the product (AddProduct).
template <typename T, typename F>
engine::InnerLoop Pick(engine::Mode mode) {
  using engine::Mode;
  if (mode == Mode::kAssign) return &engine::BinaryLoop<T, F, Mode::kAssign>;
  if constexpr (std::is_same_v<F, engine::MulF>) {
    if (mode == Mode::kScale) return &engine::BinaryLoop<T, F, Mode::kScale>;
  }
  TK_INTERNAL_CHECK(mode == Mode::kAxpby);
  return &engine::BinaryLoop<T, F, Mode::kAxpby>;
}

}  // namespace

engine::InnerLoop BinaryKernel(BinaryFn fn, DType dtype, engine::Mode mode, const char* op) {
  return Dispatch<kComputeDTypes>(dtype, op, [&]<typename T>() -> engine::InnerLoop {
    return engine::DispatchBinary(fn, [&]<typename F>() { return Pick<T, F>(mode); });
  });
}

}  // namespace tensorkit::ops_internal
