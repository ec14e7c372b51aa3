// Internal, for .cu files only: cuBLAS and cuSPARSE, loaded on first use.
//
// Glossary
//   library table  the functions tensorkit calls from one CUDA library, looked up with dlsym
//                  when the library is first needed (a GEMM or a sparse product on a device).
//                  Linking libcublasLt directly would cost every program that links tensorkit
//                  about 200 MB of resident memory at start-up (the loader relocates it) and
//                  make a CUDA build unusable where the CUDA libraries are not installed;
//                  loading on demand costs neither, and a CPU-only run never touches them.
//   adding a call  add the function's name to its list below (the _v2 name where the header
//                  #defines the short one; one that C++ overloads, such as cublasGemmEx, cannot
//                  be listed: take its _64 form) and call it as `api.name(...)`.
#ifndef TENSORKIT_COMMON_CUDA_LIBRARIES_H_
#define TENSORKIT_COMMON_CUDA_LIBRARIES_H_

#include <cublas_v2.h>
#include <cusparse.h>

namespace tensorkit::common_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

#define TK_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)           \
  X(cublasDestroy_v2)          \
  X(cublasSetStream_v2)        \
  X(cublasSetWorkspace_v2)     \
  X(cublasGetStatusString)     \
  X(cublasGetStatusName)       \
  X(cublasGemmEx_64)           \
  X(cublasGemmStridedBatchedEx_64)

#define TK_CUSPARSE_FUNCTIONS(X)   \
  X(cusparseCreate)                \
  X(cusparseDestroy)               \
  X(cusparseSetStream)             \
  X(cusparseGetErrorString)        \
  X(cusparseGetErrorName)          \
  X(cusparseCreateCsr)             \
  X(cusparseDestroySpMat)          \
  X(cusparseCreateDnMat)           \
  X(cusparseDestroyDnMat)          \
  X(cusparseCreateDnVec)           \
  X(cusparseDestroyDnVec)          \
  X(cusparseSpMV_bufferSize)       \
  X(cusparseSpMV)                  \
  X(cusparseSpMM_bufferSize)       \
  X(cusparseSpMM)                  \
  X(cusparseSpGEMM_createDescr)    \
  X(cusparseSpGEMM_destroyDescr)   \
  X(cusparseSpGEMM_workEstimation) \
  X(cusparseSpGEMM_compute)        \
  X(cusparseSpGEMM_copy)           \
  X(cusparseSpMatGetSize)          \
  X(cusparseCsrSetPointers)

#define TK_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;
struct CublasApi {
  TK_CUBLAS_FUNCTIONS(TK_LIBRARY_MEMBER)
};
struct CusparseApi {
  TK_CUSPARSE_FUNCTIONS(TK_LIBRARY_MEMBER)
};
#undef TK_LIBRARY_MEMBER

// The loaded table; the first call loads the library (libcublas.so.13 / libcusparse.so.12, the
// major versions tensorkit was compiled against). A library or function that cannot be found is
// an Error (kUnsupported) naming `op`, the file and the fix; a later call tries again.
const CublasApi& CublasLibrary(const char* op);
const CusparseApi& CusparseLibrary(const char* op);

}  // namespace tensorkit::common_cuda

#endif  // TENSORKIT_COMMON_CUDA_LIBRARIES_H_
