// Internal: the old home of BySize, now in common/dtype.h; kept for the .cu files that include
// it (sparse/cuda/structure.cu).
#ifndef TENSORKIT_COMMON_CUDA_BY_SIZE_H_
#define TENSORKIT_COMMON_CUDA_BY_SIZE_H_

#include "tensorkit/common/dtype.h"

namespace tensorkit::cuda_backend {

using ::tensorkit::BySize;

}  // namespace tensorkit::cuda_backend

#endif  // TENSORKIT_COMMON_CUDA_BY_SIZE_H_
