// The CUDA half of the common layer: errors, devices, current streams, stream-ordered
// allocation and copies, and the cached library handles (see cuda_util.h and backend.h).
#include <array>
#include <string>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"

namespace tensorkit::common_cuda {
namespace {

// More devices than any machine has; the per-thread stream table and the handle cache use it.
constexpr int kMaxDevices = 64;

// The current stream per device of this thread while a StreamGuard holds one (the stream may be
// null: CUDA's legacy default stream); otherwise the per-thread default stream.
struct StreamSlot {
  bool set = false;
  cudaStream_t stream = nullptr;
};
thread_local std::array<StreamSlot, kMaxDevices> current_streams{};

cudaStream_t StreamOf(int device) {
  const StreamSlot& slot = current_streams[device];
  return slot.set ? slot.stream : cudaStreamPerThread;
}

void CheckIndex(int device, const char* op) {
  TK_CHECK(device >= 0 && device < kMaxDevices, kInvalidArgument, op, ": CUDA device index ",
           device, " is outside [0, ", kMaxDevices, ")");
}

// One lazily created library handle per device with the lock that guards its stream binding.
template <typename H>
struct HandleSlot {
  std::mutex mutex;
  H handle = nullptr;
};

// Handles are never destroyed: at process exit the CUDA runtime may already be torn down, and
// destroying a handle then is undefined.
std::array<HandleSlot<cublasHandle_t>, kMaxDevices>& CublasSlots() {
  static auto* slots = new std::array<HandleSlot<cublasHandle_t>, kMaxDevices>();
  return *slots;
}
std::array<HandleSlot<cusparseHandle_t>, kMaxDevices>& CusparseSlots() {
  static auto* slots = new std::array<HandleSlot<cusparseHandle_t>, kMaxDevices>();
  return *slots;
}

// Locks the slot of `device`, creates its handle on first use and binds the current stream
// (`bind(handle, stream)` does both), with the device current.
template <typename H, typename Api, typename Bind>
Lease<H, Api> Borrow(std::array<HandleSlot<H>, kMaxDevices>& slots, int device, const Api& api,
                     const char* op, Bind&& bind) {
  CheckIndex(device, op);
  HandleSlot<H>& slot = slots[device];
  Lease<H, Api> lease{std::unique_lock<std::mutex>(slot.mutex), nullptr, &api};
  DeviceGuard guard(device, op);
  bind(slot.handle, Stream(device));
  lease.handle = slot.handle;
  return lease;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

void ThrowCuda(cudaError_t err, const char* op, const char* call) {
  cudaGetLastError();  // clear a non-sticky error so that later calls do not report it again
  ErrorCode code = ErrorCode::kInternal;
  if (err == cudaErrorMemoryAllocation) {
    code = ErrorCode::kResourceExhausted;
  } else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
             err == cudaErrorInvalidDevice) {
    code = ErrorCode::kUnsupported;
  }
  Throw(code, op, ": CUDA call ", call, " failed: ", cudaGetErrorString(err), " (",
        cudaGetErrorName(err), ")");
}

namespace {

// The Error of a failed call into a loaded CUDA library: out of memory is ResourceExhausted,
// anything else an internal error; the message names the call and the library's words for it.
[[noreturn]] void ThrowLibrary(bool out_of_memory, const char* op, const char* library,
                               const char* call, const char* message, const char* status_name) {
  Throw(out_of_memory ? ErrorCode::kResourceExhausted : ErrorCode::kInternal, op, ": ", library,
        " call ", call, " failed: ", message, " (", status_name, ")");
}

}  // namespace

void ThrowCublas(cublasStatus_t status, const char* op, const char* call) {
  const CublasApi& api = CublasLibrary(op);  // loaded: it returned the status
  ThrowLibrary(status == CUBLAS_STATUS_ALLOC_FAILED, op, "cuBLAS", call,
               api.cublasGetStatusString(status), api.cublasGetStatusName(status));
}

void ThrowCusparse(cusparseStatus_t status, const char* op, const char* call) {
  const CusparseApi& api = CusparseLibrary(op);  // loaded: it returned the status
  ThrowLibrary(status == CUSPARSE_STATUS_ALLOC_FAILED, op, "cuSPARSE", call,
               api.cusparseGetErrorString(status), api.cusparseGetErrorName(status));
}

// ---------------------------------------------------------------------------------------------
// Devices and streams
// ---------------------------------------------------------------------------------------------

DeviceGuard::DeviceGuard(int device, const char* op) {
  CheckIndex(device, op);
  int current = 0;
  TK_CUDA_CHECK(op, cudaGetDevice(&current));
  if (current != device) {
    TK_CUDA_CHECK(op, cudaSetDevice(device));
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaStream_t Stream(int device) {
  CheckIndex(device, "cuda::CurrentStream");
  return StreamOf(device);
}

void* CurrentStream(int device) { return Stream(device); }

void SetCurrentStream(int device, void* stream) {
  CheckIndex(device, "cuda::StreamGuard");
  current_streams[device] = {true, static_cast<cudaStream_t>(stream)};
}

void Synchronize(int device) {
  DeviceGuard guard(device, "cuda::Synchronize");
  TK_CUDA_CHECK("cuda::Synchronize", cudaStreamSynchronize(Stream(device)));
}

CublasLease Cublas(int device, const char* op) {
  const CublasApi& api = CublasLibrary(op);
  return Borrow(CublasSlots(), device, api, op, [&](cublasHandle_t& h, cudaStream_t s) {
    if (h == nullptr) TK_CUBLAS_CHECK(op, api.cublasCreate_v2(&h));
    TK_CUBLAS_CHECK(op, api.cublasSetStream_v2(h, s));
  });
}

CusparseLease Cusparse(int device, const char* op) {
  const CusparseApi& api = CusparseLibrary(op);
  return Borrow(CusparseSlots(), device, api, op, [&](cusparseHandle_t& h, cudaStream_t s) {
    if (h == nullptr) TK_CUSPARSE_CHECK(op, api.cusparseCreate(&h));
    TK_CUSPARSE_CHECK(op, api.cusparseSetStream(h, s));
  });
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

bool Built() { return true; }

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: zero devices, not an error
    return 0;
  }
  return n;
}

void* Malloc(int64_t bytes, int device) {
  DeviceGuard guard(device, "Storage::Allocate");
  void* p = nullptr;
  const cudaError_t err = alloc_fault::ShouldFail()
                              ? cudaErrorMemoryAllocation  // the tests' injected failure
                              : cudaMallocAsync(&p, static_cast<size_t>(bytes), Stream(device));
  if (err != cudaSuccess) {
    cudaGetLastError();
    Throw(err == cudaErrorMemoryAllocation ? ErrorCode::kResourceExhausted : ErrorCode::kInternal,
          "Storage::Allocate: cannot allocate ", bytes, " bytes on cuda:", device, ": ",
          cudaGetErrorString(err), "; free device tensors or use smaller ones");
  }
  return p;
}

void Free(void* ptr, int device) noexcept {
  if (ptr == nullptr || device < 0 || device >= kMaxDevices) return;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (current != device && cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  const cudaStream_t s = StreamOf(device);
  if (cudaFreeAsync(ptr, s) != cudaSuccess) cudaGetLastError();  // a destructor must not throw
  if (current != device && cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
}

void Memcpy(void* dst, int dst_device, const void* src, int src_device, int64_t bytes,
            CopyKind kind) {
  const char* op = "CopyBytes";
  const size_t n = static_cast<size_t>(bytes);
  // To or from the host: waits, for a copy to the host because the host reads the result,
  // for one from the host because a pinned source is copied truly asynchronously and the
  // caller may free or overwrite it as soon as this returns.
  auto with_host = [&](int device, cudaMemcpyKind k) {
    DeviceGuard guard(device, op);
    const cudaStream_t s = Stream(device);
    TK_CUDA_CHECK(op, cudaMemcpyAsync(dst, src, n, k, s));
    TK_CUDA_CHECK(op, cudaStreamSynchronize(s));
  };
  switch (kind) {
    case CopyKind::kHostToDevice:
      return with_host(dst_device, cudaMemcpyHostToDevice);
    case CopyKind::kDeviceToHost:
      return with_host(src_device, cudaMemcpyDeviceToHost);
    case CopyKind::kDeviceToDevice: {
      if (dst_device == src_device) {
        DeviceGuard guard(dst_device, op);
        TK_CUDA_CHECK(op,
                      cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, Stream(dst_device)));
        return;
      }
      // Between devices: the source's pending work first, then the peer copy on the
      // destination's stream.
      Synchronize(src_device);
      DeviceGuard guard(dst_device, op);
      TK_CUDA_CHECK(op,
                    cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, Stream(dst_device)));
      return;
    }
  }
}

void Memset0(void* dst, int64_t bytes, int device) {
  DeviceGuard guard(device, "ZeroBytes");
  TK_CUDA_CHECK("ZeroBytes", cudaMemsetAsync(dst, 0, static_cast<size_t>(bytes), Stream(device)));
}

}  // namespace tensorkit::common_cuda
