// Internal: the CUDA calls the common layer needs. Implemented in cuda/ when built with CUDA and
// in no_gpu/ (throwing "built without CUDA") otherwise. Not installed; includes no CUDA header.
#ifndef TENSORKIT_COMMON_BACKEND_CUDA_H_
#define TENSORKIT_COMMON_BACKEND_CUDA_H_

#include <cstdint>

namespace tensorkit::cuda_backend {

bool Built();
int DeviceCount();
void* Malloc(int64_t bytes, int device);
void Free(void* ptr, int device);
// kind: 0 host->device, 1 device->host, 2 device->device.
void Memcpy(void* dst, const void* src, int64_t bytes, int kind, int device);
void Memset0(void* dst, int64_t bytes, int device);

}  // namespace tensorkit::cuda_backend

#endif  // TENSORKIT_COMMON_BACKEND_CUDA_H_
