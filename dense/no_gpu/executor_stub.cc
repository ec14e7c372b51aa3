// Linked when tensorkit is built without CUDA. Execute is never reached (a CUDA tensor cannot be
// allocated in such a build), but a clear Error beats a crash if it were.
#include "tensorkit/common/error.h"
#include "tensorkit/dense/executor.h"

namespace tensorkit::dense_cuda {

void Execute(const engine::OpDesc& desc, const engine::LoopNest&, char* const*, int device) {
  Throw(ErrorCode::kUnsupported, desc.op, ": cuda:", device,
        " requested but tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON");
}

bool Gemm(const engine::GemmCall&, int) { return false; }

}  // namespace tensorkit::dense_cuda
