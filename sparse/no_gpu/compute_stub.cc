// Linked when tensorkit is built without CUDA. Never reached (a CUDA tensor cannot be allocated
// in such a build), but a clear Error beats a crash if it were.
#include "tensorkit/common/error.h"
#include "tensorkit/sparse/cuda/compute.h"

namespace tensorkit::sparse_cuda {

void Spmm(const char* op, DType, const CsrOperand&, const DenseOperand&, const DenseOperand&, bool,
          Scalar, Scalar, int device) {
  Throw(ErrorCode::kUnsupported, op, ": cuda:", device,
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

CsrArrays Spgemm(const char* op, const CsrArrays& a, int64_t, const CsrArrays&, int64_t) {
  Throw(ErrorCode::kUnsupported, op, ": ", a.values.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

Tensor BatchKeyRows(const Tensor& indices, int64_t, int64_t, bool, const char* op) {
  Throw(ErrorCode::kUnsupported, op, ": ", indices.device(),
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

}  // namespace tensorkit::sparse_cuda
