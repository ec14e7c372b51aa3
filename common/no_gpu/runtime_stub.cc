// Linked when tensorkit is built without CUDA: every GPU request fails with a clear Error.
#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/stream_order.h"

namespace tensorkit::common_cuda {
namespace {
[[noreturn]] void NoCuda() {
  Throw(ErrorCode::kUnsupported,
        "tensorkit was built without CUDA; rebuild with TENSORKIT_CUDA=ON on a machine with nvcc");
}

// Never reached: no storage can live on a CUDA device in this build.
class NoStreamRuntime final : public stream_order::Runtime {
 public:
  void Order(int, stream_order::StreamId, int, stream_order::StreamId) override { NoCuda(); }
  void FreeAsync(int, void*, stream_order::StreamId) noexcept override {}
  void SynchronizeDevice(int) noexcept override {}
  bool IsPerThread(stream_order::StreamId) const override { return false; }
};
}  // namespace

bool Built() { return false; }
int DeviceCount() { return 0; }
std::string NoDeviceReason() { return "tensorkit was built without CUDA"; }
void* Malloc(int64_t, int) { NoCuda(); }
void Free(void*, int) noexcept {}
void Memcpy(void*, int, const void*, int, int64_t, CopyKind) { NoCuda(); }
void Memset0(void*, int64_t, int) { NoCuda(); }
void Synchronize(int) { NoCuda(); }
void* CurrentStream(int) { NoCuda(); }
void SetCurrentStream(int, void*) { NoCuda(); }
void CheckStreamDevice(int, void*, const char*) { NoCuda(); }
stream_order::Runtime& StreamRuntime() {
  static NoStreamRuntime rt;
  return rt;
}
uint64_t SynchronizationCount() { return 0; }
PoolStats PoolStatistics(int) { NoCuda(); }
void ResetPoolPeaks(int) { NoCuda(); }
LibraryHandleCounts LibraryHandles(int) { NoCuda(); }
void ReleaseCached() {}
void LoadLibraries(const char*) { NoCuda(); }

}  // namespace tensorkit::common_cuda
