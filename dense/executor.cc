// The choke point of the device seam (see Note [device seam] in executor.h): Execute and RunGemm
// send each pass to the CPU executor (cpu/) or the CUDA executor (cuda/).
#include "tensorkit/dense/executor.h"

#include "tensorkit/dense/gemm.h"

namespace tensorkit::engine {

int OpDesc::NumOperands() const {
  switch (kind) {
    case OpKind::kFill:
      return 1;
    case OpKind::kConvert:
    case OpKind::kUnary:
      return 2;
    case OpKind::kBinary:
      return 3;
  }
  return 0;
}

void Execute(const OpDesc& desc, const LoopNest& nest, char* const* bases, Device device) {
  TK_INTERNAL_CHECK(nest.num_operands == desc.NumOperands());
  if (nest.empty) return;
  if (OnCuda(device)) {
    dense_cuda::Execute(desc, nest, bases, device.index);
  } else {
    ExecuteCpu(desc, nest, bases);
  }
}

bool RunGemm(const GemmCall& g, Device device) {
  if (OnCuda(device)) return dense_cuda::Gemm(g, device.index);
  if (g.dtype != DType::kFloat32 && g.dtype != DType::kFloat64) return false;
  if (g.batch == 1) {
    gemm::Gemm(g.dtype, g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb,
               g.beta, g.c, g.ldc);
  } else {
    gemm::GemmBatched(g.dtype, g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.stride_a,
                      g.b, g.ldb, g.stride_b, g.beta, g.c, g.ldc, g.stride_c, g.batch);
  }
  return true;
}

}  // namespace tensorkit::engine
