// Fills, plain copies (with the tiled transpose path) and conversions between numeric dtypes.
#include <cstring>

#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::dense_cuda {

void LaunchFill(const engine::OpDesc& d, const LoopNest& nest, char* const* first, cudaStream_t s) {
  BySize(DTypeSize(d.out), [&]<typename U>() {
    U value;
    std::memcpy(&value, d.coeffs.bytes, sizeof(U));
    const int64_t sizes[kMaxOperands] = {sizeof(U), sizeof(U), sizeof(U)};
    const ElementwisePlan p = PlanElementwise(nest, sizes, first, /*copy=*/false);
    LaunchElementwise<16 / sizeof(U)>(p, FillOp<U>{reinterpret_cast<U*>(first[0]), value}, s, d.op);
  });
}

void LaunchConvert(const engine::OpDesc& d, const LoopNest& nest, char* const* first,
                   cudaStream_t s) {
  if (d.in == d.out) {  // a plain copy of element bits
    BySize(DTypeSize(d.out), [&]<typename U>() {
      const int64_t sizes[kMaxOperands] = {sizeof(U), sizeof(U), sizeof(U)};
      const ElementwisePlan p = PlanElementwise(nest, sizes, first, /*copy=*/true);
      U* out = reinterpret_cast<U*>(first[0]);
      const U* in = reinterpret_cast<const U*>(first[1]);
      if (p.path == Path::kTiled) {
        TiledCopyKernel<U><<<GridOf(p), dim3(kTile, kTileRows), 0, s>>>(p, out, in);
        TK_CUDA_CHECK(d.op, cudaGetLastError());
        return;
      }
      LaunchElementwise<16 / sizeof(U)>(p, ConvertOp<U, U>{out, in}, s, d.op);
    });
    return;
  }
  Dispatch<kNumericDTypes>(d.out, d.op, [&]<typename D>() {
    Dispatch<kNumericDTypes>(d.in, d.op, [&]<typename S>() {
      const int64_t sizes[kMaxOperands] = {sizeof(D), sizeof(S), 0};
      const ElementwisePlan p = PlanElementwise(nest, sizes, first, /*copy=*/false);
      constexpr int kV = 16 / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
      LaunchElementwise<kV>(
          p, ConvertOp<D, S>{reinterpret_cast<D*>(first[0]), reinterpret_cast<const S*>(first[1])},
          s, d.op);
    });
  });
}

}  // namespace tensorkit::dense_cuda
