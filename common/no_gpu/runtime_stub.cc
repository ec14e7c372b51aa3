// Linked when tensorkit is built without CUDA: every GPU request fails with a clear Error.
#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/error.h"

namespace tensorkit::common_cuda {
namespace {
[[noreturn]] void NoCuda() {
  Throw(ErrorCode::kUnsupported,
        "tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON on a machine with nvcc");
}
}  // namespace

bool Built() { return false; }
int DeviceCount() { return 0; }
void* Malloc(int64_t, int) { NoCuda(); }
void Free(void*, int) noexcept {}
void Memcpy(void*, int, const void*, int, int64_t, CopyKind) { NoCuda(); }
void Memset0(void*, int64_t, int) { NoCuda(); }
void Synchronize(int) { NoCuda(); }
void* CurrentStream(int) { NoCuda(); }
void SetCurrentStream(int, void*) { NoCuda(); }
void LoadLibraries(const char*) { NoCuda(); }

}  // namespace tensorkit::common_cuda
