// AddProduct's GEMMs on the GPU: cublasGemmEx_64 / cublasGemmStridedBatchedEx_64 (64-bit sizes,
// so no product is too large for cuBLAS) on the current stream. cuBLAS is column-major: the
// row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B comes first and the
// transpose flags carry over unchanged.
#include "tensorkit/dense/cuda/kernels.cuh"

namespace tensorkit::dense_cuda {

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
  const char* op = "AddProduct";
  const float alpha32 = static_cast<float>(g.alpha), beta32 = static_cast<float>(g.beta);
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&g.alpha)
                                                    : static_cast<const void*>(&alpha32);
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&g.beta)
                                                   : static_cast<const void*>(&beta32);
  const cublasOperation_t ta = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  common_cuda::DeviceGuard guard(device, op);
  common_cuda::CublasLease lease = common_cuda::Cublas(device, op);
  // beta == 0: cuBLAS does not read C, so NaN in an uninitialised output cannot leak.
  if (g.batch == 1) {
    TK_CUBLAS_CHECK(op, lease.api->cublasGemmEx_64(lease.handle, tb, ta, g.n, g.m, g.k, alpha, g.b,
                                                   type, g.ldb, g.a, type, g.lda, beta, g.c, type,
                                                   g.ldc, compute, CUBLAS_GEMM_DEFAULT));
  } else {
    TK_CUBLAS_CHECK(op, lease.api->cublasGemmStridedBatchedEx_64(
                            lease.handle, tb, ta, g.n, g.m, g.k, alpha, g.b, type, g.ldb,
                            g.stride_b, g.a, type, g.lda, g.stride_a, beta, g.c, type, g.ldc,
                            g.stride_c, g.batch, compute, CUBLAS_GEMM_DEFAULT));
  }
  return true;
}

}  // namespace tensorkit::dense_cuda
