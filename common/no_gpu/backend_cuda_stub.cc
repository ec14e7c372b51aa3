// Linked when tensorkit is built without CUDA: every GPU request fails with a clear Error.
#include "tensorkit/common/backend_cuda.h"
#include "tensorkit/common/error.h"

namespace tensorkit::cuda_backend {
namespace {
[[noreturn]] void NoCuda() {
  Throw(ErrorCode::kUnsupported,
        "tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON on a machine with nvcc");
}
}  // namespace

bool Built() { return false; }
int DeviceCount() { return 0; }
void* Malloc(int64_t, int) { NoCuda(); }
void Free(void*, int) {}
void Memcpy(void*, const void*, int64_t, int, int) { NoCuda(); }
void Memset0(void*, int64_t, int) { NoCuda(); }

}  // namespace tensorkit::cuda_backend
