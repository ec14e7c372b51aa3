// Internal, for .cu files only: cuSPARSE descriptors and work buffers that free themselves.
//
// Glossary
//   descriptor   a cuSPARSE host object describing a matrix or vector over device arrays (it
//                owns none of them). Kernels receive what they need by value when they are
//                enqueued, so a descriptor may be destroyed as soon as its last call returns.
//   SpMat        a CSR matrix with 64-bit offsets and indices (tensorkit's int64 arrays as they
//                are, no narrowing copy), or 32-bit ones for the calls that take only those
//                (SpGEMM); a CSC matrix is the CSR matrix of its transpose.
//   DnMat, DnVec a dense matrix (row- or column-major with a leading dimension) or a contiguous
//                vector.
//   work buffer  scratch a call asks for by size: one DeviceBuffer (common/cuda/device_buffer.h)
//                from the stream-ordered allocator on the current stream.
//   All calls go through the library table of the handle lease (cuda_util.h).
#ifndef TENSORKIT_SPARSE_CUDA_CUSPARSE_UTIL_H_
#define TENSORKIT_SPARSE_CUDA_CUSPARSE_UTIL_H_

#include <cstdint>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/dtype.h"

namespace tensorkit::sparse_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The value type cuSPARSE uses for `dtype`, and the type it computes in (float for the 16-bit
// floats, as on the CPU); false for dtypes cuSPARSE's generic products do not take.
bool CudaTypes(DType dtype, cudaDataType* value, cudaDataType* compute);

// One cuSPARSE object of handle type H, destroyed through the library table's member kDestroy
// (its status dropped: it runs in destructors). The classes below differ only in their
// constructors, which create the object (an Error naming `op` on failure).
template <typename H, auto kDestroy>
class CusparseObject {
 public:
  ~CusparseObject() {
    if (d_ != nullptr) (api_->*kDestroy)(d_);
  }
  CusparseObject(const CusparseObject&) = delete;
  CusparseObject& operator=(const CusparseObject&) = delete;
  H get() const { return d_; }

 protected:
  explicit CusparseObject(const common_cuda::CusparseLease& lease) : api_(lease.api) {}
  const common_cuda::CusparseApi* api_;
  H d_ = nullptr;
};

class SpMat
    : public CusparseObject<cusparseSpMatDescr_t, &common_cuda::CusparseApi::cusparseDestroySpMat> {
 public:
  SpMat(const common_cuda::CusparseLease& lease, int64_t rows, int64_t cols, int64_t nnz,
        const int64_t* ptr, const int64_t* minor, const void* values, cudaDataType type,
        const char* op)
      : SpMat(lease, rows, cols, nnz, ptr, minor, values, CUSPARSE_INDEX_64I, type, op) {}
  // Arrays of `index` type (CUSPARSE_INDEX_32I or _64I); all null for an empty result matrix
  // whose arrays are set later (cusparseCsrSetPointers).
  SpMat(const common_cuda::CusparseLease& lease, int64_t rows, int64_t cols, int64_t nnz,
        const void* ptr, const void* minor, const void* values, cusparseIndexType_t index,
        cudaDataType type, const char* op);
};

class SpGemmDescr : public CusparseObject<cusparseSpGEMMDescr_t,
                                          &common_cuda::CusparseApi::cusparseSpGEMM_destroyDescr> {
 public:
  SpGemmDescr(const common_cuda::CusparseLease& lease, const char* op);
};

class DnMat
    : public CusparseObject<cusparseDnMatDescr_t, &common_cuda::CusparseApi::cusparseDestroyDnMat> {
 public:
  DnMat(const common_cuda::CusparseLease& lease, int64_t rows, int64_t cols, int64_t ld,
        bool row_major, const void* values, cudaDataType type, const char* op);
};

class DnVec
    : public CusparseObject<cusparseDnVecDescr_t, &common_cuda::CusparseApi::cusparseDestroyDnVec> {
 public:
  DnVec(const common_cuda::CusparseLease& lease, int64_t size, const void* values,
        cudaDataType type, const char* op);
};

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline bool CudaTypes(DType dtype, cudaDataType* value, cudaDataType* compute) {
  switch (dtype) {
    case DType::kFloat32:
      *value = *compute = CUDA_R_32F;
      return true;
    case DType::kFloat64:
      *value = *compute = CUDA_R_64F;
      return true;
    case DType::kFloat16:
      *value = CUDA_R_16F;
      *compute = CUDA_R_32F;
      return true;
    case DType::kBFloat16:
      *value = CUDA_R_16BF;
      *compute = CUDA_R_32F;
      return true;
    default:
      return false;
  }
}

// cuSPARSE takes non-const pointers for matrices it only reads; it never writes through them.
inline SpMat::SpMat(const common_cuda::CusparseLease& lease, int64_t rows, int64_t cols,
                    int64_t nnz, const void* ptr, const void* minor, const void* values,
                    cusparseIndexType_t index, cudaDataType type, const char* op)
    : CusparseObject(lease) {
  TK_CUSPARSE_CHECK(op, api_->cusparseCreateCsr(&d_, rows, cols, nnz, const_cast<void*>(ptr),
                                                const_cast<void*>(minor), const_cast<void*>(values),
                                                index, index, CUSPARSE_INDEX_BASE_ZERO, type));
}

inline SpGemmDescr::SpGemmDescr(const common_cuda::CusparseLease& lease, const char* op)
    : CusparseObject(lease) {
  TK_CUSPARSE_CHECK(op, api_->cusparseSpGEMM_createDescr(&d_));
}

inline DnMat::DnMat(const common_cuda::CusparseLease& lease, int64_t rows, int64_t cols, int64_t ld,
                    bool row_major, const void* values, cudaDataType type, const char* op)
    : CusparseObject(lease) {
  TK_CUSPARSE_CHECK(op,
                    api_->cusparseCreateDnMat(&d_, rows, cols, ld, const_cast<void*>(values), type,
                                              row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL));
}

inline DnVec::DnVec(const common_cuda::CusparseLease& lease, int64_t size, const void* values,
                    cudaDataType type, const char* op)
    : CusparseObject(lease) {
  TK_CUSPARSE_CHECK(op, api_->cusparseCreateDnVec(&d_, size, const_cast<void*>(values), type));
}

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_CUDA_CUSPARSE_UTIL_H_
