// The unary elementwise passes of the CUDA executor (one kernel set per functor and compute
// dtype; the mode is a run-time argument). Unary and binary passes are separate translation
// units so that they compile in parallel.
#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::dense_cuda {

void LaunchUnary(const engine::OpDesc& d, const LoopNest& nest, char* const* first,
                 cudaStream_t s) {
  WithTypedPlan(d, nest, first, [&]<typename T>(const ElementwisePlan& p, const auto& k) {
    engine::DispatchUnary(d.unary, [&]<typename F>() {
      const UnaryOp<T, F> op{reinterpret_cast<T*>(first[0]), reinterpret_cast<const T*>(first[1]),
                             k, d.mode};
      LaunchElementwise<16 / sizeof(T)>(p, op, s, d.op);
    });
  });
}

}  // namespace tensorkit::dense_cuda
