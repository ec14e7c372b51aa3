// The CUDA half of the common layer: errors, devices, current streams, stream-ordered
// allocation and copies, the stream bookkeeping's runtime and the library handle pools (see
// cuda_util.h, backend.h and ../stream_order.h).
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/cuda/backend.h"
#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/handle_pool.h"
#include "tensorkit/common/stream_order.h"

namespace tensorkit::common_cuda {
namespace {

// More devices than any machine has; the per-thread stream table and the handle pools use it.
constexpr int kMaxDevices = 64;
// Streams per device in tensorkit's pool. Each thread takes the next one on its first use of a
// device, so up to this many threads run concurrently; more threads share streams (correct,
// only serialised).
constexpr int kPoolStreams = 32;

std::atomic<uint64_t> g_host_waits{0};

void CheckIndex(int device, const char* op) {
  TK_CHECK(device >= 0 && device < kMaxDevices, kInvalidArgument, op, ": CUDA device index ",
           device, " is outside [0, ", kMaxDevices, ")");
}

// ---------------------------------------------------------------------------------------------
// Per-device state, made on first use and kept for the life of the process (at exit the CUDA
// runtime may already be torn down, so nothing here is destroyed).
// ---------------------------------------------------------------------------------------------

struct DeviceState {
  std::once_flag pool_once;
  std::mutex streams_mutex;
  std::array<cudaStream_t, kPoolStreams> streams{};
  int next_stream = 0;
  handle_pool::HandlePool<cublasHandle_t> cublas;
  handle_pool::HandlePool<cusparseHandle_t> cusparse;
  handle_pool::WorkspaceTable<cudaStream_t> workspaces;
  std::atomic<bool> used{false};
};

DeviceState& State(int device) {
  static auto* states = new std::array<DeviceState, kMaxDevices>();
  return (*states)[device];
}

// The stream-ordered pool keeps what frees return (release threshold: everything) instead of
// handing it back to the driver at every synchronisation; ReleaseCached trims it.
void SetUpPool(int device, const char* op) {
  DeviceState& st = State(device);
  std::call_once(st.pool_once, [&] {
    cudaMemPool_t pool;
    TK_CUDA_CHECK(op, cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t keep = std::numeric_limits<uint64_t>::max();
    TK_CUDA_CHECK(op, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    st.used = true;
  });
}

// This thread's stream of `device` from the pool (blocking with respect to the legacy default
// stream, as cudaStreamPerThread is, so code that uses the legacy stream stays ordered).
cudaStream_t PoolStream(int device) {
  thread_local std::array<cudaStream_t, kMaxDevices> mine{};
  if (mine[device] != nullptr) return mine[device];
  const char* op = "cuda::CurrentStream";
  DeviceState& st = State(device);
  std::lock_guard<std::mutex> lock(st.streams_mutex);
  cudaStream_t& slot = st.streams[st.next_stream];
  if (slot == nullptr) {
    DeviceGuard guard(device, op);
    SetUpPool(device, op);
    TK_CUDA_CHECK(op, cudaStreamCreateWithFlags(&slot, cudaStreamDefault));
  }
  st.next_stream = (st.next_stream + 1) % kPoolStreams;
  mine[device] = slot;
  return slot;
}

// The current stream per device of this thread while a StreamGuard holds one (the stream may be
// null: CUDA's legacy default stream); otherwise the thread's pool stream.
struct StreamSlot {
  bool set = false;
  cudaStream_t stream = nullptr;
};
thread_local std::array<StreamSlot, kMaxDevices> current_streams{};

bool IsPerThreadHandle(cudaStream_t s) { return s == cudaStreamPerThread; }
bool IsSharedHandle(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

// Host waits, counted.
void WaitStream(cudaStream_t s, const char* op) {
  g_host_waits.fetch_add(1, std::memory_order_relaxed);
  TK_CUDA_CHECK(op, cudaStreamSynchronize(s));
}

// `after` waits for the work enqueued on `before` so far (an event of before's device).
void OrderStreams(int before_device, cudaStream_t before, int after_device, cudaStream_t after,
                  const char* op) {
  if (before == after) return;
  cudaEvent_t e;
  {
    DeviceGuard guard(before_device, op);
    TK_CUDA_CHECK(op, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const cudaError_t err = cudaEventRecord(e, before);
    if (err != cudaSuccess) {
      cudaEventDestroy(e);
      ThrowCuda(err, op, "cudaEventRecord(e, before)");
    }
  }
  DeviceGuard guard(after_device, op);
  const cudaError_t err = cudaStreamWaitEvent(after, e, 0);
  cudaEventDestroy(e);  // the wait keeps what it needs; the event goes once it has fired
  if (err != cudaSuccess) ThrowCuda(err, op, "cudaStreamWaitEvent(after, e, 0)");
}

class CudaStreamRuntime final : public stream_order::Runtime {
 public:
  void Order(int before_device, stream_order::StreamId before, int after_device,
             stream_order::StreamId after) override {
    OrderStreams(before_device, static_cast<cudaStream_t>(before), after_device,
                 static_cast<cudaStream_t>(after), "Storage (stream order)");
  }
  void FreeAsync(int device, void* ptr, stream_order::StreamId stream) noexcept override {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (current != device && cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      cudaGetLastError();  // a destructor must not throw
    }
    if (current != device && cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
  }
  void SynchronizeDevice(int device) noexcept override {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    g_host_waits.fetch_add(1, std::memory_order_relaxed);
    if ((current != device && cudaSetDevice(device) != cudaSuccess) ||
        cudaDeviceSynchronize() != cudaSuccess) {
      cudaGetLastError();
    }
    if (current != device && cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
  }
  bool IsPerThread(stream_order::StreamId stream) const override {
    return IsPerThreadHandle(static_cast<cudaStream_t>(stream));
  }
};

// ---------------------------------------------------------------------------------------------
// Library handles
// ---------------------------------------------------------------------------------------------

// cuBLAS's recommended workspace: 32 MiB on Hopper and later, 4 MiB before.
int64_t CublasWorkspaceBytes(int device, const char* op) {
  int major = 0;
  TK_CUDA_CHECK(op, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 ? int64_t{32} << 20 : int64_t{4} << 20;
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
  const StreamSlot& slot = current_streams[device];
  return slot.set ? slot.stream : PoolStream(device);
}

void* CurrentStream(int device) { return Stream(device); }

void SetCurrentStream(int device, void* stream) {
  CheckIndex(device, "cuda::StreamGuard");
  current_streams[device] = {true, static_cast<cudaStream_t>(stream)};
}

void CheckStreamDevice(int device, void* stream, const char* op) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (IsSharedHandle(s)) return;
  int owner = -1;
  TK_CUDA_CHECK(op, cudaStreamGetDevice(s, &owner));
  TK_CHECK(owner == device, kInvalidArgument, op, ": the stream belongs to cuda:", owner,
           ", not to cuda:", device, "; guard cuda:", owner,
           " with it, or pass a stream created on cuda:", device);
}

void Synchronize(int device) {
  DeviceGuard guard(device, "cuda::Synchronize");
  WaitStream(Stream(device), "cuda::Synchronize");
}

stream_order::Runtime& StreamRuntime() {
  static CudaStreamRuntime* rt = new CudaStreamRuntime();
  return *rt;
}

uint64_t SynchronizationCount() { return g_host_waits.load(std::memory_order_relaxed); }

CublasLease::CublasLease(int device, const char* op)
    : guard_(device, op), api(&CublasLibrary(op)), device_(device) {
  DeviceState& st = State(device);
  handle = st.cublas.Take([&] {
    cublasHandle_t h = nullptr;
    TK_CUBLAS_CHECK(op, api->cublasCreate_v2(&h));
    return h;
  });
  try {
    const cudaStream_t s = Stream(device);
    // cublasSetStream resets the handle's workspace to cuBLAS's shared default, so the
    // stream's own workspace is set after it.
    TK_CUBLAS_CHECK(op, api->cublasSetStream_v2(handle, s));
    const int64_t bytes = CublasWorkspaceBytes(device, op);
    void* w = st.workspaces.For(s, [&] {
      void* p = nullptr;
      TK_CUDA_CHECK(op, cudaMallocAsync(&p, static_cast<size_t>(bytes), s));
      return p;
    });
    TK_CUBLAS_CHECK(op, api->cublasSetWorkspace_v2(handle, w, static_cast<size_t>(bytes)));
  } catch (...) {
    st.cublas.Give(handle);
    throw;
  }
}

CublasLease::~CublasLease() { State(device_).cublas.Give(handle); }

CusparseLease::CusparseLease(int device, const char* op)
    : guard_(device, op), api(&CusparseLibrary(op)), device_(device) {
  DeviceState& st = State(device);
  handle = st.cusparse.Take([&] {
    cusparseHandle_t h = nullptr;
    TK_CUSPARSE_CHECK(op, api->cusparseCreate(&h));
    return h;
  });
  try {
    TK_CUSPARSE_CHECK(op, api->cusparseSetStream(handle, Stream(device)));
  } catch (...) {
    st.cusparse.Give(handle);
    throw;
  }
}

CusparseLease::~CusparseLease() { State(device_).cusparse.Give(handle); }

LibraryHandleCounts LibraryHandles(int device) {
  CheckIndex(device, "cuda::LibraryHandles");
  DeviceState& st = State(device);
  return {st.cublas.made(), st.cusparse.made(), st.workspaces.size()};
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

bool Built() { return true; }

namespace {

// cudaGetDeviceCount's answer, and why it is 0 when it is.
struct DeviceCensus {
  int count = 0;
  std::string reason;
};

const DeviceCensus& Census() {
  static const DeviceCensus census = [] {
    DeviceCensus c;
    const cudaError_t err = cudaGetDeviceCount(&c.count);
    if (err == cudaSuccess && c.count > 0) return c;
    cudaGetLastError();
    c.count = 0;
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
    const auto version = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    if (driver == 0) {
      // The runtime reports a missing libcuda as an insufficient driver too.
      c.reason = "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded); install one";
    } else if (err == cudaErrorInsufficientDriver) {
      c.reason = "the NVIDIA driver supports CUDA " + version(driver) +
                 " only, older than the CUDA " + version(CUDART_VERSION) +
                 " runtime tensorkit was built with; update the NVIDIA driver";
    } else if (err == cudaErrorNoDevice || err == cudaSuccess) {
      c.reason = "the NVIDIA driver sees no CUDA GPU";
    } else {
      c.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err) + " (" +
                 cudaGetErrorName(err) + ")";
    }
    return c;
  }();
  return census;
}

}  // namespace

int DeviceCount() { return Census().count; }

std::string NoDeviceReason() { return Census().reason; }

void* Malloc(int64_t bytes, int device) {
  DeviceGuard guard(device, "Storage::Allocate");
  SetUpPool(device, "Storage::Allocate");
  void* p = nullptr;
  const cudaError_t err = alloc_fault::ShouldFail()
                              ? cudaErrorMemoryAllocation  // the tests' injected failure
                              : cudaMallocAsync(&p, static_cast<size_t>(bytes), Stream(device));
  if (err != cudaSuccess) {
    cudaGetLastError();
    Throw(err == cudaErrorMemoryAllocation ? ErrorCode::kResourceExhausted : ErrorCode::kInternal,
          "Storage::Allocate: cannot allocate ", bytes, " bytes on cuda:", device, ": ",
          cudaGetErrorString(err),
          "; free device tensors or use smaller ones (ReleaseCachedCudaMemory returns cached "
          "memory to other processes)");
  }
  return p;
}

void Free(void* ptr, int device) noexcept {
  if (ptr == nullptr || device < 0 || device >= kMaxDevices) return;
  cudaStream_t s = nullptr;
  try {
    s = Stream(device);
  } catch (...) {
    return;  // no stream can be had: leak rather than free unordered
  }
  static_cast<CudaStreamRuntime&>(StreamRuntime()).FreeAsync(device, ptr, s);
}

void Memcpy(void* dst, int dst_device, const void* src, int src_device, int64_t bytes,
            CopyKind kind) {
  const char* op = "CopyBytes";
  const size_t n = static_cast<size_t>(bytes);
  switch (kind) {
    case CopyKind::kHostToDevice: {
      DeviceGuard guard(dst_device, op);
      const cudaStream_t s = Stream(dst_device);
      cudaPointerAttributes attr{};
      TK_CUDA_CHECK(op, cudaPointerGetAttributes(&attr, src));
      TK_CUDA_CHECK(op, cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
      // From pageable memory the driver has staged the source when the call returns, so the
      // caller may reuse it; a pinned source is read later by the DMA engine, so wait.
      if (attr.type == cudaMemoryTypeHost) WaitStream(s, op);
      return;
    }
    case CopyKind::kDeviceToHost: {
      DeviceGuard guard(src_device, op);
      const cudaStream_t s = Stream(src_device);
      TK_CUDA_CHECK(op, cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s));
      WaitStream(s, op);  // the host reads the result
      return;
    }
    case CopyKind::kDeviceToDevice: {
      if (dst_device == src_device) {
        DeviceGuard guard(dst_device, op);
        TK_CUDA_CHECK(op,
                      cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, Stream(dst_device)));
        return;
      }
      // Between devices, ordered by events both ways: the copy (on the destination's stream)
      // after the work enqueued on the source's stream, and the source's later work (a write,
      // a free) after the copy.
      const cudaStream_t src_stream = Stream(src_device);
      const cudaStream_t dst_stream = Stream(dst_device);
      OrderStreams(src_device, src_stream, dst_device, dst_stream, op);
      {
        DeviceGuard guard(dst_device, op);
        TK_CUDA_CHECK(op, cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, dst_stream));
      }
      OrderStreams(dst_device, dst_stream, src_device, src_stream, op);
      return;
    }
  }
}

void Memset0(void* dst, int64_t bytes, int device) {
  DeviceGuard guard(device, "ZeroBytes");
  TK_CUDA_CHECK("ZeroBytes", cudaMemsetAsync(dst, 0, static_cast<size_t>(bytes), Stream(device)));
}

PoolStats PoolStatistics(int device) {
  const char* op = "CudaMemoryStatistics";
  CheckIndex(device, op);
  cudaMemPool_t pool;
  TK_CUDA_CHECK(op, cudaDeviceGetDefaultMemPool(&pool, device));
  const auto get = [&](cudaMemPoolAttr attr) {
    uint64_t v = 0;
    TK_CUDA_CHECK(op, cudaMemPoolGetAttribute(pool, attr, &v));
    return static_cast<int64_t>(v);
  };
  PoolStats s;
  s.reserved = get(cudaMemPoolAttrReservedMemCurrent);
  s.used = get(cudaMemPoolAttrUsedMemCurrent);
  s.reserved_peak = get(cudaMemPoolAttrReservedMemHigh);
  s.used_peak = get(cudaMemPoolAttrUsedMemHigh);
  return s;
}

void ResetPoolPeaks(int device) {
  const char* op = "ResetCudaMemoryPeaks";
  CheckIndex(device, op);
  cudaMemPool_t pool;
  TK_CUDA_CHECK(op, cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t zero = 0;  // resetting a peak sets it to the current value
  TK_CUDA_CHECK(op, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
  TK_CUDA_CHECK(op, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
}

void ReleaseCached() {
  const char* op = "ReleaseCachedCudaMemory";
  const int n = DeviceCount();
  for (int d = 0; d < n && d < kMaxDevices; ++d) {
    if (!State(d).used) continue;
    DeviceGuard guard(d, op);
    // Frees are stream-ordered: memory returns to the pool when the work before each free is
    // done, so wait for it; then the pool gives back all it does not hold for live tensors.
    g_host_waits.fetch_add(1, std::memory_order_relaxed);
    TK_CUDA_CHECK(op, cudaDeviceSynchronize());
    cudaMemPool_t pool;
    TK_CUDA_CHECK(op, cudaDeviceGetDefaultMemPool(&pool, d));
    TK_CUDA_CHECK(op, cudaMemPoolTrimTo(pool, 0));
  }
}

}  // namespace tensorkit::common_cuda
