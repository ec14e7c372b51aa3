// AddProduct's GEMMs on the GPU: cublasGemmEx / cublasGemmStridedBatchedEx on the current
// stream. cuBLAS is column-major: the row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so B comes first and the transpose flags carry over unchanged.
#include <climits>

#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::cuda_exec {
namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

bool Gemm(const engine::GemmCall& g, int device) {
  cudaDataType_t type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (g.dtype) {
    case DType::kFloat32:
      type = CUDA_R_32F;
      break;
    case DType::kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case DType::kFloat16:
      type = CUDA_R_16F;  // float16 and bfloat16 accumulate in float32, as on the CPU engine
      break;
    case DType::kBFloat16:
      type = CUDA_R_16BF;
      break;
    default:
      return false;  // integers run in the engine
  }
  if (!FitsInt(g.m) || !FitsInt(g.n) || !FitsInt(g.k) || !FitsInt(g.lda) || !FitsInt(g.ldb) ||
      !FitsInt(g.ldc) || !FitsInt(g.batch)) {
    return false;  // beyond cuBLAS's int sizes: the engine handles it
  }
  const char* op = "AddProduct";
  const float alpha32 = static_cast<float>(g.alpha), beta32 = static_cast<float>(g.beta);
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&g.alpha)
                                                    : static_cast<const void*>(&alpha32);
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&g.beta)
                                                   : static_cast<const void*>(&beta32);
  const cublasOperation_t ta = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  cuda_backend::DeviceGuard guard(device, op);
  cuda_backend::CublasLease lease = cuda_backend::Cublas(device, op);
  // beta == 0: cuBLAS does not read C, so NaN in an uninitialised output cannot leak.
  if (g.batch == 1) {
    TK_CUBLAS_CHECK(
        op, cublasGemmEx(lease.handle, tb, ta, n, m, k, alpha, g.b, type, static_cast<int>(g.ldb),
                         g.a, type, static_cast<int>(g.lda), beta, g.c, type,
                         static_cast<int>(g.ldc), compute, CUBLAS_GEMM_DEFAULT));
  } else {
    TK_CUBLAS_CHECK(op, cublasGemmStridedBatchedEx(
                            lease.handle, tb, ta, n, m, k, alpha, g.b, type,
                            static_cast<int>(g.ldb), g.stride_b, g.a, type, static_cast<int>(g.lda),
                            g.stride_a, beta, g.c, type, static_cast<int>(g.ldc), g.stride_c,
                            static_cast<int>(g.batch), compute, CUBLAS_GEMM_DEFAULT));
  }
  return true;
}

}  // namespace tensorkit::cuda_exec
